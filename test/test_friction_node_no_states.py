"""friction_feedforward_node: ``velocity_source: measured`` with no ``joint_states`` is not
silent (a bridge per bus publishes ``<bus>/joint_states``; the node listened on the arm's
``joint_states``, which nobody published, and ran its term on a velocity of 0).

In-process node, never spun: setpoints and states are handed to its callbacks with stamps,
so "how long since the first setpoint" is the stamps' (no wall-clock timing)."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy")
from conftest import REPO_ROOT  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.nodes.friction_feedforward_node import (  # noqa: E402
    NO_STATES_WARN_AFTER,
    FrictionFeedforwardNode,
)

JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]


def _js(t: float) -> JointState:
    msg = JointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), round((t % 1) * 1e9)
    msg.name = list(JOINTS)
    msg.position, msg.velocity, msg.effort = [0.1] * 3, [0.0] * 3, [0.0] * 3
    return msg


def _node(context, source: str):
    values = {"joints": JOINTS, "arm_config": str(REPO_ROOT / "config" / "palletizer_arm.yaml")}
    values["velocity_source"] = source
    node = FrictionFeedforwardNode(
        context=context,
        namespace="/follower",
        parameter_overrides=[Parameter(k, value=v) for k, v in values.items()],
    )
    warned: list[tuple[str, str]] = []  # every warning asked for, before the throttle
    real = node.warn_throttled
    node.warn_throttled = lambda key, message: warned.append((key, message)) or real(key, message)
    return node, warned


def _no_states(warned):
    return [m for k, m in warned if k == "no_joint_states"]


def test_measured_velocity_without_joint_states_warns_naming_the_topic(context):
    node, warned = _node(context, "measured")
    try:
        t0 = 100.0
        for t in (t0, t0 + 0.5, t0 + NO_STATES_WARN_AFTER):  # within the grace: quiet
            node.on_setpoint(_js(t))
        assert _no_states(warned) == []
        node.on_setpoint(_js(t0 + NO_STATES_WARN_AFTER + 0.2))
        (message,) = _no_states(warned)
        assert "/follower/joint_states" in message and "velocity_source measured" in message
        node.on_setpoint(_js(t0 + 3.0))
        assert len(_no_states(warned)) == 2  # asked for again (the throttle spaces the log)
        node.on_joint_states(_js(t0 + 3.0))  # a measurement came: no more
        node.on_setpoint(_js(t0 + 5.0))
        assert len(_no_states(warned)) == 2
    finally:
        node.destroy_node()


def test_a_raw_joint_states_message_counts_and_a_setpoint_source_never_warns(context):
    from rclpy.serialization import serialize_message

    node, warned = _node(context, "measured")
    try:
        node._on_joint_states_raw(serialize_message(_js(100.0)))  # the subscription's callback
        for t in (100.0, 102.0, 104.0):
            node.on_setpoint(_js(t))
        assert _no_states(warned) == []
    finally:
        node.destroy_node()
    node, warned = _node(context, "setpoint")
    try:
        for t in (100.0, 102.0, 104.0):
            node.on_setpoint(_js(t))
        assert _no_states(warned) == []
        # switched to measured at runtime: counted from the next setpoint
        assert node.set_parameters([Parameter("velocity_source", value="measured")])[0].successful
        node.on_setpoint(_js(104.5))
        assert _no_states(warned) == []
        for k in range(1, 6):  # 4 Hz setpoints: 1.25 s of them, the last one past the grace
            node.on_setpoint(_js(104.5 + 0.25 * k))
        assert len(_no_states(warned)) == 1
    finally:
        node.destroy_node()


def test_one_bogus_stamp_does_not_fake_a_long_wait(context):
    """A first stamp far in the past, or one far ahead, counts as one step of at most
    STATES_STEP_MAX (it made "no joint_states in 2147483548 s" at once)."""
    from gravity_friction_comp.nodes.friction_feedforward_node import STATES_STEP_MAX

    node, warned = _node(context, "measured")
    try:
        node.on_setpoint(_js(1.0))  # bogus: epoch + 1 s
        node.on_setpoint(_js(1.7e9))  # then the real clock
        node.on_setpoint(_js(1.7e9 + 1e6))  # one far ahead
        node.on_setpoint(_js(1.7e9 + 0.01))  # back to the real clock: not counted
        assert _no_states(warned) == []
        t = 1.7e9 + 0.01
        for _ in range(int(NO_STATES_WARN_AFTER / STATES_STEP_MAX) + 1):  # real setpoints go on
            t += STATES_STEP_MAX
            node.on_setpoint(_js(t))
        assert len(_no_states(warned)) >= 1  # a real wait still warns
    finally:
        node.destroy_node()
