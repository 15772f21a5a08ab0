"""sim/lockstep.py: the lockstep schedule (ticks, delay, holding) and the driver against emulated motors."""

from __future__ import annotations

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.sim.lockstep import LockstepSchedule, whole_steps

MS = 1_000_000  # [ns]


def test_whole_steps():
    assert whole_steps(0.004, 0.001, "k") == 4
    assert whole_steps(0.0, 0.001, "k", allow_zero=True) == 0
    with pytest.raises(ConfigError, match="whole number"):
        whole_steps(0.0025, 0.001, "sim_setpoint_rate_hz")
    with pytest.raises(ConfigError):
        whole_steps(0.0, 0.001, "rate_hz")
    # were OverflowError / ValueError: sim_delay 1e308, a rate of 1e-308 Hz (period 1e308 s)
    for period in (1e308, 1.0 / 1e-308, float("nan")):
        with pytest.raises(ConfigError, match="sim_delay: .* not a finite number of physics steps"):
            whole_steps(period, 0.001, "sim_delay", allow_zero=True)


def test_schedule_rejects_bad_counts():
    with pytest.raises(ConfigError, match="tick_steps"):
        LockstepSchedule(MS, 0, 1, 1)
    with pytest.raises(ConfigError, match="delay_steps"):
        LockstepSchedule(MS, 4, 2, -1)


def test_clock_starts_at_the_first_tick_and_waits_for_its_answer():
    s = LockstepSchedule(MS, tick_steps=4, exchange_steps=2, delay_steps=1)
    assert s.now_ns == s.tick_ns == 4 * MS  # not 0: ROS reads time 0 as "unset"
    assert not s.tick_answered()
    s.add_command(3 * MS, "older")  # an answer to an earlier stamp does not answer this tick
    assert not s.tick_answered()
    assert s.add_command(4 * MS, "answer") == 5  # in force one step (the delay) after its stamp
    assert s.tick_answered()


def test_command_in_force_after_the_delay_and_late_duplicates_at_once():
    s = LockstepSchedule(MS, tick_steps=4, exchange_steps=2, delay_steps=1)
    s.add_command(4 * MS, "a")
    seen = []
    for _ in range(4):
        seen.append(s.due_command())
        s.step += 1
    assert seen == [None, "a", None, None]  # step 4: not yet; 5: due once
    assert s.add_command(4 * MS, "a2") == 8  # republished answer of an old tick: now
    assert s.due_command() == "a2"
    assert s.add_command(0, "unstamped") == 9  # no stamp: counts from now


def test_zero_delay_and_exchange_steps():
    s = LockstepSchedule(MS, tick_steps=4, exchange_steps=2, delay_steps=0)
    assert s.add_command(4 * MS, "x") == 4
    assert s.due_command() == "x"
    exchanges = []
    for _ in range(4):
        exchanges.append(s.exchange_now())
        s.step += 1
    assert exchanges == [True, False, True, False]


def test_holding_change_takes_effect_at_the_next_tick():
    s = LockstepSchedule(MS, tick_steps=4, exchange_steps=2, delay_steps=1)
    s.step = 6  # inside the tick at 4 ms
    assert s.set_holding(True) == 8
    assert s.due_holding() is None
    s.step = 8
    assert s.due_holding() is True
    assert s.due_holding() is None  # once


def _run(repo_root, channel, commands, prime=False):
    """Drive the palletizer's emulated motors through ``commands`` (one per tick); returns
    the joint_states positions seen after each exchange."""
    from gravity_friction_comp.mit.bridge_core import MitBridgeCore
    from gravity_friction_comp.mit.bridge_params import bridge_config_from_values
    from gravity_friction_comp.mit.bus import CanFrameIO, CanSettings, open_bus
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.sim.arm import SimulatedArm
    from gravity_friction_comp.sim.bus import SimulatedMotorBus
    from gravity_friction_comp.sim.config import SimConfig
    from gravity_friction_comp.sim.lockstep import LockstepDriver
    from gravity_friction_comp.tools.demo.scenario import load_node_parameters

    _, values = load_node_parameters(repo_root / "config" / "mit_bridge.yaml")
    config = bridge_config_from_values(values)
    model = RobotModel.from_urdf(repo_root / "urdf" / "palletizer.urdf")
    arm = SimulatedArm(model, SimConfig.from_yaml(repo_root / "config" / "sim_palletizer.yaml"))
    settings = CanSettings("virtual", channel, 1_000_000)
    sim = SimulatedMotorBus.for_bridge(arm, config, settings)
    core = MitBridgeCore(config)
    io = CanFrameIO(open_bus(settings), core.reply_ids)
    schedule = LockstepSchedule(MS, tick_steps=4, exchange_steps=2, delay_steps=1)
    states = []

    def on_state(now_ns):
        states.append((now_ns, core.joint_state().position.copy()))

    driver = LockstepDriver(schedule, core, io, sim, on_state)
    try:
        io.send(core.enable_frames())
        sim.answer_frames()
        if prime:
            driver.prime()
            assert len(states) == 1  # the start pose, before the chain's first answer
        for q in commands:
            schedule.add_command(schedule.tick_ns, (np.asarray(q), np.zeros(3), np.zeros(3)))
            driver.run_tick()
    finally:
        io.close()
        sim.stop()
    return states, arm


