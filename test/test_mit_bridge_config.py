"""Tests of gravity_friction_comp.mit.bridge_config: config validation and its defaults."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_config import (
    BridgeConfig,
    MotorConfig,
    check_fd,
    check_gains,
    default_of,
)
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.bridge_params import PER_JOINT_DEFAULTS
from gravity_friction_comp.mit.damiao_feedback import encode_feedback_damiao
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.validation import per_joint


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


@pytest.mark.parametrize("bad", [[1.0, -0.5], [math.nan, 1.0], [1.0, math.inf]])
def test_check_gains_is_the_shared_per_joint_rule(bad):
    # one rule for gains: the bridge's message is per_joint's, word for word (values listed)
    with pytest.raises(ConfigError) as shared:
        per_joint("kd", bad, 2, nonneg=True)
    with pytest.raises(ConfigError) as err:
        check_gains("kd", bad)
    assert str(err.value) == str(shared.value) and str(bad[1]) in str(err.value)


# --- buses and CAN-FD --------------------------------------------------------------------------


def _arm(bus: str, first: int = 1) -> list[MotorConfig]:
    return [
        MotorConfig(f"{bus}_j{i}", first + i, 0x11 + i, motor_limits("DM4310"), bus=bus) for i in range(3)
    ]


def test_can_ids_are_unique_per_bus_not_across_buses():
    cfg = BridgeConfig(tuple(_arm("can1") + _arm("can0")))  # both arms use 1..3 / 0x11..0x13
    assert cfg.buses == ("can1", "can0")
    assert [m.name for m in cfg.motors_on("can0")] == ["can0_j0", "can0_j1", "can0_j2"]
    assert cfg.motors_on("can9") == ()
    # 3 motors per bus at 500 Hz, classic 1 Mbit/s: 2·3·500·135 bit/s = 40.5 % each
    assert cfg.bus_loads() == {"can1": pytest.approx(0.405), "can0": pytest.approx(0.405)}
    fd = dataclasses.replace(cfg, rate_hz=1000.0, fd=True, data_bitrate=5_000_000)
    assert fd.bus_loads()["can0"] == pytest.approx(6000 * 56.6e-6)
    clash = _arm("can0") + [MotorConfig("extra", 2, 0x21, motor_limits("DM4310"), bus="can0")]
    with pytest.raises(
        ConfigError, match="duplicate can_id 0x2 on bus 'can0': joints can0_j1 and extra"
    ) as err:
        BridgeConfig(tuple(clash))
    assert (err.value.key, err.value.value) == ("can_id", 2)
    # a master id equal to another motor's can id matters on its own bus only
    other = MotorConfig("x", 0x21, 0x02, motor_limits("DM4310"), bus="can1")
    BridgeConfig(tuple(_arm("can0") + [other]))
    with pytest.raises(ConfigError, match="master_id 0x2 is the can_id of can0_j1") as err:
        BridgeConfig(tuple(_arm("can0") + [dataclasses.replace(other, bus="can0")]))
    assert err.value.key == "master_id"
    # the default bus is its own bus, named in the message
    with pytest.raises(ConfigError, match="can.channel bus"):
        BridgeConfig(
            (
                MotorConfig("a", 1, 0x11, motor_limits("DM4310")),
                MotorConfig("b", 1, 0x12, motor_limits("DM4310")),
            )
        )


def test_bus_name_validation():
    for bad in (3, " can0", None):
        with pytest.raises(ConfigError) as err:
            MotorConfig("a", 1, 0x11, motor_limits("DM4310"), bus=bad)
        assert err.value.key == "bus"


def test_fd_fields_validated():
    m = (MotorConfig("a", 1, 0x11, motor_limits("DM4310")),)
    cfg = BridgeConfig(m, fd=True, data_bitrate=5_000_000)
    assert (cfg.fd, cfg.data_bitrate) == (True, 5_000_000)
    assert (BridgeConfig(m).fd, BridgeConfig(m).data_bitrate) == (False, 0)
    with pytest.raises(ConfigError, match="4000000 bit/s is below the nominal can.bitrate 8000000") as err:
        BridgeConfig(m, bitrate=8_000_000, fd=True, data_bitrate=4_000_000)
    assert (err.value.key, err.value.value) == ("can.data_bitrate", 4_000_000)
    with pytest.raises(ConfigError) as err:
        BridgeConfig(m, fd=1)
    assert err.value.key == "can.fd"
    assert check_fd(True, 0, 1_000_000) == 0
