"""Tests of gravity_friction_comp.sim.bus: bridge core ⇄ python-can virtual bus ⇄ emulated motors ⇄ arm.

The control loop here runs on simulated time (each cycle: core.step → send → the simulated
motors answer and the arm advances one control period → the loop reads the replies),
so 2 s of arm time take well under 2 s of wall time."""

from __future__ import annotations

import itertools
import math
import os
import time

import can
import numpy as np
import pytest
from test_mit_bridge_params import VALUES  # the palletizer bridge's parameter values

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values
from gravity_friction_comp.mit.bus import CanFrameIO, CanSettings, open_bus, read_damiao_limits
from gravity_friction_comp.mit.codec import unpack_command_codes
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.special_frames import DISABLE_FRAME, ENABLE_FRAME
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.bus import SimulatedMotor, SimulatedMotorBus
from gravity_friction_comp.sim.config import SimConfig
from gravity_friction_comp.sim.motor_emulator import EmulatedMotor

_CHANNELS = itertools.count()


RATE = 500.0


def _channel() -> str:
    return f"test_can_io_{os.getpid()}_{next(_CHANNELS)}"


@pytest.fixture(scope="module")
def palletizer():
    from conftest import REPO_ROOT

    return RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf"))


@pytest.fixture(scope="module")
def sim_config():
    from conftest import REPO_ROOT

    return SimConfig.from_yaml(REPO_ROOT / "config" / "sim_palletizer.yaml")


class Loop:
    """Core + CanFrameIO on one virtual bus object, SimulatedMotorBus on another."""

    def __init__(self, model, sim_config, **overrides):
        values = dict(VALUES, **overrides)
        self.config = bridge_config_from_values(values)
        self.core = MitBridgeCore(self.config)
        settings = CanSettings("virtual", _channel(), 1_000_000)
        self.arm = SimulatedArm(model, sim_config)
        self.sim = SimulatedMotorBus.for_bridge(self.arm, self.config, settings)
        self.io = CanFrameIO(open_bus(settings), accept=self.core.reply_ids)
        self.settings = settings
        self.now = 0.0
        self.physics_per_cycle = int(round(sim_config.physics_rate_hz / RATE))

    def close(self):
        self.io.close()
        self.sim.stop()

    def _deliver(self, frames):
        answering = {
            sm.motor.can_id
            for sm, muted in zip(self.sim.motors, self.sim._muted)  # noqa: SLF001
            if not muted
        }
        expected = self.io.listener.received + sum(1 for cid, _ in frames if cid in answering)
        self.io.send(frames)
        self.sim.run_once()  # answers now, then steps physics
        for _ in range(self.physics_per_cycle - 1):
            self.sim.run_once()
        deadline = time.monotonic() + 1.0
        replies = self.io.drain()
        while self.io.listener.received < expected and time.monotonic() < deadline:
            time.sleep(0.0001)
            replies += self.io.drain()
        for f in replies:
            self.core.ingest_feedback(f.arbitration_id, f.data, self.now)

    def start(self):
        self._deliver(self.core.enable_frames())

    def cycle(self, q=None, v=None, tau=None, command=True):
        if command:
            self.core.set_command(q, v, tau, self.now)
        frames = self.core.step(self.now)
        self._deliver(frames)
        self.now += 1.0 / RATE
        return frames


@pytest.fixture
def loop_factory(palletizer, sim_config):
    loops = []

    def make(config=sim_config, **overrides):
        loop = Loop(palletizer, config, **overrides)
        loops.append(loop)
        loop.start()
        return loop

    yield make
    for loop in loops:
        loop.close()


