"""Tests of gravity_friction_comp.stage.gravity (the gravity stage as a plain object).

Independent routes: gravity and inverse dynamics rebuilt from plain Pinocchio on the
unreduced model with a hand-written coupling matrix, the acceleration filter written out by
hand, and the stage contract's formula (clip of incoming + scale·term) applied by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError, Reason
from gravity_friction_comp.model.actuator import ActuatorModel
from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.stage.contract import StageSettings
from gravity_friction_comp.stage.gravity import GravityConfig, GravityStage

# palletizer: full joints base_yaw, shoulder_pitch, crank_parallel (= -shoulder), beam_pitch,
# beam_parallel (= -beam), written by hand from urdf/palletizer.urdf
G = np.array([[1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=float)
NAMES = ["gripper", "beam_pitch", "base_yaw", "shoulder_pitch"]  # shuffled + a joint it lacks
INDEX = [2, 3, 1]  # message index of base_yaw, shoulder_pitch, beam_pitch


@pytest.fixture(scope="module")
def models(repo_root):
    bare = RobotModel.from_urdf(repo_root / "urdf" / "palletizer.urdf")
    loaded = bare.with_payload(Payload.cylinder(0.4, 0.033, 0.12, com=(0.0, 0.0, -0.07), parent="tool"))
    return bare, loaded


def _pin_gravity(model, q):
    full = model.full_model
    return G.T @ pin.computeGeneralizedGravity(full, full.createData(), model.full_configuration(q))


def _pin_id(model, q, v, a):
    full = model.full_model
    qf = model.full_configuration(q)
    return G.T @ pin.rnea(full, full.createData(), qf, G @ v, G @ a)


def _in_model_order(values):
    return np.asarray(values)[INDEX]


def test_gravity_mode_scale_limits_holding_and_pass_through(models):
    bare, loaded = models
    stage = GravityStage(GravityConfig(bare, loaded), StageSettings(scale=0.5))
    assert stage.joint_names == bare.joint_names
    q_msg = [0.7, -0.3, 0.2, 0.5]
    incoming = [1.5, 0.25, -0.5, 0.125]
    res = stage.update(NAMES, q_msg, [], incoming, 0.0)
    q = _in_model_order(q_msg)
    expected = _in_model_order(incoming) + 0.5 * _pin_gravity(bare, q)
    np.testing.assert_allclose(_in_model_order(res.effort), expected, rtol=0, atol=1e-12)
    assert res.effort[0] == 1.5 and res.term[0] == 0.0  # the gripper passes through
    np.testing.assert_allclose(_in_model_order(res.term), 0.5 * _pin_gravity(bare, q), atol=1e-12)
    # holding: the payload model, recomputed from the kept setpoint
    stage.set_holding(True)
    held = stage.repeat()
    np.testing.assert_allclose(_in_model_order(held.term), 0.5 * _pin_gravity(loaded, q), atol=1e-12)
    assert not np.allclose(held.term, res.term)
    # effort limits: the URDF's by default, overridden by effort_limit; clamped joints named
    stage.set_config(GravityConfig(bare, loaded, effort_limit=[0.01, 0.02, 0.03]))
    clamped = stage.repeat()
    assert np.all(np.abs(_in_model_order(clamped.effort)) <= [0.01, 0.02, 0.03])
    assert set(clamped.clamped) == set(bare.joint_names)
    # disabled: the incoming effort, bit for bit
    stage.set_enabled(False)
    off = stage.repeat()
    assert [x.hex() for x in off.effort] == [float(x).hex() for x in incoming]


def test_effort_limits_default_to_the_urdf(models):
    bare, _ = models
    assert GravityConfig(bare).effort_limits.tolist() == bare.effort_limits.tolist()
    assert GravityConfig(bare, effort_limit=2.0).effort_limits.tolist() == [2.0] * 3
    assert GravityConfig(bare).payload_model is bare


def test_inverse_dynamics_mode_filters_acceleration_and_runs_rnea_once(models, monkeypatch):
    bare, loaded = models
    act = ActuatorModel(3, rotor_inertia=[1e-5, 4e-5, 2e-5], gear_ratio=[10.0, 30.0, 8.0], viscous=0.3)
    bare_a, loaded_a = bare.with_actuators(act), loaded.with_actuators(act)
    cutoff = 15.0
    stage = GravityStage(
        GravityConfig(bare_a, loaded_a, mode="inverse_dynamics", acceleration_cutoff_hz=cutoff)
    )
    calls = []
    original = pin.rnea
    monkeypatch.setattr(pin, "rnea", lambda *a: calls.append(1) or original(*a))
    tau_rc = 1.0 / (2.0 * math.pi * cutoff)
    reflected = np.array([1e-5 * 100, 4e-5 * 900, 2e-5 * 64])  # n²J by hand [kg·m²]
    rng = np.random.default_rng(3)
    accel, last_v, last_t = np.zeros(3), None, None
    for k in range(6):
        t = 2.0 + 0.004 * k
        q_msg = rng.uniform(-0.6, 0.6, 4)
        v_msg = rng.uniform(-1.0, 1.0, 4)
        n_calls = len(calls)
        res = stage.update(NAMES, q_msg, v_msg, [], t)
        assert len(calls) == n_calls + 1  # one RNEA per setpoint
        q, v = _in_model_order(q_msg), _in_model_order(v_msg)
        if last_v is not None:  # backward difference through the backward-Euler RC by hand
            dt = t - last_t
            accel = accel + dt / (dt + tau_rc) * ((v - last_v) / dt - accel)
        last_v, last_t = v, t
        expected = _pin_id(bare, q, v, accel) + reflected * accel  # no friction (viscous left out)
        np.testing.assert_allclose(_in_model_order(res.term), expected, rtol=1e-12, atol=1e-12)
    assert np.any(accel != 0.0)
    # the payload model while holding, same filter state (a repeat does not advance it)
    stage.set_holding(True)
    held = stage.repeat()
    expected = _pin_id(loaded, q, v, accel) + reflected * accel
    np.testing.assert_allclose(_in_model_order(held.term), expected, rtol=1e-12, atol=1e-12)
    # back to gravity mode: g(q) of the kept setpoint
    stage.set_config(GravityConfig(bare_a, loaded_a))
    np.testing.assert_allclose(_in_model_order(stage.repeat().term), _pin_gravity(loaded, q), atol=1e-12)


def test_velocity_beyond_the_urdf_limit_is_clamped_and_flagged(models):
    bare, _ = models
    stage = GravityStage(GravityConfig(bare, mode="inverse_dynamics"))
    limits = bare.velocity_limits
    fast = 2.0 * limits
    stage.update(list(bare.joint_names), [0.1, 0.2, 0.3], fast, [], 1.0)
    assert stage.velocity_clamped
    res = stage.update(list(bare.joint_names), [0.1, 0.2, 0.3], fast, [], 1.001)
    np.testing.assert_allclose(
        res.term, _pin_id(bare, np.array([0.1, 0.2, 0.3]), limits, np.zeros(3)), atol=1e-9
    )
    stage.update(list(bare.joint_names), [0.1, 0.2, 0.3], 0.5 * limits, [], 1.002)
    assert not stage.velocity_clamped


def test_bad_setpoints_are_refused_and_not_kept(models):
    bare, _ = models
    stage = GravityStage(GravityConfig(bare))
    assert stage.repeat() is None and stage.kept is None
    for names, q, reason in (
        (["base_yaw", "shoulder_pitch"], [0.0, 0.0], Reason.MISSING_JOINTS),
        (list(bare.joint_names), [0.0, math.nan, 0.0], Reason.NOT_FINITE),
    ):
        with pytest.raises(InputError) as info:
            stage.update(names, q, [], [], 0.0)
        assert info.value.reason is reason
    assert stage.kept is None
    # finite but absurd |q|: parsed and kept, then refused by the model's checked call
    with pytest.raises(InputError):
        stage.update(list(bare.joint_names), [1e200, 0.0, 0.0], [], [], 0.0)
    assert stage.kept is not None


@pytest.mark.parametrize(
    "kwargs,key",
    [
        ({"mode": "magic"}, "mode"),
        ({"acceleration_cutoff_hz": 0.0}, "acceleration_cutoff_hz"),
        ({"acceleration_cutoff_hz": math.inf}, "acceleration_cutoff_hz"),
        ({"effort_limit": -1.0}, "effort_limit"),
    ],
)
def test_config_validation_names_the_key(models, kwargs, key):
    bare, _ = models
    with pytest.raises(ConfigError) as info:
        GravityConfig(bare, **kwargs)
    assert info.value.key == key


def test_config_refuses_other_models(models, repo_root):
    bare, _ = models
    with pytest.raises(DimensionError):
        GravityConfig(bare, effort_limit=[1.0, 2.0])
    with pytest.raises(ConfigError, match="valid choices: gravity, inverse_dynamics"):
        GravityConfig(bare, mode="dynamics")
    other = RobotModel.from_urdf(
        '<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/>'
        '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>'
        '<limit effort="1" velocity="1" lower="-1" upper="1"/></joint></robot>'
    )
    with pytest.raises(ConfigError) as info:
        GravityConfig(bare, other)
    assert info.value.key == "payload_model"
    with pytest.raises(ConfigError):
        GravityStage(GravityConfig(bare), holding=1)
    with pytest.raises(ConfigError):
        GravityStage(GravityConfig(bare)).set_scale(math.nan)


def test_per_joint_scale_multiplies_each_joints_gravity(models):
    """τ_out,i = clip(τ_in,i + s_i·g_i(q), ±τ_max,i), g from plain Pinocchio through G."""
    bare, loaded = models
    s = np.array([0.5, 1.25, -2.0])  # model order: base_yaw, shoulder_pitch, beam_pitch
    stage = GravityStage(GravityConfig(bare, loaded), StageSettings(scale=s.tolist()))
    assert stage.settings.per_joint and list(stage.settings.scale) == list(s)
    q_msg = [0.7, -0.3, 0.2, 0.5]
    incoming = [1.5, 0.25, -0.5, 0.125]
    res = stage.update(NAMES, q_msg, [], incoming, 0.0)
    g = _pin_gravity(bare, _in_model_order(q_msg))
    assert np.all(np.abs(g[1:]) > 1e-3)  # loaded joints: the factors are visible
    np.testing.assert_allclose(_in_model_order(res.term), s * g, rtol=0, atol=1e-12)
    np.testing.assert_allclose(_in_model_order(res.effort), _in_model_order(incoming) + s * g, atol=1e-12)
    assert res.effort[0] == 1.5 and res.term[0] == 0.0  # the gripper passes through
    # the clamp applies after the per-joint factor
    limits = np.array([0.05, 0.05, 0.05])
    stage.set_config(GravityConfig(bare, loaded, effort_limit=limits.tolist()))
    clamped = stage.repeat()
    expected = np.clip(_in_model_order(incoming) + s * g, -limits, limits)
    np.testing.assert_allclose(_in_model_order(clamped.effort), expected, atol=1e-12)
    # a scalar broadcast equals the same value repeated per joint, bit for bit
    stage.set_scale(0.75)
    scalar = stage.repeat().effort
    stage.set_scale([0.75, 0.75, 0.75])
    assert stage.settings.per_joint
    assert [x.hex() for x in stage.repeat().effort] == [x.hex() for x in scalar]


def test_per_joint_scale_in_inverse_dynamics_mode(models):
    bare, _ = models
    s = np.array([2.0, 0.5, 1.5])
    stage = GravityStage(GravityConfig(bare, mode="inverse_dynamics"), StageSettings(scale=s))
    q, v = np.array([0.1, 0.4, -0.3]), np.array([0.5, -0.2, 0.3])
    res = stage.update(bare.joint_names, q, v, [], 0.0)  # first setpoint: q̈ = 0
    np.testing.assert_allclose(res.term, s * _pin_id(bare, q, v, np.zeros(3)), rtol=0, atol=1e-12)


def test_per_joint_scale_length_is_checked_against_the_model(models):
    bare, loaded = models
    with pytest.raises(DimensionError, match="scale") as info:
        GravityStage(GravityConfig(bare, loaded), StageSettings(scale=[1.0, 1.1]))
    assert info.value.key == "scale" and info.value.expected == 3
    stage = GravityStage(GravityConfig(bare, loaded))
    for bad in ([1.0, 1.1], [1.0, 1.1, 1.2, 1.3]):
        with pytest.raises(DimensionError, match="scale"):
            stage.set_scale(bad)
        with pytest.raises(DimensionError, match="scale"):
            stage.set_config(GravityConfig(bare, loaded), StageSettings(scale=bad))
    assert stage.settings.scale == 1.0  # refusals change nothing
    stage.set_scale([1.0, 1.1, 1.2])
    assert list(stage.settings.scale) == [1.0, 1.1, 1.2]


@pytest.mark.parametrize(
    ("t", "reason"), [("x", Reason.TYPE), (math.nan, Reason.NOT_FINITE), (math.inf, Reason.NOT_FINITE)]
)
def test_gravity_mode_checks_t_like_every_stage(models, t, reason):
    bare, loaded = models
    stage = GravityStage(GravityConfig(bare, loaded))
    with pytest.raises(InputError) as err:
        stage.update(NAMES, [0.1, 0.2, 0.3, 0.4], [], [], t)
    assert err.value.reason is reason and stage.kept is None


def test_the_term_skips_the_models_checks_only_for_parsed_positions_within_the_bound(models, monkeypatch):
    from gravity_friction_comp.stage.gravity import MAX_UNCHECKED_POSITION

    bare, _ = models
    rng = np.random.default_rng(3)
    for q in rng.uniform(-3.0, 3.0, (20, 3)):  # the unchecked call: the same numbers bit for bit
        assert bare.gravity(q, checked=False).tobytes() == bare.gravity(q).tobytes()
    calls: list[bool] = []
    original = RobotModel.gravity

    def spy(self, q, *, checked=True):
        calls.append(checked)
        return original(self, q, checked=checked)

    monkeypatch.setattr(RobotModel, "gravity", spy)
    stage = GravityStage(GravityConfig(bare))
    names = list(bare.joint_names)
    stage.update(names, [0.1, MAX_UNCHECKED_POSITION, -0.2], [], [], 1.0)
    for q0 in (-2 * MAX_UNCHECKED_POSITION, 1e200):  # beyond the bound: the checked call refuses
        with pytest.raises(InputError) as info:  # (the model's own bound, no overflow warning)
            stage.update(names, [0.1, q0, -0.2], [], [], 1.0)
        assert info.value.reason is Reason.RANGE
    assert calls == [False, True, True]


@pytest.mark.parametrize("absurd", [1e30, -1e30, 1e308])
def test_an_absurd_incoming_effort_is_clamped_and_the_term_stays_within_the_limit(models, absurd):
    """An incoming 1e30 on shoulder_pitch was clamped in the output but ``~/effort`` (the
    term, output − incoming) was ≈ −1e30. The output is still clip(incoming + g); the term
    is counted from the incoming effort taken at the joint's URDF limit: both within it."""
    bare, _ = models
    stage = GravityStage(GravityConfig(bare))
    limits = bare.effort_limits  # base_yaw, shoulder_pitch, beam_pitch
    q_msg = [0.0, 0.4, 0.1, 0.6]  # NAMES order: gripper, beam_pitch, base_yaw, shoulder_pitch
    incoming = [absurd, 0.5, 0.0, absurd]  # the gripper is not the stage's: passed through
    res = stage.update(NAMES, q_msg, [], incoming, 0.0)
    g = _pin_gravity(bare, np.asarray(q_msg)[INDEX])
    taken = np.array([0.0, math.copysign(limits[1], absurd), 0.5])
    expected = np.clip(np.array([0.0, absurd, 0.5]) + g, -limits, limits)
    np.testing.assert_allclose(res.effort[INDEX], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.term[INDEX], expected - taken, rtol=0, atol=1e-12)
    assert np.all(np.abs(res.term[INDEX]) <= limits) and res.term[0] == 0.0
    assert res.effort[0] == absurd and "shoulder_pitch" in res.clamped
