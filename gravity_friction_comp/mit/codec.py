"""MIT-mode command frames: p, v, kp, kd, τ_ff ↔ the 8 data bytes sent to a motor.

Command frame (classic CAN, arbitration id = motor CAN id, 8 bytes), big-endian bit packing::

    bits 63..48  p     16 bit  [-P_MAX, P_MAX] rad
    bits 47..36  v     12 bit  [-V_MAX, V_MAX] rad/s
    bits 35..24  kp    12 bit  [0, KP_MAX]     N·m/rad
    bits 23..12  kd    12 bit  [0, KD_MAX]     N·m·s/rad
    bits 11..0   τ_ff  12 bit  [-T_MAX, T_MAX] N·m

and the motor runs τ = kp(p_des − p) + kd(v_des − v) + τ_ff (FIELD_NOTES "MIT mode on CAN").

Fields are quantized by :mod:`~gravity_friction_comp.mit.quantize` (round to nearest).
Feedback frames are decoded in :mod:`~gravity_friction_comp.mit.feedback`; special frames
(enable, disable, …) are :mod:`~gravity_friction_comp.mit.special_frames`.

Special-frame aliasing: a saturated command can pack to exactly the bytes of a special
frame ``FF×7 + xx`` (p, v, kp, kd codes all at their maximum and τ code 0xFFB..0xFFE). Rule
used here, the smallest one that excludes every ``FF×7 + xx`` frame: the position code is
kept at most 0xFFFE (one code inside +P_MAX). Position code 0xFFFF is only reached by
requests within ½ LSB (≈ 0.19 mrad on ±12.5 rad) of +P_MAX or beyond it, i.e. requests
already at the clamp, and the change is one LSB (0.38 mrad). Byte 1 of a command frame is
then never 0xFF.

No rclpy import: pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from gravity_friction_comp.errors import InputError, Reason
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.mit.quantize import (
    KD_BITS,
    KP_BITS,
    P_BITS,
    T_BITS,
    V_BITS,
    check_limits,
    finite,
    float_to_uint_unchecked,
    uint_to_float_unchecked,
)
from gravity_friction_comp.mit.special_frames import classify_special_frame
from gravity_friction_comp.validation import frame_bytes

__all__ = [
    "MitCommand",
    "MitCommandCodes",
    "P_CODE_MAX",
    "command_codes",
    "decode_command",
    "encode_command",
    "pack_command_codes",
    "position_step",
    "torque_step",
    "unpack_command_codes",
    "velocity_step",
]

#: Largest position code a command frame may carry (see the module docstring).
P_CODE_MAX = (1 << P_BITS) - 2


def position_step(limits: MotorLimits) -> float:
    """[rad] One code of the 16-bit position field (command and feedback), motor side:
    2·P_MAX / (2^16 − 1), 0.38 mrad at ±12.5 rad; divide by the gear ratio for the joint.

    Raises:
        ConfigError: ``limits`` not a :class:`MotorLimits` (key ``limits``).
    """
    p_max = check_limits(limits).p_max
    return 2.0 * p_max / ((1 << P_BITS) - 1)  # the span [-P_MAX, P_MAX] over the codes


def velocity_step(limits: MotorLimits) -> float:
    """[rad/s] One code of the 12-bit velocity field (command and feedback), motor side:
    2·V_MAX / (2^12 − 1); 0 is no code, it reads ±½ step (module docstring of quantize).

    Raises:
        ConfigError: ``limits`` not a :class:`MotorLimits` (key ``limits``).
    """
    return 2.0 * check_limits(limits).v_max / ((1 << V_BITS) - 1)


def torque_step(limits: MotorLimits) -> float:
    """[N·m] One code of the 12-bit torque field (command τ_ff and feedback), motor side:
    2·T_MAX / (2^12 − 1).

    Raises:
        ConfigError: ``limits`` not a :class:`MotorLimits` (key ``limits``).
    """
    return 2.0 * check_limits(limits).t_max / ((1 << T_BITS) - 1)


#: Field widths of a command frame, most significant first.
_FIELD_BITS = (P_BITS, V_BITS, KP_BITS, KD_BITS, T_BITS)


# --- command frames ---------------------------------------------------------------------------


class MitCommandCodes(NamedTuple):
    """Raw field codes of a command frame (p 16 bit, others 12 bit)."""

    p: int
    v: int
    kp: int
    kd: int
    tau: int


@dataclass(frozen=True)
class MitCommand:
    """A decoded MIT command (motor side).

    Attributes:
        position: p_des [rad]. velocity: v_des [rad/s]. kp: [N·m/rad]. kd: [N·m·s/rad].
        tau_ff: feedforward torque [N·m].
    """

    position: float
    velocity: float
    kp: float
    kd: float
    tau_ff: float


def command_codes(
    position: float, velocity: float, kp: float, kd: float, tau_ff: float, limits: MotorLimits
) -> MitCommandCodes:
    """Field codes for a command, clamped to ``limits``, position code ≤ :data:`P_CODE_MAX`.

    Args:
        position [rad], velocity [rad/s], kp [N·m/rad], kd [N·m·s/rad], tau_ff [N·m]: motor side.
        limits: Ranges of the motor.

    Returns:
        :class:`MitCommandCodes`.

    Raises:
        InputError: any value NaN/inf or an int beyond the float range (reason
            ``Reason.NOT_FINITE``), or not a number, numeric strings included (``Reason.TYPE``).
        ConfigError: ``limits`` not a :class:`MotorLimits` (key ``limits``).
    """
    check_limits(limits)  # its ranges are finite and > 0 (MotorLimits), so no per-field range check
    p = float_to_uint_unchecked(finite("position", position), -limits.p_max, limits.p_max, P_BITS)
    return MitCommandCodes(
        p=min(p, P_CODE_MAX),
        v=float_to_uint_unchecked(finite("velocity", velocity), -limits.v_max, limits.v_max, V_BITS),
        kp=float_to_uint_unchecked(finite("kp", kp), 0.0, limits.kp_max, KP_BITS),
        kd=float_to_uint_unchecked(finite("kd", kd), 0.0, limits.kd_max, KD_BITS),
        tau=float_to_uint_unchecked(finite("tau_ff", tau_ff), -limits.t_max, limits.t_max, T_BITS),
    )


def pack_command_codes(codes: MitCommandCodes) -> bytes:
    """Pack codes into 8 bytes: big-endian ``p<<48 | v<<36 | kp<<24 | kd<<12 | τ``.

    Raises:
        InputError: a code that does not fit its field (reason ``Reason.RANGE``).
    """
    word = 0
    for code, bits in zip(codes, _FIELD_BITS):
        value = int(code)
        if not 0 <= value < (1 << bits):
            raise InputError(f"code {code} does not fit {bits} bits", reason=Reason.RANGE)
        word = (word << bits) | value
    return word.to_bytes(8, "big")


def unpack_command_codes(data: bytes) -> MitCommandCodes:
    """Inverse of :func:`pack_command_codes`.

    Raises:
        InputError: ``data`` not 8 bytes (reason ``Reason.SHAPE``) or not bytes-like (``Reason.TYPE``).
    """
    raw = frame_bytes(data, "MIT command")
    if len(raw) != 8:
        raise InputError(f"MIT command must be 8 bytes, got {len(raw)}", reason=Reason.SHAPE)
    word = int.from_bytes(raw, "big")
    return MitCommandCodes(
        p=word >> 48,
        v=(word >> 36) & 0xFFF,
        kp=(word >> 24) & 0xFFF,
        kd=(word >> 12) & 0xFFF,
        tau=word & 0xFFF,
    )


def encode_command(
    position: float, velocity: float, kp: float, kd: float, tau_ff: float, limits: MotorLimits
) -> bytes:
    """8-byte MIT command frame data for the motor-side values (see module docstring).

    Values are clamped to ``limits``; the result never equals a special frame.

    Args:
        position [rad], velocity [rad/s], kp [N·m/rad], kd [N·m·s/rad], tau_ff [N·m].
        limits: Ranges of the motor.

    Returns:
        8 bytes.

    Raises:
        InputError: any value NaN/inf (reason ``Reason.NOT_FINITE``).

    Source: FIELD_NOTES "MIT mode on CAN"; Damiao / CubeMars AK MIT-mode protocol.
    """
    return pack_command_codes(command_codes(position, velocity, kp, kd, tau_ff, limits))


def decode_command(data: bytes, limits: MotorLimits) -> MitCommand:
    """Decode an 8-byte MIT command frame (what the motor sees), inverse of :func:`encode_command`.

    Raises:
        InputError: wrong length (``Reason.SHAPE``), a special frame (``Reason.SPECIAL_FRAME``) or
            not bytes-like (``Reason.TYPE``).
        ConfigError: ``limits`` not a :class:`MotorLimits` (key ``limits``).
    """
    check_limits(limits)
    data = frame_bytes(data, "MIT command")
    if classify_special_frame(data) is not None:
        raise InputError("special frame is not an MIT command", reason=Reason.SPECIAL_FRAME)
    c = unpack_command_codes(data)  # each code masked to its field: no range check needed
    return MitCommand(
        position=uint_to_float_unchecked(c.p, -limits.p_max, limits.p_max, P_BITS),
        velocity=uint_to_float_unchecked(c.v, -limits.v_max, limits.v_max, V_BITS),
        kp=uint_to_float_unchecked(c.kp, 0.0, limits.kp_max, KP_BITS),
        kd=uint_to_float_unchecked(c.kd, 0.0, limits.kd_max, KD_BITS),
        tau_ff=uint_to_float_unchecked(c.tau, -limits.t_max, limits.t_max, T_BITS),
    )
