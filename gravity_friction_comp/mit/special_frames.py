"""MIT-mode special frames: enable, disable, set zero, clear error (``FF×7 + xx``).

Special frames: ``FF×7 + FC`` enable, ``FD`` disable, ``FE`` set zero, ``FB`` clear error
(Damiao; Robstride in MIT mode uses the same four). CubeMars AK uses FC ("enter motor
control mode"), FD ("exit") and FE ("set origin") and has no clear-error frame. Command frames never alias them
(:data:`~gravity_friction_comp.mit.codec.P_CODE_MAX`).

No rclpy import: pure Python.
"""

from __future__ import annotations

import enum

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.validation import frame_bytes

__all__ = [
    "CLEAR_ERROR_FRAME",
    "DISABLE_FRAME",
    "ENABLE_FRAME",
    "SET_ZERO_FRAME",
    "SpecialFrame",
    "classify_special_frame",
    "clear_error_frames",
    "special_frame",
]

# --- special frames ---------------------------------------------------------------------------

_FAMILIES = ("cubemars", "damiao", "robstride")  # mit.motor_table.FAMILIES


class SpecialFrame(enum.Enum):
    """MIT-mode special commands; the value is the last data byte after ``FF×7``."""

    ENABLE = 0xFC
    DISABLE = 0xFD
    SET_ZERO = 0xFE
    CLEAR_ERROR = 0xFB


def special_frame(kind: SpecialFrame, family: str = "damiao") -> bytes:
    """Data bytes of a special frame: ``FF FF FF FF FF FF FF <kind>``.

    Args:
        kind: Which command.
        family: ``"damiao"``, ``"cubemars"`` or ``"robstride"``.

    Returns:
        8 bytes.

    Raises:
        ConfigError: ``CLEAR_ERROR`` for CubeMars (it has none; use :func:`clear_error_frames`),
            or an unknown family.

    Source: FIELD_NOTES; CubeMars AK driver manual (MIT mode: FC enter, FD exit, FE origin).
    """
    if family not in _FAMILIES:
        raise ConfigError(
            f"family must be one of {', '.join(_FAMILIES)}, got {family!r}", key="family", value=family
        )
    if family == "cubemars" and kind is SpecialFrame.CLEAR_ERROR:
        raise ConfigError("CubeMars AK has no clear-error frame", key="kind", value=kind.name)
    return bytes([0xFF] * 7 + [kind.value])


ENABLE_FRAME = special_frame(SpecialFrame.ENABLE)
DISABLE_FRAME = special_frame(SpecialFrame.DISABLE)
SET_ZERO_FRAME = special_frame(SpecialFrame.SET_ZERO)
CLEAR_ERROR_FRAME = special_frame(SpecialFrame.CLEAR_ERROR)


def classify_special_frame(data: bytes) -> SpecialFrame | None:
    """The special command ``data`` is, or ``None`` for any other frame (e.g. MIT commands).

    Raises:
        InputError: ``data`` is not bytes-like (reason ``Reason.TYPE``).
    """
    raw = frame_bytes(data)
    if len(raw) != 8 or raw[:7] != b"\xff" * 7:
        return None
    try:
        return SpecialFrame(raw[7])
    except ValueError:
        return None


def clear_error_frames(family: str) -> tuple[bytes, ...]:
    """Frames that clear a latched motor fault and re-enable the motor, in send order.

    Damiao: clear error (FB) then enable (FC). CubeMars AK (no clear frame): exit (FD) then
    enter motor control mode (FC).

    Raises:
        ConfigError: unknown family.
    """
    if family in ("damiao", "robstride"):
        return (CLEAR_ERROR_FRAME, ENABLE_FRAME)
    if family == "cubemars":
        return (DISABLE_FRAME, ENABLE_FRAME)
    raise ConfigError(
        f"family must be one of {', '.join(_FAMILIES)}, got {family!r}", key="family", value=family
    )
