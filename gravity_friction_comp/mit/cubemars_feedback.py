"""CubeMars AK MIT-mode feedback frames: driver id, p|v|τ, temperature, error byte.

Layout (8 bytes; 6 on old firmware): byte 0 driver id, bytes 1–5 the p16|v12|τ12 block
(:mod:`~gravity_friction_comp.mit.quantize`), byte 6 temperature [°C], byte 7 error code
(:class:`CubeMarsError`). Source: AK driver manual; TMotorCANControl.

No rclpy import: pure Python.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gravity_friction_comp.errors import InputError, Reason
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.mit.quantize import (
    check_byte,
    pack_pvt,
    temperature_byte,
    unpack_pvt,
)
from gravity_friction_comp.validation import frame_bytes

__all__ = [
    "CubeMarsError",
    "CubeMarsFeedback",
    "decode_feedback_cubemars",
    "encode_feedback_cubemars",
]

# --- CubeMars AK feedback ---------------------------------------------------------------------


class CubeMarsError(enum.IntEnum):
    """CubeMars AK MIT-mode error byte (byte 7). Source: AK driver manual; TMotorCANControl."""

    NONE = 0
    OVER_TEMPERATURE = 1
    OVER_CURRENT = 2
    OVER_VOLTAGE = 3
    UNDER_VOLTAGE = 4
    ENCODER = 5
    PHASE_CURRENT_UNBALANCE = 6


_CUBEMARS_REASONS = {
    CubeMarsError.OVER_TEMPERATURE: "over-temperature",
    CubeMarsError.OVER_CURRENT: "over-current",
    CubeMarsError.OVER_VOLTAGE: "over-voltage",
    CubeMarsError.UNDER_VOLTAGE: "under-voltage",
    CubeMarsError.ENCODER: "encoder fault",
    CubeMarsError.PHASE_CURRENT_UNBALANCE: "phase current unbalance (hardware may be damaged)",
}


@dataclass(frozen=True)
class CubeMarsFeedback:
    """Decoded CubeMars AK MIT feedback frame (motor side).

    Attributes:
        motor_id: Driver id (byte 0).
        position [rad], velocity [rad/s]: quantized values.
        torque: The 12-bit current field over ±T_MAX [N·m] (the driver's torque estimate).
        temperature: Byte 6 [°C] (unsigned), ``None`` in a 6-byte reply (old firmware).
        error_code: Byte 7 (0 none, 1–6 faults, :class:`CubeMarsError`), ``None`` in a
            6-byte reply.
    """

    motor_id: int
    position: float
    velocity: float
    torque: float
    temperature: int | None
    error_code: int | None

    @property
    def error(self) -> CubeMarsError | None:
        """The error byte as an enum; ``None`` when absent or undefined."""
        if self.error_code is None:
            return None
        try:
            return CubeMarsError(self.error_code)
        except ValueError:
            return None

    @property
    def is_fault(self) -> bool:
        """True for any non-zero error byte (undefined codes included)."""
        return self.error_code not in (None, 0)

    @property
    def fault_reason(self) -> str:
        """Human-readable fault, ``""`` when there is none."""
        if not self.is_fault:
            return ""
        err = self.error
        return _CUBEMARS_REASONS[err] if err is not None else f"unknown error code {self.error_code}"

    @property
    def temperatures(self) -> tuple[tuple[str, int], ...]:
        """(name, °C) pairs for diagnostics (empty for 6-byte replies)."""
        return () if self.temperature is None else (("temperature", self.temperature),)


def encode_feedback_cubemars(
    driver_id: int,
    position: float,
    velocity: float,
    torque: float,
    limits: MotorLimits,
    temperature: float | None = None,
    error_code: int | None = None,
) -> bytes:
    """CubeMars AK feedback: ``[id, p16, v12, i12, temperature, error]``.

    With ``temperature`` and ``error_code`` both ``None`` the 6-byte reply of old firmware
    is produced; otherwise both are required and 8 bytes are returned.

    Raises:
        InputError: NaN/inf, id or error outside 0..255, only one of temperature/error given.

    Source: CubeMars AK series driver manual V1.0.8, "MIT power mode driver board sending
    data definition"; neurobionics/TMotorCANControl ``parse_MIT_message`` (6 or 8 bytes).
    """
    head = bytes([check_byte("driver_id", driver_id)]) + pack_pvt(position, velocity, torque, limits)
    if temperature is None and error_code is None:
        return head
    if temperature is None or error_code is None:
        raise InputError(
            "give both temperature and error_code, or neither (6-byte reply)", reason=Reason.MISSING
        )
    return head + bytes([temperature_byte("temperature", temperature), check_byte("error_code", error_code)])


def decode_feedback_cubemars(data: bytes, limits: MotorLimits) -> CubeMarsFeedback:
    """Decode a 6- or 8-byte CubeMars AK feedback frame (inverse of the encoder).

    Raises:
        InputError: length other than 6 or 8 (reason ``Reason.SHAPE``).
    """
    raw = frame_bytes(data, "feedback frame")
    if len(raw) not in (6, 8):
        raise InputError(f"CubeMars feedback must be 6 or 8 bytes, got {len(raw)}", reason=Reason.SHAPE)
    p, v, t = unpack_pvt(raw[1:6], limits)
    long = len(raw) == 8
    return CubeMarsFeedback(
        motor_id=raw[0],
        position=p,
        velocity=v,
        torque=t,
        temperature=raw[6] if long else None,
        error_code=raw[7] if long else None,
    )
