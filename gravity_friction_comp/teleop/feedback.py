"""Force feedback: the follower's external torque, mapped to the leader, scaled and saturated.

:class:`ForceFeedback` takes the follower's external-torque estimate (the momentum
observer's ``external_effort``, per follower joint) and gives the effort added to the
leader's feedforward: for each mapped joint ``τ_l = gain · sign·scale · τ_ext,f`` (the
torque of the same power through the joint map), clipped to ``±min(cap, leader effort
limit)``. It gives **0** on every joint while feedback is disabled, a follower fault is
latched, or the estimate is older than ``feedback.timeout`` (never an old contact). The
gripper gets none. Gain, cap and enable change at runtime through :meth:`ForceFeedback.update`,
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
        leader_effort_limit: {leader joint: effort limit [N·m or N]} (> 0); a mapped leader
            joint not named is bounded by the cap alone.

    Raises:
        ConfigError: a non-positive or NaN effort limit.
    """

    def __init__(self, config: TeleopPairConfig, leader_effort_limit: Mapping[str, float] | None = None):
        self.config = config
        maps = list(config.joints.values())
        self.follower_names = tuple(config.joints)
        self.names = tuple(m.leader for m in maps)
        self._ratio = np.array([m.gain for m in maps])
        limits = dict(leader_effort_limit or {})
        for j, v in limits.items():
            if not (isinstance(v, (int, float)) and v > 0):  # NaN fails too
                raise ConfigError(f"leader effort limit of {j} must be > 0, got {v!r}", key="effort_limit")
        self._limit = np.array([float(limits.get(j, math.inf)) for j in self.names])
        settings = config.feedback
        assert settings is not None  # TeleopPairConfig fills it
        self._settings: FeedbackSettings = settings
        self._arrays()
        self._tau: np.ndarray | None = None  # (n,) last estimate, follower order
        self._t = -math.inf
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

    def external(self, names: Sequence[str], effort, t: float) -> str:
        """The follower's external-torque estimate at ``t`` [s] [N·m or N]; "" when taken, else
        why not (then the last one ages out)."""
        index = {n: i for i, n in enumerate(names)}
        missing = [j for j in self.follower_names if j not in index]
        if missing or len(effort) != len(names):
            return (
                f"external_effort lacks {missing}"
                if missing
                else "external_effort names/efforts lengths differ"
            )
        tau = np.array([effort[index[j]] for j in self.follower_names], dtype=float)
        if not np.all(np.isfinite(tau)):
            return f"external_effort not finite: {tau.tolist()}"
        self._tau, self._t = tau, float(t)
        return ""

    def effort(self, t: float) -> FeedbackEffort:
        """The leader's feedback effort at ``t`` [s] (0 when off, faulted or stale)."""
        zero = np.zeros(len(self.names))
        s = self._settings
        if not s.enable or self._fault or self._tau is None or t - self._t > s.timeout + 1e-9:
            return FeedbackEffort(self.names, zero, ())
        raw = self._gain * self._ratio * self._tau
        out = np.clip(raw, -self._bound, self._bound)
        saturated = tuple(n for n, r, o in zip(self.names, raw, out) if r != o)
        return FeedbackEffort(self.names, out, saturated)
