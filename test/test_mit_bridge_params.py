"""Tests of gravity_friction_comp.mit.bridge_params: parameter values -> BridgeConfig."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values, split_by_bus
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits

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


# --- buses, CAN-FD, bad input naming the joint ---------------------------------------------------


def _bimanual(**extra):
    joints = [f"{side}_j{i}" for side in ("left", "right") for i in range(1, 4)]
    return {
        "joints": joints,
        "can_id": [1, 2, 3] * 2,
        "master_id": [0x11, 0x12, 0x13] * 2,
        "motor_type": ["DM8009", "DM4340", "DM4310"] * 2,
        "bus": ["can1"] * 3 + ["can0"] * 3,
        "can.fd": True,
        "can.data_bitrate": 5_000_000,
        **extra,
    }


def test_bus_per_joint_and_fd_parameters():
    cfg = bridge_config_from_values(_bimanual())
    assert cfg.buses == ("can1", "can0")
    assert [m.can_id for m in cfg.motors_on("can0")] == [1, 2, 3]
    assert (cfg.fd, cfg.data_bitrate, cfg.bitrate) == (True, 5_000_000, 1_000_000)
    parts = split_by_bus(cfg)
    assert list(parts) == ["can1", "can0"]
    assert [m.name for m in parts["can1"].motors] == ["left_j1", "left_j2", "left_j3"]
    assert parts["can0"].fd and parts["can0"].rate_hz == cfg.rate_hz
    # no bus array: every motor on the can.channel bus (today's files)
    assert bridge_config_from_values(VALUES).buses == ("",)


def test_colliding_ids_on_one_bus_refused_with_joint_and_value():
    values = _bimanual(bus=["can0"] * 6)
    with pytest.raises(
        ConfigError, match="duplicate can_id 0x1 on bus 'can0': joints left_j1 and right_j1"
    ) as err:
        bridge_config_from_values(values)
    assert (err.value.key, err.value.value) == ("can_id", 1)
    with pytest.raises(ConfigError, match="bus has 2 values for 6 joints"):
        bridge_config_from_values(_bimanual(bus=["can0", "can1"]))
    with pytest.raises(ConfigError, match="joint left_j1: bus entries") as err:
        bridge_config_from_values(_bimanual(bus=[0] * 6))


def test_fd_data_bitrate_below_nominal_refused_with_the_value():
    with pytest.raises(ConfigError, match="500000") as err:
        bridge_config_from_values(_bimanual(**{"can.data_bitrate": 500_000}))
    assert (err.value.key, err.value.value) == ("can.data_bitrate", 500_000)
    with pytest.raises(ConfigError) as err:
        bridge_config_from_values(_bimanual(**{"can.fd": "true"}))
    assert err.value.key == "can.fd"
    with pytest.raises(ConfigError) as err:
        bridge_config_from_values(_bimanual(**{"can.data_bitrate": 5e6}))
    assert err.value.key == "can.data_bitrate"


def test_unknown_motor_type_names_the_joint_and_lists_types():
    values = _bimanual(motor_type=["DM8009", "DM4340", "DM4310", "DM8009", "RS07", "DM4310"])
    with pytest.raises(ConfigError, match="joint right_j2: unknown motor_type 'RS07'") as err:
        bridge_config_from_values(values)
    assert (err.value.key, err.value.value) == ("motor_type", "RS07")
    assert "RS06" in str(err.value) and "DM4340" in str(err.value)
    robstride = bridge_config_from_values(_bimanual(motor_type=["RS06", "RS05", "RS00"] * 2))
    assert robstride.motors[0].limits.kp_max == 5000.0 and robstride.motors[0].limits.family == "robstride"


@pytest.mark.parametrize("motor_type", ["RS02", "RS03", "RS04"])
def test_robstride_types_with_two_sets_of_ranges_need_them_explicitly(motor_type):
    """Issue 26 point 3: RobStride's manuals give RS02/RS03/RS04 MIT ranges in the MIT
    chapter that differ from the private-protocol chapter the table follows (RS04: 1 rad
    read as 1.193 rad, kp 50 as 5). Without all five ranges for the joint the bridge refuses
    to start, naming the joint, the conflict and both sources; with them it uses them."""
    types = ["DM4340", motor_type, "DM4310"] * 2
    with pytest.raises(ConfigError) as err:
        bridge_config_from_values(_bimanual(motor_type=types))
    text = str(err.value)
    assert err.value.key == "motor_type" and text.startswith(f"joint left_j2: motor_type {motor_type}")
    for needle in (
        "private-protocol chapter",
        "MIT-protocol chapter",
        "RobStride_Control",
        "Product_Information",
    ):
        assert needle in text, needle
    assert "missing: p_max, v_max, t_max, kp_max, kd_max" in text
    # four of the five are not enough
    partial = {k: [0.0, 12.5, 0.0] * 2 for k in ("p_max", "v_max", "t_max", "kp_max")}
    with pytest.raises(ConfigError, match="missing: kd_max"):
        bridge_config_from_values(_bimanual(motor_type=types, **partial))
    given = {"p_max": 15.0, "v_max": 15.0, "t_max": 120.0, "kp_max": 500.0, "kd_max": 5.0}
    config = bridge_config_from_values(
        _bimanual(motor_type=types, **{k: [0.0, v, 0.0] * 2 for k, v in given.items()})
    )
    limits = config.motors[1].limits
    assert (limits.p_max, limits.v_max, limits.t_max, limits.kp_max, limits.kd_max) == tuple(given.values())
    assert limits.family == "robstride"
    assert config.motors[0].limits == motor_limits("DM4340")  # 0 = the table's
    with pytest.raises(ConfigError) as err:  # a range must be > 0
        bridge_config_from_values(
            _bimanual(
                motor_type=types,
                **{**{k: [0.0, v, 0.0] * 2 for k, v in given.items()}, "kd_max": [0.0, -5.0, 0.0] * 2},
            )
        )
    assert err.value.key == "kd_max"
