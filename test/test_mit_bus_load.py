"""Tests of gravity_friction_comp.mit.bus_load against hand-computed bus loads."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bus_load import (
    CAN_FRAME_BITS_NOMINAL,
    CAN_FRAME_BITS_WORST_CASE,
    bus_load_fraction,
    mit_bus_load,
)


def test_bus_load_numbers():
    # 111 bits: 1+11+1+1+1+4+64+15+1+1+1+7+3; worst-case stuffing adds ⌊97/4⌋ = 24 -> 135
    assert CAN_FRAME_BITS_NOMINAL == 1 + 11 + 1 + 1 + 1 + 4 + 64 + 15 + 1 + 1 + 1 + 7 + 3
    assert CAN_FRAME_BITS_WORST_CASE == 55 + 10 * 8
    # FIELD_NOTES: ~8,000 8-byte frames/s fill a classic 1 Mbit/s bus (between the two bounds)
    nominal = bus_load_fraction(8000, 1_000_000, CAN_FRAME_BITS_NOMINAL)
    assert nominal == pytest.approx(0.888) and 1.0 < bus_load_fraction(8000, 1_000_000) == pytest.approx(1.08)
    # 7 motors at 1 kHz: 14,000 frames/s -> 1.89 worst case, 1.554 nominal: does not fit
    assert mit_bus_load(7, 1000, 1_000_000) == pytest.approx(1.89)
    assert mit_bus_load(7, 1000, 1_000_000, CAN_FRAME_BITS_NOMINAL) == pytest.approx(1.554)
    assert mit_bus_load(7, 500, 1_000_000) == pytest.approx(0.945)
    with pytest.raises(ConfigError):
        bus_load_fraction(100, 0)
