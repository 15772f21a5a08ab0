"""sim/chain.py: one arm built by the builder runs as the hand-assembled lockstep chain did;
two arms side by side share one clock and stay independent."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

pytest.importorskip("pinocchio")
pytest.importorskip("can")

from gravity_friction_comp.errors import ConfigError  # noqa: E402
from gravity_friction_comp.mit.bridge_core import MitBridgeCore  # noqa: E402
from gravity_friction_comp.mit.bus import CanFrameIO, CanSettings, open_bus  # noqa: E402
from gravity_friction_comp.model.robot_model import RobotModel  # noqa: E402
from gravity_friction_comp.profiles.arm_profiles import load_arm  # noqa: E402
from gravity_friction_comp.sim.arm import SimulatedArm  # noqa: E402
from gravity_friction_comp.sim.bus import SimulatedMotorBus  # noqa: E402
from gravity_friction_comp.sim.chain import ChainArm, SimulatedChain, unique_channel  # noqa: E402
from gravity_friction_comp.sim.config import SimConfig  # noqa: E402
from gravity_friction_comp.sim.lockstep import LockstepDriver, LockstepSchedule  # noqa: E402

RATE = 250.0  # [Hz] setpoint tick
TICKS = 250  # 1 s


def _palletizer():
    profile = load_arm("palletizer")
    arm = SimulatedArm(RobotModel.from_urdf(profile.urdf), SimConfig.from_yaml(profile.sim_config))
    return arm, profile.bridge_config()


def _hold_command(arm: SimulatedArm, q0: np.ndarray, joints) -> tuple[np.ndarray, ...]:
    """Hold ``q0``: the true gravity there as feedforward, in the motor map's joint order."""
    k = [arm.joint_names.index(j) for j in joints]
    return q0[k], np.zeros(len(k)), arm.gravity(q0)[k]


def _by_hand(arm: SimulatedArm, config, on_state) -> tuple[LockstepSchedule, LockstepDriver, Callable]:
    """The lockstep chain assembled piece by piece, as the callers did before the builder."""
    dt = arm.dt
    schedule = LockstepSchedule(
        int(round(dt * 1e9)), int(round(1 / RATE / dt)), int(round(config.period / dt)), 0
    )
    core = MitBridgeCore(config)
    settings = CanSettings("virtual", unique_channel("test_sim_chain/by_hand"), 1_000_000)
    sim = SimulatedMotorBus.for_bridge(arm, config, settings)
    io = CanFrameIO(open_bus(settings), core.reply_ids)
    driver = LockstepDriver(schedule, core, io, sim, lambda ns: on_state(ns, core))
    io.send(core.enable_frames())
    sim.answer_frames()

    def close() -> None:
        io.close()
        sim.stop()

    return schedule, driver, close


def test_one_arm_holds_the_palletizer_as_the_hand_assembled_chain():
    runs = {}
    for route in ("builder", "by_hand"):
        arm, config = _palletizer()
        q0 = arm.position
        states: list[tuple[int, np.ndarray]] = []
        if route == "builder":
            chain = ChainArm(
                arm,
                config,
                channel=unique_channel("test_sim_chain/one"),
                setpoint_rate_hz=RATE,
                on_state=lambda ns: states.append((ns, chain.core.joint_state().position.copy())),
            )
            schedule, driver = chain.schedule, chain.driver
            chain.enable()
            close = chain.close
        else:
            schedule, driver, close = _by_hand(
                arm, config, lambda ns, core: states.append((ns, core.joint_state().position.copy()))
            )
        try:
            for _ in range(TICKS):
                schedule.add_command(
                    schedule.tick_ns, _hold_command(arm, q0, [m.name for m in config.motors])
                )
                driver.run_tick()
        finally:
            close()
        runs[route] = (np.array([s[0] for s in states]), np.array([s[1] for s in states]), arm.position, q0)
    t, q, q_end, q0 = runs["builder"]
    t_ref, q_ref, q_end_ref, _ = runs["by_hand"]
    assert np.array_equal(t, t_ref) and np.array_equal(q, q_ref) and np.array_equal(q_end, q_end_ref)
    # one joint state per frame exchange (the bridge rate), on the simulated clock from tick 1
    _, config = _palletizer()
    period_ns = int(round(config.period * 1e9))
    assert len(t) == TICKS * int(round(config.rate_hz / RATE))
    assert t[0] == int(round(1e9 / RATE)) and np.all(np.diff(t) == period_ns)
    # held: the true gravity as feedforward plus the motors' PD, within a mrad of the start
    assert np.max(np.abs(q_end - q0)) < 1e-3