def test_driver_is_deterministic_and_exchanges_at_the_bridge_rate(repo_root):
    pytest.importorskip("pinocchio")
    pytest.importorskip("can")
    commands = [[0.0, 0.3 + 0.002 * k, 0.2] for k in range(50)]
    a, arm_a = _run(repo_root, "lockstep_test_a", commands)
    b, _ = _run(repo_root, "lockstep_test_b", commands)
    # one exchange every 2 physics steps of 1 ms: stamps 4, 6, 8 ... ms
    assert [t for t, _ in a[:3]] == [4 * MS, 6 * MS, 8 * MS]
    assert len(a) == 2 * len(commands)
    assert all(ta == tb and np.array_equal(qa, qb) for (ta, qa), (tb, qb) in zip(a, b))
    # the arm followed the ramp of the shoulder command (kp holds it near the command)
    assert arm_a.position[1] > 0.3


def test_prime_publishes_the_start_pose_and_leaves_the_physics_unchanged(repo_root):
    pytest.importorskip("pinocchio")
    pytest.importorskip("can")
    commands = [[0.0, 0.3 + 0.002 * k, 0.2] for k in range(50)]
    plain, arm_plain = _run(repo_root, "lockstep_prime_a", commands)
    primed, arm_primed = _run(repo_root, "lockstep_prime_b", commands, prime=True)
    # the same states (the primed one is not repeated at its step) and the same physics
    assert len(primed) == len(plain)
    assert all(ta == tb and np.array_equal(qa, qb) for (ta, qa), (tb, qb) in zip(plain, primed))
    assert np.array_equal(arm_plain.position, arm_primed.position)


def test_prime_again_at_the_same_step_publishes_the_same_state_without_frames(repo_root):
    """A bridge following another's clock sends its start state until it is answered
    (issue 28.3): the second prime publishes again, exchanges no frame, moves nothing."""
    pytest.importorskip("pinocchio")
    pytest.importorskip("can")
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import load_arm
    from gravity_friction_comp.sim.arm import SimulatedArm
    from gravity_friction_comp.sim.chain import ChainArm, unique_channel
    from gravity_friction_comp.sim.config import SimConfig

    profile = load_arm("palletizer")
    arm = SimulatedArm(RobotModel.from_urdf(profile.urdf), SimConfig.from_yaml(profile.sim_config))
    states = []
    chain = ChainArm(
        arm,
        profile.bridge_config(),
        channel=unique_channel("test_sim_lockstep/prime_again"),
        on_state=lambda ns: states.append((ns, chain.core.joint_state().position.copy())),
    )
    try:
        chain.enable()
        chain.driver.prime()
        sent = chain.io.sent
        chain.driver.prime()
        assert chain.io.sent == sent  # no frame the second time
    finally:
        chain.close()
    assert [t for t, _ in states] == [chain.schedule.now_ns] * 2
    assert np.array_equal(states[0][1], states[1][1])


def test_last_exchange_of_the_tick_just_run():
    # tick 4 steps, exchange every 2: the tick at steps 4..7 exchanges at 4 and 6
    s = LockstepSchedule(MS, tick_steps=4, exchange_steps=2, delay_steps=0)
    s.step = 8  # the tick 4..7 has run
    assert s.last_exchange_ns() == 6 * MS
    s.step = 9  # mid-tick: still the tick before the current one (4..7)
    assert s.last_exchange_ns() == 6 * MS
    one = LockstepSchedule(MS, tick_steps=4, exchange_steps=4, delay_steps=0)
    one.step = 12  # one exchange per tick, at its first step
    assert one.last_exchange_ns() == 8 * MS
    every = LockstepSchedule(MS, tick_steps=4, exchange_steps=1, delay_steps=0)
    every.step = 8
    assert every.last_exchange_ns() == 7 * MS
    sparse = LockstepSchedule(MS, tick_steps=2, exchange_steps=3, delay_steps=0)
    sparse.step = 4  # the tick at steps 2, 3 has no exchange (0, 3, 6 ...): 3 is in it
    assert sparse.last_exchange_ns() == 3 * MS
    sparse.step = 6  # the tick at 4, 5: none; the last one was at 3, before the tick
    assert sparse.last_exchange_ns() == 3 * MS < 4 * MS


def test_follow_moves_on_to_the_owner_tick_never_back():
    s = LockstepSchedule(MS, tick_steps=4, exchange_steps=2, delay_steps=0)
    assert s.follow(12 * MS) and s.step == 12 and s.tick_ns == 12 * MS
    assert s.follow(13 * MS) is False and s.step == 12  # within the tick: the tick's start
    assert s.follow(4 * MS) is False and s.step == 12  # never back
    assert s.follow(17 * MS) and s.step == 16


