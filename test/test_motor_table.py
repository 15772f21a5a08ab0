"""Tests for gravity_friction_comp.mit.motor_table: ranges, overrides, Damiao registers, joint map."""

from __future__ import annotations

import json
import math
import pathlib
import re
import struct

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.mit.damiao_registers import (
    DAMIAO_PARAM_ARBITRATION_ID,
    damiao_register_read_request,
    limits_from_damiao_registers,
    parse_damiao_register_reply,
)
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import MOTOR_TABLE, MotorLimits, motor_limits, motor_types

TEST_DATA = pathlib.Path(__file__).resolve().parent / "data"
#: The repository's copy of the design notes (the shared design folder holds the original).
FIELD_NOTES = pathlib.Path(__file__).resolve().parents[1] / "docs" / "FIELD_NOTES.md"


def test_table_matches_field_notes_text():
    """Every 'NAME p/v/t' triple in FIELD_NOTES' ranges paragraph equals the table."""
    if not FIELD_NOTES.is_file():
        pytest.skip(f"{FIELD_NOTES} not found")
    text = FIELD_NOTES.read_text()
    triples = dict(
        (name, tuple(float(x) for x in (p, v, t)))
        for name, p, v, t in re.findall(r"((?:DM|AK)[\d-]+) ([\d.]+)/([\d.]+)/([\d.]+)", text)
    )
    assert set(triples) == set(MOTOR_TABLE)  # all 11 types, nothing missing
    for name, (p, v, t) in triples.items():
        lim = MOTOR_TABLE[name]
        assert (lim.p_max, lim.v_max, lim.t_max) == (p, v, t), name
        assert (lim.kp_max, lim.kd_max) == (500.0, 5.0)
        assert lim.family == ("damiao" if name.startswith("DM") else "cubemars")


def test_table_matches_vector_file_limits():
    limits = json.loads((TEST_DATA / "damiao_mit_codec_vectors.json").read_text())["limits"]
    for name, d in limits.items():
        lim = motor_limits(name)
        assert (lim.p_max, lim.v_max, lim.t_max, lim.kp_max, lim.kd_max) == (
            d["P_MAX"],
            d["V_MAX"],
            d["T_MAX"],
            d["KP_MAX"],
            d["KD_MAX"],
        )


def test_unknown_type_lists_valid_types():
    with pytest.raises(ConfigError) as err:
        motor_limits("DM9999")
    assert err.value.key == "motor_type" and err.value.value == "DM9999"
    for name in ("DM4340", "AK80-64", "DM3507"):
        assert name in str(err.value)
    assert len(motor_types()) == 11


def test_case_insensitive_and_overrides():
    assert motor_limits("dm4340") == MOTOR_TABLE["DM4340"]
    old = motor_limits("DM4340", {"v_max": 8})  # older tables' DM4340
    assert old.v_max == 8.0 and old.t_max == 28.0 and old.family == "damiao"
    assert MOTOR_TABLE["DM4340"].v_max == 10.0  # table untouched
    with pytest.raises(ConfigError) as err:
        motor_limits("DM4340", {"vmax": 8})
    assert "v_max" in str(err.value) and err.value.key == "vmax"
    for bad in (0.0, -1.0, math.nan, math.inf, "x"):
        with pytest.raises(ConfigError):
            motor_limits("DM4310", {"t_max": bad})


def test_motor_limits_validation():
    with pytest.raises(ConfigError) as err:
        MotorLimits(12.5, 30, 10, family="tmotor")
    assert "cubemars" in str(err.value) and "damiao" in str(err.value)
    with pytest.raises(ConfigError):
        MotorLimits(12.5, -30, 10)
    with pytest.raises(Exception):
        MOTOR_TABLE["DM4310"].p_max = 1.0  # frozen


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


def test_joint_motor_map_by_hand():
    m = JointMotorMap(direction=-1, offset=0.1, gear_ratio=2.0)
    # q = d θ / r + q0: θ = 1.0 -> -0.5 + 0.1 = -0.4
    assert m.position_from_motor(1.0) == pytest.approx(-0.4, abs=1e-15)
    assert m.position_to_motor(-0.4) == pytest.approx(1.0, abs=1e-15)
    assert m.velocity_from_motor(3.0) == -1.5
    assert m.torque_from_motor(3.0) == -6.0
    assert m.torque_to_motor(-6.0) == 3.0
    assert m.kp_to_motor(100.0) == 25.0 and m.kd_to_motor(2.0) == 0.5
    assert m.kp_from_motor(25.0) == 100.0
    assert m.torque_limit_joint(motor_limits("DM4310")) == 20.0


