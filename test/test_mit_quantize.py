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


@pytest.mark.parametrize(
    "lo, hi",
    [(-1e308, 1.0), (-1e308, 1e308), (-1.7e308, 1.7e308), (0.0, 1e308)],
    ids=["lo", "both", "max", "hi"],
)
def test_a_finite_range_too_wide_to_quantize_is_a_config_error(lo, hi):
    """A finite ``lo < hi`` whose span times 2^bits − 1 overflows: ``float_to_uint`` raised
    OverflowError (``floor(inf)``) or ValueError (``inf/inf``), ``uint_to_float`` returned
    inf; both now refuse the range as they refuse ``lo >= hi``."""
    for call in (lambda: float_to_uint(0.5, lo, hi, 16), lambda: uint_to_float(65535, lo, hi, 16)):
        with pytest.raises(ConfigError, match="too wide") as err:
            call()
        assert err.value.key == "range"
    # just inside: finite codes and values (1e300 · 65535 is finite)
    assert float_to_uint(0.0, -1e300, 1e300, 16) in (32767, 32768)
    assert uint_to_float(65535, -1e300, 1e300, 16) == 1e300


@pytest.mark.parametrize("code", [math.nan, 1.5, 2.0, True, "3", None])
def test_uint_to_float_refuses_a_code_that_is_not_an_integer(code):
    """``int(code)`` truncated 1.5 to 1, made ``True`` code 1 and raised a bare ValueError
    ("cannot convert float NaN to integer") or TypeError for NaN and None."""
    with pytest.raises(InputError) as err:
        uint_to_float(code, -1.0, 1.0, 12)
    assert err.value.reason is Reason.TYPE
