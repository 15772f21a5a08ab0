"""Damiao register protocol: read P_MAX / V_MAX / T_MAX (registers 21–23) from a motor.

Requests go to arbitration id 0x7FF, replies come on the motor's master id; the values
replace the motor table's ranges (:func:`limits_from_damiao_registers`).

No rclpy import: pure Python.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, NamedTuple

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.validation import can_id as checked_can_id
from gravity_friction_comp.validation import frame_bytes, integer

__all__ = [
    "DAMIAO_LIMIT_REGISTERS",
    "DAMIAO_PARAM_ARBITRATION_ID",
    "DAMIAO_REGISTER_PMAX",
    "DAMIAO_REGISTER_TMAX",
    "DAMIAO_REGISTER_VMAX",
    "DamiaoRegisterValue",
    "damiao_register_read_request",
    "limits_from_damiao_registers",
    "parse_damiao_register_reply",
]

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
    can_id = checked_can_id("can_id", can_id)
    register_id = integer("register_id", register_id, low=0, high=255)
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
        InputError: a reported range that is not finite and > 0 (reason ``Reason.RANGE``);
            the caller should keep the table and report it.
    """
    if base.family != "damiao":
        raise ConfigError(
            f"limit registers exist on damiao motors only, not {base.family!r}",
            key="family",
            value=base.family,
        )
    changes: dict[str, Any] = {}
    for rid, value in registers.items():
        name = DAMIAO_LIMIT_REGISTERS.get(rid)
        if name is None:
            continue
        v = float(value)
        if not math.isfinite(v) or v <= 0.0:
            raise InputError(
                f"Damiao register {rid} ({name}) reported {value!r}; expected finite > 0",
                reason=Reason.RANGE,
            )
        changes[name] = v
    return replace(base, **changes)
