"""Robstride MIT-mode feedback frames: motor id, p|v|τ, temperature ×10.

Layout (8 bytes, standard id = master id): byte 0 motor id (8 bits), bytes 1–5 the
p16|v12|τ12 block (:mod:`~gravity_friction_comp.mit.quantize`), bytes 6–7 temperature
[0.1 °C] big-endian. The MIT reply carries no fault bits: Robstride reports faults on a
separate request (``FF×6 00 FB``), so :attr:`RobstrideFeedback.is_fault` is always False and
the bridge's staleness check is what catches a silent motor.

Source: RobStride RS00 user manual (v1.0, 2025-11), MIT protocol chapter (feedback frame);
the RS01–RS06 manuals share that chapter, with each type's V/T ranges
(:data:`~gravity_friction_comp.mit.motor_table.MOTOR_TABLE`).

No rclpy import: pure Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gravity_friction_comp.errors import InputError, Reason
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.mit.quantize import check_byte, finite, pack_pvt, unpack_pvt
from gravity_friction_comp.validation import frame_bytes

__all__ = [
    "RobstrideFeedback",
    "decode_feedback_robstride",
    "encode_feedback_robstride",
]


@dataclass(frozen=True)
class RobstrideFeedback:
    """Decoded Robstride MIT feedback frame (motor side, output shaft of the actuator).

    Attributes:
        motor_id: Motor CAN id (byte 0).
        position [rad], velocity [rad/s], torque [N·m]: quantized values.
        temperature: Bytes 6–7 / 10 [°C].
    """

    motor_id: int
    position: float
    velocity: float
    torque: float
    temperature: float

    @property
    def is_fault(self) -> bool:
        """Always False: the MIT reply has no fault field (see the module docstring)."""
        return False

    @property
    def fault_reason(self) -> str:
        """Always ``""``."""
        return ""

    @property
    def temperatures(self) -> tuple[tuple[str, int], ...]:
        """(name, °C) pairs for diagnostics, whole degrees as the other families report."""
        return (("temperature", math.floor(self.temperature + 0.5)),)


def encode_feedback_robstride(
    motor_id: int, position: float, velocity: float, torque: float, limits: MotorLimits, temperature: float
) -> bytes:
    """Robstride MIT feedback: ``[id, p16, v12, τ12, temperature·10 (16 bit)]``.

    Raises:
        InputError: NaN/inf values, id outside 0..255, temperature outside 0..6553.5 °C.
    """
    deci = math.floor(finite("temperature", temperature) * 10.0 + 0.5)
    if not 0 <= deci <= 0xFFFF:
        raise InputError(f"temperature must be within 0..6553.5 °C, got {temperature!r}", reason=Reason.RANGE)
    head = bytes([check_byte("motor_id", motor_id)]) + pack_pvt(position, velocity, torque, limits)
    return head + deci.to_bytes(2, "big")


def decode_feedback_robstride(data: bytes, limits: MotorLimits) -> RobstrideFeedback:
    """Decode an 8-byte Robstride MIT feedback frame (inverse of the encoder).

    Raises:
        InputError: length other than 8 (reason ``Reason.SHAPE``).
    """
    raw = frame_bytes(data, "feedback frame")
    if len(raw) != 8:
        raise InputError(f"Robstride feedback must be 8 bytes, got {len(raw)}", reason=Reason.SHAPE)
    p, v, t = unpack_pvt(raw[1:6], limits)
    return RobstrideFeedback(
        motor_id=raw[0],
        position=p,
        velocity=v,
        torque=t,
        temperature=int.from_bytes(raw[6:8], "big") / 10.0,
    )
