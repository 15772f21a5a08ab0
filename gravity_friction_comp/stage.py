"""The feedforward-stage contract, ROS-free: map a setpoint to model joints, add a term, clamp.

Every compensation node (gravity, friction) is a *stage*: it reads a joint setpoint
(names, position, optional velocity, optional effort), adds its own term to the incoming
effort (missing effort = 0) for the joints it knows, and passes everything else through.
This module holds that contract once, so the nodes only translate messages:

.. math::

    \\tau_{out,i} = \\operatorname{clip}(\\tau_{in,i} + s\\,\\tau_{term,i},\\ -\\tau_{max,i},\\ \\tau_{max,i})

for model joints ``i`` (``s`` the stage's scale, ``τ_max`` the URDF effort limit), and
``τ_out = τ_in`` for joints the stage does not model (see ``ARCHITECTURE.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, NamedTuple, Sequence

import numpy as np

from .exceptions import InputError

__all__ = [
    "JointMap",
    "Setpoint",
    "StageResult",
    "StageSettings",
    "Throttle",
    "apply_stage",
    "effort_limits_from",
    "parse_setpoint",
]


@dataclass(frozen=True)
class JointMap:
    """Where each model joint sits in a message's ``name`` array.

    Attributes:
        message_names: The message's joint names, in message order.
        model_names: The model's joint names, in model order.
        index: (n_model,) int array; ``message[index[i]]`` is model joint ``i``.
    """

    message_names: tuple[str, ...]
    model_names: tuple[str, ...]
    index: np.ndarray

    @staticmethod
    def for_names(message_names: Sequence[str], model_names: Sequence[str]) -> "JointMap":
        """Map by name (never by position: peers break when orders differ, FIELD_NOTES).

        Args:
            message_names: Names in the message, any order, may include extra joints.
            model_names: Names the stage computes for.

        Returns:
            A cached :class:`JointMap` (messages usually repeat the same name list).

        Raises:
            InputError: ``reason="duplicate_names"`` when a name repeats in the message,
                ``reason="missing_joints"`` when model joints are absent from it.
        """
        return _joint_map(tuple(message_names), tuple(model_names))


@lru_cache(maxsize=64)
def _joint_map(message_names: tuple[str, ...], model_names: tuple[str, ...]) -> JointMap:
    position = {}
    for i, name in enumerate(message_names):
        if name in position:
            raise InputError(f"duplicate joint name {name!r} in setpoint", reason="duplicate_names")
        position[name] = i
    missing = [name for name in model_names if name not in position]
    if missing:
        raise InputError(
            f"setpoint lacks model joints {missing} (has {list(message_names)})",
            reason="missing_joints",
        )
    index = np.fromiter((position[name] for name in model_names), dtype=np.intp,
                        count=len(model_names))
    index.setflags(write=False)
    return JointMap(message_names, model_names, index)


class Setpoint(NamedTuple):
    """A validated joint setpoint, arrays in message order (a NamedTuple: cheap at 1 kHz).

    Attributes:
        names: Joint names, message order.
        position: (m,) [rad or m].
        velocity: (m,) [rad/s or m/s], or ``None`` when the message had none.
        effort: (m,) [N·m or N]; zeros when the message had none.
        joint_map: Model joints' indices into these arrays.
    """

    names: tuple[str, ...]
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray
    joint_map: JointMap

    def model_position(self) -> np.ndarray:
        """(n_model,) positions in model order."""
        return self.position[self.joint_map.index]

    def model_velocity(self) -> np.ndarray | None:
        """(n_model,) velocities in model order, or ``None`` when the setpoint has none."""
        return None if self.velocity is None else self.velocity[self.joint_map.index]

    def model_effort(self) -> np.ndarray:
        """(n_model,) incoming efforts in model order."""
        return self.effort[self.joint_map.index]


def parse_setpoint(
    names: Sequence[str],
    position: Sequence[float],
    velocity: Sequence[float],
    effort: Sequence[float],
    model_names: Sequence[str],
) -> Setpoint:
    """Validate a ``sensor_msgs/JointState``-shaped setpoint against the stage's joints.

    ``position`` is required for every name; ``velocity`` and ``effort`` are optional
    (empty) or one per name, as in the JointState message definition.

    Args:
        names: (m,) joint names.
        position: (m,) [rad or m].
        velocity: (m,) or empty [rad/s].
        effort: (m,) or empty [N·m].
        model_names: (n,) joints the stage computes for; all must be present.

    Returns:
        A :class:`Setpoint` with float64 copies of the arrays.

    Raises:
        InputError: with ``reason`` one of ``"length_mismatch"``, ``"duplicate_names"``,
            ``"missing_joints"``, ``"not_finite"``.
    """
    names = tuple(names)
    m = len(names)
    if len(position) != m:
        raise InputError(f"position has {len(position)} values for {m} names",
                         reason="length_mismatch")
    for field, values in (("velocity", velocity), ("effort", effort)):
        if len(values) not in (0, m):
            raise InputError(f"{field} has {len(values)} values for {m} names (expected 0 or {m})",
                             reason="length_mismatch")
    joint_map = JointMap.for_names(names, model_names)
    pos = np.array(position, dtype=float)
    vel = np.array(velocity, dtype=float) if len(velocity) else None
    eff = np.array(effort, dtype=float) if len(effort) else np.zeros(m)
    # One dot product per array is the cheapest finiteness screen; only a non-finite (or
    # overflowing) sum pays for the element-wise check.
    for field, values in (("position", pos), ("velocity", vel), ("effort", eff)):
        if values is not None and not math.isfinite(values.dot(values)):
            bad = [names[i] for i in np.flatnonzero(~np.isfinite(values))]
            if bad:
                raise InputError(f"non-finite {field} for joints {bad}", reason="not_finite")
    return Setpoint(names, pos, vel, eff, joint_map)


def effort_limits_from(value, n: int, default: np.ndarray | None = None) -> np.ndarray:
    """Validate an ``effort_limit`` parameter: one value for all joints or one per joint.

    Args:
        value: ``None`` (unset), a number or a sequence of n numbers [N·m], each > 0.
        n: Number of joints.
        default: (n,) limits used when ``value`` is ``None`` (``inf`` when not given).

    Returns:
        (n,) limits [N·m] (a new array).

    Raises:
        DimensionError: a sequence whose length is not n (or 1).
        ConfigError: a value that is not > 0 or is NaN (key ``effort_limit``).
    """
    from .validation import per_joint

    if value is None:
        return np.full(n, np.inf) if default is None else np.array(default, dtype=float)
    if not isinstance(value, (str, bytes)) and np.ndim(value) == 1 and len(value) == 1:
        value = value[0]  # a one-element ROS array parameter applies to every joint
    return per_joint("effort_limit", value, n, positive=True).copy()


class StageResult(NamedTuple):
    """What a stage publishes for one setpoint.

    Attributes:
        effort: (m,) [N·m] outgoing effort, message order (incoming + effective term).
        term: (m,) [N·m] the effective term alone (``effort - incoming``), 0 for non-model
            joints; published on ``~/effort`` so terms of chained stages add up exactly to
            the final command.
        clamped: Names of joints whose output was clamped to their effort limit.
    """

    effort: np.ndarray
    term: np.ndarray
    clamped: tuple[str, ...]


def apply_stage(
    setpoint: Setpoint,
    term: np.ndarray | None,
    scale: float,
    effort_limits: np.ndarray,
) -> StageResult:
    """Add ``scale·term`` to the incoming effort of the model joints and clamp.

    Args:
        setpoint: Parsed setpoint.
        term: (n_model,) [N·m] the stage's term in model order, or ``None`` for no term
            (disabled stage: the output effort is then the incoming one, bit for bit).
        scale: Multiplier on the term (finite).
        effort_limits: (n_model,) [N·m] symmetric limits (``inf`` for none).

    Returns:
        :class:`StageResult`.

    Raises:
        InputError: ``reason="not_finite"`` when the term is not finite (the caller drops
            the message rather than publish NaN).
    """
    incoming = setpoint.effort
    if term is None or scale == 0.0:
        return StageResult(incoming.copy(), np.zeros_like(incoming), ())
    index = setpoint.joint_map.index
    term = np.asarray(term, dtype=float)
    summed = incoming[index] + (term if scale == 1.0 else scale * term)
    if not math.isfinite(summed.dot(summed)) and not np.isfinite(summed).all():
        raise InputError("stage term is not finite", reason="not_finite")
    # minimum/maximum rather than np.clip: same result, a fraction of the call overhead.
    limited = np.minimum(np.maximum(summed, -effort_limits), effort_limits)
    out = incoming.copy()
    out[index] = limited
    clamped = ()
    changed = limited != summed
    if changed.any():
        clamped = tuple(setpoint.joint_map.model_names[i] for i in np.flatnonzero(changed))
    return StageResult(out, out - incoming, clamped)


class Throttle:
    """Lets a message through once per ``period`` seconds per key (for log throttling).

    Args:
        period: Minimum time between two passes of the same key [s].
        clock: Callable returning the current time [s] (monotonic by default).
    """

    def __init__(self, period: float = 2.0, clock: Callable[[], float] | None = None):
        import time

        self._period = period
        self._clock = clock or time.monotonic
        self._last: dict[str, float] = {}

    def ready(self, key: str) -> bool:
        """True when ``key`` has not passed within the last ``period`` seconds."""
        now = self._clock()
        last = self._last.get(key, -math.inf)
        if now - last >= self._period:
            self._last[key] = now
            return True
        return False


@dataclass(frozen=True)
class StageSettings:
    """Settings every stage shares, validated in one place (YAML, keyword or ``ros2 param set``).

    Attributes:
        enabled: ``False`` makes the stage a pure pass-through (term 0) for comparison runs.
        scale: Multiplier on the term [-]; finite. 1.0 applies the model as is.

    Raises:
        ConfigError: for a non-bool ``enabled`` or a non-finite ``scale``.
    """

    enabled: bool = True
    scale: float = 1.0

    def __post_init__(self):
        from .exceptions import ConfigError

        if not isinstance(self.enabled, (bool, np.bool_)):
            raise ConfigError(f"enable must be a bool, got {self.enabled!r}", key="enable",
                              value=self.enabled)
        if isinstance(self.scale, bool) or not isinstance(self.scale, (int, float)):
            raise ConfigError(f"scale must be a number, got {self.scale!r}", key="scale",
                              value=self.scale)
        if not math.isfinite(self.scale):
            raise ConfigError(f"scale must be finite, got {self.scale!r}", key="scale",
                              value=self.scale)
        object.__setattr__(self, "scale", float(self.scale))
        object.__setattr__(self, "enabled", bool(self.enabled))
