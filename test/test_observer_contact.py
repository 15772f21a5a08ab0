"""Contact detection (thresholds, speed band, latch) and the bridge core's reaction API (issue 29.3)."""

from __future__ import annotations

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError
from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.codec import decode_command
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.special_frames import DISABLE_FRAME, ENABLE_FRAME
from gravity_friction_comp.observer.contact import REACTIONS, ContactDetector
from gravity_friction_comp.sim.motor_emulator import EmulatedMotor

T = 0.002


def test_threshold_plus_speed_band_and_latch():
    det = ContactDetector(["a", "b"], threshold=[1.0, 0.5], speed_band=[0.2, 0.0], reaction="damp")
    np.testing.assert_allclose(det.thresholds([2.0, -3.0]), [1.4, 0.5])
    assert det.check(0.0, [1.3, 0.0], [2.0, 0.0]) is None  # inside 1 + 0.2·2 while moving
    assert det.check(0.1, [0.0, -0.49], [0.0, 0.0]) is None
    contact = det.check(0.2, [1.3, -0.6], [0.0, 0.0])  # a at rest: 1.3 > 1.0 (ratio 1.3); b 1.2
    assert contact is not None and (contact.joint, contact.index) == ("a", 0)
    assert (contact.estimate, contact.threshold, contact.time) == (1.3, 1.0, 0.2)
    assert "a" in contact.describe() and "+1.300" in contact.describe()
    assert det.check(0.3, [5.0, 5.0], [0.0, 0.0]) is None  # latched: no new detection
    assert det.latched is contact and det.detections == 1
    assert det.clear() is contact and det.latched is None
    assert det.check(0.4, [0.0, 0.9], [0.0, 0.0]).joint == "b"


def test_bad_settings_are_refused_and_kept():
    det = ContactDetector(["a", "b"], threshold=1.0)
    for threshold, band in ((0.0, 0.0), (-1.0, 0.0), (float("nan"), 0.0), (1.0, -0.1), ("x", 0.0)):
        with pytest.raises(ConfigError):
            det.set_thresholds(threshold, band)
    with pytest.raises(DimensionError):
        det.set_thresholds([1.0, 2.0, 3.0])
    assert det.threshold.tolist() == [1.0, 1.0]
    for reaction in ("stop", "", None, 1):
        with pytest.raises(ConfigError, match="none, damp, disable, hold"):
            det.set_reaction(reaction)  # type: ignore[arg-type]
    assert REACTIONS == ("none", "damp", "disable", "hold")
    with pytest.raises(InputError):
        det.check(0.0, [float("nan"), 0.0], [0.0, 0.0])
    assert det.latched is None


def _core():
    motors = (
        MotorConfig("j1", 0x01, 0x11, motor_limits("DM4340"), kp=40.0, kd=1.0),
        MotorConfig(
            "j2",
            0x02,
            0x12,
            motor_limits("DM4310"),
            mapping=JointMotorMap(gear_ratio=2.0),
            kp=20.0,
            kd=2.0,
            damp_kd=0.8,
        ),
    )
    cfg = BridgeConfig(motors, rate_hz=500.0, command_timeout=0.05, timeout_behavior="damp")
    core = MitBridgeCore(cfg)
    emus = [EmulatedMotor(m.limits, m.can_id, m.master_id) for m in cfg.motors]
    return core, emus


def _exchange(core, emus, frames, now):
    by_id = {e.can_id: e for e in emus}
    for can_id, data in frames:
        reply = by_id[can_id].handle_frame(data)
        if reply is not None:
            core.ingest_feedback(by_id[can_id].reply_id, reply, now)


def _decoded(core, frames, i):
    m = core.config.motors[i]
    data = [d for cid, d in frames if cid == m.can_id and d not in (ENABLE_FRAME, DISABLE_FRAME)]
    return decode_command(data[-1], m.limits) if data else None


@pytest.mark.parametrize("behavior", ["damp", "hold", "disable"])
def test_react_overrides_commands_until_cleared(behavior):
    """react(): every motor gets the behaviour whatever the commands (damp: kp 0 and the
    joint's damp_kd; hold: the position measured when it started with the joint's gains;
    disable: the disable frame, an enable frame when it ends), the reason in the status;
    clear_reaction(): commands again from the next step."""
    core, emus = _core()
    _exchange(core, emus, core.enable_frames(), 0.0)
    for emu, q in zip(emus, (0.3, -0.2)):
        emu.set_shaft_state(q, 0.0)
    now = 0.0
    for k in range(3):
        now = k * T
        core.set_command([0.5, 0.5], None, [1.0, 1.0], now)
        _exchange(core, emus, core.step(now), now)
    core.react(behavior, "contact on j1: +2.100 N·m")
    for k in range(3, 6):
        now = k * T
        core.set_command([0.5, 0.5], None, [1.0, 1.0], now)  # still commanded: ignored
        frames = core.step(now)
        st = core.status()
        assert [s.behavior for s in st] == [behavior] * 2
        assert st[0].reason == "contact on j1: +2.100 N·m"
        if behavior == "disable":
            assert [d for _, d in frames] == [DISABLE_FRAME, DISABLE_FRAME]
        else:
            c1, c2 = _decoded(core, frames, 0), _decoded(core, frames, 1)
            assert c1.tau_ff == pytest.approx(0.0, abs=0.02) and c2.tau_ff == pytest.approx(0.0, abs=0.02)
            if behavior == "damp":
                assert c1.kp == 0.0 and c2.kp == 0.0
                assert c2.kd == pytest.approx(0.8 / 4.0, abs=0.01)  # damp_kd, motor side (gear 2)
            else:  # hold at the measured position, the joint's gains
                assert c1.position == pytest.approx(0.3, abs=1e-3) and c1.kp == pytest.approx(40.0, abs=0.2)
        _exchange(core, emus, frames, now)
    assert core.reaction == (behavior, "contact on j1: +2.100 N·m")
    assert core.clear_reaction() is True and core.reaction is None and core.clear_reaction() is False
    core.set_command([0.5, 0.5], None, [1.0, 1.0], now + T)
    frames = core.step(now + T)
    assert [s.behavior for s in core.status()] == ["command", "command"]
    assert _decoded(core, frames, 0).position == pytest.approx(0.5, abs=1e-3)
    if behavior == "disable":
        assert [d for _, d in frames].count(ENABLE_FRAME) == 2  # re-enabled first
    with pytest.raises(ConfigError, match="damp, disable, hold"):
        core.react("none", "x")
