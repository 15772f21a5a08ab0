"""Free drive in the one-process chain (composed_free_drive), in lockstep: the bridge's measured
state reaches the free-drive source and the friction stage by direct call (no DDS hop); the
released palletizer stays at its start pose, a push on sim/external_effort moves it, and after
the release it stops within 0.15 s of travel at the release speed and stays where it was left."""

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


def test_composed_free_drive_holds_the_arm_in_lockstep(repo_root):
    pytest.importorskip("pinocchio")
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    from gravity_friction_comp.nodes.composed_free_drive import ComposedFreeDrive
    from gravity_friction_comp.nodes.free_drive_launch import free_drive_launch_parts
    from gravity_friction_comp.param_files import first_node_parameters

    urdf = str(repo_root / "urdf" / "palletizer.urdf")
    files = {
        k: repo_root / "config" / f
        for k, f in (
            ("bridge", "mit_bridge.yaml"),
            ("gravity", "gravity_compensation.yaml"),
            ("friction", "friction_feedforward.yaml"),
        )
    }
    values = {k: first_node_parameters(f)[1] for k, f in files.items()}
    rate = 250.0
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    profile = load_arm(
        "palletizer"
    )  # dither, friction scale and kd as arm.launch.py arm:=palletizer sets them
    fd_bridge, fd_friction, fd_node = free_drive_launch_parts(
        values["bridge"],
        urdf,
        values["friction"],
        0.4,
        rate,
        profile.free_drive_dither,
        profile.free_drive_friction_scale,
    )
    context = Context()
    rclpy.init(args=[], context=context, domain_id=fresh_domain_id())
    ns = own_namespace()  # every node under it: a stranger's topics never reach them
    composed = probe = None
    try:
        composed = ComposedFreeDrive(
            context,
            free_drive={"namespace": ns, "parameter_overrides": _params({**fd_node, "use_sim_time": True})},
            **lockstep_chain_nodes(repo_root, ns, rate, friction=fd_friction, bridge=fd_bridge),
        )
        bridge, free = composed.bridge, composed.free_drive
        # the measured state is handed over, not subscribed to
        assert free.state_subscription not in free.subscriptions
        assert composed.friction.joint_states_subscription not in composed.friction.subscriptions
        probe = rclpy.create_node("probe", namespace=ns, context=context)
        states = []
        probe.create_subscription(JointState, "joint_states", lambda m: states.append(m), 10)
        push = probe.create_publisher(JointState, "sim/external_effort", 10)
        executor = SingleThreadedExecutor(context=context)
        for node in (*composed.nodes, probe):
            executor.add_node(node)

        spin_to(executor, bridge, 0.5)
        assert lockstep_time(bridge) >= 0.5, f"lockstep did not start: {lockstep_time(bridge):.3f} s"
        kp, _ = bridge._core.gains
        assert not kp.any()
        # a 0.1 s push of 1 N·m on shoulder_pitch
        publish_pushes(push, "shoulder_pitch", ((1.0, 1.0), (1.1, 0.0)))
        spin_to(executor, bridge, 3.5)
        assert lockstep_time(bridge) >= 3.5, f"lockstep stopped at {lockstep_time(bridge):.3f} s"
        assert composed.errors == 0, composed.last_error
        assert composed.friction.stage.config.dither.tolist() == [0.8, 0.8, 0.65]
        assert composed.friction.stage.settings.scale.tolist() == [0.5, 0.5, 0.3]

        def at(t, field="position"):
            return state_at(states, t, "shoulder_pitch", field)

        before, released, v_release, after, end = at(0.9), at(1.1), at(1.1, "velocity"), at(2.4), at(3.4)
        print(
            f"composed: shoulder_pitch {before:.4f} before, {released:.4f} at the release "
            f"({v_release:.3f} rad/s), {after:.4f} -> {end:.4f} rad"
        )
        assert abs(before - 0.3) <= 2e-3  # released at the start pose: it stayed
        assert abs(released - before) > 0.02  # the hand moved it
        # from the release it stops within 0.15 s of travel at the release speed
        # (test_free_drive_coast.py's bound), and stays
        assert abs(end - released) <= 0.15 * abs(v_release)
        assert abs(end - after) <= 2e-3
        # /clock is absolute (no namespace keeps it ours): the bridge's alone (the free domain)
        assert publishers_of(probe, "/clock") == [bridge.get_fully_qualified_name()]
    finally:
        if composed is not None:
            composed.destroy()
        if probe is not None:
            probe.destroy_node()
        rclpy.try_shutdown(context=context)
