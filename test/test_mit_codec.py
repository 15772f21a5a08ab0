"""Tests for gravity_friction_comp.mit.codec against hand-computed frames and the vector file.

The vector file was produced with clamp-then-TRUNCATE (i2rt / openarm_can); our codec clamps
then rounds to the nearest code. The vector test therefore checks, with exact rational
arithmetic, that each vector code is the truncated code and ours is that code + 1 exactly
where the fractional part is ≥ ½ (and, for the position field, capped at 0xFFFE by the
special-frame rule)."""

from __future__ import annotations

import itertools
import json
import math
import pathlib
from fractions import Fraction

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.mit.codec import (
    P_CODE_MAX,
    MitCommandCodes,
    command_codes,
    decode_command,
    encode_command,
    pack_command_codes,
    position_step,
    unpack_command_codes,
)
from gravity_friction_comp.mit.motor_table import MOTOR_TABLE, motor_limits
from gravity_friction_comp.mit.quantize import uint_to_float
from gravity_friction_comp.mit.special_frames import (
    CLEAR_ERROR_FRAME,
    DISABLE_FRAME,
    ENABLE_FRAME,
    SET_ZERO_FRAME,
    classify_special_frame,
)

TEST_DATA = pathlib.Path(__file__).resolve().parent / "data"


VECTORS = json.loads((TEST_DATA / "damiao_mit_codec_vectors.json").read_text())


SPECIALS = {ENABLE_FRAME, DISABLE_FRAME, SET_ZERO_FRAME, CLEAR_ERROR_FRAME}


def _slice_command(b: bytes) -> tuple[int, int, int, int, int]:
    """Field codes read straight off the bytes (the manuals' byte table, not our unpacker)."""
    return (
        (b[0] << 8) | b[1],
        (b[2] << 4) | (b[3] >> 4),
        ((b[3] & 0x0F) << 8) | b[4],
        (b[5] << 4) | (b[6] >> 4),
        ((b[6] & 0x0F) << 8) | b[7],
    )


def _exact_scaled(x, lo, hi, bits) -> Fraction:
    """(clamp(x) − lo)·(2^bits − 1)/span with exact decimal arithmetic."""
    x, lo, hi = Fraction(str(x)), Fraction(str(lo)), Fraction(str(hi))
    x = min(max(x, lo), hi)
    return (x - lo) * ((1 << bits) - 1) / (hi - lo)


def test_hand_computed_frame_all_zero_dm4310():
    # p: (0 + 12.5)·65535/25 = 32767.5 -> 32768 = 0x8000
    # v: (0 + 30)·4095/60   = 2047.5  -> 2048  = 0x800
    # kp = kd = 0 -> 0x000;  τ: (0 + 10)·4095/20 = 2047.5 -> 0x800
    # bytes: 80 00 | 80 0|0 00 | 00 0|8 00
    assert encode_command(0, 0, 0, 0, 0, motor_limits("DM4310")) == bytes.fromhex("8000800000000800")


def test_hand_computed_frame_dm4340():
    # p: (1.0 + 12.5)·65535/25 = 35388.9  -> 35389 = 0x8A3D
    # v: (0.5 + 10)·4095/20    = 2149.875 -> 2150  = 0x866
    # kp: 80·4095/500          = 655.2    -> 655   = 0x28F
    # kd: 5 = KD_MAX                      -> 4095  = 0xFFF
    # τ: (3.2 + 28)·4095/56    = 2281.5   -> 2282  = 0x8EA  (tie, rounds up)
    # bytes: 8A 3D | 86 6|2 8F | FF F|8 EA
    assert encode_command(1.0, 0.5, 80, 5, 3.2, motor_limits("DM4340")) == bytes.fromhex("8A3D86628FFFF8EA")


def test_hand_computed_frame_dm8009():
    # p: (-2 + 12.5)·65535/25 = 27524.7 -> 27525 = 0x6B85
    # v: (-1 + 45)·4095/90    = 2002.0  -> 2002  = 0x7D2
    # kp: 240·4095/500        = 1965.6  -> 1966  = 0x7AE
    # kd: 3·4095/5            = 2457.0  -> 2457  = 0x999
    # τ: (-12 + 54)·4095/108  = 1592.5  -> 1593  = 0x639
    # bytes: 6B 85 | 7D 2|7 AE | 99 9|6 39
    assert encode_command(-2.0, -1.0, 240, 3.0, -12.0, motor_limits("DM8009")) == bytes.fromhex(
        "6B857D27AE999639"
    )