def test_tick_wait_for_the_other_bridges():
    from gravity_friction_comp.sim.lockstep import TickWait

    s = LockstepSchedule(MS, tick_steps=4, exchange_steps=1, delay_steps=0)
    wait = TickWait(s, ["/right/joint_states", "/third/joint_states"])
    assert wait.not_ready() == ["/right/joint_states", "/third/joint_states"]
    wait.seen("/right/joint_states", 4 * MS)  # its start state at the first tick
    assert wait.not_ready() == ["/third/joint_states"]
    wait.seen("/third/joint_states", 4 * MS)
    assert wait.not_ready() == []
    s.step = 8  # this bridge ran the tick 4..7 ms: each peer's state at 7 ms is awaited
    assert wait.not_done() == ["/right/joint_states", "/third/joint_states"]
    wait.seen("/right/joint_states", 6 * MS)
    assert wait.not_done() == ["/right/joint_states", "/third/joint_states"]
    wait.seen("/right/joint_states", 7 * MS)
    wait.seen("/third/joint_states", 7 * MS)
    wait.seen("/third/joint_states", 5 * MS)  # late, older: changes nothing
    assert wait.not_done() == []
    with pytest.raises(ConfigError, match="non-empty and unique"):
        TickWait(s, [])
    with pytest.raises(ConfigError, match="non-empty and unique"):
        TickWait(s, ["/a", "/a"])
    slow = LockstepSchedule(MS, tick_steps=2, exchange_steps=4, delay_steps=0)
    with pytest.raises(ConfigError, match="frame exchange in every tick"):
        TickWait(slow, ["/right/joint_states"])


# ---------------------------------------------------------------- stall detection (issue 26.5)
def _check(**kw):
    from gravity_friction_comp.sim.lockstep import StallCheck

    values = dict(
        waited=0.0, busy_cores=2.0, publishers=1, had_publisher=True, no_publisher_for=0.0, answered=True
    )
    return StallCheck(**(values | kw))


def _reason(timeout=3.0, start_timeout=10.0, limit=300.0, **kw):
    from gravity_friction_comp.sim.lockstep import stall_reason

    return stall_reason(_check(**kw), timeout, start_timeout, limit)


def test_a_slow_chain_on_a_busy_machine_is_not_stalled_until_the_last_resort():
    """The reported failure: a chain alive (its publisher in the graph) on a saturated
    machine took well beyond the 3 s timeout; that is waiting, not death."""
    assert _reason(waited=10.0, busy_cores=1.8) is None
    assert _reason(waited=299.9, busy_cores=2.0) is None
    assert _reason(waited=300.0, busy_cores=2.0) == "limit"
    # one core busy (a stage computing a long answer) is not idle either
    assert _reason(waited=60.0, busy_cores=1.0) is None


def test_a_publisher_gone_from_the_graph_is_dead_whatever_the_load():
    assert _reason(waited=1.2, publishers=0, no_publisher_for=1.0, busy_cores=2.0) == "gone"
    assert _reason(waited=1.2, publishers=0, no_publisher_for=0.9, busy_cores=2.0) is None  # confirming
    # never had one (a stage still launching on a busy machine): not "gone"
    assert _reason(waited=60.0, publishers=0, had_publisher=False, no_publisher_for=60.0) is None


def test_no_answer_with_the_machine_idle_is_dead_after_the_timeout():
    assert _reason(waited=2.9, busy_cores=0.1) is None
    assert _reason(waited=3.0, busy_cores=0.1) == "idle"
    assert _reason(waited=3.0, busy_cores=0.5) is None  # half a core at work: someone may be answering
    # before the first answer the start-up timeout applies (nodes launched separately)
    first = dict(answered=False, had_publisher=False, publishers=0, no_publisher_for=9.0)
    assert _reason(waited=9.9, busy_cores=0.1, **first) is None
    assert _reason(waited=10.0, busy_cores=0.1, **first) == "idle"
    # machine load unknown (no /proc/stat): only what is dead, or the last resort
    assert _reason(waited=100.0, busy_cores=None) is None
    assert _reason(waited=1.5, busy_cores=None, publishers=0, no_publisher_for=1.0) == "gone"
    assert _reason(waited=300.0, busy_cores=None) == "limit"


def test_machine_busy_seconds_from_proc_stat(tmp_path):
    import os

    from gravity_friction_comp.sim.lockstep import machine_busy_seconds

    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice: all but idle (1000)
    stat.write_text("cpu  100 5 50 1000 20 1 2 3 0 0\ncpu0 50 2 25 500 10 0 1 1 0 0\n")
    hz = os.sysconf("SC_CLK_TCK")
    assert machine_busy_seconds(str(stat)) == pytest.approx((100 + 5 + 50 + 20 + 1 + 2 + 3) / hz)
    stat.write_text("intr 1 2 3\n")
    assert machine_busy_seconds(str(stat)) is None
    assert machine_busy_seconds(str(tmp_path / "absent")) is None
