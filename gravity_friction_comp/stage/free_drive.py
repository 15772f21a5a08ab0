"""The free-drive setpoint source: the measured joint state as the chain's setpoint, checked.

In free drive (a leader arm, hand-guided teaching) the bridge runs at kp = 0 with a small kd
and the stages compute g(q) and friction from the **measured** state. This object turns the
bridge's ``joint_states`` into the chain's ``joint_setpoint`` so the existing stages do that
unchanged (gravity reads the setpoint position, friction its measured velocity):

- ``free_drive``: position = the last measured q, velocity = 0 (so the bridge's kd damps
  towards rest: kd·(0 − q̇)), effort = the feedback effort (teleoperation's force feedback,
  :meth:`FreeDriveSource.feedback`; 0 without one or once it is older than
  ``feedback_timeout``), the stages add g(q) and τ_f(q̇).
- ``follow``: the follow source's setpoint passed on. After a switch from free drive it
  starts at the measured position at the switch and blends linearly to the follow setpoint
  over ``blend_time`` (position ``q_s + α(p − q_s)``, velocity ``α·v``, ``α = (t − t_s)/T``),
  so the position error kp·(p − q) starts at ≈ 0 (bumpless) whatever kp becomes.

Bad input never gives a torque from an old pose: :meth:`FreeDriveSource.setpoint` returns
``None`` (publish nothing, so the bridge's ``command_timeout`` brings its timeout behaviour)
while, in free drive, the measurement is older than ``stale_timeout``, a joint is reported
stale (:meth:`FreeDriveSource.set_stale`), or after a non-finite sample or a jump larger
than ``max_jump`` until ``recover_samples`` consecutive good samples came in.
:attr:`FreeDriveSource.fault` says why (the node logs it as an ERROR).

No rclpy import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.validation import joint_names

__all__ = [
    "FREE_DRIVE_MODES",
    "FreeDriveConfig",
    "FreeDriveSetpoint",
    "FreeDriveSource",
    "fixed_pose",
    "stale_reply_ages",
    "validate_mode",
]

#: The source's modes.
FREE_DRIVE_MODES = ("follow", "free_drive")


def fixed_pose(
    joints: Sequence[str], fixed_joints: Sequence[str], fixed_positions: Sequence[float]
) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The model joints nobody measures and their positions [rad], checked: ``fixed_joints``
    without empty entries (ROS's ``[""]``), one finite position each, no name also in
    ``joints`` (the setpoint would name it twice). Free drive's and teleop's.

    Raises:
        ConfigError: another number of positions, a NaN/inf one (``key="fixed_positions"``),
            a name twice (``key="fixed_joints"``).
    """
    fixed = tuple(j for j in fixed_joints if j)
    positions = tuple(float(p) for p in fixed_positions) if fixed else ()
    if len(positions) != len(fixed) or not all(math.isfinite(p) for p in positions):
        raise ConfigError(
            f"fixed_positions must be {len(fixed)} finite values (one per fixed joint), got {list(positions)}",
            key="fixed_positions",
        )
    if fixed:
        joint_names("fixed_joints", tuple(joints) + fixed)  # no name in both lists
    return fixed, positions


def validate_mode(mode: str) -> str:
    """Check a mode name (one of :data:`FREE_DRIVE_MODES`).

    Raises:
        ConfigError: otherwise, choices listed (key ``mode``).
    """
    if mode not in FREE_DRIVE_MODES:
        raise ConfigError(
            f"mode must be one of {list(FREE_DRIVE_MODES)}, got {mode!r}", key="mode", value=mode
        )
    return mode


def stale_reply_ages(missed: Mapping[str, int], rate_hz: float | None) -> dict[str, float | None]:
    """The age of the last reply [s] of each motor the bridge flags stale, for
    :meth:`FreeDriveSource.set_stale` (free_drive_node from the bridge's diagnostics, the
    lockstep loop from the core's status: one rule).

    Args:
        missed: Joint → consecutive missed replies of each motor flagged stale.
        rate_hz: The bridge's exchange rate [Hz]; ``None`` or ≤ 0: unknown (ages ``None``).
    """
    rate = rate_hz if rate_hz is not None and rate_hz > 0 else None
    return {joint: (n / rate if rate else None) for joint, n in missed.items()}


def _positive(key: str, value: float, *, allow_zero: bool = False) -> float:
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ConfigError(f"{key} must be finite and {'≥' if allow_zero else '>'} 0, got {value!r}", key=key)
    return value


@dataclass(frozen=True)
class FreeDriveConfig:
    """Validated settings of a :class:`FreeDriveSource`.

    Attributes:
        joints: Measured joints (the bridge's), relayed in this order.
        fixed_joints: Model joints nobody measures (an unbridged gripper), published at
            ``fixed_positions`` [rad] so the gravity stage gets every model joint.
        stale_timeout: A measurement older than this gives no setpoint in free drive [s] (> 0).
        max_jump: |Δq| between consecutive samples that counts as a jump [rad] (> 0).
        recover_samples: Good samples needed after a bad one before output resumes (≥ 1).
        blend_time: Follow after free drive: blend from the measured pose [s] (≥ 0).
        feedback_timeout: A feedback effort older than this counts 0 [s] (> 0).

    Raises:
        ConfigError: empty/repeated joints, lengths of fixed joints and positions differ,
            a value out of range (key named).
    """

    joints: Sequence[str]
    fixed_joints: Sequence[str] = ()
    fixed_positions: Sequence[float] = ()
    stale_timeout: float = 0.05
    max_jump: float = 0.2
    recover_samples: int = 10
    blend_time: float = 1.0
    feedback_timeout: float = 0.05

    def __post_init__(self) -> None:
        joints = joint_names("joints", tuple(j for j in self.joints if j))
        if not joints:
            raise ConfigError("joints must name the measured joints", key="joints")
        fixed, positions = fixed_pose(joints, self.fixed_joints, self.fixed_positions)
        object.__setattr__(self, "joints", joints)
        object.__setattr__(self, "fixed_joints", fixed)
        object.__setattr__(self, "fixed_positions", positions)
        object.__setattr__(self, "stale_timeout", _positive("stale_timeout", self.stale_timeout))
        object.__setattr__(self, "max_jump", _positive("max_jump", self.max_jump))
        object.__setattr__(self, "blend_time", _positive("blend_time", self.blend_time, allow_zero=True))
        object.__setattr__(self, "feedback_timeout", _positive("feedback_timeout", self.feedback_timeout))
        if isinstance(self.recover_samples, bool) or int(self.recover_samples) != self.recover_samples:
            raise ConfigError("recover_samples must be an integer ≥ 1", key="recover_samples")
        if self.recover_samples < 1:
            raise ConfigError("recover_samples must be ≥ 1", key="recover_samples")


class FreeDriveSetpoint(NamedTuple):
    """One setpoint of the source: names, position [rad], velocity [rad/s], effort [N·m]
    (m,) each (effort: the feedback effort in free drive, zeros otherwise)."""

    names: tuple[str, ...]
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


class FreeDriveSource:
    """Measured state → setpoint, with the follow ↔ free-drive switch (module docstring).

    Args:
        config: :class:`FreeDriveConfig`.
        mode: Initial mode (:data:`FREE_DRIVE_MODES`).

    Not thread-safe (one executor thread feeds it).
    """

    def __init__(self, config: FreeDriveConfig, mode: str = "free_drive"):
        if not isinstance(config, FreeDriveConfig):
            raise ConfigError(f"config must be a FreeDriveConfig, got {config!r}", key="config")
        self.config = config
        self._mode = validate_mode(mode)
        n = len(config.joints)
        self._names = tuple(config.joints) + tuple(config.fixed_joints)
        self._fixed = np.asarray(config.fixed_positions, dtype=float)
        self._q: np.ndarray | None = None  # last good measured position (n,)
        self._t = -math.inf  # its time [s]
        self._bad = 0  # 0: fine; else good samples still needed
        self._bad_reason = ""
        self._stale: dict[str, float | None] = {}  # joint → age of its last reply [s] (None: unknown)
        self._follow: tuple[np.ndarray, np.ndarray] | None = None  # (p, v) in self._names order
        self._blend: tuple[float, np.ndarray] | None = None  # (t_switch, q at the switch)
        self._zeros = np.zeros(n + len(self._fixed))
        self._feedback: tuple[float, np.ndarray] | None = None  # (t, effort in self._names order)

    @property
    def mode(self) -> str:
        """``follow`` or ``free_drive``."""
        return self._mode

    @property
    def names(self) -> tuple[str, ...]:
        """Joint names of every setpoint (measured joints, then fixed ones)."""
        return self._names

    @property
    def measured_position(self) -> np.ndarray | None:
        """(n,) [rad] the last good measured position (``None`` before the first)."""
        return None if self._q is None else self._q.copy()

    def fault(self, t: float) -> str:
        """Why free drive gives no setpoint at ``t`` [s] ("" when it does)."""
        if self._stale:
            ages = [f"{j} {1e3 * a:.0f} ms" for j, a in self._stale.items() if a is not None]
            late = (
                f": last reply {', '.join(ages)} ago (stale_timeout {1e3 * self.config.stale_timeout:g} ms)"
            )
            return f"motor(s) {list(self._stale)} stale" + (late if ages else "")
        if self._bad:
            return f"{self._bad_reason} ({self._bad} good sample(s) still needed)"
        if self._q is None:
            return "no measured joint state yet"
        # float slack of two stamps; "not <=": a NaN time (of the sample or of t) counts as stale
        if not t - self._t <= self.config.stale_timeout + 1e-9:
            return f"measured joint state {t - self._t:.3f} s old (stale_timeout {self.config.stale_timeout:g} s)"
        return ""

    # --- inputs -----------------------------------------------------------------------------
    def measured(self, names: Sequence[str], position: Sequence[float] | np.ndarray, t: float) -> str:
        """A ``joint_states`` sample at time ``t`` [s]; returns "" when accepted, else why not.

        A sample lacking a joint or naming one twice is ignored (reason returned); a
        non-numeric or non-finite one or one that
        jumps more than ``max_jump`` from the last good sample starts the recovery count
        (the jump target becomes the reference, so a real move is accepted after
        ``recover_samples`` consistent samples).
        """
        index = {name: i for i, name in enumerate(names)}
        if len(index) != len(names):  # which of a repeated joint's values is meant is unknown
            return f"joint_states names repeat: {sorted({n for n in names if list(names).count(n) > 1})}"
        missing = [j for j in self.config.joints if j not in index]
        if missing or len(position) != len(names):
            return (
                f"joint_states lacks {missing}" if missing else "joint_states names/positions lengths differ"
            )
        try:
            q = np.array([position[index[j]] for j in self.config.joints], dtype=float)
        except (TypeError, ValueError):
            return self._reject("non-numeric measured position")
        if not np.all(np.isfinite(q)):
            return self._reject(f"non-finite measured position {q.tolist()}")
        if self._q is not None:
            jump = np.abs(q - self._q)
            if np.any(jump > self.config.max_jump):
                k = int(np.argmax(jump))
                self._q, self._t = q, float(t)
                return self._reject(
                    f"measured {self.config.joints[k]} jumped {jump[k]:.3f} rad (max_jump {self.config.max_jump:g})"
                )
        self._q, self._t = q, float(t)
        if self._bad:
            self._bad -= 1
        return ""

    def _reject(self, reason: str) -> str:
        self._bad, self._bad_reason = self.config.recover_samples, reason
        return reason

    def set_stale(self, joints: Sequence[str] | Mapping[str, float | None]) -> None:
        """The measured joints whose motor the bridge reports stale (empty: none).

        Args:
            joints: Joint names (each stale), or joint → age of the motor's last reply [s]
                (the bridge's missed replies / its rate; ``None``: unknown, stale): stale
                only when older than ``stale_timeout``, the same limit as the measured
                state's age, so a bridge flag for a few missed replies under load does not
                stop free drive.
        """
        ages: Mapping[str, float | None] = joints if isinstance(joints, Mapping) else dict.fromkeys(joints)
        limit = self.config.stale_timeout + 1e-9  # float slack, as in fault()
        found = {j: ages[j] for j in self.config.joints if j in ages}
        self._stale = {j: a for j, a in found.items() if a is None or a > limit}

    def follow(
        self, names: Sequence[str], position: Sequence[float], velocity: Sequence[float] | None
    ) -> None:
        """The follow source's setpoint (used in ``follow`` mode).

        Raises:
            InputError: a joint of :attr:`names` absent (``Reason.MISSING_JOINTS``), lengths
                differ (``Reason.SHAPE``) or a non-finite value (``Reason.NOT_FINITE``).
        """
        index = {name: i for i, name in enumerate(names)}
        missing = [j for j in self._names if j not in index]
        if missing:
            raise InputError(f"follow setpoint lacks {missing}", reason=Reason.MISSING_JOINTS)
        v_in = list(velocity) if velocity is not None and len(velocity) else [0.0] * len(names)
        if len(position) != len(names) or len(v_in) != len(names):
            raise InputError("follow setpoint names/position/velocity lengths differ", reason=Reason.SHAPE)
        p = np.array([position[index[j]] for j in self._names], dtype=float)
        v = np.array([v_in[index[j]] for j in self._names], dtype=float)
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(v))):
            raise InputError("follow setpoint not finite", reason=Reason.NOT_FINITE)
        self._follow = (p, v)

    def feedback(self, names: Sequence[str], effort: Sequence[float] | np.ndarray, t: float) -> None:
        """A feedback effort at ``t`` [s] [N·m] added to the free-drive setpoint's effort
        (joints not named: 0) until a newer one or ``feedback_timeout``.

        Raises:
            InputError: a name that is no setpoint joint (``Reason.MISSING_JOINTS``), lengths
                differ (``Reason.SHAPE``), a non-finite value (``Reason.NOT_FINITE``).
        """
        index = {name: i for i, name in enumerate(self._names)}
        unknown = [j for j in names if j not in index]
        if unknown:
            raise InputError(
                f"feedback effort names {unknown} not in {list(self._names)}", reason=Reason.MISSING_JOINTS
            )
        if len(effort) != len(names):
            raise InputError("feedback effort names/effort lengths differ", reason=Reason.SHAPE)
        tau = np.zeros(len(self._names))
        for name, value in zip(names, effort):
            tau[index[name]] = value
        if not np.all(np.isfinite(tau)):
            raise InputError(f"feedback effort not finite: {list(effort)}", reason=Reason.NOT_FINITE)
        self._feedback = (float(t), tau)

    def feedback_effort(self, t: float) -> np.ndarray:
        """(m,) [N·m] the feedback effort in force at ``t`` [s] (zeros when none or stale)."""
        # "not <=": a NaN time counts as stale (a NaN-stamped effort never expired)
        if self._feedback is None or not t - self._feedback[0] <= self.config.feedback_timeout + 1e-9:
            return self._zeros.copy()
        return self._feedback[1].copy()

    def switch(self, mode: str, t: float) -> None:
        """Change mode at time ``t`` [s]; into ``follow`` the setpoint starts at the measured pose.

        Raises:
            ConfigError: unknown mode. InputError: into ``follow`` without a good measured
                state (``Reason.MISSING_JOINTS``): there is no pose to start from.
        """
        validate_mode(mode)
        if mode == self._mode:
            return
        if mode == "follow":
            if self._q is None or self.fault(t):
                raise InputError(
                    f"cannot switch to follow: {self.fault(t) or 'no measured state'}",
                    reason=Reason.MISSING_JOINTS,
                )
            self._blend = (float(t), np.concatenate([self._q, self._fixed]))
        self._mode = mode

    # --- output -----------------------------------------------------------------------------
    def setpoint(self, t: float) -> FreeDriveSetpoint | None:
        """The setpoint at time ``t`` [s], or ``None`` (publish nothing; :meth:`fault` says why)."""
        if self._mode == "free_drive":
            if self.fault(t) or self._q is None:
                return None
            q = np.concatenate([self._q, self._fixed])
            return FreeDriveSetpoint(self._names, q, self._zeros.copy(), self.feedback_effort(t))
        if self._blend is None:  # follow from the start: a plain pass-through
            if self._follow is None:
                return None
            return FreeDriveSetpoint(
                self._names, self._follow[0].copy(), self._follow[1].copy(), self._zeros.copy()
            )
        t_switch, start = self._blend
        T = self.config.blend_time
        x = 1.0 if T == 0 else (t - t_switch) / T
        alpha = min(max(x, 0.0), 1.0) if x == x else 0.0  # NaN t: the start pose, not a NaN one
        if self._follow is None:
            return FreeDriveSetpoint(self._names, start.copy(), self._zeros.copy(), self._zeros.copy())
        p, v = self._follow
        if alpha >= 1.0:
            self._blend = None
        return FreeDriveSetpoint(self._names, start + alpha * (p - start), alpha * v, self._zeros.copy())
