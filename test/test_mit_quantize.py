"""Tests of gravity_friction_comp.mit.quantize against exact rational arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.mit.quantize import float_to_uint, uint_to_float


def test_float_to_uint_rounds_to_nearest_half_up():
    # [-1, 1] over 2 bits: codes 0..3 at -1, -1/3, 1/3, 1; 0.0 is exactly halfway (1.5) -> 2
    assert float_to_uint(0.0, -1.0, 1.0, 2) == 2
    assert float_to_uint(-0.1, -1.0, 1.0, 2) == 1  # 1.35 -> 1 (truncation would agree)
    assert float_to_uint(0.2, -1.0, 1.0, 2) == 2  # 1.8 -> 2 (truncation would give 1)
    assert float_to_uint(5.0, -1.0, 1.0, 2) == 3 and float_to_uint(-5.0, -1.0, 1.0, 2) == 0
    # 0.0 on a 12-bit symmetric field: 2047.5 -> 2048, decodes to +1/2 LSB
    assert float_to_uint(0.0, -10.0, 10.0, 12) == 2048
    assert uint_to_float(2048, -10.0, 10.0, 12) == pytest.approx(10.0 / 4095)
    with pytest.raises(InputError) as err:
        float_to_uint(math.nan, -1, 1, 12)
    assert err.value.reason is Reason.NOT_FINITE
    with pytest.raises(ConfigError):
        float_to_uint(0.0, 1.0, -1.0, 12)
    with pytest.raises(InputError):
        uint_to_float(4096, -1, 1, 12)


def test_scalar_round_trip_within_half_lsb():
    rng = np.random.default_rng(0)
    for bits, lo, hi in ((16, -12.5, 12.5), (12, -30.0, 30.0), (12, 0.0, 500.0), (12, 0.0, 5.0)):
        half = (hi - lo) / ((1 << bits) - 1) / 2
        for x in rng.uniform(lo, hi, 2000):
            assert abs(uint_to_float(float_to_uint(x, lo, hi, bits), lo, hi, bits) - x) <= half * (1 + 1e-9)


def test_quantize_helpers_refuse_strings_huge_ints_and_bad_ranges():
    from gravity_friction_comp.errors import ConfigError, InputError, Reason
    from gravity_friction_comp.mit.quantize import float_to_uint, pack_pvt

    for x, reason in (("1", Reason.TYPE), (10**400, Reason.NOT_FINITE)):
        with pytest.raises(InputError) as err:
            float_to_uint(x, -1.0, 1.0, 12)
        assert err.value.reason is reason
    for lo, hi, bits in (("a", 1.0, 12), (-1.0, None, 12), (-1.0, 1.0, "12"), (-1.0, 1.0, 12.0)):
        with pytest.raises(ConfigError):
            float_to_uint(0.0, lo, hi, bits)
    with pytest.raises(ConfigError) as err:
        pack_pvt(0.0, 0.0, 0.0, None)
    assert err.value.key == "limits"
