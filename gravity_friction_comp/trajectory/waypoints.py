"""Waypoint setpoint profiles: minimum-jerk moves with dwells, and the pick-and-place cycle.

Minimum-jerk moves between waypoints (Flash & Hogan 1985: ``s(τ) = 10τ³ − 15τ⁴ + 6τ⁵``),
each followed by a dwell that may open/close the gripper; :func:`pick_place_profile` builds
the pick-and-place cycle from three poses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.trajectory.base import Profile, checked_names, duration, finite_rate, vector
from gravity_friction_comp.validation import number

__all__ = ["Waypoint", "WaypointProfile", "minimum_jerk", "pick_place_profile"]


def minimum_jerk(tau: float) -> tuple[float, float]:
    """Minimum-jerk blend ``s(τ) = 10τ³ − 15τ⁴ + 6τ⁵`` and ``ds/dτ`` for τ in [0, 1].

    Zero velocity and acceleration at both ends (Flash & Hogan 1985). τ is clipped to [0, 1].
    """
    tau = min(max(tau, 0.0), 1.0)
    t2 = tau * tau
    return t2 * tau * (10.0 - 15.0 * tau + 6.0 * t2), 30.0 * t2 * (1.0 - 2.0 * tau + t2)


@dataclass(frozen=True)
class Waypoint:
    """A pose reached by a minimum-jerk move, then held.

    Attributes:
        position: (n,) [rad] target.
        move_time: [s] (≥ :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION`) duration of the move from the previous
            waypoint.
        dwell_time: [s] (≥ 0) time held at the target after arriving.
        holding: Gripper state set on arrival (kept through the dwell and the next moves);
            ``None`` leaves it unchanged.
    """

    position: tuple[float, ...]
    move_time: float
    dwell_time: float = 0.0
    holding: bool | None = None


class WaypointProfile(Profile):
    """A cycle of :class:`Waypoint` s; the last waypoint's pose is the start of the cycle.

    Segment k runs from waypoint k−1 (cyclically) to waypoint k:
    ``q = q_{k-1} + (q_k − q_{k-1})·s(t/T_move)``, ``q̇ = (q_k − q_{k-1})·s'(t/T_move)/T_move``
    (:func:`minimum_jerk`), then holds ``q_k`` for ``dwell_time``. The holding state switches
    on arrival; before the first switch of a cycle the state left by the last waypoint
    with a ``holding`` value applies (``False`` if none).

    Args:
        joint_names: (n,) joints of the setpoint.
        waypoints: ≥ 2 waypoints.
        loop: See :class:`Profile`.

    Raises:
        ConfigError / DimensionError: fewer than 2 waypoints (or not :class:`Waypoint` s),
            wrong lengths, a move time below :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION`, a negative or non-numeric
            dwell time, a non-finite cycle length, or a move whose peak velocity
            ``(15/8)·|Δq|/move_time`` is not finite.
    """

    def __init__(self, joint_names: Sequence[str], waypoints: Sequence[Waypoint], loop: bool = True):
        self.joint_names = checked_names(joint_names)
        if not isinstance(waypoints, (list, tuple)) or not all(isinstance(w, Waypoint) for w in waypoints):
            raise ConfigError(
                f"waypoints must be a list of Waypoint, got {waypoints!r}", key="waypoints", value=waypoints
            )
        if len(waypoints) < 2:
            raise ConfigError(
                f"a waypoint cycle needs ≥ 2 waypoints, got {len(waypoints)}",
                key="waypoints",
                value=len(waypoints),
            )
        self.positions = np.array(
            [vector(f"waypoints[{i}].position", w.position, self.n) for i, w in enumerate(waypoints)]
        )
        self.move_times = np.array(
            [duration(f"waypoints[{i}].move_time", w.move_time) for i, w in enumerate(waypoints)]
        )
        self.dwell_times = np.array(
            [
                number(f"waypoints[{i}].dwell_time", w.dwell_time, nonneg=True, unit="[s]", text=True)
                for i, w in enumerate(waypoints)
            ]
        )
        self.holdings = tuple(w.holding for w in waypoints)
        with np.errstate(over="ignore", invalid="ignore"):
            steps = self.positions - np.roll(self.positions, 1, axis=0)  # segment k: k−1 → k
            peaks = np.abs(steps) * (15.0 / 8.0) / self.move_times[:, None]
            ends = np.cumsum(self.move_times + self.dwell_times)
        finite_rate("waypoints", steps, "a step between waypoints")
        finite_rate("waypoints", peaks, "the peak velocity (15/8)·step/move_time")
        finite_rate("waypoints", ends, "the cycle length")
        self._starts = np.concatenate(([0.0], ends[:-1]))
        self.period = float(ends[-1])
        self.loop = bool(loop)
        last = [h for h in self.holdings if h is not None]
        self._initial_holding = bool(last[-1]) if last else False

    def holding_at(self, t: float) -> bool:
        """Gripper state at cycle time ``t`` [s] in [0, period]."""
        state = self._initial_holding
        for k, start in enumerate(self._starts):
            if t >= start + self.move_times[k] and self.holdings[k] is not None:
                state = bool(self.holdings[k])
        return state

    def segment_times(self, k: int) -> tuple[float, float, float]:
        """(move start, arrival, dwell end) [s] of segment ``k`` within one cycle."""
        start = float(self._starts[k])
        arrive = start + float(self.move_times[k])
        return start, arrive, arrive + float(self.dwell_times[k])

    def _at(self, t):
        k = int(np.searchsorted(self._starts, t, side="right") - 1)
        k = min(max(k, 0), len(self._starts) - 1)
        q0, q1 = self.positions[k - 1], self.positions[k]
        T = self.move_times[k]
        s, ds = minimum_jerk((t - self._starts[k]) / T)
        return q0 + (q1 - q0) * s, (q1 - q0) * (ds / T), self.holding_at(t)


def pick_place_profile(
    joint_names: Sequence[str],
    home,
    pick,
    place,
    *,
    move_time: float = 2.0,
    dwell_time: float = 1.5,
    grip_time: float = 0.2,
    loop: bool = True,
) -> WaypointProfile:
    """Pick-and-place cycle: home → pick, wait, close → place, open → home.

    Segments (each move minimum-jerk over ``move_time``):

    1. move to ``pick``, hold ``dwell_time`` with the gripper open (the arm settles);
    2. ``grip_time`` still at ``pick``, then the gripper closes and the arm holds
       ``dwell_time`` with the payload (the window before and after the close shows the
       payload's static sag);
    3. move to ``place``; the gripper opens on arrival; hold ``dwell_time``;
    4. move back ``home``; hold ``dwell_time``.

    Args:
        joint_names: (n,) joints.
        home, pick, place: (n,) [rad] poses (a scalar is broadcast).
        move_time: [s] per move (≥ :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION`). dwell_time: [s] per stop (≥ 0).
        grip_time: [s] (≥ :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION`) gripper closing time.

    Raises:
        ConfigError / DimensionError: as :class:`WaypointProfile`; ``key`` names the
            argument (``"pick"``, ``"move_time"``, ``"dwell_time"``, …).
    """
    names = checked_names(joint_names)
    home_t, pick_t, place_t = (
        tuple(vector(key, value, len(names)).tolist())
        for key, value in (("home", home), ("pick", pick), ("place", place))
    )
    move_time = duration("move_time", move_time)
    grip_time = duration("grip_time", grip_time)
    dwell_time = number("dwell_time", dwell_time, nonneg=True, unit="[s]", text=True)
    return WaypointProfile(
        names,
        [
            Waypoint(pick_t, move_time, dwell_time, None),
            Waypoint(pick_t, grip_time, dwell_time, True),
            Waypoint(place_t, move_time, dwell_time, False),
            Waypoint(home_t, move_time, dwell_time, None),
        ],
        loop=loop,
    )
