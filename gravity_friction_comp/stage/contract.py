"""The feedforward-stage contract, ROS-free: map a setpoint to model joints, add a term, clamp.

Every compensation node (gravity, friction) is a *stage*: it reads a joint setpoint
(names, position, optional velocity, optional effort), adds its own term to the incoming
effort (missing effort = 0) for the joints it knows, and passes everything else through.
This module holds that contract once, so the nodes only translate messages:

.. math::

    \\tau_{out,i} = \\operatorname{clip}(\\tau_{in,i} + s_i\\,\\tau_{term,i},\\ -\\tau_{max,i},\\ \\tau_{max,i})

for model joints ``i`` (``s_i`` the stage's scale: one number, or one per model joint;
``τ_max`` the URDF effort limit), and
``τ_out = τ_in`` for joints the stage does not model (see ``ARCHITECTURE.md``).
"""

from __future__ import annotations

import array
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple, cast

import numpy as np

from gravity_friction_comp.errors import InputError, Reason
from gravity_friction_comp.stage.settings import MAX_SCALE, StageSettings

__all__ = [
    "FeedforwardStage",
    "JointMap",
    "MAX_SCALE",
    "Setpoint",
    "StageResult",
    "StageSettings",
    "apply_stage",
    "effort_limits_from",
    "parse_setpoint",
    "stage_time",
]


@dataclass(frozen=True)
class JointMap:
    """Where each model joint sits in a message's ``name`` array.

    Attributes:
        message_names: The message's joint names, in message order.
        model_names: The model's joint names, in model order.
        index: (n_model,) int array; ``message[index[i]]`` is model joint ``i``.
        identity: ``True`` when the message names are exactly the model names in model order
            (then no gather/scatter is needed).
    """

    message_names: tuple[str, ...]
    model_names: tuple[str, ...]
    index: np.ndarray
    identity: bool = False

    @staticmethod
    def for_names(message_names: Sequence[str], model_names: Sequence[str]) -> JointMap:
        """Map by name (never by position: peers break when orders differ, FIELD_NOTES).

        Args:
            message_names: Names in the message, any order, may include extra joints.
            model_names: Names the stage computes for.

        Returns:
            A :class:`JointMap`, shared by every call with equal names (a cache of the last
            64 name pairs: building one is ~5 µs, half of :func:`parse_setpoint`, and a chain
            maps the same names on every message; a JointMap is immutable).

        Raises:
            InputError: reason ``Reason.DUPLICATE_NAMES`` when a name repeats in the message,
                reason ``Reason.MISSING_JOINTS`` when model joints are absent from it.
        """
        return _joint_map(tuple(message_names), tuple(model_names))


@lru_cache(maxsize=64)  # errors are raised, never cached
def _joint_map(message_names: tuple[str, ...], model_names: tuple[str, ...]) -> JointMap:
    """The :class:`JointMap` of two name tuples (cached: see :meth:`JointMap.for_names`)."""
    position = {name: i for i, name in enumerate(message_names)}
    if len(position) != len(message_names):
        repeated = next(name for i, name in enumerate(message_names) if name in message_names[:i])
        raise InputError(f"duplicate joint name {repeated!r} in setpoint", reason=Reason.DUPLICATE_NAMES)
    try:
        index = np.array([position[name] for name in model_names], dtype=np.intp)
    except KeyError:
        missing = [name for name in model_names if name not in position]
        raise InputError(
            f"setpoint lacks model joints {missing} (has {list(message_names)})",
            reason=Reason.MISSING_JOINTS,
        ) from None
    index.setflags(write=False)
    return JointMap(message_names, model_names, index, message_names == model_names)


