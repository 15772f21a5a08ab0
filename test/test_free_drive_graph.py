"""Free drive through the real nodes in lockstep: bridge (simulated arm, kp 0) + gravity +
friction (measured velocity) + free_drive, composed in one process; a push on sim/external_effort
moves the arm, and from the release it stops within 0.15 s of travel at the release speed
(test_free_drive_coast.py's bound) and then stays where it was left."""

from __future__ import annotations

import pytest

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow
from free_drive_helpers import lockstep_chain_nodes, lockstep_time, publish_pushes, spin_to, state_at  # noqa: E402
from graph_helpers import fresh_domain_id, own_namespace, publishers_of  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402


def _params(values):
    return [Parameter(k, value=v) for k, v in values.items()]


@pytest.mark.parametrize("start", ["follow", "free_drive"])
def test_push_then_release_in_lockstep_through_the_nodes(repo_root, start):
    """Started in follow and switched at runtime, or started in free drive (the bridge puts
    the start pose on joint_states before the chain's first answer: LockstepDriver.prime)."""
    pytest.importorskip("pinocchio")
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    from gravity_friction_comp.nodes.free_drive_launch import free_drive_launch_parts
    from gravity_friction_comp.nodes.free_drive_node import FreeDriveNode
    from gravity_friction_comp.nodes.friction_feedforward_node import FrictionFeedforwardNode
    from gravity_friction_comp.nodes.gravity_compensation_node import GravityCompensationNode
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode
    from gravity_friction_comp.param_files import first_node_parameters
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    urdf = str(repo_root / "urdf" / "palletizer.urdf")
    bridge_file = repo_root / "config" / "mit_bridge.yaml"
    friction_file = repo_root / "config" / "friction_feedforward.yaml"
    rate = 250.0
    # as arm.launch.py arm:=palletizer mode:=free_drive: kd 0.4 × the map's, the profile's friction scale
    fd_bridge, fd_friction, fd_node = free_drive_launch_parts(
        first_node_parameters(bridge_file)[1],
        urdf,
        first_node_parameters(friction_file)[1],
        0.4,
        rate,
        friction_scale=load_arm("palletizer").free_drive_friction_scale,
    )
    context = Context()
    rclpy.init(args=[], context=context, domain_id=fresh_domain_id())
    # every node under the test's own namespace (a stranger's topics never reach them), so the
    # config files' sections (keyed by the bare node name) go in as values
    ns = own_namespace()
    chain = lockstep_chain_nodes(repo_root, ns, rate, friction=fd_friction, bridge=fd_bridge)
    sim_time = {"use_sim_time": True}
    nodes = []
    try:
        bridge = MitBridgeNode(context=context, **chain["bridge"])
        nodes.append(bridge)
        nodes.append(GravityCompensationNode(context=context, **chain["gravity"]))
        nodes.append(
            FrictionFeedforwardNode(
                context=context,
                cli_args=["--ros-args", "-r", "joint_setpoint:=gravity/joint_command"],
                **chain["friction"],
            )
        )
        free = FreeDriveNode(
            context=context, namespace=ns, parameter_overrides=_params({**fd_node, "mode": start, **sim_time})
        )
        nodes.append(free)
        probe = rclpy.create_node("probe", namespace=ns, context=context)
        nodes.append(probe)
        states = []
        probe.create_subscription(JointState, "joint_states", lambda m: states.append(m), 10)
        push = probe.create_publisher(JointState, "sim/external_effort", 10)
        follow = probe.create_publisher(JointState, "follow_setpoint", 10)
        executor = SingleThreadedExecutor(context=context)
        for node in nodes:
            executor.add_node(node)

        for _ in range(20):
            executor.spin_once(timeout_sec=0.05)
        if start == "follow":  # the home pose from follow_setpoint, then free drive at runtime
            home = JointState()
            home.name, home.position = ["base_yaw", "shoulder_pitch", "beam_pitch"], [0.0, 0.3, 0.2]
            follow.publish(home)
            for _ in range(20):
                executor.spin_once(timeout_sec=0.05)
            spin_to(executor, bridge, 0.5)
            free.set_parameters([Parameter("mode", value="free_drive")])
        else:
            spin_to(executor, bridge, 0.5)
            assert lockstep_time(bridge) >= 0.5, (
                f"lockstep did not start in free drive: {lockstep_time(bridge):.3f} s"
            )
        assert free.source.mode == "free_drive"
        spin_to(executor, bridge, 0.6)
        kp, _ = bridge._core.gains
        assert not kp.any()  # the switch set the bridge's kp to 0
        # a 0.3 s push of 1 N·m on shoulder_pitch
        publish_pushes(push, "shoulder_pitch", ((1.0, 1.0), (1.3, 0.0)))
        spin_to(executor, bridge, 3.5)
        assert lockstep_time(bridge) >= 3.5, f"lockstep stopped at {lockstep_time(bridge):.3f} s"

        def at(t, field="position"):
            return state_at(states, t, "shoulder_pitch", field)

        before, released, v_release, after, end = at(0.9), at(1.3), at(1.3, "velocity"), at(2.4), at(3.4)
        print(
            f"shoulder_pitch: {before:.4f} before, {released:.4f} at the release ({v_release:.3f} rad/s), "
            f"{after:.4f} -> {end:.4f} rad; travel after the release {abs(end - released) * 1e3:.1f} mrad"
        )
        assert abs(released - before) > 0.02  # the hand moved it
        assert abs(v_release) >= 0.3  # at a hand's speed
        assert abs(end - released) <= 0.15 * abs(v_release)  # from the release: it stops
        assert abs(end - after) <= 2e-3  # and stays
        # /clock is absolute (no namespace keeps it ours): the bridge's alone (the free domain)
        assert publishers_of(probe, "/clock") == [bridge.get_fully_qualified_name()]
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
