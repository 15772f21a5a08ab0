"""setpoint_shaper node (issue 30 point 2), in the test's process on a simulated clock: limits
from the URDF and the per-arm YAML, a 50 Hz stream shaped at 1 kHz within them, a bad
setpoint dropped, a missing limit refused at start."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy")
pytest.importorskip("ruckig")

from gravity_friction_comp.errors import ConfigError  # noqa: E402

NAMES = ["base_yaw", "shoulder_pitch", "beam_pitch"]


def _node(context, repo_root, **values):
    from rclpy.parameter import Parameter

    from gravity_friction_comp.nodes.setpoint_shaper_node import SetpointShaperNode

    values = {
        "use_sim_time": True,
        "urdf_path": str(repo_root / "urdf" / "palletizer.urdf"),
        "arm_config": str(repo_root / "config" / "palletizer_arm.yaml"),
        **values,
    }
    return SetpointShaperNode(
        context=context, parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]
    )


def _setpoint(t: float, q):
    from sensor_msgs.msg import JointState

    msg = JointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(round(t * 1e9)), 1_000_000_000)
    msg.name = NAMES
    msg.position = [float(x) for x in q]
    return msg


def test_a_50_hz_stream_is_shaped_at_1_khz_within_the_limits(context, repo_root):
    from rclpy.time import Time

    node = _node(context, repo_root, max_velocity=[1.0])
    try:
        sent = []
        node._pub.publish = lambda msg: sent.append((list(msg.position), list(msg.velocity)))
        # limits: URDF velocity min(1.0, 3.0 / 2.5) = 1.0; the YAML's 15 rad/s², 300 rad/s³
        shaper_limits = None
        for k in range(1, 2001):
            t = k * 1e-3
            if k % 20 == 1:  # 50 Hz: a step of 0.3 rad at 0.2 s on base_yaw
                node.on_setpoint(_setpoint(t, [0.3 if t > 0.2 else 0.0, 0.3, 0.2]))
            node.get_clock().set_ros_time_override(Time(nanoseconds=k * 1_000_000))
            node._tick()
            shaper_limits = node.shaper.limits
        q = np.array([p for p, _ in sent])
        v = np.array([w for _, w in sent])
        np.testing.assert_array_equal(shaper_limits.velocity, [1.0, 1.0, 1.0])
        np.testing.assert_array_equal(shaper_limits.acceleration, [15.0, 15.0, 15.0])
        assert np.all(np.abs(v) <= 1.0 + 1e-9)
        assert np.all(np.abs(np.diff(v, axis=0)) <= 15.0 * 1e-3 * (1 + 1e-6))
        np.testing.assert_allclose(q[-1], [0.3, 0.3, 0.2], atol=1e-9)
        assert np.max(v[:, 0]) > 0.5  # it moved
        # a setpoint without the shaped joints is dropped, the output goes on unchanged
        node.on_setpoint(_setpoint(2.1, [0.0]))
        node.get_clock().set_ros_time_override(Time(nanoseconds=2_001_000_000))
        node._tick()
        np.testing.assert_allclose(sent[-1][0], [0.3, 0.3, 0.2], atol=1e-9)
    finally:
        node.destroy_node()


def test_a_missing_limit_is_refused_with_its_name(context, repo_root):
    with pytest.raises(ConfigError, match="no max_acceleration"):
        _node(context, repo_root, joints=NAMES, arm_config="")


def test_stamps_on_another_clock_are_timed_on_arrival(context, repo_root):
    """A leader stamping with its wall clock, the shaper on simulated time: 1000 s apart.
    Timed on arrival the ramp is followed at its speed (on the stamps the stream would look
    stopped for ever: a stop-and-go at every sample)."""
    from rclpy.time import Time

    node = _node(context, repo_root, joints=NAMES)
    try:
        sent = []
        node._pub.publish = lambda msg: sent.append(list(msg.velocity))
        for k in range(1, 1501):
            t = k * 1e-3
            node.get_clock().set_ros_time_override(Time(nanoseconds=k * 1_000_000))
            if k % 20 == 0:  # 50 Hz ramp, 0.5 rad/s on base_yaw
                node.on_setpoint(_setpoint(t - 1000.0, [0.5 * t, 0.3, 0.2]))
            node._tick()
        v = np.array(sent)[-200:, 0]
        np.testing.assert_allclose(v, 0.5, atol=1e-3)
    finally:
        node.destroy_node()


def _feed(node, measured, setpoints, ticks):
    """The shaper node's output positions: ``measured`` as joint_states (or none), the
    setpoints (1 ms apart), then ``ticks`` ticks 1 ms apart on simulated time."""
    from rclpy.time import Time

    sent = []
    node._pub.publish = lambda msg: sent.append(list(msg.position))
    if measured is not None:
        node._on_joint_states(_setpoint(0.0, measured))
    for k, q in enumerate(setpoints, 1):
        node.on_setpoint(_setpoint(k * 1e-3, q))
    for k in range(1, ticks + 1):
        node.get_clock().set_ros_time_override(Time(nanoseconds=k * 1_000_000))
        node._tick()
    return sent


@pytest.mark.parametrize(
    ("measured", "setpoints", "ticks"),
    [
        # joint_states with 1e308 (finite) was the start: Ruckig failed at every tick, nothing
        # was ever published; ignored now: the stream starts at rest on the first setpoint
        ([1e308, 0.3, 0.2], [[0.1, 0.3, 0.2]], 3),
        # a 1e308 setpoint was clipped to the URDF limit (2.6 rad) and followed there; dropped
        # now, the previous target kept
        (None, [[0.1, 0.3, 0.2], [1e308, 0.3, 0.2]], 200),
    ],
    ids=["measured_start", "setpoint"],
)
def test_a_position_beyond_the_plausible_bound_is_ignored(context, repo_root, measured, setpoints, ticks):
    node = _node(context, repo_root, joints=NAMES)
    try:
        sent = _feed(node, measured, setpoints, ticks)
        assert len(sent) == ticks
        np.testing.assert_allclose(sent[-1], [0.1, 0.3, 0.2])
    finally:
        node.destroy_node()