@pytest.mark.parametrize("vec", VECTORS["commands"], ids=lambda v: f"{v['motor']}-{v['p']}-{v['t_ff']}")
def test_command_vectors_truncation_vs_rounding(vec):
    lim = motor_limits(vec["motor"])
    data = bytes(int(b, 16) for b in vec["bytes"])
    vector_codes = _slice_command(data)
    fields = (
        (vec["p"], -lim.p_max, lim.p_max, 16),
        (vec["v"], -lim.v_max, lim.v_max, 12),
        (vec["kp"], 0, lim.kp_max, 12),
        (vec["kd"], 0, lim.kd_max, 12),
        (vec["t_ff"], -lim.t_max, lim.t_max, 12),
    )
    ours = _slice_command(encode_command(vec["p"], vec["v"], vec["kp"], vec["kd"], vec["t_ff"], lim))
    for k, ((x, lo, hi, bits), vcode, ocode) in enumerate(zip(fields, vector_codes, ours)):
        scaled = _exact_scaled(x, lo, hi, bits)
        trunc = math.floor(scaled)
        assert vcode == trunc, f"field {k}: vector is not truncation"
        expected = trunc + (1 if scaled - trunc >= Fraction(1, 2) else 0)
        if k == 0:
            expected = min(expected, P_CODE_MAX)  # special-frame rule
        assert ocode == expected, f"field {k}"
        assert ocode - vcode in (0, 1) or (k == 0 and vcode == 0xFFFF and ocode == 0xFFFE)


@pytest.mark.parametrize("motor", sorted(MOTOR_TABLE))
def test_command_round_trip_within_half_lsb(motor):
    lim = MOTOR_TABLE[motor]
    rng = np.random.default_rng(sorted(MOTOR_TABLE).index(motor))
    lsb = {
        "p": 2 * lim.p_max / 65535,
        "v": 2 * lim.v_max / 4095,
        "kp": lim.kp_max / 4095,
        "kd": lim.kd_max / 4095,
        "t": 2 * lim.t_max / 4095,
    }
    for _ in range(300):
        p = rng.uniform(-lim.p_max, lim.p_max - 2 * lsb["p"])
        v, t = rng.uniform(-lim.v_max, lim.v_max), rng.uniform(-lim.t_max, lim.t_max)
        kp, kd = rng.uniform(0, lim.kp_max), rng.uniform(0, lim.kd_max)
        cmd = decode_command(encode_command(p, v, kp, kd, t, lim), lim)
        for got, want, key in (
            (cmd.position, p, "p"),
            (cmd.velocity, v, "v"),
            (cmd.kp, kp, "kp"),
            (cmd.kd, kd, "kd"),
            (cmd.tau_ff, t, "t"),
        ):
            assert abs(got - want) <= lsb[key] / 2 * (1 + 1e-9), key


def test_pack_unpack_codes_and_errors():
    codes = MitCommandCodes(0x1234, 0xABC, 0x0DE, 0xF01, 0x234)
    # 1234 | ABC | 0DE | F01 | 234 -> 12 34 AB C0 DE F0 12 34
    assert pack_command_codes(codes) == bytes.fromhex("1234ABC0DEF01234")
    assert unpack_command_codes(bytes.fromhex("1234ABC0DEF01234")) == codes
    with pytest.raises(InputError):
        pack_command_codes(MitCommandCodes(0x10000, 0, 0, 0, 0))
    with pytest.raises(InputError) as err:
        encode_command(0, math.inf, 0, 0, 0, motor_limits("DM4310"))
    assert err.value.reason is Reason.NOT_FINITE
    with pytest.raises(InputError) as err:
        decode_command(bytes(7), motor_limits("DM4310"))
    assert err.value.reason is Reason.SHAPE
    with pytest.raises(InputError) as err:
        decode_command(ENABLE_FRAME, motor_limits("DM4310"))
    assert err.value.reason is Reason.SPECIAL_FRAME


def test_unguarded_packing_would_hit_special_frames():
    """The danger is real: all-max codes with τ code 0xFFB..0xFFE are exactly the specials."""
    hits = {pack_command_codes(MitCommandCodes(0xFFFF, 0xFFF, 0xFFF, 0xFFF, t)) for t in range(0xFFB, 0xFFF)}
    assert hits == SPECIALS