def test_hand_computed_frame_reaches_emulated_motor(palletizer):
    """A hand-packed zero command: p code 0x8000, v 0x800, kp 0, kd 0, τ 0x800."""
    settings = CanSettings("virtual", _channel(), 1_000_000)
    arm = SimulatedArm(palletizer, SimConfig(joints={"beam_pitch": {"initial_position": 0.25}}))
    motor = EmulatedMotor(motor_limits("DM4310"), 3, 0x13)
    sim = SimulatedMotorBus(arm, [SimulatedMotor("beam_pitch", motor, JointMotorMap())], settings)
    try:
        with open_bus(settings) as bus:
            bus.send(
                can.Message(arbitration_id=3, data=bytes.fromhex("8000800000000800"), is_extended_id=False)
            )
            sim.run_once()
            reply = bus.recv(timeout=1.0)
        # decoded on the motor side: +½ LSB of each symmetric range (rounding to nearest)
        assert motor.command.position == pytest.approx(12.5 / 65535, abs=1e-12)
        assert motor.command.velocity == pytest.approx(30.0 / 4095, abs=1e-12)
        assert motor.command.kp == 0.0 and motor.command.tau_ff == pytest.approx(10.0 / 4095, abs=1e-12)
        assert reply.arbitration_id == 0x13
        # reply byte 0: state 0 (disabled) << 4 | id 3; position code by hand for 0.25 rad
        assert reply.data[0] == 0x03
        code = math.floor((0.25 + 12.5) * 65535 / 25 + 0.5)
        assert (reply.data[1] << 8 | reply.data[2]) == code
    finally:
        sim.stop()


def test_round_trip_through_emulated_motors(loop_factory):
    loop = loop_factory(
        config=SimConfig(
            joints={
                "base_yaw": {"coulomb": 5.0, "initial_position": 0.1},
                "shoulder_pitch": {"coulomb": 5.0, "initial_position": 0.3},
                "beam_pitch": {"coulomb": 5.0, "initial_position": -0.2},
            }
        ),
        kp=[10.0, 20.0, 5.0],
        kd=[0.5, 1.0, 0.2],
    )
    q_des = np.array([0.2, 0.4, -0.1])
    loop.cycle(q_des, [0.5, -0.25, 0.0], [0.3, -1.0, 0.2])
    # motor side: the shoulder (direction −1, offset 0.1, ratio 2) sees θ = −2·(q − 0.1),
    # θ̇ = −2·q̇, kp/4, kd/4, τ = −τ_q/2
    cmd = [sm.motor.command for sm in loop.sim.motors]
    p_lsb, v_lsb = 25 / 65535, 2 * 10 / 4095
    assert cmd[1].position == pytest.approx(-2 * (0.4 - 0.1), abs=p_lsb / 2 + 1e-12)
    assert cmd[1].velocity == pytest.approx(-2 * -0.25, abs=v_lsb / 2 + 1e-12)
    assert cmd[1].kp == pytest.approx(20.0 / 4, abs=500 / 4095 / 2)
    assert cmd[1].kd == pytest.approx(1.0 / 4, abs=5 / 4095 / 2)
    assert cmd[1].tau_ff == pytest.approx(-1 * -1.0 / 2, abs=28 * 2 / 4095 / 2 + 1e-12)
    assert cmd[0].position == pytest.approx(0.2, abs=p_lsb / 2 + 1e-12)
    # joint side: the reported state equals the (stuck, high friction) arm within ½ LSB mapped back
    state = loop.core.joint_state()
    assert state.valid.all()
    np.testing.assert_allclose(state.position, loop.arm.position, atol=p_lsb / 2 / 1.0 + 1e-12)
    assert all(s.motor_enabled for s in loop.core.status())


def test_zero_gains_zero_torque_falls(loop_factory, palletizer):
    loop = loop_factory(
        config=SimConfig(
            joints={"shoulder_pitch": {"initial_position": 0.3}, "beam_pitch": {"initial_position": 0.2}}
        )
    )
    q0 = loop.arm.position
    for _ in range(25):  # 50 ms
        loop.cycle(q0, None, None)
    a0 = palletizer.forward_dynamics(q0, np.zeros(3), np.zeros(3))
    t = 0.05
    moved = loop.core.joint_state().position - q0
    # ½·a0·t² to first order (semi-implicit Euler, 1 kHz): same sign, right size
    np.testing.assert_allclose(moved[1:], 0.5 * a0[1:] * t**2, rtol=0.1)


