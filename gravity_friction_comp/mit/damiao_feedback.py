"""Damiao MIT-mode feedback frames: state nibble, p|v|τ, MOSFET and rotor temperatures.

Layout (8 bytes on the motor's master id): byte 0 = state nibble << 4 | CAN id low nibble,
bytes 1–5 the p16|v12|τ12 block (:mod:`~gravity_friction_comp.mit.quantize`), byte 6
T_MOS [°C], byte 7 T_rotor [°C] (FIELD_NOTES "MIT mode on CAN").

No rclpy import: pure Python.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gravity_friction_comp.errors import InputError, Reason
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.mit.quantize import (
    pack_pvt,
    temperature_byte,
    unpack_pvt,
)
from gravity_friction_comp.validation import frame_bytes

__all__ = [
    "DamiaoFeedback",
    "DamiaoState",
    "decode_feedback_damiao",
    "encode_feedback_damiao",
]

# --- Damiao feedback --------------------------------------------------------------------------


class DamiaoState(enum.IntEnum):
    """Damiao feedback state nibble (byte 0 high nibble), FIELD_NOTES."""

    DISABLED = 0x0
    ENABLED = 0x1
    OVER_VOLTAGE = 0x8
    UNDER_VOLTAGE = 0x9
    OVER_CURRENT = 0xA
    MOS_OVER_TEMPERATURE = 0xB
    COIL_OVER_TEMPERATURE = 0xC
    LOST_COMMUNICATION = 0xD
    OVERLOAD = 0xE


_DAMIAO_REASONS = {
    DamiaoState.OVER_VOLTAGE: "over-voltage",
    DamiaoState.UNDER_VOLTAGE: "under-voltage",
    DamiaoState.OVER_CURRENT: "over-current",
    DamiaoState.MOS_OVER_TEMPERATURE: "MOSFET over-temperature",
    DamiaoState.COIL_OVER_TEMPERATURE: "coil over-temperature",
    DamiaoState.LOST_COMMUNICATION: "lost communication",
    DamiaoState.OVERLOAD: "overload",
}


@dataclass(frozen=True)
class DamiaoFeedback:
    """Decoded Damiao MIT feedback frame (motor side).

    Attributes:
        motor_id: Low nibble of the motor's CAN id (byte 0 bits 3..0).
        state_code: State nibble 0..15 (byte 0 bits 7..4); see :class:`DamiaoState`.
        position [rad], velocity [rad/s], torque [N·m]: quantized values.
        t_mos: MOSFET temperature [°C]. t_rotor: rotor (coil) temperature [°C].
    """

    motor_id: int
    state_code: int
    position: float
    velocity: float
    torque: float
    t_mos: int
    t_rotor: int

    @property
    def state(self) -> DamiaoState | None:
        """The state as an enum, ``None`` for a nibble the protocol does not define."""
        try:
            return DamiaoState(self.state_code)
        except ValueError:
            return None

    @property
    def is_enabled(self) -> bool:
        """True when the motor reports state 1 (enabled)."""
        return self.state_code == DamiaoState.ENABLED

    @property
    def is_fault(self) -> bool:
        """True for every state but disabled (0) and enabled (1), undefined nibbles included."""
        return self.state_code not in (DamiaoState.DISABLED, DamiaoState.ENABLED)

    @property
    def fault_reason(self) -> str:
        """Human-readable fault, ``""`` when there is none."""
        if not self.is_fault:
            return ""
        state = self.state
        if state is None:
            return f"unknown state 0x{self.state_code:X}"
        return _DAMIAO_REASONS[state]

    @property
    def temperatures(self) -> tuple[tuple[str, int], ...]:
        """(name, °C) pairs for diagnostics."""
        return (("t_mos", self.t_mos), ("t_rotor", self.t_rotor))


def encode_feedback_damiao(
    can_id: int,
    state: int,
    position: float,
    velocity: float,
    torque: float,
    t_mos: float,
    t_rotor: float,
    limits: MotorLimits,
) -> bytes:
    """8-byte Damiao feedback: ``[state<<4 | id&0xF, p16, v12, τ12, T_mos, T_rotor]``.

    Args:
        can_id: Motor CAN id (only the low nibble is sent).
        state: State nibble 0..15 (:class:`DamiaoState` or int).
        position [rad], velocity [rad/s], torque [N·m]: clamped and rounded to nearest code.
        t_mos, t_rotor: Temperatures [°C], sent as unsigned bytes.
        limits: Ranges of the motor.

    Raises:
        InputError: NaN/inf values, state outside 0..15, bad id.

    Source: FIELD_NOTES "Damiao feedback"; openarm_can ``parse_motor_state_data``.
    """
    state = int(state)
    if not 0 <= state <= 15:
        raise InputError(f"state must be 0..15, got {state}", reason=Reason.RANGE)
    if isinstance(can_id, bool) or not isinstance(can_id, int):
        raise InputError(f"can_id must be a non-negative integer, got {can_id!r}", reason=Reason.TYPE)
    if can_id < 0:
        raise InputError(f"can_id must be a non-negative integer, got {can_id!r}", reason=Reason.RANGE)
    head = (state << 4) | (can_id & 0xF)
    return (
        bytes([head])
        + pack_pvt(position, velocity, torque, limits)
        + bytes([temperature_byte("t_mos", t_mos), temperature_byte("t_rotor", t_rotor)])
    )


def decode_feedback_damiao(data: bytes, limits: MotorLimits) -> DamiaoFeedback:
    """Decode an 8-byte Damiao feedback frame (inverse of :func:`encode_feedback_damiao`).

    Raises:
        InputError: not 8 bytes (reason ``Reason.SHAPE``) or not bytes-like (``Reason.TYPE``).
    """
    raw = frame_bytes(data, "feedback frame")
    if len(raw) != 8:
        raise InputError(f"Damiao feedback must be 8 bytes, got {len(raw)}", reason=Reason.SHAPE)
    p, v, t = unpack_pvt(raw[1:6], limits)
    return DamiaoFeedback(
        motor_id=raw[0] & 0xF,
        state_code=raw[0] >> 4,
        position=p,
        velocity=v,
        torque=t,
        t_mos=raw[6],
        t_rotor=raw[7],
    )
