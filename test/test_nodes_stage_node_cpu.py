"""The per-message savings of the stage nodes keep their behaviour: the ``~/effort`` listener
count follows matched events (no graph query per message), a handed-off ``joint_command`` is
serialised only while heard, and the friction node decodes ``joint_states`` only when its
stage uses a measurement. In-process rclpy, own context and domain."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("rclpy")

import rclpy  # noqa: E402
from graph_helpers import fresh_domain_id  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.nodes import friction_feedforward_node  # noqa: E402
from gravity_friction_comp.nodes.friction_feedforward_node import FrictionFeedforwardNode  # noqa: E402
from gravity_friction_comp.nodes.listener_count import ListenerCount
from gravity_friction_comp.nodes.runtime import make_executor  # noqa: E402
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS  # noqa: E402

JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]


@pytest.fixture
def context():
    ctx = Context()
    rclpy.init(context=ctx, domain_id=fresh_domain_id())
    yield ctx
    rclpy.try_shutdown(context=ctx)


def _spin_until(executor, predicate, timeout=10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not predicate():
        executor.spin_once(timeout_sec=0.01)
    return predicate()


def test_listener_count_follows_matched_events_without_asking_per_message(context):
    node = rclpy.create_node("talker", context=context)
    other = rclpy.create_node("listener", context=context)
    executor = make_executor(context)
    executor.add_node(node)
    executor.add_node(other)
    try:
        listeners = ListenerCount()
        pub = listeners.publisher(node, JointState, "~/effort", SETPOINT_QOS)
        assert listeners.count == 0 and not listeners.heard()
        sub = other.create_subscription(JointState, "/talker/effort", lambda m: None, SETPOINT_QOS)
        assert _spin_until(executor, lambda: listeners.count == 1), "no matched event"
        assert pub.get_subscription_count() == 1  # the graph agrees with the kept count

        def asked():  # heard() must not query the graph while events keep the count
            raise AssertionError("get_subscription_count called per message")

        pub.get_subscription_count = asked
        assert all(listeners.heard() for _ in range(1000))
        other.destroy_subscription(sub)
        assert _spin_until(executor, lambda: listeners.count == 0), "no unmatched event"
        assert not listeners.heard()
    finally:
        executor.shutdown()
        node.destroy_node()
        other.destroy_node()


def _states(velocity) -> bytes:
    msg = JointState()
    msg.name = JOINTS
    msg.position = [0.0, 0.1, 0.2]
    msg.velocity = [float(v) for v in velocity]
    msg.header.stamp.sec = 5
    return serialize_message(msg)


def _friction(context, **values) -> FrictionFeedforwardNode:
    params = {"joints": JOINTS, "breakaway": 0.2, "eps": 0.02, "enabled": True, **values}
    return FrictionFeedforwardNode(
        context=context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
    )


def test_friction_joint_states_are_taken_serialised_and_decoded_only_when_used(context, monkeypatch):
    node = _friction(context)  # velocity_source: setpoint, drive: velocity
    try:
        assert node.joint_states_subscription.raw  # no JointState built by the executor
        decoded = []
        real = friction_feedforward_node.deserialize_message

        def spy(data, msg_type):
            decoded.append(data)
            return real(data, msg_type)

        monkeypatch.setattr(friction_feedforward_node, "deserialize_message", spy)
        node._on_joint_states_raw(_states([0.5, -0.5, 0.0]))
        assert decoded == []  # the stage uses no measurement: not even decoded
        node.set_parameters(
            [Parameter("velocity_source", value="measured"), Parameter("velocity_deadband", value=0.0)]
        )
        v = [0.5, -0.5, 0.0]
        node._on_joint_states_raw(_states(v))
        assert len(decoded) == 1
        # the measured velocity drives the term: 0.2·tanh(v/0.02), against the formula
        node.on_setpoint(_setpoint())
        out = node._command_msg.effort
        np.testing.assert_array_equal(out, 0.2 * np.tanh(np.array(v) / 0.02) + 0.0)
    finally:
        node.destroy_node()


def _setpoint() -> JointState:
    msg = JointState()
    msg.name = JOINTS
    msg.position = [0.0, 0.1, 0.2]
    msg.velocity = [0.0, 0.0, 0.0]
    msg.header.stamp.sec = 5
    msg.header.stamp.nanosec = 1000
    return msg


def test_a_handed_off_joint_command_is_serialised_only_while_someone_listens(context):
    """The composed chain's stages hand the command on by direct call: with nobody on
    ``joint_command`` it is not published; once a listener is matched it is, at once. A
    separate node (no hand-off) always publishes it (its listener's match may precede the
    matched event)."""
    node = _friction(context)
    other = rclpy.create_node("listener", context=context)
    executor = make_executor(context)
    executor.add_node(node)
    executor.add_node(other)
    published = []
    publish = node._command_pub.publish

    def spy(msg):
        published.append(list(msg.effort))
        publish(msg)

    node._command_pub.publish = spy
    node.on_setpoint(_setpoint())
    assert len(published) == 1 and not node._command_listeners.heard()  # no hand-off: always
    published.clear()
    handed = []
    node.hand_off = lambda msg: handed.append(list(msg.effort))
    try:
        node.on_setpoint(_setpoint())
        assert published == [] and len(handed) == 1  # computed and handed off, not serialised
        got = []
        other.create_subscription(JointState, "/joint_command", got.append, SETPOINT_QOS)
        assert _spin_until(executor, lambda: node._command_listeners.heard()), "no matched event"
        node.on_setpoint(_setpoint())
        assert published == [handed[1]]
        assert _spin_until(executor, lambda: len(got) == 1)
        assert list(got[0].effort) == handed[1]
    finally:
        executor.shutdown()
        node.destroy_node()
        other.destroy_node()
