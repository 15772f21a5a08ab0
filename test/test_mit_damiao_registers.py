"""Tests of gravity_friction_comp.mit.damiao_registers against bytes written out by hand."""

from __future__ import annotations

import math
import struct

import pytest

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.mit.damiao_registers import (
    DAMIAO_PARAM_ARBITRATION_ID,
    damiao_register_read_request,
    limits_from_damiao_registers,
    parse_damiao_register_reply,
)
from gravity_friction_comp.mit.motor_table import motor_limits


def test_register_request_bytes_by_hand():
    # can_id 0x102 -> id_lo 0x02, id_hi 0x01; read command 0x33; register 22 = 0x16 (V_MAX)
    assert damiao_register_read_request(0x102, 22) == bytes([0x02, 0x01, 0x33, 0x16, 0, 0, 0, 0])
    assert damiao_register_read_request(0x01, 21) == bytes.fromhex("0100331500000000")
    assert DAMIAO_PARAM_ARBITRATION_ID == 0x7FF
    with pytest.raises(ConfigError):
        damiao_register_read_request(0x800, 21)
    with pytest.raises(ConfigError):
        damiao_register_read_request(1, 256)


def test_register_reply_parse_by_hand():
    # IEEE-754: 10.0 = 0x41200000, 12.5 = 0x41480000, 28.0 = 0x41E00000 (little-endian on the wire)
    reply_v = bytes([0x01, 0x00, 0x33, 22, 0x00, 0x00, 0x20, 0x41])
    assert parse_damiao_register_reply(reply_v) == (1, 22, 10.0)
    reply_p = bytes([0x01, 0x00, 0x33, 21, 0x00, 0x00, 0x48, 0x41])
    assert parse_damiao_register_reply(reply_p, can_id=1).value == 12.5
    assert parse_damiao_register_reply(reply_p, can_id=2) is None  # another motor
    assert parse_damiao_register_reply(bytes(7)) is None
    # a typical feedback frame (byte 2 != 0x33) is not a register reply
    assert parse_damiao_register_reply(bytes.fromhex("117F3B7FF8001A19")) is None
    tmax = bytes([0x05, 0x00, 0x33, 23]) + struct.pack("<f", 28.0)
    assert tmax[4:] == bytes([0x00, 0x00, 0xE0, 0x41])
    assert parse_damiao_register_reply(tmax).value == 28.0


def test_registers_used_over_table():
    base = motor_limits("DM4340")
    got = limits_from_damiao_registers(base, {22: 8.0, 23: 27.0, 9: 1234.0})  # 9 ignored
    assert (got.p_max, got.v_max, got.t_max) == (12.5, 8.0, 27.0)
    assert limits_from_damiao_registers(base, {}) == base
    with pytest.raises(InputError):
        limits_from_damiao_registers(base, {22: math.nan})
    with pytest.raises(ConfigError):
        limits_from_damiao_registers(motor_limits("AK80-9"), {22: 8.0})