class Setpoint(NamedTuple):
    """A validated joint setpoint, arrays in message order (a NamedTuple: cheap at 1 kHz).

    Attributes:
        names: Joint names, message order.
        position: (m,) [rad or m].
        velocity: (m,) [rad/s or m/s], or ``None`` when the message had none.
        effort: (m,) [N·m or N]; zeros when the message had none.
        joint_map: Model joints' indices into these arrays.
        has_effort: ``False`` when the message had no effort (``effort`` is then zeros).

    The ``model_*`` accessors return the arrays themselves (not copies) when the message is
    exactly the model's joints in model order; treat all of them as read-only.
    """

    names: tuple[str, ...]
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray
    joint_map: JointMap
    has_effort: bool = True

    def model_position(self) -> np.ndarray:
        """(n_model,) positions in model order."""
        jm = self.joint_map
        return self.position if jm.identity else self.position[jm.index]

    def model_velocity(self) -> np.ndarray | None:
        """(n_model,) velocities in model order, or ``None`` when the setpoint has none."""
        if self.velocity is None:
            return None
        jm = self.joint_map
        return self.velocity if jm.identity else self.velocity[jm.index]

    def model_effort(self) -> np.ndarray:
        """(n_model,) incoming efforts in model order."""
        jm = self.joint_map
        return self.effort if jm.identity else self.effort[jm.index]

    def passed_on(self, effort: np.ndarray, model_names: Sequence[str]) -> Setpoint:
        """What :func:`parse_setpoint` gives for this setpoint with ``effort`` against
        ``model_names``, without checking again what this parse checked (a stage hands its
        output to the next one in the same process): the same names, positions and
        velocities, ``effort`` (m,) [N·m] in message order (a stage's outgoing effort: finite,
        float64, read-only by contract), a joint map for ``model_names``.

        Raises:
            InputError: ``Reason.MISSING_JOINTS`` as :func:`parse_setpoint` (same message).
        """
        joint_map = self.joint_map
        if model_names != joint_map.model_names:  # the next stage models other joints
            joint_map = JointMap.for_names(self.names, model_names)
        return Setpoint(self.names, self.position, self.velocity, effort, joint_map, len(effort) > 0)


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
        A :class:`Setpoint` with float64 arrays: views (no copy) of ``array('d')`` inputs,
        which is what rclpy gives for JointState, copies of anything else. Read-only by
        contract: the stages never write to them.

    Raises:
        InputError: with ``reason`` one of ``Reason.TYPE`` (a field that is not a flat
            sequence of real numbers: ``None``, strings, complex, nested lists),
            ``Reason.SHAPE`` (lengths, or an array that is not 1-D), ``Reason.DUPLICATE_NAMES``,
            ``Reason.MISSING_JOINTS``, ``Reason.NOT_FINITE``.
    """
    if isinstance(names, (str, bytes)) or not hasattr(names, "__len__"):
        raise InputError(f"names must be a list of joint names, got {names!r}", reason=Reason.TYPE)
    m = len(names)
    pos = _floats(position, "position")
    vel_in = _floats(velocity, "velocity")
    eff_in = _floats(effort, "effort")
    n_vel, n_eff = len(vel_in), len(eff_in)
    if len(pos) != m or n_vel not in (0, m) or n_eff not in (0, m):
        _raise_length_mismatch(m, len(pos), n_vel, n_eff)
    joint_map = JointMap.for_names(names, model_names)
    vel = vel_in if n_vel else None
    eff = eff_in if n_eff else _zeros(m)
    # A sum is the cheapest finiteness screen (NaN/inf propagate); only a non-finite (or
    # overflowing) total pays for the element-wise check below.
    total = _sum(position, pos)
    if n_vel:
        total += _sum(velocity, vel_in)
    if n_eff:
        total += _sum(effort, eff_in)
    if not math.isfinite(total):
        for field, values in (("position", pos), ("velocity", vel), ("effort", eff)):
            if values is not None:
                bad = [joint_map.message_names[i] for i in np.flatnonzero(~np.isfinite(values))]
                if bad:
                    raise InputError(f"non-finite {field} for joints {bad}", reason=Reason.NOT_FINITE)
    return Setpoint(joint_map.message_names, pos, vel, eff, joint_map, n_eff > 0)


def _floats(values, field: str) -> np.ndarray:
    """``values`` as a 1-D float64 array; InputError ``Reason.TYPE``/``SHAPE`` otherwise."""
    # rclpy's array('d') fields are viewed without a copy (a third of the conversion time)
    if type(values) is array.array and values.typecode == "d":
        return np.frombuffer(values)
    if values is None or isinstance(values, (str, bytes)):
        raise InputError(f"{field} must be a list of numbers, got {values!r}", reason=Reason.TYPE)
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError):  # ragged nesting, a foreign object
        raise InputError(
            f"{field} must be a flat list of numbers, got {values!r}", reason=Reason.TYPE
        ) from None
    if raw.ndim != 1:
        raise InputError(f"{field} must be a flat list (1-D), got shape {raw.shape}", reason=Reason.SHAPE)
    if raw.dtype.kind == "f":
        return raw.astype(float, copy=raw is values)  # never the caller's own array
    if raw.dtype.kind in "iu" or (raw.size == 0 and raw.dtype.kind != "O"):
        return raw.astype(float)
    if raw.dtype.kind == "O" and all(
        isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))
        for x in raw
    ):
        try:  # e.g. an int beyond the float range
            return raw.astype(float)
        except OverflowError:
            raise InputError(f"non-finite {field}: {values!r}", reason=Reason.NOT_FINITE) from None
    raise InputError(f"{field} must be real numbers, got {values!r}", reason=Reason.TYPE)


def _sum(values, arr: np.ndarray) -> float:
    # Python's sum over array('d')/list is the fast path; numpy arrays sum themselves
    return sum(values) if type(values) in (array.array, list, tuple) else float(arr.sum())


def stage_time(t) -> float:
    """A setpoint time ``t`` [s] as a finite float (the filters divide by time steps).

    Raises:
        InputError: ``Reason.TYPE`` not a real number (bools too), ``Reason.NOT_FINITE`` NaN/inf.
    """
    if type(t) is float and math.isfinite(t):  # a node's stamp: the common case first
        return t
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, float, np.integer, np.floating)):
        raise InputError(f"t must be a time in seconds, got {t!r}", reason=Reason.TYPE)
    try:
        out = float(t)
    except OverflowError:
        raise InputError(f"t must be finite, got {t!r}", reason=Reason.NOT_FINITE) from None
    if not math.isfinite(out):
        raise InputError(f"t must be finite, got {t!r}", reason=Reason.NOT_FINITE)
    return out


@lru_cache(maxsize=16)
def _zeros(n: int) -> np.ndarray:
    zeros = np.zeros(n)
    zeros.setflags(write=False)
    return zeros


def _raise_length_mismatch(m: int, n_pos: int, n_vel: int, n_eff: int):
    if n_pos != m:
        raise InputError(f"position has {n_pos} values for {m} names", reason=Reason.SHAPE)
    for field, count in (("velocity", n_vel), ("effort", n_eff)):
        if count not in (0, m):
            raise InputError(
                f"{field} has {count} values for {m} names (expected 0 or {m})", reason=Reason.SHAPE
            )


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
    from gravity_friction_comp.validation import per_joint

    if value is None:
        return np.full(n, np.inf) if default is None else np.array(default, dtype=float)
    if not isinstance(value, (str, bytes)) and np.ndim(value) == 1 and len(value) == 1:
        value = value[0]  # a one-element ROS array parameter applies to every joint
    return per_joint("effort_limit", value, n, positive=True).copy()


class StageResult:
    """What a stage publishes for one setpoint.

    Attributes:
        effort: (m,) [N·m] outgoing effort, message order (incoming + effective term).
        term: (m,) [N·m] the effective term alone (``effort - incoming``, the incoming
            effort taken at its limit where it was beyond it: ``|term| ≤ 2·τ_max``), 0 for
            non-model joints; published on ``~/effort`` so terms of chained stages add up
            exactly to the final command (each stage's incoming is the previous one's output).
            Computed on first access when the stage had incoming effort (most setpoints are
            never echoed on ``~/effort``).
        clamped: Names of joints whose output was clamped to their effort limit.
        setpoint: The parsed :class:`Setpoint` the stage computed from (set by the stage;
            ``None`` from :func:`apply_stage` alone): with :meth:`Setpoint.passed_on`, the
            next stage's input without a second parse.
    """

    __slots__ = ("effort", "clamped", "_term", "_incoming", "setpoint")

    def __init__(
        self,
        effort: np.ndarray,
        term: np.ndarray | None,
        clamped: tuple[str, ...],
        incoming: np.ndarray | None = None,
    ):
        self.effort = effort
        self.clamped = clamped
        self._term = term
        self._incoming = incoming  # the incoming effort, at its limit where it was beyond it
        self.setpoint: Setpoint | None = None

    @property
    def term(self) -> np.ndarray:
        if self._term is None:
            self._term = self.effort - self._incoming
        return self._term


def apply_stage(
    setpoint: Setpoint,
    term: np.ndarray | None,
    scale: float | np.ndarray,
    effort_limits: np.ndarray,
) -> StageResult:
    """Add ``scale·term`` (element-wise) to the incoming effort of the model joints and clamp.

    The output is ``clip(incoming + scale·term)`` whatever the incoming effort; the published
    term (``~/effort``) is the output minus the incoming effort taken at the limit, so an
    absurd incoming 1e30 gives a term within twice the limit (it was ≈ −1e30). Within the
    limits the term is exactly output − incoming.

    Args:
        setpoint: Parsed setpoint.
        term: (n_model,) [N·m] the stage's term in model order, or ``None`` for no term
            (disabled stage: the output effort is then the incoming one, bit for bit).
        scale: Multiplier on the term (finite): a number, or (n_model,) in model order.
        effort_limits: (n_model,) [N·m] symmetric limits (``inf`` for none).

    Returns:
        :class:`StageResult`; for a setpoint without effort, ``term`` is the same array as
        ``effort`` (treat both as read-only).

    Raises:
        InputError: reason ``Reason.NOT_FINITE`` when the term is not finite (the caller drops
            the message rather than publish NaN).
    """
    incoming = setpoint.effort
    per_joint = isinstance(scale, np.ndarray)
    if term is None or (not per_joint and scale == 0.0):
        return StageResult(incoming.copy(), np.zeros_like(incoming), ())
    joint_map = setpoint.joint_map
    term = np.asarray(term, dtype=float)
    # a scalar 1 skips the multiply (bit-identical either way); per joint: s_i·τ_i
    scaled = scale * term if per_joint or scale != 1.0 else term
    has_effort = setpoint.has_effort
    if has_effort:
        model_in = incoming if joint_map.identity else incoming[joint_map.index]
        summed = model_in + scaled
    else:
        summed = scaled + _zeros(len(scaled))  # the absent incoming 0: IEEE 0 + -0.0 = +0.0
    clamped: tuple[str, ...] = ()
    # A few joints: the checks on Python floats (one conversion) cost less than numpy's
    # calls. A sum is the finiteness screen (NaN/inf propagate); only a non-finite (or
    # overflowing) total pays for the element-wise check.
    values = summed.tolist()
    if not math.isfinite(sum(values)) and not np.isfinite(summed).all():
        raise InputError("stage term is not finite", reason=Reason.NOT_FINITE)
    # Test before clamping (clamping is rare); limits of another shape: numpy broadcasts them
    beyond = not isinstance(effort_limits, np.ndarray) or effort_limits.shape != summed.shape
    if not beyond:
        limits = effort_limits.tolist()
        # the incoming effort too: beyond its limit, a term may bring the sum back inside
        pairs = zip(values, model_in.tolist(), limits) if has_effort else zip(values, values, limits)
        for x, y, limit in pairs:
            if abs(x) > limit or abs(y) > limit:
                beyond = True
                break
    if beyond:
        if has_effort and (np.abs(model_in) > effort_limits).any():
            # the term's reference only (the output stays clip(in + term)): the incoming
            # effort at the limit, so ~/effort stays finite and bounded (1e30 in made it -1e30)
            incoming = incoming.copy()
            incoming[joint_map.index] = np.minimum(np.maximum(model_in, -effort_limits), effort_limits)
        over = np.flatnonzero(np.abs(summed) > effort_limits)
        if over.size:
            clamped = tuple(joint_map.model_names[i] for i in over)
            # minimum/maximum rather than np.clip: same result, less call overhead
            summed = np.minimum(np.maximum(summed, -effort_limits), effort_limits)
    if joint_map.identity:
        out = summed
    else:
        out = incoming.copy()
        out[joint_map.index] = summed
    if has_effort:
        return StageResult(out, None, clamped, incoming)
    return StageResult(out, out, clamped)


class FeedforwardStage:
    """Base of the ROS-free stages: the one data path every stage (and its node) runs.

    A setpoint goes through :func:`parse_setpoint` against :meth:`joint_names`, updates the
    stage's state (:meth:`_accept`: velocity and acceleration filters), gives the term
    (:meth:`_term`) and leaves through :func:`apply_stage` with the stage's
    :class:`StageSettings` and :meth:`effort_limits`. The last accepted setpoint is kept, so
    :meth:`repeat` recomputes the output when a setting changes without a new setpoint (what
    the nodes republish). Not thread-safe.

    Args:
        settings: enable and scale (default: enabled, scale 1).
    """

    def __init__(self, settings: StageSettings | None = None):
        self._settings = StageSettings() if settings is None else settings
        self._last: tuple | None = None  # (names, position, velocity, effort) as given

    # ---- hooks ------------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names the stage computes for (the others pass through)."""
        raise NotImplementedError

    def effort_limits(self) -> np.ndarray:
        """(n_model,) [N·m] symmetric limits of the outgoing effort (``inf`` for none)."""
        raise NotImplementedError

    def _accept(self, setpoint: Setpoint, t: float) -> None:
        """Update the state from a new setpoint (time ``t`` [s])."""

    def _term(self, setpoint: Setpoint) -> np.ndarray | None:
        """(n_model,) [N·m] term in model order, or ``None`` for no term."""
        raise NotImplementedError

    # ---- settings -----------------------------------------------------------------------
    @property
    def settings(self) -> StageSettings:
        """The enable switch and scale in force."""
        return self._settings

    def set_settings(self, settings: StageSettings) -> None:
        """Replace enable and scale (validated by :class:`StageSettings`).

        Raises:
            ConfigError: not a StageSettings.
            DimensionError: a per-joint scale whose length is not the stage's joint count.
        """
        if not isinstance(settings, StageSettings):
            from gravity_friction_comp.errors import ConfigError

            raise ConfigError(f"settings must be StageSettings, got {settings!r}", key="settings")
        settings.scale_for(len(self.joint_names))
        self._settings = settings

    def set_enabled(self, enabled: bool) -> None:
        """``False``: term 0, output = incoming effort. Raises ConfigError for a non-bool."""
        self.set_settings(StageSettings(enabled=enabled, scale=self._settings.scale))

    def set_scale(self, scale: float | Sequence[float]) -> None:
        """Multiplier on the term [-]: a number or one per model joint (model order).

        Raises:
            ConfigError: as :class:`StageSettings`.
            DimensionError: a per-joint scale of the wrong length (key ``scale``).
        """
        # StageSettings checks and converts a sequence (its field's type is the stored form)
        self.set_settings(StageSettings(enabled=self._settings.enabled, scale=cast(Any, scale)))

    # ---- data path ----------------------------------------------------------------------
    def update(
        self, names, position, velocity, effort, t: float, *, parsed: Setpoint | None = None
    ) -> StageResult:
        """One new setpoint (``sensor_msgs/JointState`` fields) at time ``t`` [s].

        Args:
            names: (m,) joint names, any order; joints the stage lacks pass through.
            position: (m,) [rad or m]. velocity, effort: (m,) or empty.
            t: setpoint time [s] (its stamp; used by the filters).
            parsed: ``None``, or these fields already parsed against :attr:`joint_names`
                (the previous stage's ``result.setpoint.passed_on(result.effort,
                stage.joint_names)``): the parse is skipped, every other step is the same.

        Returns:
            :class:`StageResult` in message order.

        Raises:
            InputError: a setpoint :func:`parse_setpoint` refuses or a ``t`` that is not a
                finite number (:func:`stage_time`; nothing is kept), or a non-finite term (the setpoint is kept, as it was accepted).
            ValueError: ``parsed`` mapped for other joints than :attr:`joint_names`.
        """
        t = stage_time(t)
        if parsed is None:
            setpoint = parse_setpoint(names, position, velocity, effort, self.joint_names)
        elif parsed.joint_map.model_names != self.joint_names:
            raise ValueError(
                f"parsed setpoint is mapped for {parsed.joint_map.model_names}, not {self.joint_names}"
            )
        else:
            setpoint = parsed
        self._last = (names, position, velocity, effort)
        self._accept(setpoint, t)
        return self._apply(setpoint)

    def evaluate(self, names, position, velocity, effort) -> StageResult:
        """As :meth:`update` without touching the filters; the setpoint is kept for :meth:`repeat`."""
        setpoint = parse_setpoint(names, position, velocity, effort, self.joint_names)
        self._last = (names, position, velocity, effort)
        return self._apply(setpoint)

    def repeat(self) -> StageResult | None:
        """The output for the last kept setpoint with the settings in force (``None``: none yet).

        Raises:
            InputError: as :meth:`evaluate` (e.g. the joints changed with the config).
        """
        return None if self._last is None else self.evaluate(*self._last)

    @property
    def kept(self) -> tuple | None:
        """The last kept setpoint ``(names, position, velocity, effort)`` as given, or ``None``.

        A new tuple each time one is kept, so ``is`` tells whether a call kept its setpoint.
        """
        return self._last

    def _apply(self, setpoint: Setpoint) -> StageResult:
        settings = self._settings
        term = self._term(setpoint) if settings.enabled else None
        result = apply_stage(setpoint, term, settings.scale, self.effort_limits())
        result.setpoint = setpoint
        return result