@pytest.mark.parametrize("motor", sorted(MOTOR_TABLE))
def test_saturated_commands_never_equal_special_frames(motor):
    lim = MOTOR_TABLE[motor]

    def near(lo, hi, bits):
        lsb = (hi - lo) / ((1 << bits) - 1)
        # below range, min, one code under max, half a code under max (rounds to max), above range
        return (lo - 1e3, lo, hi - lsb, hi - lsb / 2, hi + 1e3)

    ps = near(-lim.p_max, lim.p_max, 16)
    vs = near(-lim.v_max, lim.v_max, 12)
    kps = near(0.0, lim.kp_max, 12)
    kds = near(0.0, lim.kd_max, 12)
    # τ values landing on every top code, 0xFF8..0xFFF, plus the generic set
    ts = near(-lim.t_max, lim.t_max, 12) + tuple(
        uint_to_float(c, -lim.t_max, lim.t_max, 12) for c in range(0xFF8, 0x1000)
    )
    seen_top = set()
    for p, v, kp, kd, t in itertools.product(ps, vs, kps, kds, ts):
        data = encode_command(p, v, kp, kd, t, lim)
        assert data not in SPECIALS, (p, v, kp, kd, t, data.hex())
        assert classify_special_frame(data) is None
        c = _slice_command(data)
        if c[1:4] == (0xFFF, 0xFFF, 0xFFF):
            seen_top.add(c[4])
    # the sweep did reach the dangerous corner (v, kp, kd at max with τ codes FFB..FFE)
    assert {0xFFB, 0xFFC, 0xFFD, 0xFFE} <= seen_top
    # and position saturates one code inside the range
    assert command_codes(1e9, 0, 0, 0, 0, lim).p == P_CODE_MAX == 0xFFFE


@pytest.mark.parametrize("garbage", [None, "ffffffffffffffff", 8, 1.0, [256] * 8, [-1] * 8, object()])
def test_decoders_reject_non_bytes_with_the_packages_error(garbage):
    from gravity_friction_comp.mit.codec import decode_command
    from gravity_friction_comp.mit.feedback import decode_feedback
    from gravity_friction_comp.mit.special_frames import classify_special_frame

    limits = motor_limits("DM4310")
    for decode in (
        lambda d: decode_command(d, limits),
        lambda d: decode_feedback(d, limits),
        lambda d: decode_feedback(d, motor_limits("AK80-9")),
        classify_special_frame,
    ):
        with pytest.raises(InputError) as info:
            decode(garbage)
        assert info.value.reason is Reason.TYPE


def test_decoders_accept_bytes_like_payloads():
    from gravity_friction_comp.mit.codec import decode_command, encode_command

    limits = motor_limits("DM4310")
    frame = encode_command(0.5, -1.0, 10.0, 0.5, 1.25, limits)
    # python-can hands over bytearray; hand-written tests use lists of ints
    for form in (frame, bytearray(frame), memoryview(frame), list(frame)):
        assert decode_command(form, limits) == decode_command(frame, limits)


@pytest.mark.parametrize(
    ("field", "bad", "reason"),
    [(0, 10**400, Reason.NOT_FINITE), (1, "1", Reason.TYPE), (4, b"1", Reason.TYPE), (2, None, Reason.TYPE)],
)
def test_encode_command_refuses_huge_ints_and_strings(field, bad, reason):
    from gravity_friction_comp.mit.codec import command_codes
    from gravity_friction_comp.mit.motor_table import motor_limits

    values = [0.0] * 5
    values[field] = bad
    for encode in (encode_command, command_codes):
        with pytest.raises(InputError) as err:
            encode(*values, motor_limits("DM4340"))
        assert err.value.reason is reason


@pytest.mark.parametrize("limits", [None, "DM4340", {"p_max": 12.5}])
def test_limits_that_are_not_motor_limits_are_config_errors(limits):
    from gravity_friction_comp.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        encode_command(0.0, 0.0, 0.0, 0.0, 0.0, limits)
    assert err.value.key == "limits"
    with pytest.raises(ConfigError):
        decode_command(bytes(8), limits)


@pytest.mark.parametrize("motor_type", ["DM4340", "AK80-64", "RS03"])
def test_position_step_is_one_code_of_a_decoded_command(motor_type):
    # issue 27.4: the demo read the step off its own formula; now the codec states it
    limits = motor_limits(motor_type)
    step = position_step(limits)
    assert step == pytest.approx(2 * limits.p_max / 65535, rel=1e-15)
    codes = [MitCommandCodes(k, 2048, 0, 0, 2048) for k in (1000, 1001)]
    a, b = (decode_command(pack_command_codes(c), limits).position for c in codes)
    assert b - a == pytest.approx(step, rel=1e-9)
    with pytest.raises(ConfigError):
        position_step(12.5)
