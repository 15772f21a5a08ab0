"""JointTrajectory following as ``joint_trajectory_controller`` (JTC) does, ROS-free.

MoveIt and JTC users send ``trajectory_msgs/JointTrajectory``: joint names, and points with
``time_from_start`` [s], positions and optionally velocities and accelerations.
:class:`TrajectoryFollower` samples such a trajectory at any time with JTC's interpolation
(ros2_controllers ``joint_trajectory_controller/src/trajectory.cpp``,
``interpolate_between_points``) between consecutive points ``a`` → ``b`` over ``T``:

- positions only (either point lacks velocities): **linear**, ``q̇ = Δq/T``, ``q̈ = 0``;
- positions and velocities (both): **cubic Hermite**
  ``q = q_a + v_a t + c₂t² + c₃t³``, ``c₂ = (3Δq − (2v_a + v_b)T)/T²``,
  ``c₃ = (−2Δq + (v_a + v_b)T)/T³``;
- positions, velocities and accelerations (both): **quintic**, the polynomial matching
  q, q̇, q̈ at both ends (:func:`interpolate`).

What JTC does and this follows:

- ``header.stamp`` zero means "now" (the time the trajectory is accepted); otherwise the
  points are at ``stamp + time_from_start``;
- a new trajectory replaces the running one from its first point after now: points at or
  before now are dropped and the first segment runs from the current setpoint (position,
  velocity, acceleration at now; its type is the first kept point's) to that point;
- after the last point its position is held (velocity and acceleration 0);
- an empty ``points`` list stops: the current position is held (JTC's hold);
- refused, with the reason, and the current motion kept: joints other than the follower's
  (missing, unknown or repeated names), a point with a position/velocity/acceleration
  count other than the joints' (velocities and accelerations may be empty), NaN/inf,
  ``time_from_start`` not strictly increasing, a trajectory ending at or before now, a
  non-zero velocity at the last point (JTC's default
  ``allow_nonzero_velocity_at_trajectory_end: false``), and (this package's addition) a
  segment whose mean velocity ``|Δq|/Δt`` (the first one from the current setpoint) or a
  point whose velocity exceeds the URDF ``<limit velocity>``, and a point whose position
  lies outside the URDF ``<limit lower/upper>`` (the points only: a cubic or quintic
  segment between two points inside may still overshoot them slightly).

Differences from JTC: an acceleration-only point is interpolated linearly (JTC leaves
such a segment's output at zero); no partial-joint goals (``allow_partial_joints_goal``
false, JTC's default); no tolerances (the action's). No rclpy import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.trajectory.base import checked_names, vector

__all__ = ["TrajectoryFollower", "TrajectoryPoint", "TrajectorySample", "interpolate"]

#: Relative slack of the velocity-limit check (a planner that plans exactly at the limit).
_LIMIT_SLACK = 1e-6
#: [rad] A point this far outside a position limit still counts as on it (rounding of the sender's).
_POSITION_SLACK = 1e-6


class TrajectoryPoint(NamedTuple):
    """One point of a trajectory (a ``JointTrajectoryPoint``), the trajectory's joint order.

    Attributes:
        time_from_start: [s] after the trajectory's start.
        positions: (m,) [rad]. velocities, accelerations: (m,) or empty.
    """

    time_from_start: float
    positions: Sequence[float]
    velocities: Sequence[float] = ()
    accelerations: Sequence[float] = ()


class TrajectorySample(NamedTuple):
    """The setpoint at one time, (n,) arrays in the follower's joint order.

    Attributes:
        position: [rad]. velocity: [rad/s]. acceleration: [rad/s²].
    """

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


class _Knot(NamedTuple):
    t: float  # absolute [s]
    q: np.ndarray
    v: np.ndarray | None
    a: np.ndarray | None


def interpolate(t0: float, a: _Knot | tuple, t1: float, b: _Knot | tuple, t: float) -> TrajectorySample:
    """JTC's interpolation between state ``a`` at ``t0`` and ``b`` at ``t1``, sampled at ``t``.

    Args:
        a, b: ``(q, v, acc)`` with ``q`` (n,) and ``v``/``acc`` (n,) or ``None``.
        t: clipped to [t0, t1] (outside it JTC holds the end's position; velocity and
            acceleration are those of the segment's end then).

    Returns:
        :class:`TrajectorySample`: linear when either end lacks a velocity, cubic when both
        have velocities but not both accelerations, quintic otherwise (module docstring).
    """
    qa, va, aa = a[-3:]
    qb, vb, ab = b[-3:]
    T = t1 - t0
    s = min(max(t - t0, 0.0), T)
    dq = qb - qa
    if va is None or vb is None or T <= 0.0:
        slope = dq / T if T > 0.0 else np.zeros_like(qa)
        return TrajectorySample(qa + slope * s, slope.copy(), np.zeros_like(qa))
    if aa is None or ab is None:
        c2 = (3.0 * dq - (2.0 * va + vb) * T) / T**2
        c3 = (-2.0 * dq + (va + vb) * T) / T**3
        return TrajectorySample(
            qa + va * s + c2 * s**2 + c3 * s**3, va + 2.0 * c2 * s + 3.0 * c3 * s**2, 2.0 * c2 + 6.0 * c3 * s
        )
    c2 = 0.5 * aa
    c3 = (20.0 * dq - (8.0 * vb + 12.0 * va) * T - (3.0 * aa - ab) * T**2) / (2.0 * T**3)
    c4 = (-30.0 * dq + (14.0 * vb + 16.0 * va) * T + (3.0 * aa - 2.0 * ab) * T**2) / (2.0 * T**4)
    c5 = (12.0 * dq - 6.0 * (vb + va) * T + (ab - aa) * T**2) / (2.0 * T**5)
    return TrajectorySample(
        qa + va * s + c2 * s**2 + c3 * s**3 + c4 * s**4 + c5 * s**5,
        va + 2.0 * c2 * s + 3.0 * c3 * s**2 + 4.0 * c4 * s**3 + 5.0 * c5 * s**4,
        2.0 * c2 + 6.0 * c3 * s + 12.0 * c4 * s**2 + 20.0 * c5 * s**3,
    )


class TrajectoryFollower:
    """Follows JointTrajectory messages like JTC's topic interface (module docstring).

    Args:
        joint_names: (n,) the follower's joints (a trajectory must name exactly these).
        hold_position: (n,) [rad] the setpoint held before any trajectory.
        velocity_limits: (n,) [rad/s] (URDF ``<limit velocity>``; ``inf``: none) or ``None``.
        position_limits: ``(lower, upper)``, each (n,) [rad] (URDF ``<limit lower/upper>``;
            ``∓inf``: none, e.g. continuous joints) or ``None``.

    Raises:
        ConfigError / DimensionError: bad names, a pose or limits of the wrong length or
            not finite (velocity limits: > 0, ``inf`` allowed; position limits: NaN-free,
            lower ≤ upper).
    """

    def __init__(self, joint_names: Sequence[str], hold_position, velocity_limits=None, position_limits=None):
        self.joint_names = checked_names(joint_names)
        self.n = len(self.joint_names)
        q = vector("hold_position", hold_position, self.n)
        if velocity_limits is None:
            self.velocity_limits = np.full(self.n, math.inf)
        else:
            limits = np.array(velocity_limits, dtype=float).reshape(-1)
            if limits.size != self.n or np.isnan(limits).any() or np.any(limits <= 0.0):
                raise ConfigError(
                    f"velocity_limits must be {self.n} numbers > 0 (inf: none), got {velocity_limits!r}",
                    key="velocity_limits",
                )
            self.velocity_limits = limits
        self.position_lower, self.position_upper = np.full(self.n, -math.inf), np.full(self.n, math.inf)
        if position_limits is not None:
            lower, upper = (np.array(x, dtype=float).reshape(-1) for x in position_limits)
            if (
                lower.size != self.n
                or upper.size != self.n
                or np.isnan([*lower, *upper]).any()
                or np.any(lower > upper)
            ):
                raise ConfigError(
                    f"position_limits must be (lower, upper) of {self.n} numbers each, lower <= upper, "
                    f"got {position_limits!r}",
                    key="position_limits",
                )
            self.position_lower, self.position_upper = lower, upper
        self._knots: list[_Knot] = [_Knot(-math.inf, q, np.zeros(self.n), np.zeros(self.n))]
        self.accepted = 0  # trajectories accepted

    @property
    def end_time(self) -> float:
        """Absolute time [s] of the last point (``-inf`` while holding the start pose)."""
        return self._knots[-1].t

    def done(self, now: float) -> bool:
        """True once ``now`` is at or past the last point (the last position is held)."""
        return now >= self._knots[-1].t

    def sample(self, now: float) -> TrajectorySample:
        """The setpoint at ``now`` [s]: within the trajectory interpolated, after it held."""
        knots = self._knots
        if now >= knots[-1].t:
            last = knots[-1]
            return TrajectorySample(last.q.copy(), np.zeros(self.n), np.zeros(self.n))
        k = 0
        while k + 2 < len(knots) and now >= knots[k + 1].t:
            k += 1
        return interpolate(knots[k].t, knots[k], knots[k + 1].t, knots[k + 1], now)

    def set_trajectory(
        self, joint_names: Sequence[str], points: Sequence[TrajectoryPoint], start_time: float, now: float
    ) -> None:
        """Accept a trajectory at ``now`` [s], replacing the running one (module docstring).

        Args:
            joint_names: (m,) the trajectory's joint names (any order).
            points: Its points, ``time_from_start`` [s] relative to the start.
            start_time: ``header.stamp`` [s]; 0: ``now``.
            now: The current time [s] (the clock of :meth:`sample`).

        Raises:
            InputError: the trajectory is refused (``Reason`` ``MISSING_JOINTS``,
                ``DUPLICATE_NAMES``, ``SHAPE``, ``NOT_FINITE`` or ``RANGE``; the message says
                why); the running motion is unchanged.
        """
        order = self._order(joint_names)
        current = self.sample(now)
        start = now if start_time == 0.0 else float(start_time)
        if not math.isfinite(start) or not math.isfinite(now):
            raise InputError(
                f"trajectory start {start_time!r} / now {now!r} not finite", reason=Reason.NOT_FINITE
            )
        if not points:  # JTC: an empty trajectory holds the current position
            self._knots = [_Knot(now, current.position, np.zeros(self.n), np.zeros(self.n))]
            self.accepted += 1
            return
        knots = self._knots_of(points, order, start)
        if np.any(np.abs(knots[-1].v if knots[-1].v is not None else 0.0) > 0.0):
            raise InputError(
                "trajectory refused: non-zero velocity at its last point (joint_trajectory_controller's "
                "allow_nonzero_velocity_at_trajectory_end is false)",
                reason=Reason.RANGE,
            )
        kept = [k for k in knots if k.t > now]
        if not kept:
            raise InputError(
                f"trajectory refused: it ends at {knots[-1].t:.6f} s, not after now ({now:.6f} s)",
                reason=Reason.RANGE,
            )
        first = _Knot(now, current.position, current.velocity, current.acceleration)
        self._check_positions(kept, len(knots) - len(kept))
        self._check_velocity([first, *kept], len(knots) - len(kept))
        self._knots = [first, *kept]
        self.accepted += 1

    # ------------------------------------------------------------------ checks
    def _order(self, joint_names: Sequence[str]) -> np.ndarray:
        names = list(joint_names)
        if len(set(names)) != len(names):
            repeated = next(n for i, n in enumerate(names) if n in names[:i])
            raise InputError(
                f"trajectory refused: joint {repeated!r} named twice", reason=Reason.DUPLICATE_NAMES
            )
        missing = [n for n in self.joint_names if n not in names]
        unknown = [n for n in names if n not in self.joint_names]
        if missing or unknown:
            raise InputError(
                f"trajectory refused: its joints {names} are not the follower's {list(self.joint_names)}"
                + (f"; missing {missing}" if missing else "")
                + (f"; unknown {unknown}" if unknown else ""),
                reason=Reason.MISSING_JOINTS,
            )
        return np.array([names.index(n) for n in self.joint_names], dtype=np.intp)

    def _knots_of(self, points: Sequence[TrajectoryPoint], order: np.ndarray, start: float) -> list[_Knot]:
        knots: list[_Knot] = []
        previous = -math.inf
        m = order.size
        for i, p in enumerate(points):
            tfs = float(p.time_from_start)
            if not math.isfinite(tfs):
                raise InputError(
                    f"trajectory refused: point {i} time_from_start {tfs!r}", reason=Reason.NOT_FINITE
                )
            if tfs <= previous:
                raise InputError(
                    f"trajectory refused: time_from_start not strictly increasing (point {i - 1}: "
                    f"{previous:g} s, point {i}: {tfs:g} s)",
                    reason=Reason.RANGE,
                )
            previous = tfs
            fields: list[np.ndarray | None] = []
            for field, values, required in (
                ("positions", p.positions, True),
                ("velocities", p.velocities, False),
                ("accelerations", p.accelerations, False),
            ):
                arr = np.asarray(values, dtype=float).reshape(-1)
                if arr.size == 0 and not required:
                    fields.append(None)
                    continue
                if arr.size != m:
                    raise InputError(
                        f"trajectory refused: point {i} has {arr.size} {field} for {m} joints",
                        reason=Reason.SHAPE,
                    )
                if not np.isfinite(arr).all():
                    bad = [self.joint_names[k] for k in np.flatnonzero(~np.isfinite(arr[order]))]
                    raise InputError(
                        f"trajectory refused: non-finite {field} at point {i} for joints {bad}",
                        reason=Reason.NOT_FINITE,
                    )
                fields.append(arr[order])
            positions = fields[0]
            assert positions is not None  # required above
            knots.append(_Knot(start + tfs, positions, fields[1], fields[2]))
        return knots

    def _check_positions(self, knots: list[_Knot], dropped: int) -> None:
        for k, knot in enumerate(knots):
            out = np.flatnonzero(
                (knot.q < self.position_lower - _POSITION_SLACK)
                | (knot.q > self.position_upper + _POSITION_SLACK)
            )
            if out.size:
                j = int(out[0])
                raise InputError(
                    f"trajectory refused: position {knot.q[j]:.6g} rad at point {dropped + k} is outside joint "
                    f"{self.joint_names[j]!r}'s URDF limits [{self.position_lower[j]:g}, {self.position_upper[j]:g}] rad",
                    reason=Reason.RANGE,
                )

    def _check_velocity(self, knots: list[_Knot], dropped: int) -> None:
        limit = self.velocity_limits * (1.0 + _LIMIT_SLACK)
        for k in range(1, len(knots)):
            a, b = knots[k - 1], knots[k]
            mean = np.abs(b.q - a.q) / (b.t - a.t)
            given = np.zeros(self.n) if b.v is None else np.abs(b.v)
            for what, speed in (("mean velocity", mean), ("velocity", given)):
                over = np.flatnonzero(speed > limit)
                if over.size:
                    j = int(over[0])
                    where = (
                        f"from the current setpoint to point {dropped}"
                        if k == 1 and what == "mean velocity"
                        else f"at point {dropped + k - 1}"
                    )
                    raise InputError(
                        f"trajectory refused: {what} {speed[j]:.4g} rad/s {where} exceeds joint "
                        f"{self.joint_names[j]!r}'s URDF velocity limit {self.velocity_limits[j]:g} rad/s",
                        reason=Reason.RANGE,
                    )
