"""Tests of gravity_friction_comp.mit.cubemars_feedback against hand-computed frames."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import InputError
from gravity_friction_comp.mit.cubemars_feedback import (
    CubeMarsError,
    decode_feedback_cubemars,
    encode_feedback_cubemars,
)
from gravity_friction_comp.mit.feedback import decode_feedback
from gravity_friction_comp.mit.motor_table import motor_limits


def test_cubemars_feedback_hand_computed():
    lim = motor_limits("AK80-9")  # 12.5 / 50 / 18
    # id 2; p 0xFFFF -> +12.5; v 0x000 -> -50; i 0xFFF -> +18; temp 45 °C; error 2 (over-current)
    data = bytes([0x02, 0xFF, 0xFF, 0x00, 0x0F, 0xFF, 45, 2])
    fb = decode_feedback_cubemars(data, lim)
    assert (fb.motor_id, fb.position, fb.velocity, fb.torque) == (2, 12.5, -50.0, 18.0)
    assert fb.temperature == 45 and fb.error is CubeMarsError.OVER_CURRENT
    assert fb.is_fault and fb.fault_reason == "over-current"
    assert encode_feedback_cubemars(2, 12.5, -50.0, 18.0, lim, temperature=45, error_code=2) == data
    assert decode_feedback(data, lim) == fb


def test_cubemars_old_firmware_six_bytes():
    lim = motor_limits("AK70-10")
    data = encode_feedback_cubemars(7, 0.0, 0.0, 0.0, lim)
    assert data == bytes([0x07, 0x80, 0x00, 0x80, 0x08, 0x00])
    fb = decode_feedback_cubemars(data, lim)
    assert fb.temperature is None and fb.error_code is None and not fb.is_fault
    assert fb.temperatures == ()
    with pytest.raises(InputError):
        decode_feedback_cubemars(bytes(7), lim)
    with pytest.raises(InputError):
        encode_feedback_cubemars(7, 0.0, 0.0, 0.0, lim, temperature=30)


@pytest.mark.parametrize(
    "code, reason",
    [
        (0, ""),
        (1, "over-temperature"),
        (2, "over-current"),
        (3, "over-voltage"),
        (4, "under-voltage"),
        (5, "encoder fault"),
        (6, "phase current unbalance (hardware may be damaged)"),
        (9, "unknown error code 9"),
    ],
)
def test_cubemars_error_codes(code, reason):
    lim = motor_limits("AK60-6")
    fb = decode_feedback_cubemars(encode_feedback_cubemars(1, 0.3, 0.1, -2.0, lim, 30, code), lim)
    assert fb.is_fault == (code != 0) and fb.fault_reason == reason
