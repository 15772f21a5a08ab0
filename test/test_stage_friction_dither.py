"""Tests of the stiction dither (gravity_friction_comp.stage.dither) in the friction stage.

Independent routes: the breakaway at rest written out by hand from the model's coefficients
(Coulomb ± levels + Stribeck excess; BAM M1 K_c + K_cs, M4 with its load terms from BAM's
budget formula restated), and the square wave / fade of the module docstring by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.friction.bam import BamParameters
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.stage.dither import breakaway_at_rest
from gravity_friction_comp.stage.friction import FrictionConfig, FrictionStage

JOINTS = ["a", "b"]
DB = 0.02  # [rad/s] deadband


def _model(**kw):
    values = dict(breakaway_positive=[0.3, 0.1], breakaway_negative=[0.2, 0.1], eps=0.02)
    values.update(kw)
    return FrictionModel(JOINTS, **values)


def _stage(model, dither=0.6, hz=5.0, **kw):
    config = FrictionConfig(
        model, JOINTS, velocity_source="measured", velocity_deadband=DB, dither=dither, dither_hz=hz, **kw
    )
    return FrictionStage(config)


def _term(stage, t, v_meas):
    stage.update_measured(JOINTS, v_meas)
    return stage.update(JOINTS, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], t).effort


def test_breakaway_at_rest_coulomb_and_stribeck():
    pos, neg = breakaway_at_rest(_model(stribeck_breakaway=[0.05, 0.02]))
    assert pos.tolist() == pytest.approx([0.35, 0.12], abs=1e-15)
    assert neg.tolist() == pytest.approx([0.25, 0.12], abs=1e-15)


def test_breakaway_at_rest_bam():
    m1 = BamParameters(
        model="m2", actuator="x", friction_base=0.07, friction_viscous=0.3, friction_stribeck=0.04
    )
    m4 = BamParameters(
        model="m4",
        actuator="y",
        friction_base=0.05,
        friction_viscous=0.2,
        friction_stribeck=0.03,
        load_friction_base=0.1,
        load_friction_stribeck=0.02,
        dtheta_stribeck=0.2,
        alpha=2.0,
    )
    model = FrictionModel(JOINTS, model="bam", bam=[m1, m4])
    load = np.array([2.0, -1.5])
    pos, neg = breakaway_at_rest(model, load)
    # M2: K_c + K_cs; M4 at rest, motor holding L against tau_e = -L (BAM's budget):
    # K_c + K_l·|tau_e - tau_m| + K_cs + K_ls·|tau_e - tau_m| = K_c + K_cs + 2 (K_l + K_ls)|L|
    hand = [0.07 + 0.04, 0.05 + 0.03 + 2 * (0.1 + 0.02) * 1.5]
    np.testing.assert_allclose(pos, hand, rtol=0, atol=1e-14)
    np.testing.assert_allclose(neg, hand, rtol=0, atol=1e-14)
    stage = _stage(model, dither=0.5, hz=1.0)
    stage.update_measured(JOINTS, [0.0, 0.0])
    res = stage.update(JOINTS, [0.0, 0.0], [0.0, 0.0], load.tolist(), 0.1)
    np.testing.assert_allclose(res.effort - load, 0.5 * np.array(hand), rtol=0, atol=1e-12)


def test_square_wave_at_dither_hz_with_each_directions_level():
    stage = _stage(_model(), dither=[0.6, 0.5], hz=5.0)
    # 5 Hz: + on [0, 0.1), - on [0.1, 0.2), + on [0.2, 0.3) ... (setpoint clock)
    for t, sign in ((0.0, 1), (0.05, 1), (0.1, -1), (0.198, -1), (0.2, 1), (0.3, -1), (1.0, 1)):
        term = _term(stage, t, [0.0, 0.0])
        level = [0.3, 0.1] if sign > 0 else [0.2, 0.1]
        np.testing.assert_allclose(term, sign * np.array([0.6, 0.5]) * level, rtol=0, atol=1e-15)
    # repeat/evaluate at the same time give the same half-period (no hidden state)
    np.testing.assert_array_equal(stage.repeat().effort, _term(stage, 1.0, [0.0, 0.0]))


def test_fades_out_from_the_deadband_to_twice_it_then_velocity_compensation():
    model = _model()
    stage = _stage(model, dither=0.6, hz=5.0)
    for v, fade in ((0.0, 1.0), (0.9 * DB, 1.0), (1.5 * DB, 0.5), (2 * DB, 0.0), (5 * DB, 0.0)):
        term = _term(stage, 0.05, [v, -v])
        dither = 0.6 * fade * np.array([0.3, 0.1])
        v_used = np.array([v, -v]) if v > DB else np.zeros(2)
        expected = model.torque(v_used) + dither
        np.testing.assert_allclose(term, expected, rtol=0, atol=1e-15)


def test_zero_mean_over_a_period_for_symmetric_friction():
    stage = _stage(FrictionModel(JOINTS, breakaway=[0.3, 0.1], stribeck_breakaway=0.05, eps=0.02), hz=5.0)
    terms = [_term(stage, k * 0.004, [0.0, 0.0]) for k in range(250)]  # 1 s at 250 Hz: 5 periods
    assert np.abs(np.sum(terms, axis=0)).max() < 1e-12
    assert max(t[0] for t in terms) == pytest.approx(0.6 * 0.35)


@pytest.mark.parametrize("t", [4e307, -1e308, 1.7976931348623157e308])
def test_a_time_whose_phase_overflows_still_gives_a_flipping_dither(t):
    """A finite setpoint time so large that 2·dither_hz·t overflows (the ROS-free stage takes
    any finite t): the square wave flips at each setpoint, at the levels of the hand route;
    ``math.floor(inf)`` raised OverflowError out of ``update``."""
    stage = _stage(_model(), dither=0.6, hz=5.0)
    terms = [_term(stage, t, [0.0, 0.0]) for _ in range(4)]
    signs = [np.sign(term[0]) for term in terms]
    assert signs[0] != 0 and signs == [signs[0], -signs[0]] * 2
    for term, sign in zip(terms, signs):
        level = [0.3, 0.1] if sign > 0 else [0.2, 0.1]
        np.testing.assert_allclose(term, sign * 0.6 * np.array(level), rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    "kw, key",
    [
        (dict(dither=0.96), "dither"),
        (dict(dither=-0.1), "dither"),
        (dict(dither=[0.5, 0.5, 0.5]), "dither"),
        (dict(dither=math.nan), "dither"),
        (dict(dither_hz=0.0), "dither_hz"),
        (dict(velocity_source="setpoint"), "dither"),
        (dict(velocity_deadband=0.0), "dither"),
    ],
)
def test_bad_dither_settings_are_refused(kw, key):
    values = dict(velocity_source="measured", velocity_deadband=DB, dither=0.5)
    values.update(kw)
    with pytest.raises(ConfigError) as info:
        FrictionConfig(_model(), JOINTS, **values)
    assert info.value.key == key


def test_dither_off_is_bit_identical_to_no_dither():
    model = _model(viscous=0.1)
    a = FrictionStage(FrictionConfig(model, JOINTS, velocity_source="measured", velocity_deadband=DB))
    b = _stage(model, dither=0.0)
    for t, v in ((0.0, [0.0, 0.0]), (0.1, [0.05, -0.3]), (0.2, [0.01, 0.0])):
        assert _term(a, t, v).tolist() == _term(b, t, v).tolist()
