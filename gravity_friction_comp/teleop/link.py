"""The leader → follower link: the leader's pose mapped onto the follower, engaged softly, held when stale.

:class:`TeleopLink` takes the leader's and the follower's measured joint states and gives the
follower's target pose (to the setpoint shaper, which makes it a jerk-limited stream at the
chain's rate). States:

- ``waiting``: no follower state yet: no target (the follower's bridge keeps its start-up
  behaviour).
- ``engaging``: the target starts at the follower's **measured** pose and approaches the
  leader's mapped pose exponentially (rate :data:`ENGAGE_RATE`), never faster than
  ``engage_speed`` × each joint's URDF velocity limit (:data:`FALLBACK_VELOCITY` where the
  URDF gives none), so nothing jumps on start or re-engage and the move slows down before it
  arrives (no stop from full speed for the follower's PD to overshoot); once every joint is
  within ``engage_tolerance`` the link follows.
- ``following``: the target is the leader's mapped pose (``offset + sign·scale·q_l``, the
  gripper by its range map), clipped to the follower's URDF position limits.
- ``holding``: the leader is stale or silent (no good sample for ``stale_timeout``), the
  follower's state is stale (on an arm of several buses: any one bus's, named), the link is disabled, or a follower fault is latched
  (:meth:`TeleopLink.set_fault`, until :meth:`TeleopLink.clear_fault`): the target stays at
  the last one given (the shaper brings the follower to rest there); leaving ``holding``
  engages again from the measured pose.

Each side's state may come from several ``joint_states`` sources (one bridge per bus):
:class:`~gravity_friction_comp.teleop.merge.MergedJointState` merges them by joint name.

:meth:`TeleopLink.status` gives the state and why (the diagnostic). No rclpy import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.teleop.config import TeleopPairConfig
from gravity_friction_comp.teleop.merge import MergedJointState

__all__ = ["ENGAGE_RATE", "FALLBACK_VELOCITY", "LINK_STATES", "TeleopLink"]

#: [rad/s or m/s] engage speed limit of a joint whose URDF gives no velocity limit.
FALLBACK_VELOCITY = 0.5
#: [1/s] the engage move's approach rate: the remaining distance shrinks by e per 1/ENGAGE_RATE
#: where the speed limit does not bind (0.1 rad: within 0.02 rad after 0.32 s).
ENGAGE_RATE = 5.0
#: The link's states (module docstring).
LINK_STATES = ("waiting", "engaging", "following", "holding")
# [s] the engage step's longest time step: after a gap the target does not leap
_MAX_STEP = 0.1


def _limits(key: str, value, n: int, default: float) -> np.ndarray:
    arr = np.full(n, default) if value is None else np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (n,) or np.any(np.isnan(arr)):
        raise ConfigError(f"{key} must be {n} numbers (one per follower joint), got {arr.tolist()}", key=key)
    return arr


class TeleopLink:
    """Leader pose → follower target with soft engage and hold (module docstring).

    Args:
        config: The pair (:class:`~gravity_friction_comp.teleop.config.TeleopPairConfig`).
        lower, upper: (m,) follower URDF position limits [rad or m] in
            ``config.follower_joints`` order (``None``: unbounded).
        velocity: (m,) follower URDF velocity limits [rad/s or m/s] (``inf``/``None``:
            :data:`FALLBACK_VELOCITY`).

    Raises:
        ConfigError: limits of the wrong length, NaN, or lower > upper.

    Not thread-safe (one executor thread feeds it).
    """

    def __init__(self, config: TeleopPairConfig, lower=None, upper=None, velocity=None):
        self.config = config
        self.names = config.follower_joints
        m = len(self.names)
        self.lower = _limits("lower", lower, m, -math.inf)
        self.upper = _limits("upper", upper, m, math.inf)
        if np.any(self.lower > self.upper):
            raise ConfigError(
                f"lower > upper for {[n for n, lo, hi in zip(self.names, self.lower, self.upper) if lo > hi]}",
                key="lower",
            )
        v = _limits("velocity", velocity, m, math.inf)
        v = np.where(np.isfinite(v) & (v > 0), v, FALLBACK_VELOCITY)
        self.engage_velocity = config.engage_speed * v
        maps = list(config.joints.values())
        self._leader_names = config.leader_joints
        self._gain = np.array([jm.gain for jm in maps])
        self._offset = np.array([jm.offset for jm in maps])
        self._leader_state = MergedJointState(self._leader_names, "leader")
        self._follower_state = MergedJointState(self.names, "follower")
        self._leader: np.ndarray | None = None  # (m,) merged leader pose, leader_joints order
        self._leader_v = np.zeros(m)  # its velocity
        self._velocity = np.zeros(m)  # the target's velocity
        self._follower: np.ndarray | None = None  # (m,) merged follower measurement
        self._state = "waiting"
        self._target: np.ndarray | None = None
        self._t_target = -math.inf
        self._enabled = True
        self._fault = ""
        self._why = "no follower state yet"

    # --- inputs -----------------------------------------------------------------------------
    def leader(self, names: Sequence[str], position, t: float, velocity=None, source: str = "") -> str:
        """A leader ``joint_states`` sample at ``t`` [s] from ``source`` (a topic, a bus; one
        message may carry only that bus's joints: merged by name); ``velocity`` [rad/s] its
        measured velocity, optional (a bad or missing one counts 0). "" when taken, else why
        not (ignored: a leader that only sends bad samples goes stale)."""
        why = self._leader_state.add(names, position, t, velocity, source)
        if not why and self._leader_state.position is not None:
            self._leader, self._leader_v = self._leader_state.position, self._leader_state.velocity
        return why

    def follower(self, names: Sequence[str], position, t: float, source: str = "") -> str:
        """A follower ``joint_states`` sample at ``t`` [s] from ``source`` (merged by name as
        :meth:`leader`); "" when taken, else why not."""
        why = self._follower_state.add(names, position, t, source=source)
        if not why and self._follower_state.position is not None:
            self._follower = self._follower_state.position
        return why

    def set_fault(self, reason: str) -> None:
        """Latch a follower fault (its bridge's fault, a contact reaction): hold until
        :meth:`clear_fault`. An empty reason is refused (ConfigError)."""
        if not reason:
            raise ConfigError("a fault needs a reason", key="fault")
        self._fault = reason

    def clear_fault(self) -> None:
        """Clear the latched fault; the link engages again from the measured pose."""
        self._fault = ""

    @property
    def fault(self) -> str:
        """The latched follower fault ("" when none)."""
        return self._fault

    def enable(self, enabled: bool) -> None:
        """Follow (engage first) or hold."""
        self._enabled = bool(enabled)

    # --- output -----------------------------------------------------------------------------
    def mapped(self) -> np.ndarray | None:
        """(m,) the leader's last good pose mapped onto the follower and clipped to its URDF
        limits (``None`` before the first leader sample)."""
        if self._leader is None:
            return None
        return self.map(self._leader)

    def _unclipped(self, leader: np.ndarray) -> np.ndarray:
        n = len(self.config.joints)
        out = np.empty(len(self.names))
        out[:n] = self._offset + self._gain * leader[:n]
        if self.config.gripper is not None:
            out[n] = self.config.gripper.command(float(leader[n]))
        return out

    def map(self, leader_position) -> np.ndarray:
        """(m,) a leader pose ((m,) in ``config.leader_joints`` order [rad]) mapped onto the
        follower and clipped to its URDF limits."""
        return np.clip(self._unclipped(np.asarray(leader_position, dtype=float)), self.lower, self.upper)

    def mapped_velocity(self) -> np.ndarray:
        """(m,) the leader's last velocity mapped onto the follower [rad/s] (0 on a joint whose
        mapped pose is clipped at a URDF limit or its gripper range, and before the first
        leader sample)."""
        if self._leader is None:
            return np.zeros(len(self.names))
        n = len(self.config.joints)
        out = np.zeros(len(self.names))
        out[:n] = self._gain * self._leader_v[:n]
        g = self.config.gripper
        if g is not None:
            (l0, l1), (f0, f1) = g.leader_range, g.follower_range
            inside = min(l0, l1) < self._leader[n] < max(l0, l1)
            out[n] = (f1 - f0) / (l1 - l0) * self._leader_v[n] if inside else 0.0
        q = self._unclipped(self._leader)
        out[(q <= self.lower) | (q >= self.upper)] = 0.0
        return out

    def _hold_reason(self, t: float) -> str:
        if self._fault:
            return f"follower fault: {self._fault}"
        if not self._enabled:
            return "disabled"
        if self._leader is None:
            return f"no leader state yet (missing {self._leader_state.missing})"
        timeout = self.config.stale_timeout
        return self._leader_state.problem(t, timeout) or self._follower_state.problem(t, timeout)

    def target(self, t: float) -> np.ndarray | None:
        """(m,) the follower target at ``t`` [s] in :attr:`names` order, or ``None`` while
        ``waiting``. Call once per output period (it advances the engage move)."""
        if self._follower is None:
            self._state, self._why = (
                "waiting",
                f"no follower state yet (missing {self._follower_state.missing})",
            )
            return None
        why = self._hold_reason(t)
        if why:
            if self._target is None:
                self._target = self._follower.copy()
            self._state, self._why = "holding", why
            self._t_target = float(t)
            self._velocity = np.zeros(len(self.names))
            return self._target.copy()
        goal = self.mapped()
        assert goal is not None  # _hold_reason: a leader sample exists
        if self._state in ("waiting", "holding"):
            self._state, self._target, self._t_target = "engaging", self._follower.copy(), float(t)
        assert self._target is not None
        if self._state == "engaging":
            dt = min(max(float(t) - self._t_target, 0.0), _MAX_STEP)
            approach = (goal - self._target) * -math.expm1(-ENGAGE_RATE * dt)
            step = np.clip(approach, -self.engage_velocity * dt, self.engage_velocity * dt)
            self._target = self._target + step
            self._velocity = step / dt if dt > 0 else np.zeros(len(self.names))
            left = np.abs(goal - self._target)
            if np.all(left <= self.config.engage_tolerance):
                self._state, self._target = "following", goal
                self._why, self._velocity = "", self.mapped_velocity()
            else:
                k = int(np.argmax(left))
                self._why = f"engaging: {self.names[k]} {left[k]:.3f} from the leader's pose"
        else:
            self._target, self._why, self._velocity = goal, "", self.mapped_velocity()
        self._t_target = float(t)
        return self._target.copy()

    @property
    def velocity(self) -> np.ndarray:
        """(m,) the last target's velocity [rad/s]: the leader's mapped velocity while
        following, the engage move's while engaging, 0 while holding (the shaper's
        ``target_velocity``: no lag from differentiating a quantized position)."""
        return self._velocity.copy()

    @property
    def state(self) -> str:
        """One of :data:`LINK_STATES` (as of the last :meth:`target`)."""
        return self._state

    def status(self) -> str:
        """Why the link is not following ("" while it is), as of the last :meth:`target`."""
        return self._why
