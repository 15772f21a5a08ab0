"""The friction stage's position-error drive and the seed's off-by-default semantics (issue 17).

Independent route: i2rt PR #37's merged formula, re-implemented here from its source
(``motor_chain_robot._compute_friction_compensation``: ``breakaway * np.tanh((p_target -
p_meas) / eps)``, the YAML read with ``fc_raw.get("enable", False)``), applied to its YAM
Ultra block (test/data/arms/i2rt_yam_ultra.yml).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.friction.arm_yaml import friction_block_enable, friction_params_from_arm_yaml
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.stage.contract import StageSettings
from gravity_friction_comp.stage.friction import FrictionConfig, FrictionStage

JOINTS = [f"joint{i}" for i in range(1, 7)]


def _i2rt_friction(yaml_text: str, p_target, p_meas) -> np.ndarray:
    """i2rt PR #37, restated: utils._load_arm_config + MotorChainRobot._compute_friction_compensation."""
    fc_raw = yaml.safe_load(yaml_text).get("friction_comp") or {}
    enable = bool(fc_raw.get("enable", False))
    breakaway = np.array(fc_raw.get("breakaway", [0.0] * 6), dtype=float)
    eps = float(fc_raw.get("eps", 0.01))
    if not enable:
        return np.zeros(6)
    return breakaway * np.tanh((np.asarray(p_target) - np.asarray(p_meas)) / eps)


@pytest.fixture()
def ultra(repo_root):
    return (repo_root / "test" / "data" / "arms" / "i2rt_yam_ultra.yml").read_text()


@pytest.fixture()
def ultra_without_enable(ultra, tmp_path):
    data = yaml.safe_load(ultra)
    del data["friction_comp"]["enable"]
    path = tmp_path / "yam_ultra_no_enable.yml"
    path.write_text(yaml.safe_dump(data))
    return path


def _stage(model, **kw) -> FrictionStage:
    return FrictionStage(FrictionConfig(model, JOINTS, **kw))


def _stuck(stage: FrictionStage, error=0.01, t=1.0, measured_t=1.0):
    """Follower at q, setpoint q + error, still leader (velocity 0)."""
    q = np.linspace(-0.3, 0.4, 6)
    stage.update_measured(JOINTS, [0.0] * 6, q.tolist(), measured_t)
    return stage.update(JOINTS, (q + error).tolist(), [0.0] * 6, [0.0] * 6, t)


# ---- point 4: a block without enabled/enable is off -------------------------------------
def test_block_without_enable_is_off_as_i2rt(ultra, ultra_without_enable):
    text = ultra_without_enable.read_text()
    assert np.array_equal(_i2rt_friction(text, [0.01] * 6, [0.0] * 6), np.zeros(6))  # i2rt: off
    assert friction_params_from_arm_yaml(ultra_without_enable, 6)["enabled"] is False
    assert friction_block_enable(ultra_without_enable) is None
    model = FrictionModel.from_yaml(ultra_without_enable, JOINTS)
    assert model.is_zero and np.array_equal(model.torque([0.01] * 6), np.zeros(6))
    for drive in ("velocity", "position_error"):
        kw = {"drive": drive, "eps_position": 0.005} if drive == "position_error" else {}
        res = _stuck(_stage(model, **kw))
        assert res.term.tolist() == [0.0] * 6  # 0 N·m, as i2rt
    # the shipped block says enable: true and stays on
    assert friction_block_enable(yaml.safe_load(ultra)) is True


def test_explicit_enabled_overrides_the_enable_less_block(ultra, ultra_without_enable):
    model = FrictionModel.from_yaml(ultra_without_enable, JOINTS, enabled=True)
    stage = _stage(model, drive="position_error", eps_position=0.005)
    want = _i2rt_friction(ultra, np.full(6, 0.01), np.zeros(6))  # the block with enable: true
    np.testing.assert_allclose(_stuck(stage).term, want, rtol=1e-15, atol=0)
    # and the other way: the shipped block (enable: true) switched off by the keyword
    off = FrictionModel.from_yaml(ultra_without_enable, JOINTS, enabled=False)
    assert off.is_zero


# ---- point 5: the position-error drive ----------------------------------------------------
def test_stuck_joint_gets_i2rt_figure(ultra, repo_root):
    """Follower stuck 0.01 rad short of its setpoint, leader still: i2rt 1.157 N·m on joint 1."""
    path = repo_root / "test" / "data" / "arms" / "i2rt_yam_ultra.yml"
    model = FrictionModel.from_yaml(path, JOINTS)
    eps = yaml.safe_load(ultra)["friction_comp"]["eps"]  # i2rt's eps is this rad scale
    res = _stuck(_stage(model, drive="position_error", eps_position=eps))
    want = _i2rt_friction(ultra, np.full(6, 0.01), np.zeros(6))
    np.testing.assert_allclose(res.term, want, rtol=1e-15, atol=0)
    assert round(res.term[0], 3) == 1.157 == round(1.2 * math.tanh(2.0), 3)
    # the velocity drive gives nothing to a still joint (the "0")
    assert _stuck(_stage(model)).term.tolist() == [0.0] * 6


def test_asymmetric_levels_scale_and_clamp():
    model = FrictionModel(["a", "b"], breakaway_positive=[1.0, 0.5], breakaway_negative=[0.25, 2.0])
    stage = FrictionStage(
        FrictionConfig(
            model, ["a", "b"], drive="position_error", eps_position=[0.01, 0.02], effort_limit=[9, 1.5]
        ),
        StageSettings(scale=[2.0, 1.0]),
    )
    stage.update_measured(["b", "a"], [], [0.0, 0.0], 0.0)
    res = stage.update(["a", "b"], [0.004, -0.03], [], [0.1, 0.0], 0.05)
    # by hand: a: e > 0 -> F+ = 1.0; b: e < 0 -> F- = 2.0
    term = np.array([1.0 * math.tanh(0.4), -2.0 * math.tanh(1.5)])
    assert res.term[0] == pytest.approx(2.0 * term[0], rel=1e-15)  # scaled
    assert term[1] < -1.5  # b's term beyond its 1.5 N·m limit: clamped
    np.testing.assert_allclose(res.effort, [0.1 + 2.0 * term[0], -1.5], rtol=1e-15)
    assert res.clamped == ("b",)
    stage.set_enabled(False)
    assert stage.repeat().effort.tolist() == [0.1, 0.0]


def test_missing_or_stale_measurement_gives_no_term():
    model = FrictionModel(["a"], breakaway=1.0, enabled=True)
    stage = FrictionStage(FrictionConfig(model, ["a"], drive="position_error", measurement_timeout=0.05))
    res = stage.update(["a"], [0.1], [], [0.3], 1.0)
    assert res.effort.tolist() == [0.3] and stage.measurement_problem == "missing"
    stage.update_measured(["a"], [], [0.0], 1.0)
    assert stage.update(["a"], [0.1], [], [0.3], 1.04).term[0] == pytest.approx(math.tanh(10.0))
    assert stage.measurement_problem is None
    res = stage.update(["a"], [0.1], [], [0.3], 1.0501)
    assert res.effort.tolist() == [0.3] and stage.measurement_problem == "stale"
    with pytest.raises(InputError):  # a position without its time
        stage.update_measured(["a"], [], [0.0])
    with pytest.raises(InputError):
        stage.update_measured(["a"], [], [math.nan], 2.0)


def test_position_error_drive_refused_without_measurement_or_with_velocity_terms():
    model = FrictionModel(["a"], breakaway=1.0)
    with pytest.raises(ConfigError, match="no measurement source") as err:
        FrictionConfig(model, ["a"], drive="position_error", measured=False)
    assert err.value.key == "drive"
    with pytest.raises(ConfigError, match="no measurement source"):
        FrictionConfig(model, ["a"], velocity_source="measured", measured=False)
    FrictionConfig(model, ["a"], measured=False)  # velocity from the setpoint: fine
    for key in ("viscous", "stribeck_breakaway", "offset"):
        with pytest.raises(ConfigError, match=f"also has \\['{key}'\\]"):
            FrictionConfig(FrictionModel(["a"], breakaway=1.0, **{key: 0.1}), ["a"], drive="position_error")
    with pytest.raises(ConfigError, match="valid choices: velocity, position_error"):
        FrictionConfig(model, ["a"], drive="error")
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ConfigError, match="eps_position"):
            FrictionConfig(model, ["a"], drive="position_error", eps_position=bad)
    with pytest.raises(ConfigError, match="measurement_timeout"):
        FrictionConfig(model, ["a"], drive="position_error", measurement_timeout=0.0)


def test_velocity_drive_ignores_positions():
    model = FrictionModel(["a"], breakaway=1.0, eps=0.1)
    stage = FrictionStage(FrictionConfig(model, ["a"]))
    assert stage.update_measured(["a"], [0.0], [5.0], 0.0) is False
    assert stage.update(["a"], [0.1], [0.05], [], 1.0).term[0] == pytest.approx(math.tanh(0.5), rel=1e-15)