def test_two_arms_share_one_clock_and_a_push_moves_only_its_arm():
    def build(name: str, external: bool, log: list) -> ChainArm:
        arm, config = _palletizer()
        chain = ChainArm(
            arm,
            config,
            channel=unique_channel(f"test_sim_chain/{name}"),
            setpoint_rate_hz=RATE,
            on_state=lambda ns: log.append((ns, chain.core.joint_state().position.copy())),
            external_effort=external,
            name=name,
        )
        return chain

    logs: dict[str, list] = {"leader": [], "follower": [], "alone": []}
    pair = SimulatedChain([build("leader", True, logs["leader"]), build("follower", True, logs["follower"])])
    alone = SimulatedChain([build("alone", False, logs["alone"])])
    push_t = 0.2  # [s] from here on 3 N·m on the leader's base_yaw (vertical axis: no gravity)
    pair["leader"].external.add(push_t, ["base_yaw"], [3.0])
    starts = {c.name: c.arm.position for c in (*pair, *alone)}
    try:
        pair.enable()
        alone.enable()
        for _ in range(TICKS):
            tick = pair.tick_ns
            for chain in (*pair, *alone):
                chain.command(*_hold_command(chain.arm, starts[chain.name], chain.core.joint_names))
            pair.run_tick()
            alone.run_tick()
            assert {c.schedule.now_ns for c in pair} == {tick + int(round(1e9 / RATE))}
    finally:
        pair.close()
        alone.close()
    leader, follower = pair["leader"].arm, pair["follower"].arm
    j = leader.joint_names.index("base_yaw")
    assert abs(leader.position[j] - starts["leader"][j]) > 0.01  # the push moved the leader
    # the follower ran exactly as an arm alone (same pieces, nothing pushed), bit for bit
    assert np.array_equal(follower.position, alone["alone"].arm.position)
    f = np.array([s[1] for s in logs["follower"]])
    a = np.array([s[1] for s in logs["alone"]])
    assert np.array_equal(f, a)
    assert [s[0] for s in logs["leader"]] == [s[0] for s in logs["follower"]]
    assert np.max(np.abs(follower.position - starts["follower"])) < 1e-3


def test_bimanual_pair_on_two_buses_runs_as_the_one_bridge_chain():
    """Issue 28.3, ROS-free: the bimanual OpenArm's motor map cut per bus (as the launch file
    and the demo start one bridge process per bus), one ChainArm per bus in one
    SimulatedChain, each simulating the URDF and driving only its own arm's 7 motors,
    against one ChainArm with the whole map on two virtual buses. Both arms hang from the
    fixed torso, so the mass matrix is block-diagonal and each arm's motion is independent
    of the other's (in a bus's own simulation the other arm has no motor and falls): each
    arm's joints follow the one-bridge trajectory to rounding, and each bus's bridge reports
    only its own joints."""
    from gravity_friction_comp.mit.bridge_params import bridge_config_from_values
    from gravity_friction_comp.profiles.arm_profiles import bus_bridges

    profile = load_arm("openarm_v10_bimanual")
    model = RobotModel.from_urdf(profile.urdf)
    sim_config = SimConfig.from_yaml(profile.sim_config)
    parts = bus_bridges(profile.bridge_values())
    assert [(ns, bus) for ns, bus, _ in parts] == [("left", "can1"), ("right", "can0")]
    ticks = 100  # 0.4 s: the step below settles on the kp, friction sticks and slides

    def build(name: str, config) -> ChainArm:
        return ChainArm(
            SimulatedArm(model, sim_config),
            config,
            channel=unique_channel(f"test_sim_chain/bimanual/{name}"),
            setpoint_rate_hz=RATE,
            name=name,
        )

    one = SimulatedChain([build("both", profile.bridge_config())])
    pair = SimulatedChain([build(ns, bridge_config_from_values(part)) for ns, _, part in parts])
    q0 = one["both"].arm.position
    try:
        one.enable()
        pair.enable()
        for _ in range(ticks):
            for chain in (*one, *pair):
                q, v, e = _hold_command(chain.arm, q0, chain.core.joint_names)
                q = q + 0.05 * np.array(["joint2" in j or "joint4" in j for j in chain.core.joint_names])
                chain.command(q, v, e)
            one.run_tick()
            pair.run_tick()
            assert pair.tick_ns == one.tick_ns
        reported = {ns: pair[ns].core.joint_state() for ns, _, _ in parts}
    finally:
        one.close()
        pair.close()
    names = one["both"].arm.joint_names
    moved = 0.0
    for ns, bus, _ in parts:
        own = [names.index(j) for j in profile.joints_on(bus)]
        q_pair = pair[ns].arm.position[own]
        q_one = one["both"].arm.position[own]
        assert np.max(np.abs(q_pair - q_one)) < 1e-9, ns
        moved = max(moved, float(np.max(np.abs(q_one - q0[own]))))
        assert pair[ns].core.joint_names == profile.joints_on(bus)  # only its own arm's joints
        assert reported[ns].valid.all()
    assert moved > 0.03  # the commanded 0.05 rad step was followed, not a pair at rest


