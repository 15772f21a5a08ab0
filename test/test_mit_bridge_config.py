"""Tests of gravity_friction_comp.mit.bridge_config: config validation and its defaults."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.damiao_feedback import encode_feedback_damiao
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
