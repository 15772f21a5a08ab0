"""Lockstep in a ROS graph: the bridge's simulated arm owns /clock, the player ticks on it, and
a chain that goes silent ends the run within seconds naming the silent topic.

The nodes run in this process on one executor and a private domain (as the demo composes
them); the chain is the player wired straight to the bridge (as arm.launch.py does without
stages), so each setpoint is its own answer.
"""

from __future__ import annotations

import time

import pytest

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: real nodes, several seconds (fast tier: -m "not slow")
import yaml  # noqa: E402
from graph_helpers import fresh_domain_id, own_namespace, publishers_of, write_params  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.errors import LockstepStalled  # noqa: E402

HOME = [0.0, 0.3, 0.2]


def _params(values):
    return [Parameter(k, value=v) for k, v in values.items()]


class Graph:
    """Bridge (simulate, lockstep) + setpoint player in one context; ``states`` records
    joint_states stamps [ns]. All under :func:`own_namespace`, so a stranger's topics never
    reach them; the absolute ``/clock`` they tick on is kept theirs by the free domain (no
    stranger when the test starts), and a stranger who joins later and publishes ``/clock``
    would show in the graph: :meth:`clock_publishers` (checked at start and end) names them."""

    def __init__(self, repo_root, folder, bridge_remaps=(), stall_timeout=1.0):
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode
        from gravity_friction_comp.nodes.setpoint_player import SetpointPlayerNode

        self.context = Context()
        rclpy.init(args=[], context=self.context, domain_id=fresh_domain_id())
        ns = own_namespace()
        config = yaml.safe_load((repo_root / "config" / "mit_bridge.yaml").read_text())["mit_bridge"]
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
        for node in (self.bridge, self.player, self.listener):
            self.executor.add_node(node)

    def spin(self, seconds, until=lambda: False):
        end = time.monotonic() + seconds
        while time.monotonic() < end and not until():
            self.executor.spin_once(timeout_sec=0.01)

    def clock_publishers(self) -> list[str]:
        """The nodes publishing ``/clock`` on the domain (the bridge alone, unless a stranger)."""
        return publishers_of(self.listener, "/clock")

    def close(self):
        self.executor.shutdown(timeout_sec=1.0)
        for node in (self.listener, self.player, self.bridge):
            node.destroy_node()
        rclpy.try_shutdown(context=self.context)


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
    separately may take that long), idle ticks in between keep the arm frozen."""
    g = graph_factory(stall_timeout=1.0)
    pose = g.bridge.simulation.snapshot().position.copy()
    started = time.monotonic()
    with pytest.raises(LockstepStalled, match="/joint_command went silent"):
        g.spin(30.0)
    assert 10.0 <= time.monotonic() - started < 13.0
    assert g.bridge.lockstep.setpoints >= 4  # the player got idle ticks (one per 2 s)
    assert (g.bridge.simulation.snapshot().position == pose).all()  # no physics without answers


def test_silent_setpoint_source_ends_the_run_naming_it(graph_factory):
    g = graph_factory(bridge_remaps=["joint_command:=joint_setpoint"], stall_timeout=1.0)
    g.spin(30.0, until=lambda: g.player.elapsed() >= 0.2)
    assert g.player.elapsed() >= 0.2
    g.executor.remove_node(g.player)  # the setpoint source stops (crashed)
    started = time.monotonic()
    with pytest.raises(LockstepStalled, match="/joint_setpoint went silent"):
        g.spin(20.0)
    assert time.monotonic() - started < 5.0