def test_exact_gravity_feedforward_holds_within_1_mrad_for_2_s(loop_factory, sim_config):
    loop = loop_factory()
    q0 = loop.arm.position
    true_gravity = lambda q: sim_config.mass_scale * loop.arm.model.gravity(q)  # noqa: E731
    for _ in range(int(2.0 * RATE)):
        loop.cycle(q0, None, true_gravity(loop.core.joint_state().position))
    assert np.max(np.abs(loop.arm.position - q0)) < 1e-3
    assert np.max(np.abs(loop.core.joint_state().position - q0)) < 1e-3
    # without the feedforward the same arm leaves 1 mrad quickly
    for _ in range(int(0.2 * RATE)):
        loop.cycle(q0, None, None)
    assert np.max(np.abs(loop.arm.position - q0)) > 1e-3


def test_below_breakaway_stuck_above_moves_through_the_bus(loop_factory, sim_config):
    loop = loop_factory()
    q0 = loop.arm.position
    brk = sim_config.joint("base_yaw").breakaway  # vertical axis: no gravity on base_yaw
    g = lambda: sim_config.mass_scale * loop.arm.model.gravity(loop.arm.position)  # noqa: E731
    for _ in range(100):
        loop.cycle(q0, None, g() + np.array([0.8 * brk, 0, 0]))
    assert abs(loop.arm.position[0] - q0[0]) < 1e-9
    for _ in range(100):
        loop.cycle(q0, None, g() + np.array([1.5 * brk, 0, 0]))
    assert loop.arm.position[0] > q0[0] + 1e-3


def test_fault_only_that_motor_goes_safe(loop_factory):
    loop = loop_factory(kp=[10.0, 10.0, 10.0], kd=[0.3, 0.3, 0.3])
    q0 = loop.arm.position
    loop.cycle(q0, None, None)
    loop.sim.inject_fault("beam_pitch", 0xA)  # over-current
    loop.cycle(q0, None, None)  # the reply carries the fault state
    frames = loop.cycle(q0, None, None)
    status = {s.name: s for s in loop.core.status()}
    assert status["beam_pitch"].fault and status["beam_pitch"].fault_reason == "over-current"
    assert not status["base_yaw"].fault and not status["shoulder_pitch"].fault
    by_id = dict(frames)
    assert unpack_command_codes(by_id[3]).kp == 0  # damp: kp = 0
    assert unpack_command_codes(by_id[1]).kp > 0 and unpack_command_codes(by_id[2]).kp > 0
    assert loop.sim.motor_state("beam_pitch") == (False, 0xA)
    # cleared on request: FB + FC reach the motor, which is enabled again
    loop.core.request_clear_fault(2)
    loop.cycle(q0, None, None)
    loop.cycle(q0, None, None)
    assert loop.sim.motor_state("beam_pitch") == (True, 0)
    assert not loop.core.status()[2].fault


def test_muted_replies_become_stale(loop_factory):
    loop = loop_factory()
    q0 = loop.arm.position
    loop.sim.set_muted("shoulder_pitch")
    for _ in range(loop.config.stale_cycles + 1):
        loop.cycle(q0, None, None)
    status = {s.name: s for s in loop.core.status()}
    assert status["shoulder_pitch"].stale
    assert status["shoulder_pitch"].missed_replies >= loop.config.stale_cycles
    assert not status["base_yaw"].stale and not status["beam_pitch"].stale


