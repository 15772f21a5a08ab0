"""Tests of gravity_friction_comp.mit.robstride_feedback: the Robstride MIT reply layout."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import InputError
from gravity_friction_comp.mit.feedback import decode_feedback
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.robstride_feedback import (
    decode_feedback_robstride,
    encode_feedback_robstride,
)
from gravity_friction_comp.mit.special_frames import SpecialFrame, clear_error_frames, special_frame


def _manual(u: int, lo: float, hi: float, bits: int) -> float:
    # uint_to_float as the vendor's manual writes it
    return u * (hi - lo) / ((1 << bits) - 1) + lo


def test_hand_built_frame_decodes_as_the_manual_says():
    rs00 = motor_limits("RS00")
    raw = bytes([0x05, 0xFF, 0xFF, 0x80, 0x07, 0xFF, 0x01, 0x2C])
    for fb in (decode_feedback_robstride(raw, rs00), decode_feedback(raw, rs00)):
        assert fb.motor_id == 5  # the whole byte 0 (Damiao would read state 0, id 5)
        assert fb.position == pytest.approx(12.57)
        assert fb.velocity == pytest.approx(_manual(0x800, -33.0, 33.0, 12))
        assert fb.torque == pytest.approx(_manual(0x7FF, -14.0, 14.0, 12))
        assert fb.temperature == 30.0 and fb.temperatures == (("temperature", 30),)
        assert not fb.is_fault and fb.fault_reason == ""


def test_encoder_round_trip_and_errors():
    rs04 = motor_limits("RS04")
    raw = encode_feedback_robstride(0x7F, -1.0, 3.0, -50.0, rs04, temperature=41.26)
    assert len(raw) == 8 and raw[0] == 0x7F and int.from_bytes(raw[6:], "big") == 413
    assert decode_feedback_robstride(raw, rs04).temperature == pytest.approx(41.3)
    fb = decode_feedback_robstride(raw, rs04)
    assert fb.position == pytest.approx(-1.0, abs=25.14 / 65535)
    assert fb.velocity == pytest.approx(3.0, abs=30.0 / 4095)
    assert fb.torque == pytest.approx(-50.0, abs=240.0 / 4095)
    with pytest.raises(InputError):
        decode_feedback_robstride(raw[:6], rs04)
    with pytest.raises(InputError):
        encode_feedback_robstride(300, 0.0, 0.0, 0.0, rs04, temperature=20.0)


def test_robstride_special_frames_are_damiao_style():
    # MIT-protocol chapter: FF×7 FC enable, FD stop, FE set zero, FB clear fault
    assert special_frame(SpecialFrame.ENABLE, "robstride") == bytes([0xFF] * 7 + [0xFC])
    assert special_frame(SpecialFrame.CLEAR_ERROR, "robstride")[-1] == 0xFB
    assert clear_error_frames("robstride") == (bytes([0xFF] * 7 + [0xFB]), bytes([0xFF] * 7 + [0xFC]))