def test_joint_motor_map_power_and_gain_consistency():
    """Independent checks: power τ·ω is the same on both sides, and the motor's PD law with
    mapped gains gives the joint PD law with the joint gains."""
    rng = np.random.default_rng(4)
    for _ in range(50):
        m = JointMotorMap(
            direction=int(rng.choice([-1, 1])), offset=rng.uniform(-1, 1), gear_ratio=rng.uniform(0.3, 50)
        )
        qd, tau_q = rng.uniform(-3, 3, 2)
        assert tau_q * qd == pytest.approx(m.torque_to_motor(tau_q) * m.velocity_to_motor(qd), rel=1e-12)
        kp, kd, q_des, q, v_des, v = rng.uniform(0, 50), rng.uniform(0, 3), *rng.uniform(-2, 2, 4)
        tau_motor = m.kp_to_motor(kp) * (m.position_to_motor(q_des) - m.position_to_motor(q)) + m.kd_to_motor(
            kd
        ) * (m.velocity_to_motor(v_des) - m.velocity_to_motor(v))
        assert m.torque_from_motor(tau_motor) == pytest.approx(
            kp * (q_des - q) + kd * (v_des - v), rel=1e-9, abs=1e-12
        )


@pytest.mark.parametrize(
    "kwargs, key",
    [
        ({"direction": 0}, "direction"),
        ({"direction": 2}, "direction"),
        ({"direction": True}, "direction"),
        ({"gear_ratio": 0.0}, "gear_ratio"),
        ({"gear_ratio": -2.0}, "gear_ratio"),
        ({"gear_ratio": math.inf}, "gear_ratio"),
        ({"offset": math.nan}, "offset"),
    ],
)
def test_joint_motor_map_validation(kwargs, key):
    with pytest.raises(ConfigError) as err:
        JointMotorMap(**kwargs)
    assert err.value.key == key


# -- hostile overrides and maps ----------------------------------------------------------------
@pytest.mark.parametrize(
    "overrides, key, fragment",
    [
        (5, "overrides", "must be a mapping"),  # was TypeError: 'int' object is not iterable
        ([("v_max", 1)], "overrides", "must be a mapping"),  # was TypeError from indexing a list
        ({1: 2, "v_max": 3}, "overrides", "keys must be names"),
        ({"v_max": 10**400}, "v_max", "finite number > 0"),  # was OverflowError
        ({"v_max": True}, "v_max", "got True"),  # was taken as 1.0
    ],
)
def test_bad_overrides_raise_config_error(overrides, key, fragment):
    with pytest.raises(ConfigError) as err:
        motor_limits("DM4340", overrides)
    assert err.value.key == key and fragment in str(err.value)


def test_empty_and_string_overrides_still_work():
    assert motor_limits("DM4340", {}) == MOTOR_TABLE["DM4340"]
    assert motor_limits("DM4340", {"v_max": "8"}).v_max == 8.0  # YAML may give strings


@pytest.mark.parametrize(
    "kwargs, key, fragment",
    [
        ({"offset": 10**400}, "offset", "finite number"),  # was OverflowError
        ({"offset": True}, "offset", "got True"),
        ({"gear_ratio": 1e-200}, "gear_ratio", "plausible range"),  # kp_to_motor divided by 0.0
        ({"gear_ratio": 2e4}, "gear_ratio", "0.001..10000"),
        ({"gear_ratio": True}, "gear_ratio", "got True"),
    ],
)
def test_joint_motor_map_rejects_implausible_values(kwargs, key, fragment):
    with pytest.raises(ConfigError) as err:
        JointMotorMap(**kwargs)
    assert err.value.key == key and fragment in str(err.value)


def test_gear_ratio_range_ends_give_finite_gains():
    # kp_θ = kp_q / r² by hand at both ends of the range
    assert JointMotorMap(gear_ratio=1e-3).kp_to_motor(10.0) == pytest.approx(1e7, rel=1e-12)
    assert JointMotorMap(gear_ratio=1e4).kp_to_motor(10.0) == pytest.approx(1e-7, rel=1e-12)


def test_implausible_override_ranges_are_refused():
    for key in ("t_max", "v_max", "p_max", "kp_max", "kd_max"):
        with pytest.raises(ConfigError, match="above 10000") as info:
            motor_limits("DM4340", {key: 1e300})
        assert info.value.key == key
    assert motor_limits("DM4340", {"kp_max": 1e4}).kp_max == 1e4  # the limit itself
