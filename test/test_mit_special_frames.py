"""Tests of gravity_friction_comp.mit.special_frames against the manuals byte values."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.special_frames import (
    CLEAR_ERROR_FRAME,
    DISABLE_FRAME,
    ENABLE_FRAME,
    SET_ZERO_FRAME,
    SpecialFrame,
    classify_special_frame,
    clear_error_frames,
    special_frame,
)


def test_special_frame_bytes():
    assert ENABLE_FRAME == bytes.fromhex("FFFFFFFFFFFFFFFC")
    assert DISABLE_FRAME == bytes.fromhex("FFFFFFFFFFFFFFFD")
    assert SET_ZERO_FRAME == bytes.fromhex("FFFFFFFFFFFFFFFE")
    assert CLEAR_ERROR_FRAME == bytes.fromhex("FFFFFFFFFFFFFFFB")
    assert special_frame(SpecialFrame.ENABLE, "cubemars") == ENABLE_FRAME
    with pytest.raises(ConfigError):
        special_frame(SpecialFrame.CLEAR_ERROR, "cubemars")
    assert classify_special_frame(SET_ZERO_FRAME) is SpecialFrame.SET_ZERO
    assert classify_special_frame(bytes.fromhex("FFFFFFFFFFFFFFFF")) is None
    assert clear_error_frames("damiao") == (CLEAR_ERROR_FRAME, ENABLE_FRAME)
    assert clear_error_frames("cubemars") == (DISABLE_FRAME, ENABLE_FRAME)
