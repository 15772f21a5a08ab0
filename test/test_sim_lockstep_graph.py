"""Lockstep in a ROS graph: the bridge's simulated arm owns /clock, the player ticks on it, a
dead chain ends the run naming the silent topic, and a slow one is waited for.

The nodes run in this process on one executor and a private domain (as the demo composes
them); the chain is the player wired straight to the bridge (as arm.launch.py does without
stages), so each setpoint is its own answer.
"""

from __future__ import annotations

import threading
import time

import pytest

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: real nodes, several seconds (fast tier: -m "not slow")
import yaml  # noqa: E402
from graph_helpers import InProcessGraph, fresh_domain_id, own_namespace, write_params  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.errors import LockstepStalled  # noqa: E402

HOME = [0.0, 0.3, 0.2]


def _params(values):
    return [Parameter(k, value=v) for k, v in values.items()]


class Graph(InProcessGraph):
    """Bridge (simulate, lockstep) + setpoint player in one context; ``states`` records
    joint_states stamps [ns]. All under :func:`own_namespace`, so a stranger's topics never
    reach them; the absolute ``/clock`` they tick on is kept theirs by the free domain (no
    stranger when the test starts), and a stranger who joins later and publishes ``/clock``
    would show in the graph: :meth:`clock_publishers` (checked at start and end) names them."""

    def __init__(self, repo_root, folder, bridge_remaps=(), stall_timeout=1.0, stall_limit=20.0):
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode
        from gravity_friction_comp.nodes.setpoint_player import SetpointPlayerNode

        self.context = Context()
        rclpy.init(args=[], context=self.context, domain_id=fresh_domain_id())
        self.ns = ns = own_namespace()
        config = yaml.safe_load((repo_root / "config" / "mit_bridge.yaml").read_text())["/**/mit_bridge"]
        path = write_params(folder / "mit_bridge.yaml", "mit_bridge", config["ros__parameters"], namespace=ns)
        args = ["--ros-args", "--params-file", path]
        for remap in bridge_remaps:
            args += ["-r", remap]
        self.bridge = MitBridgeNode(
            context=self.context,
            namespace=ns,
            cli_args=args,
            parameter_overrides=_params(
                {
                    "simulate": True,
                    "urdf_path": str(repo_root / "urdf" / "palletizer.urdf"),
                    "sim_config": str(repo_root / "config" / "sim_palletizer.yaml"),
                    "read_motor_limits": False,
                    "use_sim_time": True,
                    "sim_lockstep": True,
                    "sim_stall_timeout": stall_timeout,
                    "sim_stall_limit": stall_limit,
                }
            ),
        )
        self.player = SetpointPlayerNode(
            context=self.context,
            namespace=ns,
            parameter_overrides=_params(
                {
                    "profile": "sine",
                    "joint_names": ["base_yaw", "shoulder_pitch", "beam_pitch"],
                    "home": HOME,
                    "amplitude": [0.05, 0.0, 0.0],
                    "rate_hz": 250.0,
                    "use_sim_time": True,
                }
            ),
        )
        self.listener = rclpy.create_node("listener", namespace=ns, context=self.context)
        self.states: list[int] = []
        self.listener.create_subscription(
            JointState,
            "joint_states",
            lambda m: self.states.append(m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec),
            10,
        )
        self.executor = SingleThreadedExecutor(context=self.context)
        self.nodes = [self.bridge, self.player, self.listener]
        for node in self.nodes:
            self.executor.add_node(node)


@pytest.fixture
def graph_factory(repo_root, tmp_path):
    made = []

    def make(**kwargs):
        made.append(Graph(repo_root, tmp_path, **kwargs))
        assert made[-1].clock_publishers() == [made[-1].bridge.get_fully_qualified_name()]
        return made[-1]

    yield make
    for g in made:
        clock, bridge = g.clock_publishers(), g.bridge.get_fully_qualified_name()
        g.close()
        assert clock == [bridge], "a stranger publishes /clock"


