"""Tests for gravity_friction_comp.mit.motor_table: ranges, overrides, Damiao registers, joint map."""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import re

import pytest

from gravity_friction_comp.errors import ConfigError
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
    # all 11 Damiao/CubeMars types, nothing missing (Robstride: test_robstride_ranges_...)
    assert set(triples) == {n for n in MOTOR_TABLE if n.startswith(("DM", "AK"))}
    assert len(triples) == 11
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
    assert len(motor_types()) == 18  # 5 Damiao, 6 CubeMars AK, 7 Robstride


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
    with pytest.raises(dataclasses.FrozenInstanceError):
        MOTOR_TABLE["DM4310"].p_max = 1.0  # frozen


# -- hostile overrides and maps ----------------------------------------------------------------
@pytest.mark.parametrize(
    "overrides, key, fragment",
    [
        (5, "overrides", "must be a mapping"),  # was TypeError: 'int' object is not iterable
        ([("v_max", 1)], "overrides", "must be a mapping"),  # was TypeError from indexing a list
        ({1: 2, "v_max": 3}, "overrides", "keys must be names"),
        ({"v_max": 10**400}, "v_max", "v_max must be finite"),  # was OverflowError
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


def test_implausible_override_ranges_are_refused():
    for key in ("t_max", "v_max", "p_max", "kp_max", "kd_max"):
        with pytest.raises(ConfigError, match="above 10000") as info:
            motor_limits("DM4340", {key: 1e300})
        assert info.value.key == key
    assert motor_limits("DM4340", {"kp_max": 1e4}).kp_max == 1e4  # the limit itself


#: Robstride RS00–RS06 MIT ranges (V_MAX rad/s, T_MAX N·m, KP_MAX, KD_MAX), written out from
#: the vendor's user manuals (RobStride/Product_Information); P_MAX 12.57 rad for all.
ROBSTRIDE_MANUAL = {
    "RS00": (33, 14, 500, 5),
    "RS01": (44, 17, 500, 5),
    "RS02": (44, 17, 500, 5),
    "RS03": (20, 60, 5000, 100),
    "RS04": (15, 120, 5000, 100),
    "RS05": (50, 5.5, 500, 5),
    "RS06": (50, 36, 5000, 100),
}


def test_robstride_ranges_match_the_manuals():
    assert {n for n in MOTOR_TABLE if n.startswith("RS")} == set(ROBSTRIDE_MANUAL)
    for name, (v, t, kp, kd) in ROBSTRIDE_MANUAL.items():
        lim = motor_limits(name.lower())
        assert (lim.p_max, lim.v_max, lim.t_max, lim.kp_max, lim.kd_max) == (12.57, v, t, kp, kd), name
        assert lim.family == "robstride"


def test_robstride_kp_range_reaches_5000():
    # a kp of 4000 N·m/rad is representable on RS04 and saturates at 500 on RS00
    from gravity_friction_comp.mit.codec import decode_command, encode_command

    rs04, rs00 = motor_limits("RS04"), motor_limits("RS00")
    assert decode_command(encode_command(0.0, 0.0, 4000.0, 50.0, 0.0, rs04), rs04).kp == pytest.approx(
        4000.0, abs=5000 / 4095
    )
    assert decode_command(encode_command(0.0, 0.0, 4000.0, 4.0, 0.0, rs00), rs00).kp == pytest.approx(500.0)
    # overrides up to the Robstride range are accepted, beyond MAX_OVERRIDE refused
    assert motor_limits("DM4310", {"kp_max": 5000}).kp_max == 5000.0
    with pytest.raises(ConfigError, match="5000"):
        motor_limits("DM4310", {"kp_max": 2e4})
