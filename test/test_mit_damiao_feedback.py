"""Tests of gravity_friction_comp.mit.damiao_feedback against hand-computed frames and the vector file."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from gravity_friction_comp.errors import InputError
from gravity_friction_comp.mit.damiao_feedback import (
    DamiaoState,
    decode_feedback_damiao,
    encode_feedback_damiao,
)
from gravity_friction_comp.mit.feedback import decode_feedback
from gravity_friction_comp.mit.motor_table import motor_limits

TEST_DATA = pathlib.Path(__file__).resolve().parent / "data"


VECTORS = json.loads((TEST_DATA / "damiao_mit_codec_vectors.json").read_text())


@pytest.mark.parametrize("vec", VECTORS["feedback"], ids=lambda v: "".join(v["bytes"]))
def test_feedback_vectors_decode_exactly(vec):
    data = bytes(int(b, 16) for b in vec["bytes"])
    fb = decode_feedback_damiao(data, motor_limits(vec["motor"]))
    exp = vec["decoded"]
    assert fb.state_code == exp["state_nibble"] and fb.motor_id == exp["id_low_nibble"]
    assert (fb.position, fb.velocity, fb.torque) == (exp["pos"], exp["vel"], exp["tau"])
    assert (fb.t_mos, fb.t_rotor) == (exp["t_mos"], exp["t_rotor"])
    assert fb.state is DamiaoState.ENABLED and not fb.is_fault
    # feedback p/v/τ are round-trip stable: re-encoding the decoded values gives the same bytes
    again = encode_feedback_damiao(
        fb.motor_id,
        fb.state_code,
        fb.position,
        fb.velocity,
        fb.torque,
        fb.t_mos,
        fb.t_rotor,
        motor_limits(vec["motor"]),
    )
    assert again == data


def test_damiao_feedback_hand_computed():
    lim = motor_limits("DM4310")
    # id 0x13 -> low nibble 3; state over-current 0xA -> byte0 = 0xA3
    # p 0 -> 0x8000; v 0 -> 0x800; τ 0 -> 0x800; T_mos 40, T_rotor 35
    data = encode_feedback_damiao(0x13, DamiaoState.OVER_CURRENT, 0.0, 0.0, 0.0, 40, 35, lim)
    assert data == bytes([0xA3, 0x80, 0x00, 0x80, 0x08, 0x00, 40, 35])
    fb = decode_feedback_damiao(data, lim)
    assert fb.motor_id == 3 and fb.state is DamiaoState.OVER_CURRENT
    assert fb.is_fault and fb.fault_reason == "over-current" and not fb.is_enabled
    assert fb.position == pytest.approx(25 / 65535 / 2) and fb.torque == pytest.approx(20 / 4095 / 2)
    assert decode_feedback(data, lim) == fb


@pytest.mark.parametrize("nibble", range(16))
def test_damiao_state_nibbles(nibble):
    lim = motor_limits("DM4340")
    fb = decode_feedback_damiao(bytes([(nibble << 4) | 1, 0x80, 0, 0x80, 0x08, 0, 30, 30]), lim)
    assert fb.state_code == nibble
    assert fb.is_fault == (nibble not in (0, 1))
    if nibble in (2, 3, 4, 5, 6, 7, 15):
        assert fb.state is None and fb.fault_reason.startswith("unknown")
    else:
        assert int(fb.state) == nibble
    expected = {
        0: "",
        1: "",
        8: "over-voltage",
        9: "under-voltage",
        10: "over-current",
        11: "MOSFET over-temperature",
        12: "coil over-temperature",
        13: "lost communication",
        14: "overload",
    }
    if nibble in expected:
        assert fb.fault_reason == expected[nibble]


def test_damiao_feedback_round_trip_and_errors():
    lim = motor_limits("DM8009")
    rng = np.random.default_rng(3)
    for _ in range(200):
        p, v, t = (
            rng.uniform(-lim.p_max, lim.p_max),
            rng.uniform(-lim.v_max, lim.v_max),
            rng.uniform(-lim.t_max, lim.t_max),
        )
        fb = decode_feedback_damiao(encode_feedback_damiao(5, 1, p, v, t, 41.4, 39.6, lim), lim)
        assert abs(fb.position - p) <= lim.p_max / 65535 * (1 + 1e-9)
        assert abs(fb.velocity - v) <= lim.v_max / 4095 * (1 + 1e-9)
        assert abs(fb.torque - t) <= lim.t_max / 4095 * (1 + 1e-9)
        assert (fb.t_mos, fb.t_rotor) == (41, 40)
    with pytest.raises(InputError):
        decode_feedback_damiao(bytes(6), lim)
    with pytest.raises(InputError):
        encode_feedback_damiao(1, 16, 0, 0, 0, 0, 0, lim)