def test_shutdown_frames_seen_by_a_second_bus_object(loop_factory):
    loop = loop_factory()
    with open_bus(loop.settings) as spy:
        loop.cycle(loop.arm.position, None, None)
        loop.io.send(loop.core.shutdown_frames())
        seen = []
        while (msg := spy.recv(timeout=0.2)) is not None:
            seen.append((msg.arbitration_id, bytes(msg.data)))
    disables = {i for i, d in seen if d == DISABLE_FRAME}
    assert disables == {1, 2, 3}
    loop.sim.run_once()
    assert all(not sm.motor.enabled for sm in loop.sim.motors)
    assert ENABLE_FRAME not in [d for _, d in seen]


def test_register_read_uses_motor_values(palletizer):
    """A DM4340 whose firmware reports V_MAX = 8 (older units) over the table's 10."""
    settings = CanSettings("virtual", _channel(), 1_000_000)
    arm = SimulatedArm(palletizer, SimConfig())
    cfg = bridge_config_from_values(VALUES)
    old = motor_limits("DM4340", {"v_max": 8.0})
    motors = [
        SimulatedMotor(
            m.name,
            EmulatedMotor(old if m.name == "shoulder_pitch" else m.limits, m.can_id, m.master_id),
            m.mapping,
        )
        for m in cfg.motors
        if m.name != "beam_pitch"
    ]  # beam_pitch never answers
    sim = SimulatedMotorBus(arm, motors, settings)
    sim.start()
    try:
        with open_bus(settings) as bus:
            out = read_damiao_limits(bus, cfg.motors, timeout=0.05)
    finally:
        sim.stop()
    assert out["shoulder_pitch"][0].v_max == 8.0 and out["shoulder_pitch"][1] == ""
    assert out["base_yaw"][0] == motor_limits("DM4310")
    assert out["beam_pitch"][0] == motor_limits("DM4310") and "no answer" in out["beam_pitch"][1]
    cfg2 = bridge_config_from_values(VALUES, {k: v[0] for k, v in out.items()})
    assert cfg2.motors[1].limits.v_max == 8.0


def test_simulated_bus_thread_steps_the_arm(palletizer):
    settings = CanSettings("virtual", _channel(), 1_000_000)
    arm = SimulatedArm(palletizer, SimConfig(physics_rate_hz=1000))
    sim = SimulatedMotorBus(arm, [], settings)
    sim.start()
    deadline = time.monotonic() + 5.0
    while sim.ticks < 20 and time.monotonic() < deadline:
        time.sleep(0.005)
    sim.stop()
    ticks = sim.ticks
    assert ticks >= 20
    assert arm.time == pytest.approx(ticks * 1e-3, rel=1e-9)  # one physics step per tick
    sim.stop()  # idempotent


def test_a_raising_step_is_kept_and_logged_not_lost(palletizer, caplog):
    # the daemon thread died with only a stderr traceback: the bridge saw silent motors
    settings = CanSettings("virtual", _channel(), 1_000_000)
    arm = SimulatedArm(palletizer, SimConfig(physics_rate_hz=1000))
    sim = SimulatedMotorBus(arm, [], settings)
    real_step = arm.step

    def step(tau, dt=None):
        if arm.time >= 4.5e-3:
            raise FloatingPointError("the physics diverged")
        return real_step(tau, dt)

    arm.step = step
    with caplog.at_level("ERROR", logger="gravity_friction_comp.sim.bus"):
        sim.start()
        sim._thread.join(timeout=10.0)
        assert not sim._thread.is_alive()
        sim.stop()
    assert isinstance(sim.error, FloatingPointError) and sim.ticks == 5
    (record,) = [r for r in caplog.records if r.name == "gravity_friction_comp.sim.bus"]
    assert "stopped at tick 5: FloatingPointError: the physics diverged" in record.getMessage()
    assert record.exc_info is not None


