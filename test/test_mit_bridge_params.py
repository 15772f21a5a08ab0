"""Tests of gravity_friction_comp.mit.bridge_params: parameter values -> BridgeConfig."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap

RATE = 500.0


VALUES = {
    "joints": ["base_yaw", "shoulder_pitch", "beam_pitch"],
    "can_id": [1, 2, 3],
    "master_id": [0x11, 0x12, 0x13],
    "motor_type": ["DM4310", "DM4340", "DM4310"],
    "direction": [1, -1, 1],
    "offset": [0.0, 0.1, 0.0],
    "gear_ratio": [1.0, 2.0, 1.0],
    "kp": [0.0, 0.0, 0.0],
    "kd": [0.0, 0.0, 0.0],
    "rate_hz": RATE,
    "command_timeout": 0.1,
}


def test_bridge_config_from_values_errors():
    with pytest.raises(ConfigError, match="required") as err:
        bridge_config_from_values({k: v for k, v in VALUES.items() if k != "can_id"})
    assert err.value.key == "can_id"
    with pytest.raises(ConfigError, match="3 joints") as err:
        bridge_config_from_values(dict(VALUES, kp=[1.0, 2.0]))
    assert err.value.key == "kp"
    with pytest.raises(ConfigError, match="DM4340"):
        bridge_config_from_values(dict(VALUES, motor_type=["DM4310", "DM9999", "DM4310"]))
    with pytest.raises(ConfigError, match="damp, disable, hold"):
        bridge_config_from_values(dict(VALUES, timeout_behavior="freeze"))
    cfg = bridge_config_from_values(dict(VALUES, kp=[1, 2, 3]))  # ints accepted for doubles
    assert [m.kp for m in cfg.motors] == [1.0, 2.0, 3.0]
    assert cfg.motors[1].mapping == JointMotorMap(-1, 0.1, 2.0)


def test_position_limits_from_urdf_fill_only_what_is_empty():
    import math

    from gravity_friction_comp.mit.bridge_params import fill_position_limits_from_urdf
    from gravity_friction_comp.model.urdf import UrdfJoint

    urdf = {
        "a": UrdfJoint("a", "revolute", "base", "l1", lower=-0.5, upper=0.7),
        "wheel": UrdfJoint("wheel", "continuous", "l1", "l2"),
        "bad": UrdfJoint("bad", "revolute", "l2", "l3", lower=0.2, upper=-0.2),
    }
    values = {"joints": ["a", "wheel", "bad", "ghost"], "position_lower": None, "position_upper": []}
    unbounded = fill_position_limits_from_urdf(values, urdf)
    assert values["position_lower"] == [-0.5, -math.inf, -math.inf, -math.inf]
    assert values["position_upper"] == [0.7, math.inf, math.inf, math.inf]
    assert set(unbounded) == {"bad", "ghost"} and "inverted" in unbounded["bad"]
    # explicit parameters win and nothing is reported
    given = {"joints": ["a"], "position_lower": [-0.1], "position_upper": [0.1]}
    assert fill_position_limits_from_urdf(given, urdf) == {}
    assert given["position_lower"] == [-0.1] and given["position_upper"] == [0.1]
