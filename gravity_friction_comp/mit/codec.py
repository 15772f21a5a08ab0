"""MIT-mode CAN frame codec: command packing, Damiao / CubeMars AK feedback, special frames.

Command frame (classic CAN, arbitration id = motor CAN id, 8 bytes), big-endian bit packing::

    bits 63..48  p     16 bit  [-P_MAX, P_MAX] rad
    bits 47..36  v     12 bit  [-V_MAX, V_MAX] rad/s
    bits 35..24  kp    12 bit  [0, KP_MAX]     N·m/rad
    bits 23..12  kd    12 bit  [0, KD_MAX]     N·m·s/rad
    bits 11..0   τ_ff  12 bit  [-T_MAX, T_MAX] N·m

and the motor runs τ = kp(p_des − p) + kd(v_des − v) + τ_ff (FIELD_NOTES "MIT mode on CAN").

Quantization (a deliberate difference from the peers): :func:`float_to_uint` clamps to the
range and then rounds to the *nearest* code (half up); i2rt / openarm_can / TMotorCANControl
truncate toward zero, which biases every field by −½ LSB on average. Decode
(:func:`uint_to_float`) is the exact inverse map ``lo + code·span/(2^bits − 1)``, so a round
trip is within ½ LSB. Neither scheme represents 0.0 on the symmetric fields: rounding
encodes 0 to the code above the middle (+½ LSB), truncation to the one below (−½ LSB).

Special frames: ``FF×7 + FC`` enable, ``FD`` disable, ``FE`` set zero, ``FB`` clear error
(Damiao). CubeMars AK uses FC ("enter motor control mode"), FD ("exit") and FE ("set
origin") and has no clear-error frame. A saturated command can pack to exactly these bytes
(p, v, kp, kd codes all at their maximum and τ code 0xFFB..0xFFE). Rule used here, the
smallest one that excludes every ``FF×7 + xx`` frame: the position code is kept at most
0xFFFE (one code inside +P_MAX). Position code 0xFFFF is only reached by requests within ½ LSB
(≈ 0.19 mrad on ±12.5 rad) of +P_MAX or beyond it, i.e. requests already at the clamp, and
the change is one LSB (0.38 mrad). Byte 1 of a command frame is then never 0xFF.

No rclpy import: pure Python.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import NamedTuple, Union

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.validation import frame_bytes

__all__ = [
    "CLEAR_ERROR_FRAME",
    "CubeMarsError",
    "CubeMarsFeedback",
    "DISABLE_FRAME",
    "DamiaoFeedback",
    "DamiaoState",
    "ENABLE_FRAME",
    "MitCommand",
    "MitCommandCodes",
    "P_CODE_MAX",
    "SET_ZERO_FRAME",
    "SpecialFrame",
    "classify_special_frame",
    "clear_error_frames",
    "command_codes",
    "decode_command",
    "decode_feedback",
    "decode_feedback_cubemars",
    "decode_feedback_damiao",
    "encode_command",
    "encode_feedback_cubemars",
    "encode_feedback_damiao",
    "float_to_uint",
    "pack_command_codes",
    "special_frame",
    "uint_to_float",
    "unpack_command_codes",
]

P_BITS = 16
V_BITS = 12
KP_BITS = 12
KD_BITS = 12
T_BITS = 12
#: Largest position code a command frame may carry (see the module docstring).
P_CODE_MAX = (1 << P_BITS) - 2


# --- scalar quantization ----------------------------------------------------------------------


def _finite(name: str, x: object) -> float:
    try:
        out = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {x!r}", reason="not_a_number") from None
    if not math.isfinite(out):
        raise InputError(f"{name} must be finite, got {x!r}", reason="nan")
    return out


def float_to_uint(x: float, lo: float, hi: float, bits: int) -> int:
    """Quantize ``x`` to an unsigned ``bits``-bit code over [lo, hi].

    ``code = floor((clamp(x, lo, hi) − lo) · (2^bits − 1)/(hi − lo) + ½)``: clamp, then round
    to the nearest code, halves up (peers truncate; see module docstring).

    Args:
        x: Value [field unit]; must be finite.
        lo, hi: Range ends, ``lo < hi``.
        bits: Field width, 1..32.

    Returns:
        int in ``0 .. 2^bits − 1``.

    Raises:
        InputError: ``x`` NaN/inf (reason ``"nan"``).
        ConfigError: ``lo >= hi`` or a bad ``bits``.

    Source: FIELD_NOTES "MIT mode on CAN" (scale by (2^bits − 1)/span).
    """
    x = _finite("x", x)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ConfigError(f"range must satisfy lo < hi, got [{lo}, {hi}]", key="range", value=(lo, hi))
    if not 1 <= int(bits) <= 32:
        raise ConfigError(f"bits must be 1..32, got {bits}", key="bits", value=bits)
    top = (1 << int(bits)) - 1
    x = min(max(x, lo), hi)
    code = math.floor((x - lo) * top / (hi - lo) + 0.5)
    return min(max(code, 0), top)


def uint_to_float(code: int, lo: float, hi: float, bits: int) -> float:
    """Value of an unsigned ``bits``-bit code over [lo, hi]: ``lo + code·(hi − lo)/(2^bits − 1)``.

    Args:
        code: 0 .. 2^bits − 1.
        lo, hi: Range ends [field unit].
        bits: Field width.

    Returns:
        float [field unit].

    Raises:
        InputError: code outside 0..2^bits − 1 (reason ``"code_range"``).

    Source: inverse of :func:`float_to_uint`; same map as the Damiao/AK reference drivers.
    """
    top = (1 << int(bits)) - 1
    if not 0 <= int(code) <= top:
        raise InputError(f"code {code} outside 0..{top}", reason="code_range")
    return lo + int(code) * (hi - lo) / top


# --- special frames ---------------------------------------------------------------------------


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
        family: ``"damiao"`` or ``"cubemars"``.

    Returns:
        8 bytes.

    Raises:
        ConfigError: ``CLEAR_ERROR`` for CubeMars (it has none; use :func:`clear_error_frames`),
            or an unknown family.

    Source: FIELD_NOTES; CubeMars AK driver manual (MIT mode: FC enter, FD exit, FE origin).
    """
    if family not in ("damiao", "cubemars"):
        raise ConfigError(f"family must be damiao or cubemars, got {family!r}", key="family", value=family)
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
        InputError: ``data`` is not bytes-like (reason ``"type"``).
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
    if family == "damiao":
        return (CLEAR_ERROR_FRAME, ENABLE_FRAME)
    if family == "cubemars":
        return (DISABLE_FRAME, ENABLE_FRAME)
    raise ConfigError(f"family must be damiao or cubemars, got {family!r}", key="family", value=family)


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
        InputError: any value NaN/inf (reason ``"nan"``).
    """
    p = float_to_uint(_finite("position", position), -limits.p_max, limits.p_max, P_BITS)
    return MitCommandCodes(
        p=min(p, P_CODE_MAX),
        v=float_to_uint(_finite("velocity", velocity), -limits.v_max, limits.v_max, V_BITS),
        kp=float_to_uint(_finite("kp", kp), 0.0, limits.kp_max, KP_BITS),
        kd=float_to_uint(_finite("kd", kd), 0.0, limits.kd_max, KD_BITS),
        tau=float_to_uint(_finite("tau_ff", tau_ff), -limits.t_max, limits.t_max, T_BITS),
    )


def pack_command_codes(codes: MitCommandCodes) -> bytes:
    """Pack codes into 8 bytes: big-endian ``p<<48 | v<<36 | kp<<24 | kd<<12 | τ``.

    Raises:
        InputError: a code that does not fit its field (reason ``"code_range"``).
    """
    widths = (P_BITS, V_BITS, KP_BITS, KD_BITS, T_BITS)
    word = 0
    for code, bits in zip(codes, widths):
        if not 0 <= int(code) < (1 << bits):
            raise InputError(f"code {code} does not fit {bits} bits", reason="code_range")
        word = (word << bits) | int(code)
    return word.to_bytes(8, "big")


def unpack_command_codes(data: bytes) -> MitCommandCodes:
    """Inverse of :func:`pack_command_codes`.

    Raises:
        InputError: ``data`` not 8 bytes (reason ``"length"``) or not bytes-like (``"type"``).
    """
    raw = frame_bytes(data, "MIT command")
    if len(raw) != 8:
        raise InputError(f"MIT command must be 8 bytes, got {len(raw)}", reason="length")
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
        InputError: any value NaN/inf (reason ``"nan"``).

    Source: FIELD_NOTES "MIT mode on CAN"; Damiao / CubeMars AK MIT-mode protocol.
    """
    return pack_command_codes(command_codes(position, velocity, kp, kd, tau_ff, limits))


