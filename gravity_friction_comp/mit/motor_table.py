"""MIT-mode motor ranges, Damiao limit registers, and the joint ↔ motor mapping.

An MIT-mode motor quantizes every field of its command and feedback frames over a range
that is fixed per motor type (P_MAX [rad], V_MAX [rad/s], T_MAX [N·m], KP 0–500, KD 0–5).
Both ends of the bus must use the same ranges, or every value is silently scaled: a DM4340
reporting V_MAX = 10 read with an older table's 8 scales every velocity by 0.8
(``../shared/design/FIELD_NOTES.md``, "MIT mode on CAN").

Precedence the bridge should use: table < Damiao registers 21–23 (when the motor answers)
< explicit per-joint overrides.

No rclpy import: pure Python.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import NamedTuple

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.validation import frame_bytes, number, short_repr, string_keys

__all__ = [
    "DAMIAO_LIMIT_REGISTERS",
    "GEAR_RATIO_RANGE",
    "DAMIAO_PARAM_ARBITRATION_ID",
    "DAMIAO_REGISTER_PMAX",
    "DAMIAO_REGISTER_TMAX",
    "DAMIAO_REGISTER_VMAX",
    "DamiaoRegisterValue",
    "FAMILIES",
    "JointMotorMap",
    "MOTOR_TABLE",
    "MotorLimits",
    "damiao_register_read_request",
    "limits_from_damiao_registers",
    "motor_limits",
    "motor_types",
    "parse_damiao_register_reply",
]

#: Motor families: they differ in feedback layout and special frames (see mit_codec).
FAMILIES = ("cubemars", "damiao")


def _positive_finite(key: str, value: object) -> float:
    """Return ``value`` as float, or raise ConfigError when it is not a finite number > 0.

    Numeric strings are read (PyYAML reads ``1e-5`` as a string); bools and integers beyond
    the float range are refused (``True`` used to become 1.0, ``10**400`` an OverflowError).
    """
    try:
        return number(key, value, positive=True, text=True)
    except ConfigError:
        raise ConfigError(
            f"{key} must be a finite number > 0, got {short_repr(value)}", key=key, value=value
        ) from None


#: Largest accepted motor-limit override (p_max [rad], v_max [rad/s], t_max [N·m], kp_max,
#: kd_max): real MIT ranges are at most 500 (kp_max); far larger ranges leave no resolution
#: in the 12/16-bit fields and 2·range overflows near 1e308.
MAX_OVERRIDE = 1e4

#: Plausible range of :attr:`JointMotorMap.gear_ratio` (motor turns per joint turn). Generous:
#: real drives are 1–~300:1; outside 1e-3..1e4 is not a gearbox, and r² in the gain law
#: kp/r² must stay a normal double (r = 1e-200 gave a ZeroDivisionError on every command).
GEAR_RATIO_RANGE = (1e-3, 1e4)


@dataclass(frozen=True)
class MotorLimits:
    """Quantization ranges of one MIT-mode motor (symmetric for p, v, τ; from 0 for kp, kd).

    Attributes:
        p_max: Position range ±p_max [rad] of the 16-bit position field.
        v_max: Velocity range ±v_max [rad/s] of the 12-bit velocity field.
        t_max: Torque range ±t_max [N·m] of the 12-bit τ_ff / torque field.
        kp_max: kp range 0..kp_max [N·m/rad] of the 12-bit kp field (500 on Damiao and AK).
        kd_max: kd range 0..kd_max [N·m·s/rad] of the 12-bit kd field (5 on Damiao and AK).
        family: ``"damiao"`` or ``"cubemars"``; selects feedback layout and special frames.

    Raises:
        ConfigError: a range that is not finite and > 0, or an unknown family.

    Source: FIELD_NOTES "MIT mode on CAN"; Damiao/openarm_can and CubeMars AK driver manual.
    """

    p_max: float
    v_max: float
    t_max: float
    kp_max: float = 500.0
    kd_max: float = 5.0
    family: str = "damiao"

    def __post_init__(self) -> None:
        for name in ("p_max", "v_max", "t_max", "kp_max", "kd_max"):
            object.__setattr__(self, name, _positive_finite(name, getattr(self, name)))
        if self.family not in FAMILIES:
            raise ConfigError(
                f"family must be one of {', '.join(FAMILIES)}; got {self.family!r}",
                key="family",
                value=self.family,
            )


def _dm(p: float, v: float, t: float) -> MotorLimits:
    return MotorLimits(p, v, t, family="damiao")


def _ak(p: float, v: float, t: float) -> MotorLimits:
    return MotorLimits(p, v, t, family="cubemars")


#: Default ranges per motor type (P_MAX rad / V_MAX rad/s / T_MAX N·m), FIELD_NOTES.
#: DM4340 uses V_MAX = 10 (openarm_can after PR #146); older tables (lerobot) say 8.
MOTOR_TABLE: Mapping[str, MotorLimits] = MappingProxyType(
    {
        "DM3507": _dm(12.5, 50.0, 5.0),
        "DM4310": _dm(12.5, 30.0, 10.0),
        "DM4340": _dm(12.5, 10.0, 28.0),
        "DM6248": _dm(12.5, 20.0, 120.0),
        "DM8009": _dm(12.5, 45.0, 54.0),
        "AK10-9": _ak(12.5, 50.0, 65.0),
        "AK60-6": _ak(12.5, 50.0, 15.0),
        "AK70-10": _ak(12.5, 50.0, 25.0),
        "AK80-6": _ak(12.5, 76.0, 12.0),
        "AK80-9": _ak(12.5, 50.0, 18.0),
        "AK80-64": _ak(12.5, 8.0, 144.0),
    }
)

_OVERRIDE_KEYS = ("p_max", "v_max", "t_max", "kp_max", "kd_max")


def motor_types() -> tuple[str, ...]:
    """Names of the motor types in :data:`MOTOR_TABLE`, sorted."""
    return tuple(sorted(MOTOR_TABLE))


def motor_limits(motor_type: str, overrides: Mapping[str, float] | None = None) -> MotorLimits:
    """Ranges of ``motor_type`` from the table, with optional per-joint overrides.

    Args:
        motor_type: A key of :data:`MOTOR_TABLE` (case-insensitive), e.g. ``"DM4340"``.
        overrides: Optional mapping with any of ``p_max`` [rad], ``v_max`` [rad/s],
            ``t_max`` [N·m], ``kp_max`` [N·m/rad], ``kd_max`` [N·m·s/rad]; values replace
            the table's (e.g. a DM4340 whose firmware still uses V_MAX = 8).

    Returns:
        A new frozen :class:`MotorLimits`.

    Raises:
        ConfigError: unknown type (the message lists valid types), ``overrides`` not a
            mapping with string keys, unknown override key (lists valid keys), or an override
            that is not a finite number > 0 (bools and ints beyond the float range refused)
            or is above :data:`MAX_OVERRIDE`.
    """
    key = str(motor_type).strip().upper()
    if key not in MOTOR_TABLE:
        raise ConfigError(
            f"unknown motor_type {motor_type!r}; valid types: {', '.join(motor_types())}",
            key="motor_type",
            value=motor_type,
        )
    limits = MOTOR_TABLE[key]
    if overrides is None:
        return limits
    if not isinstance(overrides, Mapping):
        raise ConfigError(
            f"motor limit overrides must be a mapping of {', '.join(_OVERRIDE_KEYS)}"
            f", got {type(overrides).__name__} {overrides!r}",
            key="overrides",
            value=overrides,
        )
    string_keys("overrides", overrides)
    if not overrides:
        return limits
    unknown = sorted(set(overrides) - set(_OVERRIDE_KEYS))
    if unknown:
        raise ConfigError(
            f"unknown motor limit override(s) {unknown}; valid keys: {', '.join(_OVERRIDE_KEYS)}",
            key=unknown[0],
            value=overrides[unknown[0]],
        )
    clean = {k: _positive_finite(k, v) for k, v in overrides.items()}
    big = {k: v for k, v in clean.items() if v > MAX_OVERRIDE}
    if big:
        name = sorted(big)[0]
        raise ConfigError(
            f"motor limit override {name}={big[name]:g} is above {MAX_OVERRIDE:g}: "
            "no MIT-mode motor has such a range (the table's largest is 500)",
            key=name,
            value=overrides[name],
        )
    return replace(limits, **clean)


# --- Damiao limit registers ------------------------------------------------------------------

#: Arbitration id of Damiao parameter (register) requests.
DAMIAO_PARAM_ARBITRATION_ID = 0x7FF
_DAMIAO_READ = 0x33
DAMIAO_REGISTER_PMAX = 21
DAMIAO_REGISTER_VMAX = 22
DAMIAO_REGISTER_TMAX = 23
#: Register id → MotorLimits field for the three range registers.
DAMIAO_LIMIT_REGISTERS: Mapping[int, str] = MappingProxyType(
    {DAMIAO_REGISTER_PMAX: "p_max", DAMIAO_REGISTER_VMAX: "v_max", DAMIAO_REGISTER_TMAX: "t_max"}
)


def _check_can_id(can_id: object) -> int:
    if isinstance(can_id, bool) or not isinstance(can_id, int) or not 0 <= can_id <= 0x7FF:
        raise ConfigError(
            f"can_id must be an integer in 0..0x7FF (11-bit standard id), got {can_id!r}",
            key="can_id",
            value=can_id,
        )
    return can_id


def damiao_register_read_request(can_id: int, register_id: int) -> bytes:
    """Data bytes of a Damiao register read request, sent with arbitration id 0x7FF.

    Layout (8 bytes): ``[can_id & 0xFF, can_id >> 8, 0x33, register_id, 0, 0, 0, 0]``.

    Args:
        can_id: The motor's CAN id (0..0x7FF).
        register_id: Register number 0..255 (21 P_MAX, 22 V_MAX, 23 T_MAX).

    Returns:
        8 bytes.

    Raises:
        ConfigError: ``can_id`` or ``register_id`` out of range.

    Source: FIELD_NOTES ("registers 21–23 … read via ID 0x7FF: [id_lo, id_hi, 0x33, rid]");
    same layout in enactic/openarm_can ``create_query_param_command``.
    """
    can_id = _check_can_id(can_id)
    if isinstance(register_id, bool) or not isinstance(register_id, int) or not 0 <= register_id <= 255:
        raise ConfigError(
            f"register_id must be an integer in 0..255, got {register_id!r}",
            key="register_id",
            value=register_id,
        )
    return bytes([can_id & 0xFF, (can_id >> 8) & 0xFF, _DAMIAO_READ, register_id, 0, 0, 0, 0])


class DamiaoRegisterValue(NamedTuple):
    """A decoded Damiao register reply: motor ``can_id``, ``register_id`` and float ``value``."""

    can_id: int
    register_id: int
    value: float


def parse_damiao_register_reply(data: bytes, can_id: int | None = None) -> DamiaoRegisterValue | None:
    """Decode a Damiao register read reply (received on the motor's master id).

    Layout (8 bytes): ``[can_id & 0xFF, can_id >> 8, 0x33, register_id, v0, v1, v2, v3]``
    with ``v0..v3`` the register value as IEEE-754 float32, little-endian (floating
    registers such as 21–23; integer registers such as MST_ID would need int32).

    Args:
        data: Received data bytes.
        can_id: When given, a reply for another motor returns ``None``.

    Returns:
        The decoded value, or ``None`` when ``data`` is not a register read reply (wrong
        length, byte 2 ≠ 0x33, or another motor). A feedback frame can alias this layout
        only for a disabled motor with id high byte 0, position ≈ −P_MAX and velocity near
        −V_MAX; read registers at startup with the motor at rest and disabled.

    Raises:
        Nothing: malformed frames return ``None`` (never crash the receive thread).

    Source: enactic/openarm_can ``parse_motor_param_data`` (rid = byte 3, value = bytes 4–7
    little-endian float32).
    """
    try:
        raw = frame_bytes(data)
    except InputError:
        return None
    if len(raw) != 8 or raw[2] != _DAMIAO_READ:
        return None
    reply_id = raw[0] | (raw[1] << 8)
    if can_id is not None and reply_id != can_id:
        return None
    (value,) = struct.unpack("<f", raw[4:8])
    return DamiaoRegisterValue(reply_id, raw[3], float(value))


def limits_from_damiao_registers(base: MotorLimits, registers: Mapping[int, float]) -> MotorLimits:
    """``base`` with the ranges the motor reported in registers 21–23 used over the table.

    Args:
        base: Table ranges (e.g. ``motor_limits("DM4340")``).
        registers: Register id → value [SI] for the registers that answered; ids other than
            21–23 are ignored, missing ones keep the table value.

    Returns:
        New :class:`MotorLimits`.

    Raises:
        InputError: a reported range that is not finite and > 0 (reason ``"bad_register"``);
            the caller should keep the table and report it.
    """
    if base.family != "damiao":
        raise ConfigError(
            f"limit registers exist on damiao motors only, not {base.family!r}",
            key="family",
            value=base.family,
        )
    changes: dict[str, float] = {}
    for rid, value in registers.items():
        name = DAMIAO_LIMIT_REGISTERS.get(rid)
        if name is None:
            continue
        v = float(value)
        if not math.isfinite(v) or v <= 0.0:
            raise InputError(
                f"Damiao register {rid} ({name}) reported {value!r}; expected finite > 0",
                reason="bad_register",
            )
        changes[name] = v
    return replace(base, **changes)


# --- joint ↔ motor mapping --------------------------------------------------------------------


@dataclass(frozen=True)
class JointMotorMap:
    """Per-joint map between joint space and the motor's MIT frame (output shaft of the motor).

    With direction d ∈ {−1, +1}, gear ratio r > 0 (joint = motor / r) and offset q₀ [rad]:

    .. math::

        q = d\\,θ/r + q_0, \\quad \\dot q = d\\,\\dot θ/r, \\quad τ_q = d\\,r\\,τ_θ,
        \\quad kp_θ = kp_q / r^2, \\quad kd_θ = kd_q / r^2

    (θ, θ̇, τ_θ motor-side; the gain law follows from power conservation of an ideal
    gear: τ_q = d r kp_θ (θ_des − θ) = r² kp_θ (q_des − q)).

    Attributes:
        direction: +1 or −1.
        offset: q₀ [rad], joint position when the motor reads 0.
        gear_ratio: r, motor turns per joint turn (1 when the motor drives the joint directly),
            within :data:`GEAR_RATIO_RANGE` (1e-3..1e4).

    Raises:
        ConfigError: direction not ±1, offset not a finite number (bools and ints beyond the
            float range refused), ratio not finite or outside :data:`GEAR_RATIO_RANGE`.
    """

    direction: int = 1
    offset: float = 0.0
    gear_ratio: float = 1.0

    def __post_init__(self) -> None:
        if self.direction not in (-1, 1) or isinstance(self.direction, bool):
            raise ConfigError(
                f"direction must be 1 or -1, got {self.direction!r}", key="direction", value=self.direction
            )
        object.__setattr__(self, "direction", int(self.direction))
        try:
            off = number("offset", self.offset, text=True)
        except ConfigError:
            raise ConfigError(
                f"offset must be a finite number [rad], got {short_repr(self.offset)}",
                key="offset",
                value=self.offset,
            ) from None
        object.__setattr__(self, "offset", off)
        ratio = _positive_finite("gear_ratio", self.gear_ratio)
        low, high = GEAR_RATIO_RANGE
        if not low <= ratio <= high:
            raise ConfigError(
                f"gear_ratio {ratio!r} outside the plausible range {low:g}..{high:g} (motor turns "
                "per joint turn; real drives are 1 to a few hundred)",
                key="gear_ratio",
                value=self.gear_ratio,
            )
        object.__setattr__(self, "gear_ratio", ratio)

    # joint → motor
    def position_to_motor(self, q: float) -> float:
        """Motor position θ [rad] for joint position q [rad]: θ = d r (q − q₀)."""
        return self.direction * self.gear_ratio * (q - self.offset)

    def velocity_to_motor(self, qd: float) -> float:
        """Motor velocity [rad/s] for joint velocity [rad/s]: θ̇ = d r q̇."""
        return self.direction * self.gear_ratio * qd

    def torque_to_motor(self, tau: float) -> float:
        """Motor torque [N·m] for joint torque [N·m]: τ_θ = d τ_q / r."""
        return self.direction * tau / self.gear_ratio

    def kp_to_motor(self, kp: float) -> float:
        """Motor kp [N·m/rad] for joint kp [N·m/rad]: kp_θ = kp_q / r²."""
        return kp / (self.gear_ratio * self.gear_ratio)

    def kd_to_motor(self, kd: float) -> float:
        """Motor kd [N·m·s/rad] for joint kd [N·m·s/rad]: kd_θ = kd_q / r²."""
        return kd / (self.gear_ratio * self.gear_ratio)

    # motor → joint
    def position_from_motor(self, theta: float) -> float:
        """Joint position [rad] for motor position θ [rad]: q = d θ / r + q₀."""
        return self.direction * theta / self.gear_ratio + self.offset

    def velocity_from_motor(self, theta_dot: float) -> float:
        """Joint velocity [rad/s] for motor velocity [rad/s]: q̇ = d θ̇ / r."""
        return self.direction * theta_dot / self.gear_ratio

    def torque_from_motor(self, tau_motor: float) -> float:
        """Joint torque [N·m] for motor torque [N·m]: τ_q = d r τ_θ."""
        return self.direction * self.gear_ratio * tau_motor

    def kp_from_motor(self, kp_motor: float) -> float:
        """Joint kp [N·m/rad] for motor kp: kp_q = r² kp_θ."""
        return kp_motor * self.gear_ratio * self.gear_ratio

    def kd_from_motor(self, kd_motor: float) -> float:
        """Joint kd [N·m·s/rad] for motor kd: kd_q = r² kd_θ."""
        return kd_motor * self.gear_ratio * self.gear_ratio

    def torque_limit_joint(self, limits: MotorLimits) -> float:
        """The motor's T_MAX expressed at the joint [N·m]: r · t_max."""
        return self.gear_ratio * limits.t_max
