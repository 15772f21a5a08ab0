"""Exceptions raised by gravity_friction_comp.

One root exception, :class:`GravityFrictionCompError`; subclasses carry the offending
values as attributes so callers (and the nodes' parameter callbacks) can act on them.
"""

from __future__ import annotations

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


class InputError(GravityFrictionCompError, ValueError):
    """A runtime input (setpoint message, array) that cannot be used as is.

    Attributes:
        reason: Short machine-friendly reason, e.g. ``"nan"``, ``"missing_joints"``.
    """

    def __init__(self, message: str, *, reason: str = "invalid"):
        super().__init__(message)
        self.reason = reason