def decode_command(data: bytes, limits: MotorLimits) -> MitCommand:
    """Decode an 8-byte MIT command frame (what the motor sees), inverse of :func:`encode_command`.

    Raises:
        InputError: wrong length (``"length"``), a special frame (``"special_frame"``) or
            not bytes-like (``"type"``).
    """
    data = frame_bytes(data, "MIT command")
    if classify_special_frame(data) is not None:
        raise InputError("special frame is not an MIT command", reason="special_frame")
    c = unpack_command_codes(data)
    return MitCommand(
        position=uint_to_float(c.p, -limits.p_max, limits.p_max, P_BITS),
        velocity=uint_to_float(c.v, -limits.v_max, limits.v_max, V_BITS),
        kp=uint_to_float(c.kp, 0.0, limits.kp_max, KP_BITS),
        kd=uint_to_float(c.kd, 0.0, limits.kd_max, KD_BITS),
        tau_ff=uint_to_float(c.tau, -limits.t_max, limits.t_max, T_BITS),
    )


# --- feedback: shared p16 | v12 | τ12 block ---------------------------------------------------


def _pack_pvt(position: float, velocity: float, torque: float, limits: MotorLimits) -> bytes:
    p = float_to_uint(_finite("position", position), -limits.p_max, limits.p_max, P_BITS)
    v = float_to_uint(_finite("velocity", velocity), -limits.v_max, limits.v_max, V_BITS)
    t = float_to_uint(_finite("torque", torque), -limits.t_max, limits.t_max, T_BITS)
    return ((p << 24) | (v << 12) | t).to_bytes(5, "big")


