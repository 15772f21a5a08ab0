"""Tests of gravity_friction_comp.nodes.joint_state_bytes and the bridge's ``joint_states``
publish path (issue 28 point 1: the message as serialized bytes, refilled in place).

Independent route: rclpy's own deserializer (``deserialize_message``) of the bytes published
against the ``JointState`` the bridge built before (names, stamp, ``tolist()`` values), and
the length of rclpy's serialization of that message (its padding bytes are not
initialised, so not compared); several exchanges in a row, so a value left from an earlier
refill shows.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from builtin_interfaces.msg import Time as TimeMsg  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.nodes.joint_state_bytes import JointStateBytes  # noqa: E402

NAMES = ["base_yaw", "shoulder_pitch", "beam_pitch", "a_much_longer_joint_name_7", "j"]


def _old_message(names, stamp_ns, position, velocity, effort) -> JointState:
    """The message the bridge built before: a reused JointState, typed fields from lists."""
    msg = JointState(check_fields=False)
    msg.header.stamp = TimeMsg(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
    msg.name = list(names)
    msg.position, msg.velocity, msg.effort = list(position), list(velocity), list(effort)
    return msg


def _same(a: JointState, b: JointState) -> bool:
    """Equal fields, the doubles bit for bit (-0.0 is not 0.0)."""

    def bits(xs) -> bytes:
        return struct.pack(f"<{len(xs)}d", *xs)

    return (a.header.stamp.sec, a.header.stamp.nanosec, a.header.frame_id, list(a.name)) == (
        b.header.stamp.sec,
        b.header.stamp.nanosec,
        b.header.frame_id,
        list(b.name),
    ) and all(bits(getattr(a, f)) == bits(getattr(b, f)) for f in ("position", "velocity", "effort"))


def test_refilled_bytes_are_rclpys_serialization_of_the_old_message_every_exchange():
    rng = np.random.default_rng(8)
    state = JointStateBytes(NAMES)
    n = len(NAMES)
    samples = [rng.normal(0.0, 3.0, (3, n)) for _ in range(6)]
    samples[2][0, 1] = -0.0
    samples[3][:] = 0.0  # all zero after non-zero values: nothing left from before
    samples[4][2, :] = [1e300, -1e-300, 5e-324, -7.5, 12.0]
    for k, (position, velocity, effort) in enumerate(samples):
        stamp = 1_764_000_000_123_456_789 + k * 999_999_937
        old = _old_message(NAMES, stamp, position.tolist(), velocity.tolist(), effort.tolist())
        data = state.fill(stamp, position.tolist(), velocity.tolist(), effort.tolist())
        assert _same(deserialize_message(data, JointState), old)
        assert len(data) == len(serialize_message(old))


def test_one_joint_and_a_stamp_at_zero():
    state = JointStateBytes(["only"])
    data = state.fill(0, [1.5], [-2.0], [0.25])
    assert _same(deserialize_message(data, JointState), _old_message(["only"], 0, [1.5], [-2.0], [0.25]))


@pytest.mark.slow  # builds a bridge node with its simulated arm (DDS participant)
def test_bridge_publishes_joint_states_as_bytes_once_every_joint_replied(tmp_path, context):
    """Before every motor replied, the joints measured so far as a message (as before); then
    the bytes, equal to rclpy's serialization of the message the old path builds, exchange
    after exchange."""
    from conftest import REPO_ROOT
    from rclpy.parameter import Parameter

    from gravity_friction_comp.mit.damiao_feedback import encode_feedback_damiao
    from gravity_friction_comp.mit.motor_table import motor_limits
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    params = {
        "joints": NAMES[:3],
        "can_id": [1, 2, 3],
        "master_id": [17, 18, 19],
        "motor_type": ["DM4310", "DM4340", "DM4310"],
        "kp": [0.0] * 3,
        "kd": [0.0] * 3,
        "simulate": True,
        "read_motor_limits": False,
        "urdf_path": str(REPO_ROOT / "urdf" / "palletizer.urdf"),
    }
    node = MitBridgeNode(
        context=context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
    )
    published: list = []
    handed: list = []

    class Capture:
        def publish(self, msg):
            published.append(msg)

    try:
        node._state_pub = Capture()  # noqa: SLF001 - what the exchange publishes
        node.state_hand_off = lambda msg: handed.append((list(msg.name), list(msg.position)))
        core = node._core  # noqa: SLF001
        rng = np.random.default_rng(4)
        for k in range(5):
            for i, m in enumerate(node.config.motors):
                if k == 0 and i == 1:
                    continue  # the second motor has not replied yet in the first exchange
                p, v, t = rng.uniform(-1, 1, 3)
                core.ingest_feedback(
                    m.master_id,
                    encode_feedback_damiao(
                        m.can_id, 1, p, v, t, 30, 31, motor_limits(params["motor_type"][i])
                    ),
                    0.0,
                )
            stamp = 1_764_000_000_000_000_000 + k * 1_000_003
            node._publish_state(stamp)  # noqa: SLF001 - the exchange's publish
            old = node.state_message(stamp)
            if k == 0:
                assert isinstance(published[-1], JointState) and list(published[-1].name) == [
                    NAMES[0],
                    NAMES[2],
                ]
            else:
                assert isinstance(published[-1], bytes)
                assert _same(deserialize_message(published[-1], JointState), old)
            assert handed[-1] == (list(old.name), list(old.position))
    finally:
        node.destroy_node()
