"""Tests for gravity_friction_comp.mit.bridge_core with a fake clock and emulated motors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError, Reason
from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.codec import decode_command
from gravity_friction_comp.mit.damiao_feedback import DamiaoState, encode_feedback_damiao
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.special_frames import CLEAR_ERROR_FRAME, DISABLE_FRAME, ENABLE_FRAME
from gravity_friction_comp.sim.motor_emulator import EmulatedMotor

RATE = 500.0


T = 1.0 / RATE


TIMEOUT = 0.05


def _config(behavior="damp", **kw):
    motors = (
        MotorConfig("j1", 0x01, 0x11, motor_limits("DM4340"), kp=40.0, kd=1.0, effort_limit=20.0),
        MotorConfig(
            "j2",
            0x02,
            0x12,
            motor_limits("DM4310"),
            mapping=JointMotorMap(direction=-1, offset=0.1, gear_ratio=2.0),
            kp=40.0,
            kd=2.0,
            damp_kd=0.8,
        ),
        MotorConfig("j3", 0x03, 0x00, motor_limits("AK80-9"), kp=10.0, kd=0.5),
    )
    return BridgeConfig(
        motors, rate_hz=RATE, command_timeout=TIMEOUT, timeout_behavior=behavior, stale_cycles=5, **kw
    )


def _emulators(cfg):
    return [EmulatedMotor(m.limits, m.can_id, m.master_id) for m in cfg.motors]


def _exchange(core, emus, frames, now):
    """Deliver frames to the emulated motors and feed their replies back to the core."""
    by_id = {e.can_id: e for e in emus}
    for can_id, data in frames:
        e = by_id[can_id]
        reply = e.handle_frame(data)
        if reply is not None:
            core.ingest_feedback(e.reply_id, reply, now)


def _decoded(core, frames, i):
    m = core.config.motors[i]
    data = [d for cid, d in frames if cid == m.can_id]
    assert len(data) == 1, data
    return decode_command(data[0], m.limits)


def test_command_mapped_to_motor_frames():
    core = MitBridgeCore(_config())
    core.set_command([0.3, 0.6, -0.2], [0.1, 0.5, 0.0], [1.0, 3.0, -2.0], now=0.0)
    frames = core.step(0.0)
    assert [cid for cid, _ in frames] == [1, 2, 3]
    c2 = _decoded(core, frames, 1)
    # joint 2: θ = d r (q − q0) = −2(0.6 − 0.1) = −1.0; θ̇ = −2·0.5 = −1.0; kp 40/4 = 10;
    # kd 2/4 = 0.5; τ = d τ_q / r = −1.5
    lim = motor_limits("DM4310")
    assert c2.position == pytest.approx(-1.0, abs=lim.p_max / 65535)
    assert c2.velocity == pytest.approx(-1.0, abs=lim.v_max / 4095)
    assert c2.kp == pytest.approx(10.0, abs=500 / 8190) and c2.kd == pytest.approx(0.5, abs=5 / 8190)
    assert c2.tau_ff == pytest.approx(-1.5, abs=lim.t_max / 4095)
    c1 = _decoded(core, frames, 0)
    assert c1.position == pytest.approx(0.3, abs=25 / 65535) and c1.kp == pytest.approx(40, abs=0.07)


def test_round_trip_through_emulated_motors():
    cfg = _config()
    core, emus = MitBridgeCore(cfg), _emulators(cfg)
    _exchange(core, emus, core.enable_frames(), 0.0)
    # physics places the shafts: joint 2 shaft θ = 0.4 -> q = −0.4/2 + 0.1 = −0.1
    for e, (p, v) in zip(emus, [(0.25, 1.0), (0.4, -0.6), (-1.0, 2.0)]):
        e.set_shaft_state(p, v)
    core.set_command([0.0, 0.0, 0.0], None, None, now=0.0)
    _exchange(core, emus, core.step(0.0), 0.0)
    js = core.joint_state()
    assert js.valid.all()
    assert js.position == pytest.approx([0.25, -0.1, -1.0], abs=2e-4)
    assert js.velocity == pytest.approx([1.0, 0.3, 2.0], abs=0.02)
    # measured joint effort equals the emulators' applied torque mapped to the joint
    expected = [emus[0].torque(), -2.0 * emus[1].torque(), emus[2].torque()]
    assert js.effort == pytest.approx(expected, abs=0.05)
    st = core.status()
    assert all(s.behavior == "command" and s.replies == 2 for s in st)
    assert st[0].motor_enabled is True and st[2].motor_enabled is None


def test_no_command_yet_is_timeout_behavior():
    core = MitBridgeCore(_config("damp"))
    frames = core.step(0.0)
    assert all(decode_command(d, m.limits).kp == 0.0 for (_, d), m in zip(frames, core.config.motors))
    assert core.status()[0].reason == "no command yet"


@pytest.mark.parametrize("behavior", ["damp", "hold", "disable"])
def test_timeout_within_timeout_plus_one_period_and_recovery(behavior):
    cfg = _config(behavior)
    core, emus = MitBridgeCore(cfg), _emulators(cfg)
    _exchange(core, emus, core.enable_frames(), 0.0)
    emus[0].set_shaft_state(0.2, 0.0)
    t_cmd = 0.0123
    core.set_command([1.0, 0.0, 0.0], None, None, now=t_cmd)
    switched_at = None
    k = 0
    while switched_at is None:
        now = k * T
        k += 1
        if now < t_cmd:
            continue
        frames = core.step(now)
        _exchange(core, emus, frames, now)
        if core.status()[0].behavior != "command":
            switched_at = now
            first_safe = frames
        assert now < 1.0
    assert TIMEOUT < switched_at - t_cmd <= TIMEOUT + T + 1e-12
    assert core.status()[0].reason == "command timeout"
    d0 = [d for cid, d in first_safe if cid == 1]
    if behavior == "disable":
        assert d0 == [DISABLE_FRAME]
    else:
        c = decode_command(d0[0], motor_limits("DM4340"))
        if behavior == "damp":
            assert c.kp == 0.0 and c.kd == pytest.approx(1.0, abs=5 / 8190)
        else:  # hold the measured 0.2 rad (not the commanded 1.0) with the configured gains
            assert c.position == pytest.approx(0.2, abs=25 / 65535) and c.kp == pytest.approx(40, abs=0.07)
        assert c.tau_ff == pytest.approx(0.0, abs=28 / 4095)
        # damp for joint 2 uses its damp_kd 0.8 -> motor 0.8/4
        if behavior == "damp":
            c2 = _decoded(core, first_safe, 1)
            assert c2.kd == pytest.approx(0.2, abs=5 / 8190)
    # commands return -> the very next step is a command again (enable first after disable)
    now = switched_at + 10 * T
    core.set_command([1.0, 0.0, 0.0], None, None, now=now)
    frames = core.step(now)
    d0 = [d for cid, d in frames if cid == 1]
    if behavior == "disable":
        assert d0[0] == ENABLE_FRAME and len(d0) == 2
    assert decode_command(d0[-1], motor_limits("DM4340")).position == pytest.approx(1.0, abs=4e-4)
    assert core.status()[0].behavior == "command"


def test_hold_latches_position_at_entry():
    cfg = _config("hold")
    core = MitBridgeCore(cfg)
    lim = motor_limits("DM4340")
    core.ingest_feedback(0x11, encode_feedback_damiao(1, 1, 0.5, 0.0, 0.0, 30, 30, lim), 0.0)
    core.step(0.0)  # no command yet -> hold at 0.5
    core.ingest_feedback(0x11, encode_feedback_damiao(1, 1, 0.3, 0.0, 0.0, 30, 30, lim), T)  # sagging
    c = _decoded(core, core.step(T), 0)
    assert c.position == pytest.approx(0.5, abs=25 / 65535)  # still the latched 0.5
    # a joint never measured falls back to damp
    assert core.status()[1].behavior == "damp"


def test_fault_only_that_motor_sticky_until_clear():
    cfg = _config("damp")
    core, emus = MitBridgeCore(cfg), _emulators(cfg)
    _exchange(core, emus, core.enable_frames(), 0.0)
    now = 0.0
    for k in range(3):
        now = k * T
        core.set_command([0.5, 0.5, 0.5], None, [1.0, 1.0, 1.0], now)
        _exchange(core, emus, core.step(now), now)
    emus[1].inject_fault(DamiaoState.COIL_OVER_TEMPERATURE)
    _ = emus[1].handle_frame(ENABLE_FRAME)  # refused, motor answers with the fault state
    core.ingest_feedback(0x12, emus[1].feedback_frame(), now)
    st = core.status()
    assert st[1].fault and st[1].fault_reason == "coil over-temperature"
    assert not st[0].fault and not st[2].fault
    for k in range(3, 6):  # sticky, even after the motor reports OK
        now = k * T
        core.set_command([0.5, 0.5, 0.5], None, [1.0, 1.0, 1.0], now)
        frames = core.step(now)
        assert _decoded(core, frames, 1).kp == 0.0  # that motor damps
        assert _decoded(core, frames, 0).kp > 39 and _decoded(core, frames, 2).kp > 9  # others don't
        assert core.status()[1].reason == "fault: coil over-temperature"
        if k == 4:
            emus[1].fault_code = 0
        _exchange(core, emus, frames, now)
    assert core.status()[1].fault
    core.request_clear_fault(1)
    frames = core.step(now + T)
    assert [d for cid, d in frames if cid == 2] == [CLEAR_ERROR_FRAME, ENABLE_FRAME]
    _exchange(core, emus, frames, now + T)
    core.set_command([0.5, 0.5, 0.5], None, None, now + 2 * T)
    frames = core.step(now + 2 * T)
    assert core.status()[1].behavior == "command" and not core.status()[1].fault
    assert _decoded(core, frames, 1).kp == pytest.approx(10.0, abs=0.07)


def test_stale_detection_and_recovery():
    cfg = _config()
    core, emus = MitBridgeCore(cfg), _emulators(cfg)
    core.set_command([0, 0, 0], None, None, 0.0)
    _exchange(core, emus, core.step(0.0), 0.0)
    for k in range(1, 6):  # j3's replies removed
        frames = core.step(k * T)
        assert not core.status()[2].stale
        _exchange(core, emus[:2], [f for f in frames if f[0] != 3], k * T)
    core.step(6 * T)
    st = core.status()
    assert st[2].stale and st[2].missed_replies == 5 and st[2].total_missed_replies == 5
    assert not st[0].stale and st[0].missed_replies == 0
    _exchange(core, emus, core.step(7 * T), 7 * T)
    core.step(8 * T)
    assert not core.status()[2].stale and core.status()[2].total_missed_replies == 6


def test_effort_clamped_to_effort_limit_and_t_max():
    core = MitBridgeCore(_config())
    # j1: effort_limit 20 < T_MAX 28; j2: r·T_MAX = 2·10 = 20 at the joint; j3: T_MAX 18
    core.set_command([0, 0, 0], None, [50.0, -50.0, 100.0], 0.0)
    frames = core.step(0.0)
    assert _decoded(core, frames, 0).tau_ff == pytest.approx(20.0, abs=28 / 4095)
    assert _decoded(core, frames, 1).tau_ff == pytest.approx(10.0)  # d·(−20)/2 = +10 = T_MAX
    assert _decoded(core, frames, 2).tau_ff == pytest.approx(18.0)
    assert all(s.effort_clamped for s in core.status())
    core.set_command([0, 0, 0], None, [5.0, 5.0, 5.0], T)
    core.step(T)
    assert not any(s.effort_clamped for s in core.status())


def test_nan_rejected_and_previous_command_kept():
    core = MitBridgeCore(_config())
    core.set_command([0.7, 0, 0], None, None, 0.0)
    for bad in ([math.nan, 0, 0], [0, math.inf, 0]):
        with pytest.raises(InputError) as err:
            core.set_command(bad, None, None, 0.01)
        assert err.value.reason is Reason.NOT_FINITE
    with pytest.raises(InputError):
        core.set_command([0, 0, 0], [0, math.nan, 0], None, 0.01)
    assert core.rejected_commands == 3
    frames = core.step(0.02)
    assert _decoded(core, frames, 0).position == pytest.approx(0.7, abs=4e-4)
    core.step(0.0 + TIMEOUT + 2 * T)  # rejected commands do not refresh the timeout
    assert core.status()[0].behavior == "damp"
    with pytest.raises(InputError) as err:  # the one length check (issue 27.4), counted
        core.set_command([0, 0], None, None, 0.1)
    assert err.value.reason is Reason.SHAPE and core.rejected_commands == 4


def test_shutdown_disables_every_motor():
    core = MitBridgeCore(_config())
    core.set_command([0, 0, 0], None, None, 0.0)
    core.step(0.0)
    assert core.shutdown_frames() == [(1, DISABLE_FRAME), (2, DISABLE_FRAME), (3, DISABLE_FRAME)]
    core.set_command([0, 0, 0], None, None, T)
    assert core.step(T) == [(1, DISABLE_FRAME), (2, DISABLE_FRAME), (3, DISABLE_FRAME)]


def test_gains_runtime_and_validation():
    core = MitBridgeCore(_config())
    core.set_gains(kp=[80.0, 4.0, 0.0])
    core.set_command([0, 0, 0], None, None, 0.0)
    frames = core.step(0.0)
    assert _decoded(core, frames, 0).kp == pytest.approx(80.0, abs=0.07)
    assert _decoded(core, frames, 1).kp == pytest.approx(1.0, abs=0.07)  # 4 / 2²
    with pytest.raises(ConfigError):
        core.set_gains(kd=[1.0, -1.0, 1.0])
    with pytest.raises(InputError) as err:
        core.set_gains(kp=[1.0])
    assert err.value.reason is Reason.SHAPE
    assert core.gains[1].tolist() == [1.0, 2.0, 0.5]


def test_foreign_and_bad_frames_ignored():
    core = MitBridgeCore(_config())
    assert core.ingest_feedback(0x55, bytes(8), 0.0) is None
    assert core.ingest_feedback(0x11, bytes(3), 0.0) is None
    assert core.ingest_feedback(0x11, bytes([0x15]) + bytes(7), 0.0) is None  # id nibble 5 ≠ 1
    assert core.unknown_frames == 3 and not core.joint_state().valid.any()
    # a Damiao register reply on the master id (V_MAX = 10.0 f32 LE) is not feedback
    assert core.ingest_feedback(0x11, bytes([0x01, 0x00, 0x33, 22, 0x00, 0x00, 0x20, 0x41]), 0.0) is None
    assert core.register_frames == 1 and not core.joint_state().valid.any()


def test_register_reply_screen_agrees_with_the_parse():
    """The core parses a reply as a Damiao register reply only when it starts [id lo, id hi,
    0x33]: over random frames (byte 0 the motor's id nibble, bytes 1 and 2 mostly the
    register head), a frame counts as a register reply exactly when
    parse_damiao_register_reply says so, and as feedback otherwise."""
    import random

    from gravity_friction_comp.mit.damiao_registers import parse_damiao_register_reply

    core = MitBridgeCore(_config())
    m = core.config.motors[0]
    assert m.limits.family == "damiao"
    rng = random.Random(5)
    registers = 0
    for _ in range(2000):
        raw = bytearray(rng.randbytes(8))
        raw[0] = (raw[0] & 0xF0) | (m.can_id & 0xF) if rng.random() < 0.5 else m.can_id & 0xFF
        if rng.random() < 0.7:
            raw[1], raw[2] = (m.can_id >> 8) if rng.random() < 0.8 else 1, 0x33
        register = parse_damiao_register_reply(bytes(raw), m.can_id) is not None
        before = core.register_frames
        got = core.ingest_feedback(m.master_id, bytes(raw), 0.0)
        assert (core.register_frames - before, got is None) == (int(register), register)
        registers += register
    assert 200 < registers < 1800


def test_fault_reply_in_flight_after_clear_does_not_relatch_but_persistent_fault_does():
    cfg = _config("damp")
    core, emus = MitBridgeCore(cfg), _emulators(cfg)
    _exchange(core, emus, core.enable_frames(), 0.0)
    core.set_command([0.0] * 3, None, None, 0.0)
    _exchange(core, emus, core.step(0.0), 0.0)
    emus[1].inject_fault(DamiaoState.OVER_CURRENT)
    late = emus[1].feedback_frame()  # a fault reply, as if still in flight at the clear
    core.ingest_feedback(0x12, late, 0.0)
    assert core.status()[1].fault
    core.request_clear_fault(1)
    frames = core.step(T)
    assert [d for cid, d in frames if cid == 2] == [CLEAR_ERROR_FRAME, ENABLE_FRAME]
    core.ingest_feedback(0x12, late, T)  # the reply to a pre-clear frame lands now
    assert not core.status()[1].fault, "a reply sent before the clear re-latched the fault"
    # The fault persists: after the grace (1 in flight + 2 clear frames) it latches again.
    for _ in range(2):
        core.ingest_feedback(0x12, late, T)
        assert not core.status()[1].fault
    core.ingest_feedback(0x12, late, T)
    assert core.status()[1].fault and core.status()[1].fault_reason == "over-current"
    # A healthy reply ends the grace at once: the next fault latches immediately.
    core.request_clear_fault(1)
    core.step(2 * T)
    emus[1].fault_code = 0
    core.ingest_feedback(0x12, emus[1].feedback_frame(), 2 * T)
    core.ingest_feedback(0x12, late, 2 * T)
    assert core.status()[1].fault


@pytest.mark.parametrize("garbage", [None, "abc", 3, 2.5, [1, 2, 300], object(), {"a": 1}])
def test_garbage_frame_data_is_counted_never_raised(garbage):
    core = MitBridgeCore(_config())
    assert core.ingest_feedback(0x11, garbage, 0.0) is None
    assert core.unknown_frames == 1 and not core.joint_state().valid.any()
    assert core.ingest_feedback("not an id", bytes(8), 0.0) is None
    assert core.unknown_frames == 2


@pytest.mark.parametrize("garbage", ["1,2,3", ["a", 0, 0], [[0, 0], 0, 0], object(), b"abc"])
def test_garbage_command_is_the_packages_error_and_keeps_the_last(garbage):
    core = MitBridgeCore(_config())
    core.set_command([0.7, 0, 0], None, None, 0.0)
    for position, velocity, effort in (
        (garbage, None, None),
        ([0, 0, 0], garbage, None),
        ([0, 0, 0], None, garbage),
    ):
        with pytest.raises((InputError, DimensionError)):
            core.set_command(position, velocity, effort, 0.01)
    frames = core.step(0.02)
    assert _decoded(core, frames, 0).position == pytest.approx(0.7, abs=4e-4)


def test_commanded_position_clamped_to_the_joint_range():
    cfg = _config()
    m0 = cfg.motors[0]
    import dataclasses

    limited = dataclasses.replace(m0, position_lower=-0.5, position_upper=0.25)
    core = MitBridgeCore(dataclasses.replace(cfg, motors=(limited, *cfg.motors[1:])))
    core.set_command([0.9, 0, 0], None, None, 0.0)
    frames = core.step(0.0)
    # the frame carries the bound, quantised like any command (16-bit code over ±P_MAX)
    assert _decoded(core, frames, 0).position == pytest.approx(0.25, abs=4e-4)
    assert core.status()[0].position_clamped and not core.status()[1].position_clamped
    core.set_command([-3.0, 0, 0], None, None, T)
    assert _decoded(core, core.step(T), 0).position == pytest.approx(-0.5, abs=4e-4)
    # outward velocity setpoints are dropped at the bound, inward ones and τ_ff are kept
    core.set_command([0.9, 0, 0], [3.0, 0, 0], [2.0, 0, 0], 1.5 * T)
    sent = _decoded(core, core.step(1.5 * T), 0)
    assert sent.velocity == pytest.approx(0.0, abs=0.01) and sent.tau_ff == pytest.approx(2.0, abs=0.01)
    core.set_command([-0.9, 0, 0], [-3.0, 0, 0], None, 1.7 * T)
    assert _decoded(core, core.step(1.7 * T), 0).velocity == pytest.approx(0.0, abs=0.01)
    core.set_command([0.9, 0, 0], [-3.0, 0, 0], None, 1.8 * T)
    assert _decoded(core, core.step(1.8 * T), 0).velocity == pytest.approx(-3.0, abs=0.01)
    core.set_command([0.1, 0, 0], None, None, 2 * T)
    assert _decoded(core, core.step(2 * T), 0).position == pytest.approx(0.1, abs=4e-4)
    assert not core.status()[0].position_clamped
    for lower, upper in ((1.0, 0.0), (math.nan, 1.0), (math.inf, math.inf)):
        with pytest.raises(ConfigError, match="position limits"):
            dataclasses.replace(m0, position_lower=lower, position_upper=upper)


@pytest.mark.parametrize("bad_id", [math.inf, 17.0, "17", None])
def test_non_integer_arbitration_ids_are_counted_never_raised(bad_id):
    core = MitBridgeCore(_config())
    assert core.ingest_feedback(bad_id, bytes(8), 0.0) is None
    assert core.unknown_frames == 1


def test_numpy_number_payload_is_not_turned_into_zero_bytes():
    import numpy as np

    from gravity_friction_comp.mit.codec import decode_command

    with pytest.raises(InputError):
        decode_command(np.int64(8), motor_limits("DM4340"))
    core = MitBridgeCore(_config())
    assert core.ingest_feedback(0x11, np.int64(8), 0.0) is None and core.unknown_frames == 1


def test_one_frame_per_motor_and_reply_ids():
    core = MitBridgeCore(_config())
    core.step(0.0)
    assert core.frames_sent == 3 and core.reply_ids == frozenset({0x11, 0x12, 0x00})


def test_checked_gains_validates_without_applying():
    core = MitBridgeCore(_config())
    kp, kd = core.checked_gains(kp=[5.0, 6.0, 7.0])
    assert kp.tolist() == [5.0, 6.0, 7.0] and kd.tolist() == [1.0, 2.0, 0.5]
    assert core.gains[0].tolist() == [40.0, 40.0, 10.0]  # nothing applied
    kp[0] = 99.0  # the returned arrays are copies
    assert core.gains[0].tolist() == [40.0, 40.0, 10.0]
    with pytest.raises(ConfigError, match=">= 0"):
        core.checked_gains(kd=[1.0, math.nan, 1.0])
    with pytest.raises(InputError, match=r"shape \(3,\)"):
        core.checked_gains(kp=[])
    # set_gains validates both before applying either
    with pytest.raises(ConfigError):
        core.set_gains(kp=[1.0, 1.0, 1.0], kd=[-1.0, 0.0, 0.0])
    assert core.gains[0].tolist() == [40.0, 40.0, 10.0]


@pytest.mark.parametrize(
    ("bad_now", "reason"),
    [
        (math.nan, Reason.NOT_FINITE),
        (math.inf, Reason.NOT_FINITE),
        (-math.inf, Reason.NOT_FINITE),
        (10**400, Reason.NOT_FINITE),
        ("x", Reason.TYPE),
        (None, Reason.TYPE),
        (True, Reason.TYPE),
    ],
)
def test_non_finite_or_non_numeric_now_is_refused(bad_now, reason):
    core = MitBridgeCore(_config())
    core.set_command([0.5] * 3, None, None, 0.0)
    for call in (
        lambda: core.set_command([0.5] * 3, None, [5] * 3, now=bad_now),
        lambda: core.step(bad_now),
        lambda: core.ingest_feedback(0x11, bytes(8), bad_now),
    ):
        with pytest.raises(InputError) as err:
            call()
        assert err.value.reason is reason
    assert core.rejected_commands == 1 and core.frames_sent == 0
    core.step(1e6)  # the good command of t = 0 has long timed out
    assert all(s.behavior == "damp" for s in core.status())


def test_command_stamped_in_the_future_does_not_extend_its_life():
    core = MitBridgeCore(_config())
    core.set_command([0.5] * 3, None, None, now=1e9)
    core.step(10.0)
    assert all(s.behavior == "command" for s in core.status())  # age counts from this step
    core.step(10.0 + TIMEOUT)  # exactly the timeout: still commanded
    assert core.status()[0].behavior == "command"
    core.step(10.0 + TIMEOUT + T)
    assert all(s.behavior == "damp" for s in core.status())


def test_position_is_required_and_arrays_must_be_one_dimensional():
    core = MitBridgeCore(_config())
    with pytest.raises(InputError) as err:
        core.set_command(None, None, None, now=0.0)
    assert err.value.reason is Reason.MISSING
    column = np.zeros((3, 1))
    for args in ((column, None, None), ([0] * 3, column, None), ([0] * 3, None, column), (0.5, None, None)):
        with pytest.raises(InputError) as err:
            core.set_command(*args, now=0.0)
        assert err.value.reason is Reason.SHAPE
    assert core.rejected_commands == 5
    core.step(0.0)
    assert all(s.behavior == "damp" for s in core.status())  # nothing was ever commanded
    for gains in ({"kp": np.full((3, 1), 5.0)}, {"kd": np.full((3, 1), 0.5)}):
        with pytest.raises(InputError) as err:
            core.set_gains(**gains)
        assert err.value.reason is Reason.SHAPE
    assert core.gains[0].tolist() == [40.0, 40.0, 10.0]


def test_startup_hold_latches_the_first_measured_position_until_a_command():
    """startup_behavior hold: damp while unmeasured, then the first measured position with the
    joint's kp/kd and τ_ff 0, kept while the arm sags; after a command the timeout is damp."""
    cfg = _config("damp")
    core = MitBridgeCore(cfg, startup_behavior="hold")
    lim = motor_limits("DM4340")
    assert _decoded(core, core.step(0.0), 0).kp == 0.0  # nothing measured yet: damp
    assert core.status()[0].behavior == "damp"
    core.ingest_feedback(0x11, encode_feedback_damiao(1, 1, 0.5, 0.0, 0.0, 30, 30, lim), 0.0)
    for k in range(1, 200):  # 0.4 s without a command: far beyond command_timeout
        c = _decoded(core, core.step(k * T), 0)
        sag = 0.5 - 1e-3 * k
        core.ingest_feedback(0x11, encode_feedback_damiao(1, 1, sag, 0.0, 0.0, 30, 30, lim), k * T)
        assert c.position == pytest.approx(0.5, abs=25 / 65535)
        assert c.kp == pytest.approx(40.0, abs=0.2) and c.kd == pytest.approx(1.0, abs=0.01)
        assert c.velocity == pytest.approx(0.0, abs=0.01) and c.tau_ff == pytest.approx(0.0, abs=0.01)
    assert (core.status()[0].behavior, core.status()[0].reason) == ("hold", "no command yet")
    core.set_command([0.2, 0.0, 0.0], None, None, now=200 * T)
    assert _decoded(core, core.step(200 * T), 0).position == pytest.approx(0.2, abs=25 / 65535)
    t = 200 * T + TIMEOUT + 2 * T
    assert _decoded(core, core.step(t), 0).kp == 0.0  # timeout_behavior damp, as before
    assert (core.status()[0].behavior, core.status()[0].reason) == ("damp", "command timeout")


def test_startup_hold_damps_a_joint_without_stiffness_and_checks_its_value():
    motors = (MotorConfig("j1", 0x01, 0x11, motor_limits("DM4340"), kp=0.0, kd=1.0, damp_kd=2.0),)
    core = MitBridgeCore(BridgeConfig(motors, rate_hz=RATE), startup_behavior="hold")
    lim = motor_limits("DM4340")
    core.ingest_feedback(0x11, encode_feedback_damiao(1, 1, 0.5, 0.0, 0.0, 30, 30, lim), 0.0)
    c = _decoded(core, core.step(0.0), 0)
    assert (c.kp, core.status()[0].behavior) == (0.0, "damp")
    assert c.kd == pytest.approx(2.0, abs=0.01)
    assert MitBridgeCore(_config("hold")).startup_behavior == "hold"  # default: timeout_behavior
    with pytest.raises(ConfigError, match="startup_behavior") as err:
        MitBridgeCore(_config(), startup_behavior="freeze")
    assert err.value.key == "startup_behavior"
