"""Every exception and warning category of gravity_friction_comp, and the :class:`Reason` vocabulary.

One root exception, :class:`GravityFrictionCompError`; subclasses carry the offending
values as attributes so callers (and the nodes' parameter callbacks) can act on them.
:class:`InputError` carries a :class:`Reason` (a ``str`` enum: it formats as its value, so
throttle keys and messages built from it read ``"not_finite"``, ``"shape"``, ...).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any


class GravityFrictionCompError(Exception):
    """Root of every error this package raises on purpose."""


class ConfigError(GravityFrictionCompError, ValueError):
    """An invalid configuration value (YAML, constructor keyword or ROS parameter).

    Attributes:
        key: Name of the offending parameter, e.g. ``"payload.mass"`` (may be ``None``).
        value: The rejected value (may be ``None``).
    """

    def __init__(self, message: str, *, key: str | None = None, value: Any = None):
        super().__init__(message)
        self.key = key
        self.value = value


class BusOpenError(ConfigError, OSError):
    """The CAN bus could not be opened (no such interface/channel, missing driver, permission).

    Also an :class:`OSError` (as python-can's own interface errors are), so code that guards
    device access with ``except OSError`` catches it.

    Attributes:
        key: The parameter naming the bus (``"can.channel"``).
        value: The rejected value (the channel).
    """


class DimensionError(ConfigError):
    """A per-joint array whose length does not match the number of joints.

    Attributes:
        key: Name of the array.
        expected: Required length.
        actual: Length given.
    """

    def __init__(self, key: str, expected: int, actual: int):
        super().__init__(
            f"{key}: expected {expected} values (one per joint), got {actual}",
            key=key,
            value=actual,
        )
        self.expected = expected
        self.actual = actual


class ModelError(GravityFrictionCompError, ValueError):
    """A robot description that cannot be turned into a model (bad URDF, mimic cycle, ...).

    Attributes:
        joints: Names of the joints involved, when the problem is about joints.
    """

    def __init__(self, message: str, *, joints: Sequence[str] = ()):
        super().__init__(message)
        self.joints = tuple(joints)


class Reason(enum.StrEnum):
    """Why a runtime input was refused: the one vocabulary of :attr:`InputError.reason`."""

    INVALID = "invalid"
    """Unspecified (the default when a caller gives none)."""
    TYPE = "type"
    """Not of the expected kind: not a number, not bytes, not a sequence of numbers."""
    NOT_FINITE = "not_finite"
    """A NaN or ±inf where a finite number is required."""
    SHAPE = "shape"
    """Wrong length or shape: an array not (n,), a frame of the wrong byte count, a field
    whose length does not match the joint names."""
    RANGE = "range"
    """A finite number outside its allowed range: a code that does not fit its bits, a time
    step or tolerance out of bounds, a register value or identified coefficient that is not
    plausible, a load beyond what the friction model can invert."""
    MISSING = "missing"
    """A required item is absent: a bag topic, one of two arguments that go together."""
    MISSING_JOINTS = "missing_joints"
    """Joints the model needs are absent from a message or log (or unknown to the model)."""
    DUPLICATE_NAMES = "duplicate_names"
    """A joint name repeats in a message."""
    NOT_READY = "not_ready"
    """Called before the input it needs has arrived (e.g. no velocity yet)."""
    FILE = "file"
    """A file or folder that does not exist or cannot be read."""
    FORMAT = "format"
    """Readable, but not in the expected layout (CSV header, bag message, log columns)."""
    SPECIAL_FRAME = "special_frame"
    """A CAN special frame (enable, disable, zero, clear fault) where an MIT command was expected."""
    TOO_LITTLE_MOTION = "too_little_motion"
    """A log too short, or moving too little, to identify friction from."""
    SIGN = "sign"
    """An identified coefficient with a physically impossible sign (e.g. negative damping)."""
    NO_SOLUTION = "no_solution"
    """An implicit equation whose iterative solution did not converge."""


class InputError(GravityFrictionCompError, ValueError):
    """A runtime input (setpoint message, array) that cannot be used as is.

    Args:
        message: Human-readable text.
        reason: A :class:`Reason` member; a ``str`` equal to a member's value is accepted
            and converted.

    Attributes:
        reason: The :class:`Reason`, e.g. ``Reason.NOT_FINITE``, ``Reason.MISSING_JOINTS``.

    Raises:
        ValueError: ``reason`` is a string that is no :class:`Reason` value (a typo fails at
            construction, not silently in a throttle key).
        TypeError: ``reason`` is neither a :class:`Reason` nor a ``str``.
    """

    def __init__(self, message: str, *, reason: Reason | str = Reason.INVALID):
        super().__init__(message)
        if not isinstance(reason, str):
            raise TypeError(f"InputError reason must be a Reason, got {type(reason).__name__} {reason!r}")
        try:
            self.reason = Reason(reason)
        except ValueError:
            raise ValueError(
                f"InputError reason {reason!r} is not a Reason; valid: {[r.value for r in Reason]}"
            ) from None


class IdentificationError(InputError):
    """A joint log that cannot be read, or identified from (``reason``: ``MISSING``,
    ``MISSING_JOINTS``, ``TOO_LITTLE_MOTION``, ``NOT_FINITE``, ``FORMAT``, ``FILE``,
    ``SIGN``, ``RANGE``)."""


class ModelWarning(UserWarning):
    """A robot description that loads but is probably not what the user meant.

    Issued (via :func:`warnings.warn`) for ``<mimic>`` on a fixed joint (ignored), for moving
    links without ``<inertial>`` (massless) and for a moving mass below
    :data:`~gravity_friction_comp.model.robot_model.MIN_TOTAL_MASS` (gravity will be ~0).
    """


class LockstepStalled(GravityFrictionCompError, RuntimeError):
    """The chain stopped answering in lockstep simulation; the message names the silent topic."""


class RunIncomplete(GravityFrictionCompError, RuntimeError):
    """A simulated run recorded too little to judge (too few samples, or it did not finish
    in its wall-clock allowance): in real time, a machine that could not keep up."""
