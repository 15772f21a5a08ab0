"""One lockstep over two bridges, one per bus (issue 28.3): the bimanual OpenArm's left and
right bridges each simulate and publish only their own arm, the left one owns /clock and
shows the next tick only once the right one has published its state of the tick; a silent
right bridge holds the clock, a dead one ends the run naming its topic.

The nodes run in this process on one executor and a private domain under their own
namespace; the player is wired straight to both bridges (each setpoint is its own answer,
as arm.launch.py wires it without stages).
"""

from __future__ import annotations

import time

import pytest

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: real nodes, several seconds (fast tier: -m "not slow")
from graph_helpers import InProcessGraph, fresh_domain_id, own_namespace, write_params  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.errors import LockstepStalled  # noqa: E402
from gravity_friction_comp.profiles.arm_profiles import bus_bridges, load_arm  # noqa: E402
from gravity_friction_comp.sim.chain import bus_bridge_wiring  # noqa: E402

TICK_NS = 4_000_000  # 250 Hz setpoints


class Pair(InProcessGraph):
    """Left and right bridges (simulate, lockstep, one per bus) + a sine player, one context."""

    def __init__(self, folder, stall_timeout=30.0):
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode
        from gravity_friction_comp.nodes.setpoint_player import SetpointPlayerNode
        from gravity_friction_comp.sim.config import SimConfig

        self.context = Context()
        rclpy.init(args=[], context=self.context, domain_id=fresh_domain_id())
        self.ns = ns = own_namespace()
        profile = load_arm("openarm_v10_bimanual")
        self.profile = profile
        parts = bus_bridges(profile.bridge_values())
        wiring = bus_bridge_wiring([side for side, _, _ in parts], ns, command_topic="joint_setpoint")
        self.bridges = {}
        for (side, _, part), (lockstep, remaps) in zip(parts, wiring):
            values = part | lockstep
            values |= {
                "simulate": True,
                "urdf_path": str(profile.urdf),
                "sim_config": str(profile.sim_config),
                "read_motor_limits": False,
                "use_sim_time": True,
                "sim_lockstep": True,
                "sim_stall_timeout": stall_timeout,
                "sim_stall_limit": 120.0,
            }
            path = write_params(folder / f"{side}.yaml", "mit_bridge", values, namespace=f"{ns}/{side}")
            args = ["--ros-args", "--params-file", path]
            for old, new in remaps.items():
                args += ["-r", f"{old}:={new}"]
            self.bridges[side] = MitBridgeNode(context=self.context, namespace=f"{ns}/{side}", cli_args=args)
        sim = SimConfig.from_yaml(profile.sim_config)
        joints = list(profile.joints)
        self.player = SetpointPlayerNode(
            context=self.context,
            namespace=ns,
            parameter_overrides=[
                Parameter(k, value=v)
                for k, v in {
                    "profile": "sine",
                    "joint_names": joints,
                    "home": [sim.joint(j).initial_position for j in joints],
                    "amplitude": [0.05 if j.endswith("joint1") else 0.0 for j in joints],
                    "rate_hz": 250.0,
                    "use_sim_time": True,
                }.items()
            ],
        )
        self.listener = rclpy.create_node("listener", namespace=ns, context=self.context)
        self.states: dict[str, list[tuple[int, tuple[str, ...]]]] = {side: [] for side in self.bridges}
        for side in self.bridges:
            self.listener.create_subscription(
                JointState,
                f"{side}/joint_states",
                lambda m, side=side: self.states[side].append(
                    (m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec, tuple(m.name))
                ),
                50,
            )
        self.executor = SingleThreadedExecutor(context=self.context)
        self.nodes = [*self.bridges.values(), self.player, self.listener]
        for node in self.nodes:
            self.executor.add_node(node)


@pytest.fixture
def pair_factory(tmp_path):
    made = []

    def make(**kwargs):
        made.append(Pair(tmp_path, **kwargs))
        return made[-1]

    yield make
    for p in made:
        p.close()


def test_two_bridges_one_clock_each_its_own_joints_and_a_silent_one_holds_the_clock(pair_factory):
    p = pair_factory()
    left, right = p.bridges["left"], p.bridges["right"]
    p.spin(60.0, until=lambda: p.player.elapsed() >= 0.3)
    assert p.player.elapsed() >= 0.3
    # one clock: the left bridge publishes it, the right one follows
    assert p.clock_publishers() == [left.get_fully_qualified_name()]
    assert left.lockstep.peer_topics == [f"{p.ns}/right/joint_states"] and right.lockstep.follow
    # each bridge publishes only its own arm's joints, at the same simulated instants
    for side, bus in (("left", "can1"), ("right", "can0")):
        assert {names for _, names in p.states[side]} == {p.profile.joints_on(bus)}, side
    stamps = {side: sorted({t for t, _ in p.states[side]}) for side in p.states}
    common = min(stamps["left"][-1], stamps["right"][-1])
    assert [t for t in stamps["left"] if t <= common] == [t for t in stamps["right"] if t <= common]
    assert {b - a for a, b in zip(stamps["left"], stamps["left"][1:])} == {1_000_000}  # 1 kHz
    # the right bridge goes silent (it stays in the graph, its node no longer spins): the
    # left bridge runs the tick it was answered, then /clock stands still
    p.executor.remove_node(right)
    p.spin(0.5)
    shown, elapsed, left_step = left.lockstep.shown_ns, p.player.elapsed(), left.lockstep.schedule.step
    p.spin(3.0)
    assert left.lockstep.shown_ns == shown and p.player.elapsed() == elapsed
    assert left.lockstep.schedule.step == left_step  # at most the one tick, already run
    assert left_step - shown // 1_000_000 in (0, 4)  # waiting for the right bridge's state
    # back: the clock moves on, both arms at the same simulated time
    p.executor.add_node(right)
    p.spin(60.0, until=lambda: p.player.elapsed() >= elapsed + 0.1)
    assert p.player.elapsed() >= elapsed + 0.1
    p.spin(0.3)
    assert abs(left.lockstep.schedule.step - right.lockstep.schedule.step) <= 4


def test_a_bridge_gone_from_the_graph_ends_the_run_naming_its_topic(pair_factory):
    """The right bridge's node is destroyed (its process exited): the left bridge's clock,
    waiting for its state, names its joint_states within seconds (sim_stall_timeout 30 s:
    the idle timeout cannot be what ends it)."""
    p = pair_factory()
    p.spin(60.0, until=lambda: p.player.elapsed() >= 0.1)
    assert p.player.elapsed() >= 0.1
    p.destroy(p.bridges["right"])
    started = time.monotonic()
    with pytest.raises(
        LockstepStalled, match=f"{p.ns}/right/joint_states went silent: its last publisher left"
    ):
        p.spin(30.0)
    assert time.monotonic() - started < 20.0
