"""Force feedback: the follower's external torque, mapped to the leader, scaled and saturated.

:class:`ForceFeedback` takes the follower's external-torque estimate (the momentum
observer's ``external_effort``, per follower joint) and gives the effort added to the
leader's feedforward: for each mapped joint ``τ_l = gain · sign·scale · τ_ext,f`` (the
torque of the same power through the joint map), clipped to ``±min(cap, leader effort
limit)`` (a limit is required for every mapped leader joint). It gives **0** on every joint while feedback is disabled or a follower fault is
latched, and on each joint whose estimate is older than ``feedback.timeout`` or never came
(never an old contact). The estimate may come in parts, each with some of the follower's
joints (one observer per bus of an arm on several buses: the bimanual OpenArm), each joint
keeping its latest value and time. The gripper gets none. Gain, cap and enable change at runtime through :meth:`ForceFeedback.update`,
validated as the file's values.

No rclpy import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.teleop.config import FeedbackSettings, TeleopPairConfig
from gravity_friction_comp.teleop.merge import pick_named

__all__ = ["FeedbackEffort", "ForceFeedback"]


class FeedbackEffort(NamedTuple):
    """The leader's feedback effort: names (the mapped joints' leader joints), effort (n,)
    [N·m or N], saturated: the joints clipped at their bound."""

    names: tuple[str, ...]
    effort: np.ndarray
    saturated: tuple[str, ...]


class ForceFeedback:
    """Follower external torque → leader effort (module docstring).

    Args:
        config: The pair (its ``feedback`` is the start setting).
        leader_effort_limit: {leader joint: effort limit [N·m or N]} (finite, > 0) for every
            mapped leader joint (e.g. its URDF ``<limit effort>``): a feedback torque never
            exceeds it, whatever the cap (a cap of 1e308 without it fed back 2e8 N·m).

    Raises:
        ConfigError: a mapped leader joint without a limit, or a limit not finite and > 0
            (key ``leader_effort_limit``, the joints named).
    """

    def __init__(self, config: TeleopPairConfig, leader_effort_limit: Mapping[str, float] | None = None):
        self.config = config
        maps = list(config.joints.values())
        self.follower_names = tuple(config.joints)
        self.names = tuple(m.leader for m in maps)
        self._ratio = np.array([m.gain for m in maps])
        limits = dict(leader_effort_limit or {})
        missing = [j for j in self.names if j not in limits]
        if missing:
            raise ConfigError(
                f"leader_effort_limit: no effort limit for the leader joints {missing} (the feedback "
                "torque is bounded by the leader's limit: give it, e.g. from the leader's URDF)",
                key="leader_effort_limit",
                value=missing,
            )
        for j, v in limits.items():
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < math.inf  # NaN fails
            if not ok:
                raise ConfigError(
                    f"leader_effort_limit of {j} must be finite and > 0, got {v!r}",
                    key="leader_effort_limit",
                    value=v,
                )
        self._limit = np.array([float(limits[j]) for j in self.names])
        settings = config.feedback
        assert settings is not None  # TeleopPairConfig fills it
        self._settings: FeedbackSettings = settings
        self._arrays()
        n = len(self.follower_names)
        self._index = {j: i for i, j in enumerate(self.follower_names)}
        self._tau = np.zeros(n)  # (n,) latest estimate per joint, follower order
        self._t = np.full(n, -math.inf)  # (n,) its time [s]; -inf: none yet
        self._fault = False

    def _arrays(self) -> None:
        s = self._settings
        self._gain = np.array([s.gain[j] for j in self.follower_names])
        self._bound = np.minimum([s.cap[j] for j in self.follower_names], self._limit)

    @property
    def settings(self) -> FeedbackSettings:
        """The feedback settings in force."""
        return self._settings

    def update(self, *, enable: Any = None, gain: Any = None, cap: Any = None) -> FeedbackSettings:
        """Change enable / gain / cap (``None``: keep); all or nothing.

        Raises:
            ConfigError: as :meth:`FeedbackSettings.build` (the settings stay as they were).
        """
        s = self._settings
        new = FeedbackSettings.build(
            self.follower_names,
            s.enable if enable is None else enable,
            dict(s.gain) if gain is None else gain,
            dict(s.cap) if cap is None else cap,
            s.timeout,
        )
        self._settings = new
        self._arrays()
        return new

    def set_fault(self, fault: bool) -> None:
        """A follower fault stops feedback (0) while set."""
        self._fault = bool(fault)

    def external(self, names: Sequence[str], effort, t: float, source: str = "") -> str:
        """The follower's external-torque estimate at ``t`` [s] [N·m or N] of ``names`` (some or
        all of the mapped follower joints; others skipped) from ``source`` (its topic, for the
        reason); "" when taken, else why not (nothing taken; the last values age out): names
        and efforts of different lengths, none of the mapped joints, a value not finite."""
        what = f"external_effort on {source}" if source else "external_effort"
        picked = pick_named(self._index, names, effort, what, self.follower_names)
        if isinstance(picked, str):
            return picked
        mine, _, tau = picked
        self._tau[mine], self._t[mine] = tau, float(t)
        return ""

    def effort(self, t: float) -> FeedbackEffort:
        """The leader's feedback effort at ``t`` [s] (0 when off or faulted; per joint 0 where
        its estimate is stale, missing or later than ``t``)."""
        zero = np.zeros(len(self.names))
        s = self._settings
        if not s.enable or self._fault:
            return FeedbackEffort(self.names, zero, ())
        age = float(t) - self._t
        # an estimate "from the future" (the clock went back: a simulation restarted) is no
        # fresh one: it fed back an old contact until the clock came round again
        fresh = (age >= -1e-9) & (age <= s.timeout + 1e-9)
        raw = np.where(fresh, self._gain * self._ratio * self._tau, 0.0)
        out = np.clip(raw, -self._bound, self._bound)
        saturated = tuple(n for n, r, o in zip(self.names, raw, out) if r != o)
        return FeedbackEffort(self.names, out, saturated)
