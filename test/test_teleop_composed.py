"""composed_teleop (issue 31.1): the follower's chain and the teleop link in one process, in
lockstep on the simulated palletizer; a leader pose on ``leader_joint_states`` is reached
softly (engaged from the follower's pose), the setpoint handed to the gravity stage by call."""

from __future__ import annotations

import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("ruckig")
pytestmark = pytest.mark.slow
from free_drive_helpers import lockstep_chain_nodes, lockstep_time, spin_to, state_at  # noqa: E402
from graph_helpers import fresh_domain_id, own_namespace  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402


def _params(values):
    return [Parameter(k, value=v) for k, v in values.items()]


def test_composed_teleop_engages_softly_to_the_leader_pose(repo_root):
    pytest.importorskip("pinocchio")
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    from gravity_friction_comp.nodes.composed_teleop import ComposedTeleop

    rate = 500.0
    context = Context()
    rclpy.init(args=[], context=context, domain_id=fresh_domain_id())
    ns = own_namespace()
    composed = probe = None
    try:
        teleop = {
            "pair_config": str(repo_root / "arms" / "palletizer" / "teleop.yaml"),
            "urdf_path": str(repo_root / "urdf" / "palletizer.urdf"),
            "arm_config": str(repo_root / "config" / "palletizer_arm.yaml"),
            "leader_effort_limit": [10.0, 28.0, 10.0],  # required (config/mit_bridge.yaml's)
            "rate_hz": rate,
            "use_sim_time": True,
        }
        composed = ComposedTeleop(
            context,
            teleop={"namespace": ns, "parameter_overrides": _params(teleop)},
            **lockstep_chain_nodes(repo_root, ns, rate),
        )
        bridge, teleop = composed.bridge, composed.teleop
        assert not set(teleop.follower_subscriptions) & set(teleop.subscriptions)  # handed over by call
        probe = rclpy.create_node("probe", namespace=ns, context=context)
        states = []
        leader = probe.create_publisher(JointState, "leader_joint_states", 10)
        goal = [0.2, 0.4, 0.3]

        def on_state(msg):  # the leader's pose, in lockstep with the follower's states
            states.append(msg)
            out = JointState()
            out.name, out.position = ["base_yaw", "shoulder_pitch", "beam_pitch"], goal
            leader.publish(out)

        probe.create_subscription(JointState, "joint_states", on_state, 10)
        executor = SingleThreadedExecutor(context=context)
        for node in (*composed.nodes, probe):
            executor.add_node(node)
        spin_to(executor, bridge, 2.0)
        assert lockstep_time(bridge) >= 2.0, f"lockstep stopped at {lockstep_time(bridge):.3f} s"
        assert composed.errors == 0, composed.last_error
        early = [state_at(states, 0.05, j) for j in ("base_yaw", "shoulder_pitch", "beam_pitch")]
        end = [state_at(states, 2.0, j) for j in ("base_yaw", "shoulder_pitch", "beam_pitch")]
        print(f"composed teleop: {early} at 0.05 s, {end} at 2 s (goal {goal})")
        # engaged softly: 50 ms in, base_yaw moved at most 0.2 x 3 rad/s x 0.05 s
        assert abs(early[0] - 0.0) <= 0.6 * 0.05 + 2e-3
        assert teleop.link.state == "following"
        # at rest the follower's PD stops within its stiction band: breakaway (coulomb +
        # stribeck, config/sim_palletizer.yaml) / kp (config/mit_bridge.yaml), + 2 mrad for the
        # 5 % mass error of the gravity model
        band = [0.15 / 20.0, 0.30 / 30.0, 0.15 / 15.0]
        assert all(abs(a - b) <= w + 2e-3 for a, b, w in zip(end, goal, band)), (end, goal)
    finally:
        if composed is not None:
            composed.destroy()
        if probe is not None:
            probe.destroy_node()
        rclpy.shutdown(context=context)
