"""Tests of gravity_friction_comp.mit.bridge_config: config validation and its defaults."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig, check_gains, default_of
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.bridge_params import PER_JOINT_DEFAULTS
from gravity_friction_comp.mit.damiao_feedback import encode_feedback_damiao
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits


def test_config_validation_lists_choices():
    lim = motor_limits("DM4310")
    with pytest.raises(ConfigError) as err:
        BridgeConfig((MotorConfig("a", 1, 0x11, lim),), timeout_behavior="brake")
    assert "damp" in str(err.value) and "hold" in str(err.value) and err.value.key == "timeout_behavior"
    with pytest.raises(ConfigError):  # duplicate can_id
        BridgeConfig((MotorConfig("a", 1, 0x11, lim), MotorConfig("b", 1, 0x12, lim)))
    with pytest.raises(ConfigError):  # same master id and same low nibble (0x01 vs 0x21)
        BridgeConfig((MotorConfig("a", 0x01, 0x10, lim), MotorConfig("b", 0x21, 0x10, lim)))
    with pytest.raises(ConfigError):
        BridgeConfig((MotorConfig("a", 1, 0x11, lim),), command_timeout=0.0)
    with pytest.raises(ConfigError):
        MotorConfig("a", 1, 1, lim)
    with pytest.raises(ConfigError):
        MotorConfig("a", 1, 0x11, lim, kp=-1.0)
    # shared master id with distinct id nibbles is fine (replies routed by byte 0)
    ok = BridgeConfig((MotorConfig("a", 0x01, 0x10, lim), MotorConfig("b", 0x02, 0x10, lim)))
    core = MitBridgeCore(ok)
    assert core.ingest_feedback(0x10, encode_feedback_damiao(2, 1, 0.1, 0, 0, 30, 30, lim), 0.0) == 1


def test_defaults_are_the_documented_ones():
    # the values README/config/mit_bridge.yaml document, written out here
    cfg = BridgeConfig((MotorConfig("a", 1, 0x11, motor_limits("DM4310")),))
    assert (cfg.rate_hz, cfg.command_timeout, cfg.stale_cycles, cfg.bitrate) == (500.0, 0.1, 10, 1_000_000)
    assert (cfg.timeout_behavior, cfg.fault_behavior) == ("damp", "damp")
    m = cfg.motors[0]
    assert (m.kp, m.kd, m.damp_kd) == (0.0, 0.0, None)
    assert (m.effort_limit, m.position_lower, m.position_upper) == (math.inf, -math.inf, math.inf)
    assert (m.mapping.direction, m.mapping.offset, m.mapping.gear_ratio) == (1, 0.0, 1.0)
    assert default_of(BridgeConfig, "rate_hz") == cfg.rate_hz
    assert default_of(MotorConfig, "mapping") == JointMotorMap()  # default_factory called
    with pytest.raises(KeyError):
        default_of(MotorConfig, "name")  # required: no default
    with pytest.raises(KeyError):
        default_of(BridgeConfig, "no_such_field")


def test_per_joint_defaults_follow_the_dataclasses():
    assert dict(PER_JOINT_DEFAULTS) == {
        "can_id": None,
        "master_id": None,
        "motor_type": None,
        "direction": 1,
        "offset": 0.0,
        "gear_ratio": 1.0,
        "kp": 0.0,
        "kd": 0.0,
        "effort_limit": math.inf,
        "damp_kd": None,
        "position_lower": -math.inf,
        "position_upper": math.inf,
        "bus": "",  # the can.channel bus
    }


def test_check_gains_rejects_negative_and_non_finite():
    np.testing.assert_array_equal(check_gains("kp", [0.0, 2.5]), [0.0, 2.5])
    for bad in ([1.0, -0.5], [math.nan, 1.0], [1.0, math.inf]):
        with pytest.raises(ConfigError, match=">= 0") as err:
            check_gains("kd", bad)
        assert err.value.key == "kd"