def test_bus_bridge_wiring_one_clock_owner_the_others_follow():
    from gravity_friction_comp.sim.chain import bus_bridge_wiring

    wiring = bus_bridge_wiring(["left", "right"], "/arm")
    shared = {
        "joint_command": "/arm/joint_command",
        "joint_setpoint": "/arm/joint_setpoint",
        "gripper/holding": "/arm/gripper/holding",
        "sim/external_effort": "/arm/sim/external_effort",
    }
    assert wiring == [
        ({"sim_lockstep_peers": ["/arm/right/joint_states"]}, shared),
        ({"sim_lockstep_follow": True}, shared),
    ]
    three = bus_bridge_wiring(["a", "b", "c"], command_topic="joint_setpoint")
    assert three[0][0] == {"sim_lockstep_peers": ["/b/joint_states", "/c/joint_states"]}
    assert three[2][1]["joint_command"] == "/joint_setpoint"
    assert bus_bridge_wiring(["a", "b"], lockstep=False)[0][0] == {}
    for bad in (["left"], ["a", "a"], ["a", ""]):
        with pytest.raises(ConfigError, match="two or more distinct namespaces"):
            bus_bridge_wiring(bad)


def test_chain_rejects_repeated_names_and_different_ticks():
    arm, config = _palletizer()
    a = ChainArm(arm, config, channel=unique_channel("test_sim_chain/a"), setpoint_rate_hz=RATE, name="a")
    arm2, _ = _palletizer()
    b = ChainArm(
        arm2, config, channel=unique_channel("test_sim_chain/b"), setpoint_rate_hz=RATE / 2, name="b"
    )
    arm3, _ = _palletizer()
    c = ChainArm(arm3, config, channel=unique_channel("test_sim_chain/c"), setpoint_rate_hz=RATE, name="a")
    try:
        with pytest.raises(ConfigError, match="steps per tick"):
            SimulatedChain([a, b])
        with pytest.raises(ConfigError, match="used twice"):
            SimulatedChain([a, c])
        with pytest.raises(ConfigError, match="at least one"):
            SimulatedChain([])
    finally:
        for x in (a, b, c):
            x.close()


def test_rates_that_are_no_whole_physics_steps_are_rejected():
    arm, config = _palletizer()
    with pytest.raises(ConfigError, match="whole number of physics steps"):
        ChainArm(arm, config, channel=unique_channel("test_sim_chain/bad"), setpoint_rate_hz=300.0)


def test_ident_does_not_import_the_can_stack(repo_root):
    """ident/ reaches the simulated chain through sim/ only: no ``can`` or ``mit`` import in
    its sources (module-level or function-local), and importing every ident module loads
    neither (a fresh interpreter's ``sys.modules``)."""
    import ast
    import subprocess
    import sys

    ident = repo_root / "gravity_friction_comp" / "ident"
    found = []
    for path in sorted(ident.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            found += [
                f"{path.name}: {n}"
                for n in names
                if n == "can" or n.startswith("can.") or n.startswith("gravity_friction_comp.mit")
            ]
    assert found == []
    modules = sorted(p.stem for p in ident.glob("*.py") if p.stem != "__init__")
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module('gravity_friction_comp.ident.' + m)\n"
        "print(sorted(k for k in sys.modules if k == 'can' or k.startswith(('can.', 'gravity_friction_comp.mit'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=repo_root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_bridge_node_loads_the_simulator_only_when_simulating(repo_root):
    """Importing ``mit_bridge_node`` (a real arm) loads no ``sim`` module and not
    ``nodes/sim_bridge.py``: the simulator comes with ``simulate:=true`` only."""
    import subprocess
    import sys

    pytest.importorskip("rclpy")
    code = (
        "import sys\n"
        "import gravity_friction_comp.nodes.mit_bridge_node\n"
        "print(sorted(k for k in sys.modules if k.startswith('gravity_friction_comp.sim')"
        " or k.endswith(('sim_bridge', 'lockstep_clock'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=repo_root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout
