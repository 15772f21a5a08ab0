"""Tests of gravity_friction_comp.stage.friction (the friction stage as a plain object).

Independent routes: the friction law of config/palletizer_arm.yaml written out by hand
(Coulomb tanh + viscous), the backward-difference + backward-Euler RC filter by hand, and
the stage contract's formula applied by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.stage.contract import StageSettings
from gravity_friction_comp.stage.friction import FrictionConfig, FrictionStage

JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
BREAKAWAY = np.array([0.12, 0.20, 0.10])  # config/palletizer_arm.yaml, restated
EPS = 0.02  # its eps: a measured velocity's tanh scale
EPS_SETPOINT = 0.005  # its eps_setpoint: a setpoint's (setpoint or differentiated source)
VISCOUS = np.array([0.02, 0.04, 0.02])
NAMES = ["shoulder_pitch", "gripper", "beam_pitch", "base_yaw"]
INDEX = [3, 0, 2]


def _hand(v, eps=EPS_SETPOINT):
    return np.array([b * math.tanh(x / eps) + c * x for b, x, c in zip(BREAKAWAY, v, VISCOUS)])


@pytest.fixture(scope="module")
def model(repo_root):
    return FrictionModel.from_yaml(str(repo_root / "config" / "palletizer_arm.yaml"), JOINTS)


def _model_order(values):
    return np.asarray(values)[INDEX]


def test_setpoint_velocity_scale_limit_and_pass_through(model):
    stage = FrictionStage(
        FrictionConfig(model, JOINTS, effort_limit=[9.0, 9.0, 0.05]), StageSettings(scale=2.0)
    )
    v_msg = [0.05, 3.0, -0.01, 0.3]
    incoming = [1.0, 0.7, 0.0, -0.5]
    res = stage.update(NAMES, [0.0] * 4, v_msg, incoming, 1.0)
    expected = _model_order(incoming) + 2.0 * _hand(_model_order(v_msg))
    expected[2] = np.clip(expected[2], -0.05, 0.05)  # beam_pitch clamped to its 0.05 N·m limit
    assert abs(expected[2]) == 0.05
    np.testing.assert_allclose(_model_order(res.effort), expected, rtol=0, atol=1e-12)
    assert res.effort[1] == 0.7 and res.clamped == ("beam_pitch",)
    stage.set_enabled(False)
    assert [x.hex() for x in stage.repeat().effort] == [float(x).hex() for x in incoming]


def test_measured_velocity_and_deadband(model):
    stage = FrictionStage(FrictionConfig(model, JOINTS, velocity_source="measured", velocity_deadband=0.003))
    res = stage.update(JOINTS, [0.0] * 3, [0.5] * 3, [], 0.0)
    assert res.effort.tolist() == [0.0, 0.0, 0.0]  # no measurement yet: zeros
    half_lsb = 10.0 / 4095  # MIT feedback at rest reads ±½ LSB
    assert stage.update_measured(["gripper", *JOINTS], [9.0, half_lsb, -half_lsb, half_lsb])
    assert stage.update(JOINTS, [0.0] * 3, [0.5] * 3, [], 0.01).effort.tolist() == [0.0, 0.0, 0.0]
    stage.update_measured(JOINTS[::-1], [0.0, -0.2, 0.2])
    res = stage.update(JOINTS, [0.0] * 3, [0.5] * 3, [], 0.02)
    np.testing.assert_allclose(res.effort, _hand([0.2, -0.2, 0.0], EPS), atol=1e-12)
    for names, velocity, reason in (
        (JOINTS, [0.0, 0.0], Reason.SHAPE),
        (JOINTS[:2], [0.0, 0.0], Reason.MISSING_JOINTS),
        (JOINTS, [0.0, math.nan, 0.0], Reason.NOT_FINITE),
    ):
        with pytest.raises(InputError) as info:
            stage.update_measured(names, velocity)
        assert info.value.reason is reason
    # another source ignores measurements
    assert not FrictionStage(FrictionConfig(model, JOINTS)).update_measured(JOINTS, [1.0] * 3)


def test_differentiated_velocity_by_hand(model):
    cutoff = 10.0
    stage = FrictionStage(
        FrictionConfig(model, JOINTS, velocity_source="differentiated", velocity_cutoff_hz=cutoff)
    )
    tau = 1.0 / (2.0 * math.pi * cutoff)
    rng = np.random.default_rng(2)
    q_last, t_last, v_hat = None, None, np.zeros(3)
    for k in range(5):
        t = 3.0 + 0.01 * k
        q = rng.uniform(-0.1, 0.1, 3)
        res = stage.update(JOINTS, q, [], [], t)
        if q_last is not None:
            dt = t - t_last
            v_hat = v_hat + dt / (dt + tau) * ((q - q_last) / dt - v_hat)
        q_last, t_last = q, t
        np.testing.assert_allclose(stage.velocity, v_hat, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(res.effort, _hand(v_hat), rtol=1e-12, atol=1e-15)
    assert np.any(v_hat != 0.0)


def test_set_config_keeps_or_restarts_the_velocity_state(model):
    stage = FrictionStage(FrictionConfig(model, JOINTS, velocity_source="measured"))
    stage.update_measured(JOINTS, [0.2, 0.2, 0.2])
    stage.update(JOINTS, [0.0] * 3, [], [], 0.0)
    # new coefficients, same velocity settings: the measurement is kept
    stage.set_config(FrictionConfig(model.with_updates(eps=0.05), JOINTS, velocity_source="measured"))
    assert stage.update(JOINTS, [0.0] * 3, [], [], 0.1).effort[0] > 0.0
    # new velocity settings: the selector restarts (no measurement yet -> zeros)
    stage.set_config(FrictionConfig(model, JOINTS, velocity_source="measured", velocity_deadband=0.001))
    assert stage.update(JOINTS, [0.0] * 3, [], [], 0.2).effort.tolist() == [0.0] * 3
    # other joints: the kept setpoint is forgotten
    stage.set_config(FrictionConfig(FrictionModel(["a"], breakaway=0.1), ["a"]))
    assert stage.repeat() is None


def test_zero_model_is_a_bit_identical_pass_through():
    stage = FrictionStage(FrictionConfig(FrictionModel(JOINTS, breakaway=0.5, enabled=False)))
    incoming = [0.1 + 0.2, -0.0, 1e-300]
    res = stage.update(JOINTS, [0.0] * 3, [1.0] * 3, incoming, 0.0)
    assert [x.hex() for x in res.effort] == [float(x).hex() for x in incoming]


def test_evaluate_before_any_update_has_no_velocity(model):
    stage = FrictionStage(FrictionConfig(model, JOINTS))
    with pytest.raises(InputError) as info:
        stage.evaluate(JOINTS, [0.0] * 3, [0.1] * 3, [])
    assert info.value.reason is Reason.NOT_READY


@pytest.mark.parametrize(
    "kwargs,key",
    [
        ({"joints": ["a", "a", "b"]}, "joints"),
        ({"joints": ["", ""]}, "joints"),
        ({"joints": ["a", "b"]}, "joints"),
        ({"velocity_source": "psychic"}, "velocity_source"),
        ({"velocity_cutoff_hz": 0.0}, "velocity_cutoff_hz"),
        ({"velocity_deadband": -1.0}, "velocity_deadband"),
        ({"effort_limit": 0.0}, "effort_limit"),
    ],
)
def test_config_validation_names_the_key(model, kwargs, key):
    with pytest.raises(ConfigError) as info:
        FrictionConfig(model, **{"joints": JOINTS, **kwargs})
    assert info.value.key == key


def test_joints_default_to_the_model_names(model):
    assert FrictionConfig(model).joints == tuple(JOINTS)
    with pytest.raises(ConfigError):
        FrictionConfig(FrictionModel(3, breakaway=0.1))  # a count-only model names no joints


def test_per_joint_scale_in_joints_order_and_changing_with_the_joints(model):
    from gravity_friction_comp.errors import DimensionError

    s = np.array([0.5, 2.0, -1.0])  # JOINTS order
    stage = FrictionStage(FrictionConfig(model, JOINTS), StageSettings(scale=s))
    v_msg = [0.05, 3.0, -0.01, 0.3]
    res = stage.update(NAMES, [0.0] * 4, v_msg, [], 1.0)
    np.testing.assert_allclose(_model_order(res.effort), s * _hand(_model_order(v_msg)), rtol=0, atol=1e-12)
    with pytest.raises(DimensionError, match="scale"):
        FrictionStage(FrictionConfig(model, JOINTS), StageSettings(scale=[1.0, 2.0]))
    # two joints: the 3-value scale in force does not fit, a new one given with it does
    two = FrictionModel(JOINTS[:2], breakaway=BREAKAWAY[:2].tolist(), eps=EPS, viscous=VISCOUS[:2].tolist())
    with pytest.raises(DimensionError, match="scale: expected 2 values"):
        stage.set_config(FrictionConfig(two, JOINTS[:2]))
    assert stage.joint_names == tuple(JOINTS)  # refused: nothing changed
    stage.set_config(FrictionConfig(two, JOINTS[:2]), StageSettings(scale=[3.0, 0.5]))
    res = stage.update(JOINTS[:2], [0.0] * 2, [0.3, -0.2], [], 2.0)
    np.testing.assert_allclose(res.effort, [3.0, 0.5] * _hand([0.3, -0.2, 0.0], EPS)[:2], atol=1e-12)


@pytest.mark.parametrize("source", ["setpoint", "differentiated", "measured"])
def test_a_setpoints_velocity_drives_the_tanh_with_eps_setpoint(model, source):
    # issue 30: the same q̇ = 0.004 rad/s (a slow approach's tail) through each source; by hand
    # b·tanh(0.004/ε) + c·0.004 with ε = 0.005 for the setpoint's velocity, 0.02 for a measured one
    v = np.array([0.004, -0.004, 0.004])
    stage = FrictionStage(FrictionConfig(model, JOINTS, velocity_source=source))
    if source == "differentiated":  # a constant-velocity ramp: the filter converges to v
        for k in range(2000):
            res = stage.update(JOINTS, (v * 1e-3 * k).tolist(), [], [], 1e-3 * k)
        np.testing.assert_allclose(stage.velocity, v, rtol=1e-9)
        v = stage.velocity
    else:
        stage.update_measured(JOINTS, v.tolist())
        res = stage.update(JOINTS, [0.0] * 3, v.tolist(), [], 0.0)
    eps = EPS if source == "measured" else EPS_SETPOINT
    np.testing.assert_allclose(res.effort, _hand(v, eps), rtol=1e-12, atol=1e-15)
    # the sharper tanh keeps 62 % of the Coulomb level there, the measured one 20 %
    assert math.tanh(0.004 / eps) == pytest.approx(0.664 if eps == EPS_SETPOINT else 0.197, abs=1e-3)


def test_eps_setpoint_unset_follows_eps_and_is_validated():
    m = FrictionModel(JOINTS, breakaway=0.1, eps=0.03)
    assert m.params.eps_setpoint is None and m.for_setpoint_velocity() is m
    changed = m.with_updates(eps=0.04)  # unset stays unset: it follows eps
    assert changed.params.eps_setpoint is None
    assert FrictionConfig(changed, JOINTS).term_model.params.eps.tolist() == [0.04] * 3
    sharp = m.with_updates(eps_setpoint=[0.005, 0.006, 0.007])
    np.testing.assert_array_equal(sharp.for_setpoint_velocity().params.eps, [0.005, 0.006, 0.007])
    np.testing.assert_array_equal(sharp.with_updates(eps=0.05).params.eps_setpoint, [0.005, 0.006, 0.007])
    assert FrictionConfig(sharp, JOINTS, velocity_source="measured").term_model is sharp
    for bad in (0.0, -0.01, math.nan, [0.005, 0.005]):
        with pytest.raises((ConfigError, ValueError)) as info:
            FrictionModel(JOINTS, breakaway=0.1, eps_setpoint=bad)
        assert "eps_setpoint" in str(info.value)


def test_implausible_velocity_is_refused_and_changes_nothing(model):
    import warnings

    stage = FrictionStage(FrictionConfig(model, JOINTS))
    good = stage.update(JOINTS, [0.0] * 3, [0.1, 0.2, 0.3], [], t=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match="shoulder_pitch") as err:
            stage.update(JOINTS, [0] * 3, [0, 1e300, 0], [], t=0.01)
    assert err.value.reason is Reason.RANGE
    assert stage.velocity.tolist() == [0.1, 0.2, 0.3]  # the last good q̇ and setpoint kept
    assert stage.repeat().effort.tolist() == good.effort.tolist()
    # a pass-through joint may be anything finite: only the stage's joints are bounded
    stage.update([*JOINTS, "gripper"], [0.0] * 4, [0.0, 0.0, 0.0, 1e300], [], t=0.02)

    measured = FrictionStage(FrictionConfig(model, JOINTS, velocity_source="measured"))
    with pytest.raises(InputError) as err:
        measured.update_measured(JOINTS, [0.0, 1e300, 0.0])
    assert err.value.reason is Reason.RANGE


@pytest.mark.parametrize(
    ("velocity", "reason"),
    [
        (["a", 0, 0], Reason.TYPE),
        (None, Reason.SHAPE),
        ([[0, 0], 0, 0], Reason.TYPE),
        ([1j, 0, 0], Reason.TYPE),
        (np.zeros((3, 1)), Reason.SHAPE),
    ],
)
def test_measured_velocity_of_the_wrong_kind_is_an_input_error(model, velocity, reason):
    stage = FrictionStage(FrictionConfig(model, JOINTS, velocity_source="measured"))
    with pytest.raises(InputError) as err:
        stage.update_measured(JOINTS, velocity)
    assert err.value.reason is reason


@pytest.mark.parametrize(
    ("t", "reason"),
    [("x", Reason.TYPE), (None, Reason.TYPE), (math.nan, Reason.NOT_FINITE), (math.inf, Reason.NOT_FINITE)],
)
def test_non_numeric_or_non_finite_t_is_an_input_error(model, t, reason):
    stage = FrictionStage(FrictionConfig(model, JOINTS, velocity_source="differentiated"))
    with pytest.raises(InputError) as err:
        stage.update(JOINTS, [0.0] * 3, [], [], t)
    assert err.value.reason is reason and stage.kept is None


@pytest.mark.parametrize("joints", ["abc", b"abc"])
def test_a_bare_string_is_not_a_joint_list(model, joints):
    with pytest.raises(ConfigError, match="list of joint names") as err:
        FrictionConfig(model, joints)
    assert err.value.key == "joints"