def test_simulated_bus_rejects_unknown_joint(palletizer):
    arm = SimulatedArm(palletizer, SimConfig())
    motor = EmulatedMotor(motor_limits("DM4310"), 1, 0x11)
    with pytest.raises(ConfigError, match="base_yaw"):
        SimulatedMotorBus(
            arm,
            [SimulatedMotor("elbow", motor, JointMotorMap())],
            CanSettings("virtual", _channel(), 1_000_000),
        )


# --- several buses (bimanual OpenArm: CAN ids 1-7 on can0 and on can1) ------------------------


def _bimanual():
    from gravity_friction_comp.profiles.arm_profiles import load_arm
    from gravity_friction_comp.tools.demo.scenario import load_node_parameters

    profile = load_arm("openarm_v10_bimanual")
    _, values = load_node_parameters(profile.motor_map)
    config = bridge_config_from_values(values)
    arm = SimulatedArm(RobotModel.from_urdf(str(profile.urdf)), SimConfig.from_yaml(profile.sim_config))
    return config, arm


def test_two_buses_repeat_can_ids_and_keep_the_arms_apart():
    from gravity_friction_comp.mit.bus import CanFrameIO
    from gravity_friction_comp.sim.bus import virtual_bus_settings

    config, arm = _bimanual()
    assert config.buses == ("can1", "can0")
    base = CanSettings("virtual", _channel(), 1_000_000, fd=True, data_bitrate=5_000_000)
    per_bus = virtual_bus_settings(base, config.buses)
    assert [s.channel for s in per_bus.values()] == [f"{base.channel}/can1", f"{base.channel}/can0"]
    # the two arms at different positions: a reply routed to the wrong arm shows at once
    names = list(arm.joint_names)
    q = np.zeros(arm.n)
    for k in range(7):
        q[names.index(f"openarm_left_joint{k + 1}")] = 0.01 * (k + 1)
        q[names.index(f"openarm_right_joint{k + 1}")] = 0.05 + 0.03 * (k + 1)
    arm.reset(q)
    sim = SimulatedMotorBus.for_bridge(arm, config, base)
    core = MitBridgeCore(config)
    ios = {b: CanFrameIO(open_bus(s), core.reply_ids, fd=True) for b, s in per_bus.items()}
    try:
        for b, io in ios.items():
            assert io.send(core.enable_frames(b)) == 7
        sim.answer_frames()
        left1 = next(sm.motor for sm in sim.motors if sm.joint == "openarm_left_joint1")
        right1 = next(sm.motor for sm in sim.motors if sm.joint == "openarm_right_joint1")
        assert left1.can_id == right1.can_id == 1 and left1.enabled and right1.enabled
        assert left1.frames_received == right1.frames_received == 1
        updated = {}
        for b, io in ios.items():
            frames = io.drain()
            assert len(frames) == 7
            updated[b] = {
                core.joint_names[core.ingest_feedback(f.arbitration_id, f.data, 0.0, b)] for f in frames
            }
        assert updated["can1"] == {f"openarm_left_joint{k}" for k in range(1, 8)}
        assert updated["can0"] == {f"openarm_right_joint{k}" for k in range(1, 8)}
        measured = core.joint_state().position
        truth = np.array([arm.position[names.index(j)] for j in core.joint_names])  # limits applied
        assert np.min(np.abs(truth[:7] - truth[7:])) > 0.02
        # Damiao 16-bit position over ±12.5 rad: 0.38 mrad per code
        assert np.max(np.abs(measured - truth)) < 25.0 / 65535
        # a command on can1 reaches only the left arm's motor 1
        frames = core.step(0.01, "can1")
        assert [cid for cid, _ in frames] == [1, 2, 3, 4, 5, 6, 7]
        ios["can1"].send(frames)
        sim.answer_frames()
        assert left1.frames_received == 2 and right1.frames_received == 1
    finally:
        for io in ios.values():
            io.close()
        sim.stop()


def test_simulated_bus_ids_unique_per_bus_only(palletizer, sim_config):
    arm = SimulatedArm(palletizer, sim_config)
    joint = arm.joint_names[0]
    other = arm.joint_names[1]
    lim = motor_limits("DM4340")
    base = CanSettings("virtual", _channel(), 1_000_000)

    def motors(bus_a, bus_b):
        return [
            SimulatedMotor(joint, EmulatedMotor(lim, 1, 0x11), JointMotorMap(), bus_a),
            SimulatedMotor(other, EmulatedMotor(lim, 1, 0x11), JointMotorMap(), bus_b),
        ]

    with pytest.raises(ConfigError, match="can_id 1"):
        SimulatedMotorBus(arm, motors("a", "a"), base)
    sim = SimulatedMotorBus(arm, motors("a", "b"), base)
    assert set(sim.buses) == {"a", "b"}
    sim.stop()
    with pytest.raises(ConfigError, match="bus 'b'"):
        SimulatedMotorBus(arm, motors("a", "b"), {"a": base})


# --- a motor that does not answer in MIT mode (factory Robstride: private protocol) ------------


def test_motor_not_in_mit_mode_is_named_at_start_up(palletizer, sim_config):
    from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig
    from gravity_friction_comp.mit.bus import CanFrameIO
    from gravity_friction_comp.mit.startup_check import StartupCheck

    arm = SimulatedArm(palletizer, sim_config)
    j0, j1, j2 = arm.joint_names[:3]
    rs, dm = motor_limits("RS03"), motor_limits("DM4340")
    config = BridgeConfig(
        motors=(
            MotorConfig(j0, 1, 0x11, rs, kd=0.5, bus="can0"),
            MotorConfig(j1, 2, 0x12, rs, kd=0.5, bus="can0"),
            MotorConfig(j2, 3, 0x13, dm, kd=0.5, bus="can0"),
        ),
        rate_hz=RATE,
    )
    motors = [
        SimulatedMotor(j0, EmulatedMotor(rs, 1, 0x11), JointMotorMap(), "can0"),  # switched to MIT
        SimulatedMotor(j1, EmulatedMotor(rs, 2, 0x12, mit_mode=False), JointMotorMap(), "can0"),  # factory
        SimulatedMotor(j2, EmulatedMotor(dm, 3, 0x13), JointMotorMap(), "can0"),  # muted below
    ]
    settings = CanSettings("virtual", _channel(), 1_000_000)
    sim = SimulatedMotorBus(arm, motors, settings)
    sim.set_muted(j2)
    core = MitBridgeCore(config)
    io = CanFrameIO(open_bus(settings), core.reply_ids)
    check = StartupCheck(config, "can0")
    raw = []
    try:
        io.send(core.enable_frames())
        messages = []
        for k in range(config.stale_cycles + 2):
            io.send(core.step(k / RATE))
            sim.run_once()
            while (msg := io.bus.recv(timeout=0.0)) is not None:
                raw.append(msg)
                io.listener.on_message_received(msg)
            for f in io.listener.drain():
                core.ingest_feedback(f.arbitration_id, f.data, k / RATE)
            messages += check.poll(core.status())
        assert [m.split(":")[0] for m in messages] == [j1, j2]  # each once, the MIT one never
        text = {m.split(":")[0]: m for m in messages}
        assert "CAN id 0x02" in text[j1] and "bus can0" in text[j1] and "private protocol" in text[j1]
        assert "robstride" in text[j1] and "CAN id 0x03" in text[j2] and "damiao" in text[j2]
        # the factory motor did answer, in 29-bit frames of its own protocol: not MIT replies
        private = [m for m in raw if m.is_extended_id]
        assert private and all(m.arbitration_id == (2 << 24) | (2 << 8) | 0xFD for m in private)
        assert io.listener.ignored == len(private)
        status = {s.name: s for s in core.status()}
        assert status[j0].replies >= config.stale_cycles and status[j1].replies == 0
        assert check.poll(core.status()) == []  # reported once
    finally:
        io.close()
        sim.stop()