def test_simulated_clock_advances_only_with_the_answers(graph_factory):
    g = graph_factory(bridge_remaps=["joint_command:=joint_setpoint"])
    g.spin(30.0, until=lambda: g.player.elapsed() >= 0.5)
    assert g.player.elapsed() >= 0.5
    schedule = g.bridge.lockstep.schedule
    # every tick had its setpoint: the player's clock is the simulated one, 4 ms a tick
    assert g.player.get_clock().now().nanoseconds % 4_000_000 == 0
    assert g.bridge.lockstep.setpoints >= 125
    # joint_states on simulated time: one per exchange (500 Hz), 2 ms apart
    assert len(g.states) > 200
    assert {b - a for a, b in zip(g.states, g.states[1:])} == {2_000_000}
    assert schedule.answered_ns >= schedule.tick_ns - 4_000_000


def test_silent_command_topic_ends_the_run_naming_it(graph_factory):
    """Nobody publishes joint_command (a stage missing or remapped away): the setpoints are
    seen, never answered; the run ends after the start-up timeout (10 s: nodes launched
    separately may take that long) when the machine is idle, at the last resort
    (sim_stall_limit, 20 s here) when it is busy; idle ticks in between keep the arm frozen."""
    g = graph_factory(stall_timeout=1.0)
    pose = g.bridge.simulation.snapshot().position.copy()
    started = time.monotonic()
    with pytest.raises(LockstepStalled, match="/joint_command went silent"):
        g.spin(60.0)
    assert 10.0 <= time.monotonic() - started < 25.0
    assert g.bridge.lockstep.setpoints >= 4  # the player got idle ticks (one per 2 s)
    assert (g.bridge.simulation.snapshot().position == pose).all()  # no physics without answers


def test_a_setpoint_source_gone_from_the_graph_ends_the_run_naming_it_at_once(graph_factory):
    """The player's node is destroyed (its process exited): its publisher leaves the graph and
    the run ends within ~1 s, whatever sim_stall_timeout (60 s here, so the wall-clock
    timeout cannot be what ends it) and however busy the machine."""
    g = graph_factory(bridge_remaps=["joint_command:=joint_setpoint"], stall_timeout=60.0, stall_limit=120.0)
    g.spin(30.0, until=lambda: g.player.elapsed() >= 0.2)
    assert g.player.elapsed() >= 0.2
    g.destroy(g.player)
    started = time.monotonic()
    with pytest.raises(
        LockstepStalled, match="/joint_setpoint went silent: its last publisher left the graph"
    ):
        g.spin(30.0)
    assert time.monotonic() - started < 20.0


def test_a_slow_but_alive_stage_is_waited_for(graph_factory):
    """A relay stage between the player and the bridge computes one answer for 4 s (a CPU-bound
    thread, its publisher in the graph): 4x sim_stall_timeout without an answer, yet the
    chain is alive and working, so the run goes on (before issue 26.5: LockstepStalled
    after 1 s). The answers are the setpoints (the relay passes them through)."""
    g = graph_factory(bridge_remaps=["joint_command:=relay/joint_command"], stall_timeout=1.0)
    relay = g.add(rclpy.create_node("relay", namespace=g.ns, context=g.context))
    relay.set_parameters([Parameter("use_sim_time", value=True)])
    pub = relay.create_publisher(JointState, "relay/joint_command", 10)
    slow = {"count": 0, "thread": None}

    def burn_then_publish(msg):
        end = time.monotonic() + 4.0
        while time.monotonic() < end:  # working, not dead: one core busy
            sum(range(1000))
        pub.publish(msg)

    def on_setpoint(msg):
        slow["count"] += 1
        if slow["count"] == 50:  # one slow answer, mid-run
            slow["thread"] = threading.Thread(target=burn_then_publish, args=(msg,))
            slow["thread"].start()
        else:
            pub.publish(msg)

    relay.create_subscription(JointState, "joint_setpoint", on_setpoint, 10)
    g.spin(90.0, until=lambda: g.player.elapsed() >= 0.5)
    slow["thread"].join()
    assert g.player.elapsed() >= 0.5  # past the slow answer (tick 50 = 0.2 s)
    assert slow["count"] > 100
