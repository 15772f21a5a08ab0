"""Setpoint shaper: a sparse or jerky position stream → a jerk-limited one at the chain's rate.

Leader arms and scripts send positions at 30–250 Hz with jitter; the stages downstream (the
friction velocity source, inverse-dynamics mode) need a position with a clean velocity and
acceleration at every cycle of the chain. :class:`SetpointShaper` is the online trajectory
generator between them: at every cycle it moves its state (position, velocity, acceleration
per joint) one time step along the time-optimal, jerk-limited trajectory from that state to
the latest target (Ruckig, Berscheid & Kröger, RSS 2021; PyPI ``ruckig``, MIT; only its
local, open-source calculation is used, never its cloud waypoint service), so

- ``|v| ≤ v_max``, ``|a| ≤ a_max``, ``|j| ≤ j_max`` per joint at every output (Ruckig's
  guarantee from a state within the limits; the state starts at rest);
- the velocity is the exact derivative of the position and the acceleration of the
  velocity (one piecewise-cubic trajectory), so no downstream differentiation adds noise.

Target: the stream's line, its last sample moved on at the stream's velocity,
``q_s + v_s·(t − t_s)``. Ruckig plans the state's deviation from that line to zero,
time-optimally, in the frame moving with it (a static target there; ``|q̇| ≤ v_max`` is
``−v_max − v_s ≤ ẋ ≤ v_max − v_s``): a ramp is followed without lag and without the speed
ripple of chasing samples that are already behind (a time-optimal move to a snapshot of
the target arrives where the stream was, not where it is), and a change of the stream's
velocity is absorbed within the jerk limit.
``v_s`` is the stream's own velocity (when a sample carries one), else the difference
quotient of the last two samples on their own times (stamps, not arrival). A stream silent
for longer than :data:`STALE_INTERVALS` sample intervals targets its last sample at
velocity 0 (the state comes to rest there instead of running on). Targets are clipped to
the position limits and their velocity to 0.999 of ``v_max`` (Ruckig refuses a target it
can never reach); a target beyond ±``MAX_PLAUSIBLE_POSITION`` (1e308 is finite) is refused.

Limits: per joint from the URDF (``<limit velocity>``, position limits) and the per-arm
YAML block ``setpoint_shaper:`` (:func:`shaper_limits_from_arm_yaml`; keys
:data:`~gravity_friction_comp.friction.arm_yaml.SHAPER_BLOCK_KEYS`). No rclpy import.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.friction.arm_yaml import SHAPER_BLOCK_KEYS, load_arm_yaml
from gravity_friction_comp.validation import (
    MAX_PLAUSIBLE_POSITION,
    known_keys,
    number,
    per_joint,
    string_keys,
    vector,
)
from gravity_friction_comp.validation import joint_names as validated_names

__all__ = [
    "STALE_INTERVALS",
    "ShapedSetpoint",
    "ShaperLimits",
    "SetpointShaper",
    "shaper_limits_from_arm_yaml",
]

#: A stream silent for this many of its last sample intervals is taken as stopped (target
#: velocity 0): one lost sample of a jittery 60 Hz stream must not stop the arm, a leader
#: that stopped publishing must.
STALE_INTERVALS = 3.0
#: Fraction of ``v_max`` a target velocity is clipped to (Ruckig refuses ``|v_target| > v_max``).
_TARGET_VELOCITY_MARGIN = 0.999


class ShapedSetpoint(NamedTuple):
    """One output of the shaper, (n,) arrays in the shaper's joint order (new arrays).

    Attributes:
        position: [rad or m]. velocity: [rad/s or m/s]. acceleration: [rad/s² or m/s²].
    """

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


class ShaperLimits(NamedTuple):
    """Per-joint kinematic limits of the shaper, (n,) read-only arrays.

    Attributes:
        velocity: ``v_max`` [rad/s], > 0 and finite. acceleration: ``a_max`` [rad/s²].
        jerk: ``j_max`` [rad/s³]. lower, upper: position limits [rad] (``±inf``: none).
    """

    velocity: np.ndarray
    acceleration: np.ndarray
    jerk: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def _limits(velocity, acceleration, jerk, lower, upper, n: int) -> ShaperLimits:
    v = per_joint("max_velocity", velocity, n, positive=True)
    a = per_joint("max_acceleration", acceleration, n, positive=True)
    j = per_joint("max_jerk", jerk, n, positive=True)
    bounds = []
    for key, value, fill in (("position_lower", lower, -math.inf), ("position_upper", upper, math.inf)):
        arr = np.full(n, fill) if value is None else np.array(value, dtype=float).reshape(-1)
        if arr.size == 1:
            arr = np.full(n, float(arr[0]))
        if arr.size != n or np.isnan(arr).any():
            raise ConfigError(
                f"{key}: expected {n} numbers (±inf: none), got {value!r}", key=key, value=value
            )
        arr.setflags(write=False)
        bounds.append(arr)
    if np.any(bounds[0] > bounds[1]):
        raise ConfigError("position_lower must be <= position_upper per joint", key="position_lower")
    return ShaperLimits(v, a, j, bounds[0], bounds[1])


class SetpointShaper:
    """Jerk-limited online shaping of a position stream (see the module docstring).

    Args:
        max_velocity, max_acceleration, max_jerk: ``v_max`` [rad/s], ``a_max`` [rad/s²],
            ``j_max`` [rad/s³]: one number for every joint or (n,), each finite and > 0.
        period: Nominal cycle [s] (> 0): the step of the first output after construction
            or :meth:`reset` (later steps are the differences of ``now``).
        joint_names: (n,) joint names (default ``j0 … j{n-1}``), for messages.
        position_lower, position_upper: (n,) or one number [rad]; targets are clipped to
            them (default: none).
        n: Joint count when every limit is a number and ``joint_names`` is not given.

    Raises:
        ConfigError / DimensionError: a limit that is not finite and > 0 or of the wrong
            length, bad names, ``period`` not > 0, lower above upper.

    Not thread-safe (one Ruckig state).
    """

    def __init__(
        self,
        max_velocity,
        max_acceleration,
        max_jerk,
        period: float,
        *,
        joint_names: Sequence[str] | None = None,
        position_lower=None,
        position_upper=None,
        n: int | None = None,
    ):
        from ruckig import InputParameter, OutputParameter, Ruckig, Synchronization

        if joint_names is None:
            sizes = [np.size(x) for x in (max_velocity, max_acceleration, max_jerk) if np.ndim(x) == 1]
            count = n if n is not None else (sizes[0] if sizes else 1)
            joint_names = [f"j{i}" for i in range(int(count))]
        self.joint_names = validated_names("joint_names", list(joint_names))
        self.n = len(self.joint_names)
        self.period = number("period", period, positive=True, unit="[s]")
        self.limits = _limits(
            max_velocity, max_acceleration, max_jerk, position_lower, position_upper, self.n
        )
        self._otg = Ruckig(self.n, self.period)
        self._input = InputParameter(self.n)
        self._output = OutputParameter(self.n)
        self._input.max_velocity = self.limits.velocity.tolist()
        self._input.max_acceleration = self.limits.acceleration.tolist()
        self._input.max_jerk = self.limits.jerk.tolist()
        # every joint on its own time-optimal profile: the least lag behind a moving target
        self._input.synchronization = Synchronization.No
        self._v_target_max = _TARGET_VELOCITY_MARGIN * self.limits.velocity
        self._now: float | None = None
        self._state: ShapedSetpoint | None = None
        self._sample: tuple[np.ndarray, float] | None = None  # last sample (position, time)
        self._sample_velocity = np.zeros(self.n)
        self._interval = math.inf  # [s] between the last two samples
        self.recalculations = 0  # Ruckig trajectories computed (a new target each)

    @classmethod
    def from_limits(
        cls, limits: ShaperLimits, period: float, joint_names: Sequence[str] | None = None
    ) -> SetpointShaper:
        """A shaper with the :class:`ShaperLimits` ``limits`` (e.g. from
        :func:`shaper_limits_from_arm_yaml`). Raises as the constructor."""
        return cls(
            limits.velocity,
            limits.acceleration,
            limits.jerk,
            period,
            joint_names=joint_names,
            position_lower=limits.lower,
            position_upper=limits.upper,
            n=len(limits.velocity),
        )

    @property
    def state(self) -> ShapedSetpoint | None:
        """The last output (copies), ``None`` before the first :meth:`step`."""
        s = self._state
        return None if s is None else ShapedSetpoint(*(x.copy() for x in s))

    def reset(self, position=None, velocity=None, acceleration=None) -> None:
        """Forget the stream; the next :meth:`step` starts from this state.

        Args:
            position: (n,) [rad] start (e.g. the measured position); ``None``: the next
                step starts at rest at its target.
            velocity, acceleration: (n,) start derivatives (default 0; beyond the limits
                Ruckig first brakes them inside).

        Raises:
            InputError: a vector not (n,) or not finite (``Reason.SHAPE`` / ``NOT_FINITE``),
                a position beyond ±:data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_POSITION`
                (``Reason.RANGE``; Ruckig cannot plan from it).
        """
        self._now, self._sample, self._interval = None, None, math.inf
        self._sample_velocity = np.zeros(self.n)
        if position is None:
            self._state = None
            return
        q = self._vector("position", position, MAX_PLAUSIBLE_POSITION)
        v = np.zeros(self.n) if velocity is None else self._vector("velocity", velocity)
        a = np.zeros(self.n) if acceleration is None else self._vector("acceleration", acceleration)
        self._state = ShapedSetpoint(q, v, a)

    def step(
        self,
        target_position,
        now: float,
        *,
        target_velocity=None,
        sample_time: float | None = None,
    ) -> ShapedSetpoint:
        """Advance to time ``now`` toward the latest target; the output at ``now``.

        Args:
            target_position: (n,) [rad] the latest sample of the stream (the same one again
                on the cycles between samples).
            now: Time of this output [s] (the chain's clock; increasing). A ``now`` not
                later than the previous one returns the previous output unchanged.
            target_velocity: (n,) [rad/s] the sample's own velocity, if it has one.
            sample_time: The sample's time [s] (its stamp). ``None``: ``now`` when the
                position differs from the previous sample's, else the previous sample's.

        Returns:
            :class:`ShapedSetpoint` at ``now``.

        Raises:
            InputError: a vector not (n,) or not finite, or a non-finite time; a target
                beyond ±:data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_POSITION`
                (``Reason.RANGE``, joints named; :meth:`check_target`). The state is unchanged.
        """
        now = self._time("now", now)
        q_target = self.check_target(target_position)
        v_given = None if target_velocity is None else self._vector("target_velocity", target_velocity)
        t_sample = None if sample_time is None else self._time("sample_time", sample_time)
        if self._state is None:  # nothing to start from: at rest at the first target
            q0 = np.clip(q_target, self.limits.lower, self.limits.upper)
            self._state = ShapedSetpoint(q0, np.zeros(self.n), np.zeros(self.n))
        if self._now is not None and now <= self._now:
            return self.state  # type: ignore[return-value]  # set above
        self._take_sample(q_target, v_given, now if t_sample is None else t_sample, t_sample is None)
        dt = self.period if self._now is None else now - self._now
        self._now = now
        return self._advance(dt, now)

    def check_target(self, target_position) -> np.ndarray:
        """``target_position`` as an (n,) array (a copy) if :meth:`step` takes it.

        The one target check of the core and the ``setpoint_shaper`` node (which drops a
        refused setpoint on arrival). A target beyond the URDF limits is clipped to them;
        one beyond ±:data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_POSITION` is no
        pose (1e308 is finite) and refused.

        Raises:
            InputError: not (n,) numbers (``Reason.TYPE`` / ``SHAPE``), not finite
                (``NOT_FINITE``), beyond the plausible bound (``RANGE``, joints named).
        """
        return self._vector("target_position", target_position, MAX_PLAUSIBLE_POSITION)

    # ------------------------------------------------------------------ internals
    def _take_sample(self, q: np.ndarray, v: np.ndarray | None, t: float, implicit: bool) -> None:
        last = self._sample
        if last is not None and (t < last[1] or (implicit and np.array_equal(q, last[0]))):
            return  # the same sample again (or an older one)
        if last is not None and t == last[1]:  # a new position on the same stamp: the newer one
            self._sample = (q, t)
            return
        if v is not None:
            self._sample_velocity = v
        elif last is not None:
            self._sample_velocity = (q - last[0]) / (t - last[1])
        if last is not None:
            self._interval = t - last[1]
        self._sample = (q, t)

    def _advance(self, dt: float, now: float) -> ShapedSetpoint:
        from ruckig import Result, RuckigError

        assert self._sample is not None and self._state is not None
        q_sample, t_sample = self._sample
        t0 = now - dt  # the trajectory starts at the previous output
        if now - t_sample > STALE_INTERVALS * self._interval:  # stopped: rest on its last sample
            line_q, line_v = q_sample.copy(), np.zeros(self.n)
        else:  # where the stream is: its last sample moved on at its velocity
            line_v = np.clip(self._sample_velocity, -self._v_target_max, self._v_target_max)
            line_q = q_sample + line_v * (t0 - t_sample)  # before t_sample too: the same line
        outside = (line_q < self.limits.lower) | (line_q > self.limits.upper)
        line_q = np.clip(line_q, self.limits.lower, self.limits.upper)
        line_v[outside] = 0.0  # a stream beyond a position limit: stop at the limit
        # Plan the deviation from the stream's line (moving at line_v) to zero: a static
        # target in that frame is the moving one in the joint frame. |q̇| ≤ v_max becomes
        # -v_max - line_v ≤ ẋ ≤ v_max - line_v; acceleration and jerk are unchanged.
        q, v, a = self._state
        inp, out = self._input, self._output
        inp.current_position = (q - line_q).tolist()
        inp.current_velocity = (v - line_v).tolist()
        inp.current_acceleration = a.tolist()
        inp.max_velocity = (self.limits.velocity - line_v).tolist()
        inp.min_velocity = (-self.limits.velocity - line_v).tolist()
        inp.target_position = [0.0] * self.n
        inp.target_velocity = [0.0] * self.n
        inp.target_acceleration = [0.0] * self.n
        self._otg.delta_time = dt
        try:
            result = self._otg.update(inp, out)
        except RuckigError as error:  # inputs are checked above; a numerical corner case
            raise InputError(f"setpoint shaper: {error}", reason=Reason.NO_SOLUTION) from None
        if result not in (Result.Working, Result.Finished):
            raise InputError(f"setpoint shaper: Ruckig result {result}", reason=Reason.NO_SOLUTION)
        if out.new_calculation:
            self.recalculations += 1
        self._state = ShapedSetpoint(
            line_q + line_v * dt + np.array(out.new_position),
            line_v + np.array(out.new_velocity),
            np.array(out.new_acceleration),
        )
        return self.state  # type: ignore[return-value]  # set just above

    def _vector(self, what: str, value, bound: float | None = None) -> np.ndarray:
        # a copy: kept as state
        return np.array(vector(what, value, self.n, names=self.joint_names, bound=bound))

    @staticmethod
    def _time(what: str, t) -> float:
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, float, np.integer, np.floating)):
            raise InputError(f"{what} must be a time in seconds, got {t!r}", reason=Reason.TYPE)
        if not math.isfinite(float(t)):
            raise InputError(f"{what} must be finite, got {t!r}", reason=Reason.NOT_FINITE)
        return float(t)


def shaper_limits_from_arm_yaml(
    data_or_path: Mapping[str, Any] | str | os.PathLike | None,
    joint_names: Sequence[str],
    *,
    urdf_velocity=None,
    position_lower=None,
    position_upper=None,
    overrides: Mapping[str, Any] | None = None,
) -> ShaperLimits:
    """The shaper's limits for ``joint_names`` from the per-arm YAML block and the URDF.

    ``setpoint_shaper:`` block (every key optional, each one number or one per entry of
    the file's ``joints:`` list, else per ``joint_names``)::

        setpoint_shaper:
          max_velocity: [2.0, ...]      # [rad/s]; the URDF's <limit velocity> where lower
          max_acceleration: 20.0        # [rad/s²]
          max_jerk: 400.0               # [rad/s³]

    Precedence: ``overrides`` (node parameters; ``None`` values ignored) over the block;
    the velocity limit is then lowered to the URDF's where that is lower.

    Args:
        data_or_path: Parsed per-arm YAML, its path, or ``None`` (no file).
        joint_names: (n,) the shaper's joints.
        urdf_velocity: (n,) URDF velocity limits [rad/s] (``inf``: none) or ``None``.
        position_lower, position_upper: (n,) URDF position limits [rad] or ``None``.
        overrides: ``{"max_velocity"|"max_acceleration"|"max_jerk": value}``.

    Raises:
        ConfigError: an unknown key in the block (valid keys listed), a limit missing from
            every source (names it), not finite and > 0, a per-joint list of the wrong
            length, a ``joints:`` list lacking one of ``joint_names``.
    """
    names = list(validated_names("joint_names", list(joint_names)))
    n = len(names)
    data: Mapping[str, Any] = {}
    if isinstance(data_or_path, (str, os.PathLike)):
        data = load_arm_yaml(data_or_path)
    elif isinstance(data_or_path, Mapping):
        data = data_or_path
    block = data.get("setpoint_shaper") or {}
    if not isinstance(block, Mapping):
        raise ConfigError(
            f"setpoint_shaper must be a mapping, got {block!r}", key="setpoint_shaper", value=block
        )
    string_keys("setpoint_shaper", block)
    known_keys("setpoint_shaper", block, SHAPER_BLOCK_KEYS, "setpoint_shaper.")
    file_joints = data.get("joints")
    values: dict[str, Any] = {}
    for key in SHAPER_BLOCK_KEYS:
        value = (overrides or {}).get(key)
        if value is None and key in block:
            value = block[key]
            if isinstance(value, (list, tuple)) and file_joints is not None:
                order = list(validated_names("joints", file_joints))
                missing = [j for j in names if j not in order]
                if missing:
                    raise ConfigError(f"joints: lacks {missing}", key="joints", value=missing)
                listed = per_joint(f"setpoint_shaper.{key}", value, len(order), positive=True)
                value = [float(listed[order.index(j)]) for j in names]
        values[key] = value
    velocity = values["max_velocity"]
    urdf_v = None if urdf_velocity is None else np.array(urdf_velocity, dtype=float).reshape(-1)
    if velocity is None and urdf_v is not None and np.isfinite(urdf_v).all():
        velocity = urdf_v
    elif velocity is not None and urdf_v is not None:
        velocity = np.minimum(per_joint("max_velocity", velocity, n, positive=True), urdf_v)
    for key, value in (("max_velocity", velocity), *((k, values[k]) for k in SHAPER_BLOCK_KEYS[1:])):
        if value is None:
            raise ConfigError(
                f"setpoint shaper: no {key} for {names} (give the node parameter {key} or "
                f"setpoint_shaper.{key} in the per-arm YAML)",
                key=key,
            )
    return _limits(
        velocity, values["max_acceleration"], values["max_jerk"], position_lower, position_upper, n
    )