def _unpack_pvt(raw: bytes, limits: MotorLimits) -> tuple[float, float, float]:
    word = int.from_bytes(raw, "big")
    return (
        uint_to_float(word >> 24, -limits.p_max, limits.p_max, P_BITS),
        uint_to_float((word >> 12) & 0xFFF, -limits.v_max, limits.v_max, V_BITS),
        uint_to_float(word & 0xFFF, -limits.t_max, limits.t_max, T_BITS),
    )


def _byte(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise InputError(f"{name} must be an integer 0..255, got {value!r}", reason="code_range")
    return value


def _temperature_byte(name: str, value: float) -> int:
    """Temperature [°C] as the unsigned byte the motors send (rounded, clamped to 0..255)."""
    v = _finite(name, value)
    return min(max(int(math.floor(v + 0.5)), 0), 255)


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
        raise InputError(f"state must be 0..15, got {state}", reason="code_range")
    if isinstance(can_id, bool) or not isinstance(can_id, int) or can_id < 0:
        raise InputError(f"can_id must be a non-negative integer, got {can_id!r}", reason="code_range")
    head = (state << 4) | (can_id & 0xF)
    return (
        bytes([head])
        + _pack_pvt(position, velocity, torque, limits)
        + bytes([_temperature_byte("t_mos", t_mos), _temperature_byte("t_rotor", t_rotor)])
    )


def decode_feedback_damiao(data: bytes, limits: MotorLimits) -> DamiaoFeedback:
    """Decode an 8-byte Damiao feedback frame (inverse of :func:`encode_feedback_damiao`).

    Raises:
        InputError: not 8 bytes (reason ``"length"``) or not bytes-like (``"type"``).
    """
    raw = frame_bytes(data, "feedback frame")
    if len(raw) != 8:
        raise InputError(f"Damiao feedback must be 8 bytes, got {len(raw)}", reason="length")
    p, v, t = _unpack_pvt(raw[1:6], limits)
    return DamiaoFeedback(
        motor_id=raw[0] & 0xF,
        state_code=raw[0] >> 4,
        position=p,
        velocity=v,
        torque=t,
        t_mos=raw[6],
        t_rotor=raw[7],
    )


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
    head = bytes([_byte("driver_id", driver_id)]) + _pack_pvt(position, velocity, torque, limits)
    if temperature is None and error_code is None:
        return head
    if temperature is None or error_code is None:
        raise InputError("give both temperature and error_code, or neither (6-byte reply)", reason="missing")
    return head + bytes([_temperature_byte("temperature", temperature), _byte("error_code", error_code)])


def decode_feedback_cubemars(data: bytes, limits: MotorLimits) -> CubeMarsFeedback:
    """Decode a 6- or 8-byte CubeMars AK feedback frame (inverse of the encoder).

    Raises:
        InputError: length other than 6 or 8 (reason ``"length"``).
    """
    raw = frame_bytes(data, "feedback frame")
    if len(raw) not in (6, 8):
        raise InputError(f"CubeMars feedback must be 6 or 8 bytes, got {len(raw)}", reason="length")
    p, v, t = _unpack_pvt(raw[1:6], limits)
    long = len(raw) == 8
    return CubeMarsFeedback(
        motor_id=raw[0],
        position=p,
        velocity=v,
        torque=t,
        temperature=raw[6] if long else None,
        error_code=raw[7] if long else None,
    )


MotorFeedback = Union[DamiaoFeedback, CubeMarsFeedback]


def decode_feedback(data: bytes, limits: MotorLimits) -> MotorFeedback:
    """Decode a feedback frame with the layout of ``limits.family``.

    Both results expose ``motor_id``, ``position`` [rad], ``velocity`` [rad/s], ``torque``
    [N·m], ``is_fault``, ``fault_reason`` and ``temperatures``.

    Raises:
        InputError: malformed frame (reason ``"length"``).
    """
    if limits.family == "cubemars":
        return decode_feedback_cubemars(data, limits)
    return decode_feedback_damiao(data, limits)
