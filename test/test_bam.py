"""BAM M1–M6: loading BAM's JSON files, friction budgets and the feedforward solve.

Budgets are checked against arithmetic written out here with the numbers of
``test/data/bam/mx64/m*.json`` (copies of Rhoban/bam's files); the feedforward residual is
checked with a reference budget written independently in this file, and the sign convention
against BAM's own simulator step (``bam/simulate.py``) re-implemented here.
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.friction.bam import BAM_MODELS, BamParameters
from gravity_friction_comp.friction.bam_solver import BamStack

MX64 = pathlib.Path(__file__).resolve().parent / "data" / "bam" / "mx64"


def _load(model: str) -> BamParameters:
    return BamParameters.from_json(MX64 / f"{model}.json")


def _ref_budget(d: dict, dtheta: float, tau_m: float, tau_e: float) -> float:
    """Reference budget from a BAM JSON dict, written from FIELD_NOTES, scalar only."""
    m = d["model"]
    s = 0.0
    if m in ("m2", "m4", "m5", "m6"):
        s = math.exp(-(abs(dtheta / d["dtheta_stribeck"]) ** d["alpha"]))
    out = d["friction_base"] + d["friction_viscous"] * abs(dtheta)
    if m in ("m2", "m4", "m5", "m6"):
        out += s * d["friction_stribeck"]
    if m in ("m3", "m4"):
        out += d["load_friction_base"] * abs(tau_e - tau_m)
    if m == "m4":
        out += s * d["load_friction_stribeck"] * abs(tau_e - tau_m)
    if m in ("m5", "m6"):
        out += abs(d["load_friction_external"] * tau_e - d["load_friction_motor"] * tau_m)
        out += s * abs(
            d["load_friction_external_stribeck"] * tau_e - d["load_friction_motor_stribeck"] * tau_m
        )
    if m == "m6":
        opposite = (tau_e > 0 and tau_m < 0) or (tau_e < 0 and tau_m > 0) or ((tau_e == 0) != (tau_m == 0))
        if opposite and abs(tau_e) < abs(tau_m):
            out += s * d["load_friction_external_quad"] * tau_e**2
        elif opposite and abs(tau_e) > abs(tau_m):
            out += s * d["load_friction_motor_quad"] * tau_m**2
    return out


# -- loading ------------------------------------------------------------------------------
def test_every_shared_bam_file_loads(shared_data):
    files = sorted((shared_data / "bam").glob("*/m*.json"))
    assert len(files) == 37
    for path in files:
        raw = json.loads(path.read_text())
        p = BamParameters.from_json(path)
        assert p.model == raw["model"] and p.actuator == raw["actuator"]
        # loaded unchanged: every key and value of the file comes back
        assert p.to_dict() == raw
        assert p.source == str(path)


def test_mx64_fields_are_the_file_values():
    p = _load("m6")
    assert p.friction_base == 6.217919698787649e-07
    assert p.load_friction_external_quad == 0.009999980627672081
    assert p.dtheta_stribeck == 2.575277366960116
    assert p.R == 2.3164043271967447 and p.kt == 1.6016832750318712
    assert _load("m1").friction_stribeck == 0.0  # not a parameter of M1


@pytest.mark.parametrize(
    "text, match",
    [
        ("{not json", "malformed JSON"),
        ("[1, 2]", "expected a JSON object"),
        (
            '{"model": "m7", "actuator": "x", "friction_base": 0.1, "friction_viscous": 0.1}',
            "m1, m2, m3, m4, m5, m6",
        ),
        ('{"model": "m1", "actuator": "x", "friction_base": 0.1}', "friction_viscous"),
        ('{"actuator": "x", "friction_base": 0.1, "friction_viscous": 0.1}', "missing key"),
        (
            '{"model": "m1", "actuator": "x", "friction_base": 0.1, "friction_viscous": 0.1,'
            ' "frictoin_stribeck": 0.2}',
            "unknown key.*'frictoin_stribeck' \\(did you mean 'friction_stribeck'\\?\\)",
        ),
        (
            '{"model": "m1", "actuator": "x", "friction_base": 0.1, "friction_viscous": 0.1,'
            ' "load_friction_base": 0.2}',
            "not parameters of model m1",
        ),
        ('{"model": "m1", "actuator": "x", "friction_base": -0.1, "friction_viscous": 0.1}', ">= 0"),
        ('{"model": "m1", "actuator": "x", "friction_base": NaN, "friction_viscous": 0.1}', "finite"),
        (
            '{"model": "m1", "actuator": "x", "friction_base": "0.1", "friction_viscous": 0.1}',
            "finite number",
        ),
        (
            '{"model": "m3", "actuator": "x", "friction_base": 0.1, "friction_viscous": 0.1,'
            ' "load_friction_base": 1.2}',
            "self-locking",
        ),
    ],
)
def test_malformed_files_rejected(tmp_path, text, match):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match) as info:
        BamParameters.from_json(path)
    if "malformed" in match:
        assert str(path) in str(info.value)


def test_missing_file_rejected(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        BamParameters.from_json(tmp_path / "absent.json")


def test_stribeck_parameters_must_be_positive():
    d = json.loads((MX64 / "m2.json").read_text())
    d["dtheta_stribeck"] = 0.0
    with pytest.raises(ConfigError, match="dtheta_stribeck"):
        BamParameters.from_dict(d)


# -- budgets, arithmetic written out with the mx64 numbers -----------------------------------
def test_budget_m1_m2_hand_computed():
    v = 0.5
    m1 = 0.09038677246291783 + 0.011691602145974832 * 0.5
    assert _load("m1").budget(v, 1.2, -0.7) == pytest.approx(m1, rel=1e-15)
    s = math.exp(-((0.5 / 1.1202509555217797) ** 2.9999999999758256))
    m2 = 0.05611931763075957 + 0.019180846406029385 * 0.5 + s * 0.08186411549068562
    assert _load("m2").budget(v, 1.2, -0.7) == pytest.approx(m2, rel=1e-15)
    assert _load("m2").budget(-v, -5.0, 3.0) == pytest.approx(m2, rel=1e-15)  # |dtheta|, no load


def test_budget_m3_m4_use_abs_of_external_minus_motor():
    # tau_e - tau_m = -0.7 - 1.2 = -1.9 → |.| = 1.9
    m3 = 0.10216727649779266 + 0.0006300275797440622 * 0.5 + 0.07580074806755707 * 1.9
    assert _load("m3").budget(0.5, 1.2, -0.7) == pytest.approx(m3, rel=1e-15)
    # same sign: tau_e - tau_m = 0.9 - 0.4 = 0.5
    m3b = 0.10216727649779266 + 0.0006300275797440622 * 0.2 + 0.07580074806755707 * 0.5
    assert _load("m3").budget(-0.2, 0.4, 0.9) == pytest.approx(m3b, rel=1e-15)
    s = math.exp(-((0.5 / 1.5205782308422509) ** 1.3344007931759223))
    m4 = (
        0.061549466501679174
        + 0.014754905791636505 * 0.5
        + 1.9611119490261663e-10 * 1.9
        + s * (0.02389528618121147 + 0.23428996680337053 * 1.9)
    )
    assert _load("m4").budget(0.5, 1.2, -0.7) == pytest.approx(m4, rel=1e-15)


def test_budget_m5_directional():
    s = math.exp(-((0.5 / 0.7461716797150073) ** 1.2930393293009845))
    base = 0.07501958219691603 + 0.014908872960620413 * 0.5
    # |K_e·(-0.7) - K_m·1.2| and s·(K_cs + |K_es·(-0.7) - K_ms·1.2|)
    load = abs(1.6148277731274518e-11 * -0.7 - 0.3847995899952685 * 1.2)
    load_s = abs(0.1658962964406309 * -0.7 - 0.030123950049619153 * 1.2)
    m5 = base + load + s * (0.022233160228709636 + load_s)
    assert _load("m5").budget(0.5, 1.2, -0.7) == pytest.approx(m5, rel=1e-15)


def test_budget_m6_quadratic_branches():
    p = _load("m6")

    def common(v, tm, te):
        s = math.exp(-((abs(v) / 2.575277366960116) ** 0.8409018066017007))
        lin = (
            6.217919698787649e-07
            + 0.02533701181690149 * abs(v)
            + abs(2.0462014258729542e-08 * te - 0.3114720375111298 * tm)
        )
        return s, lin + s * (0.12269525980968875 + abs(0.014065853481003015 * te - 0.18774381222411038 * tm))

    # opposite signs, |tau_e| < |tau_m| → s·K_eq·tau_e²
    s, c = common(0.5, 1.2, -0.7)
    assert p.budget(0.5, 1.2, -0.7) == pytest.approx(c + s * 0.009999980627672081 * 0.49, rel=1e-15)
    # opposite signs, |tau_e| > |tau_m| → s·K_mq·tau_m²
    s, c = common(-0.3, 0.4, -0.9)
    assert p.budget(-0.3, 0.4, -0.9) == pytest.approx(c + s * 0.006908512882777861 * 0.16, rel=1e-15)
    # same signs → no quadratic term; equal magnitudes → none either (BAM's strict <, >)
    s, c = common(0.2, 0.4, 0.9)
    assert p.budget(0.2, 0.4, 0.9) == pytest.approx(c, rel=1e-15)
    s, c = common(0.2, 0.5, -0.5)
    assert p.budget(0.2, 0.5, -0.5) == pytest.approx(c, rel=1e-15)


def test_budget_matches_reference_on_random_points():
    rng = np.random.default_rng(7)
    for model in BAM_MODELS:
        p = _load(model)
        d = json.loads((MX64 / f"{model}.json").read_text())
        v, tm, te = rng.uniform(-3, 3, (3, 64))
        got = p.budget(v, tm, te)
        want = [_ref_budget(d, *x) for x in zip(v, tm, te)]
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
        # the vectorised general form used by the feedforward agrees too
        stack = BamStack([p] * v.size)
        np.testing.assert_allclose(stack.budget(v, tm, te), want, rtol=1e-13, atol=1e-15)


# -- feedforward --------------------------------------------------------------------------
def test_feedforward_m1_closed_form():
    p = _load("m1")
    v, eps = np.array([0.3, -0.02, 2.0]), 0.01
    want = np.tanh(v / eps) * (0.09038677246291783 + 0.011691602145974832 * np.abs(v))
    np.testing.assert_allclose(p.feedforward(v, 5.0, eps), want, rtol=1e-15)


def test_feedforward_m3_closed_form_against_gravity():
    # Motor holds +2 N·m against tau_e = -2; moving up (s > 0): tau_m = 2 + x,
    # |tau_e - tau_m| = 4 + x  →  x = s·(K_c + K_v·v + K_l·(4 + x))  →  solve for x.
    p = _load("m3")
    kc, kv, kl = 0.10216727649779266, 0.0006300275797440622, 0.07580074806755707
    v, eps = 0.02, 0.01
    s = math.tanh(2.0)
    x = s * (kc + kv * v + 4 * kl) / (1 - s * kl)
    assert p.feedforward(v, -2.0, eps) == pytest.approx(x, rel=1e-13)
    assert p.motor_torque(v, -2.0, eps) == pytest.approx(2.0 + x, rel=1e-13)
    # moving down (s < 0): x < 0, |tau_e - tau_m| = 4 + x (still > 0)
    x_down = -s * (kc + kv * v + 4 * kl) / (1 + s * kl)
    assert p.feedforward(-v, -2.0, eps) == pytest.approx(x_down, rel=1e-13)


@pytest.mark.parametrize("model", BAM_MODELS)
def test_feedforward_solves_implicit_equation(model):
    p = _load(model)
    d = json.loads((MX64 / f"{model}.json").read_text())
    rng = np.random.default_rng(11)
    v = np.concatenate([rng.uniform(-3, 3, 40), rng.uniform(-0.02, 0.02, 40)])
    tau_e = np.concatenate([rng.uniform(-30, 30, 40), rng.uniform(-2, 2, 40)])
    for eps in (1e-3, 0.01, 0.5):
        tau_f = p.feedforward(v, tau_e, eps)
        for vi, tei, tfi in zip(v, tau_e, tau_f):
            tau_m = -tei + tfi
            residual = tau_m - (-tei + math.tanh(vi / eps) * _ref_budget(d, vi, tau_m, tei))
            assert abs(residual) <= 1e-9
            # friction opposes motion: the feedforward pushes along the velocity
            assert tfi * vi >= 0.0


def test_feedforward_converges_in_few_newton_steps():
    rng = np.random.default_rng(3)
    for model, limit in (("m3", 4), ("m4", 4), ("m5", 5), ("m6", 10)):
        stack = BamStack([_load(model)] * 100)
        v, tau_e = rng.uniform(-3, 3, 100), rng.uniform(-50, 50, 100)
        tau_f = stack.feedforward(v, tau_e, np.full(100, 0.01))
        assert 1 <= stack.last_iterations <= limit, (model, stack.last_iterations)
        # and the answer is the root: residual through the public budget
        p = _load(model)
        tau_m = -tau_e + tau_f
        assert np.max(np.abs(tau_f - np.tanh(v / 0.01) * p.budget(v, tau_m, tau_e))) <= 1e-9


def test_feedforward_at_rest_is_positive_zero():
    for model in BAM_MODELS:
        out = _load(model).feedforward(np.array([0.0, -0.0]), np.array([3.0, -3.0]), 0.01)
        assert np.all(out == 0.0) and not np.any(np.signbit(out))


def test_feedforward_matches_bam_simulator_steady_state():
    # BAM's Simulator.step: tau_stop = (J/dt)·dq + tau_m + tau_e,
    # friction = -sign(tau_stop)·min(|tau_stop|, budget) → net = 0 means steady motion.
    for model in BAM_MODELS:
        p = _load(model)
        d = json.loads((MX64 / f"{model}.json").read_text())
        for dq, tau_e in ((1.0, -3.0), (-1.0, -3.0), (0.7, 2.5), (-2.0, 0.0)):
            tau_m = p.motor_torque(dq, tau_e, 0.01)  # tanh(100) == 1.0 in double
            tau_stop = (d["armature"] / 1e-3) * dq + tau_m + tau_e
            friction = -np.sign(tau_stop) * min(abs(tau_stop), _ref_budget(d, dq, tau_m, tau_e))
            assert abs(tau_m + tau_e + friction) <= 1e-9


def test_feedforward_rejects_bad_inputs():
    p = _load("m4")
    with pytest.raises(InputError) as info:
        p.feedforward(float("nan"), 1.0)
    assert info.value.reason is Reason.NOT_FINITE
    with pytest.raises(InputError) as info:
        p.feedforward(1.0, 1.0, eps=0.0)
    assert info.value.reason is Reason.RANGE


# -- hostile files and huge coefficients ----------------------------------------------------
_M1 = '{"model": "m1", "actuator": "x", "friction_base": 0.1, "friction_viscous": 0.01'


@pytest.mark.parametrize(
    "data, match",
    [
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
        ((_M1 + ', "kt": ' + "9" * 400 + "}").encode(), "kt: expected a finite number"),
        (
            _M1.replace("0.1,", "1" + "0" * 400 + ",", 1).encode() + b"}",
            "friction_base: expected a finite number >= 0",
        ),
    ],
)
def test_hostile_files_give_config_error(tmp_path, data, match):
    # were UnicodeDecodeError, RecursionError and OverflowError tracebacks
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    with pytest.raises(ConfigError, match=match):
        BamParameters.from_json(path)


def _m6(quad: float) -> dict:
    return {
        "model": "m6",
        "actuator": "x",
        "friction_base": 0.1,
        "friction_viscous": 0.01,
        "load_friction_motor": 0.2,
        "load_friction_external": 0.2,
        "load_friction_motor_stribeck": 0.1,
        "load_friction_external_stribeck": 0.1,
        "friction_stribeck": 0.05,
        "dtheta_stribeck": 0.2,
        "alpha": 1.5,
        "load_friction_motor_quad": quad,
        "load_friction_external_quad": quad,
    }


@pytest.mark.parametrize(
    "key, value",
    [
        ("load_friction_motor_quad", 1e300),
        ("load_friction_external_quad", 1e5),
        ("friction_base", 1e308),
        ("load_friction_external", 101.0),
    ],
)
def test_implausible_coefficients_rejected(key, value):
    # quad = 1e300 gave a feedforward of 0.0 (solver tolerance from an overflowing bracket)
    with pytest.raises(ConfigError, match=f"{key}: .* above the plausible maximum") as info:
        BamParameters.from_dict({**_m6(0.1), key: value})
    assert info.value.key == key


@pytest.mark.parametrize("quad", [1e3, 1e4])
def test_feedforward_residual_with_large_quadratic_coefficients(quad):
    d = _m6(quad)
    p = BamParameters.from_dict(d)
    rng = np.random.default_rng(0)
    v = np.concatenate([rng.uniform(-3, 3, 1500), rng.uniform(-0.05, 0.05, 500)])
    tau_e = np.concatenate([rng.uniform(-100, 100, 1500), rng.uniform(-3, 3, 500)])
    tau_f = p.feedforward(v, tau_e, 0.01)
    res = np.array(
        [
            abs(tf - math.tanh(vi / 0.01) * _ref_budget(d, vi, -te + tf, te))
            for vi, te, tf in zip(v, tau_e, tau_f)
        ]
    )
    small = np.abs(tau_f) < 1e4
    assert small.sum() > 1000
    # 1e-9 N·m for answers below 10 kN·m (the tolerance used to follow the bracket bound:
    # 5e-9 N·m at quad = 1e4 on an 85 N·m answer); above that, a few ulps of the answer
    assert res[small].max() <= 1e-9
    assert np.all(res <= 1e-9 + 1e-14 * np.abs(tau_f))


def test_feedforward_at_the_quadratic_limit_hand_computed():
    # v = 1 (tanh(100) = 1), tau_e = -20: tau_m = 20 + y > |tau_e|, opposite signs, so
    # Q = s·K_eq·400 and |a| = 0.2·20 + 0.2·(20 + y), |b| = 0.1·20 + 0.1·(20 + y):
    # y = 0.11 + 8 + 0.2y + s·(0.05 + 4 + 0.1y + 400·K)  →  solve the linear equation.
    quad = 1e4
    s = math.exp(-(5.0**1.5))
    y = (8.11 + s * (4.05 + 400 * quad)) / (1.0 - 0.2 - 0.1 * s)
    p = BamParameters.from_dict(_m6(quad))
    assert p.feedforward(1.0, -20.0, 0.01) == pytest.approx(y, rel=1e-13)
    assert 79.0 < y < 81.0


def test_overflowing_load_is_an_input_error():
    p = BamParameters.from_dict(_m6(1e4))
    with pytest.raises(InputError, match="too large") as info:
        p.feedforward(1.0, -1e160, 0.01)
    assert info.value.reason is Reason.RANGE
