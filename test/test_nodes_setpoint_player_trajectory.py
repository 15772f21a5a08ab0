"""setpoint_player's joint_trajectory input (issue 30 point 1), in the test's process: the node
on a simulated clock, its joint_setpoint against the hand-computed cubic, a refused
trajectory (the URDF's velocity and position limits, NaN) leaving the motion and the hold
unchanged."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy")
pytest.importorskip("trajectory_msgs")

NAMES = ["base_yaw", "shoulder_pitch", "beam_pitch"]
HOME = [0.0, 0.3, 0.2]


def _trajectory(names, points, stamp_s: float = 0.0):
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    msg = JointTrajectory()
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(round(stamp_s * 1e9)), 1_000_000_000)
    msg.joint_names = list(names)
    for t, q, v in points:
        p = JointTrajectoryPoint()
        sec, nsec = divmod(int(round(t * 1e9)), 1_000_000_000)
        p.time_from_start = Duration(sec=sec, nanosec=nsec)
        p.positions = [float(x) for x in q]
        p.velocities = [float(x) for x in v]
        msg.points.append(p)
    return msg


def _player(context, urdf):
    """A still sine profile (home for ever) of NAMES on a simulated clock, checked against ``urdf``."""
    from rclpy.parameter import Parameter

    from gravity_friction_comp.nodes.setpoint_player import SetpointPlayerNode

    return SetpointPlayerNode(
        context=context,
        parameter_overrides=[
            Parameter("profile", value="sine"),
            Parameter("joint_names", value=NAMES),
            Parameter("home", value=HOME),
            Parameter("amplitude", value=[0.0]),
            Parameter("use_sim_time", value=True),
            Parameter("urdf_path", value=str(urdf)),
        ],
    )


@pytest.fixture
def player(context, repo_root):
    from rclpy.time import Time

    node = _player(context, repo_root / "urdf" / "palletizer.urdf")
    sent = []
    node._setpoint_pub.publish = sent.append  # what the timer would publish

    def at(seconds: float):
        node.get_clock().set_ros_time_override(Time(nanoseconds=int(round(seconds * 1e9))))
        node._tick()
        return np.array(sent[-1].position), np.array(sent[-1].velocity)

    node.at = at
    yield node
    node.destroy_node()


def test_a_trajectory_replaces_the_profile_and_its_last_point_is_held(player):
    q, v = player.at(100.0)
    np.testing.assert_array_equal(q, HOME)
    target = [0.4, 0.5, 0.1]
    # stamp 0: starts now (100 s); cubic rest-to-rest over T = 2 s: at T/2 the position is
    # halfway and the velocity 3Δ/(2T) (c2 = 3Δ/T², c3 = −2Δ/T³, by hand)
    player._on_trajectory(
        _trajectory(["beam_pitch", "base_yaw", "shoulder_pitch"], [(2.0, [0.1, 0.4, 0.5], [0, 0, 0])])
    )
    delta = np.array(target) - HOME
    q, v = player.at(101.0)
    np.testing.assert_allclose(q, np.array(HOME) + 0.5 * delta, atol=1e-9)
    np.testing.assert_allclose(v, 1.5 * delta / 2.0, atol=1e-9)
    q, v = player.at(105.0)
    np.testing.assert_allclose(q, target, atol=1e-12)
    np.testing.assert_array_equal(v, [0.0, 0.0, 0.0])


def test_refused_trajectories_keep_the_motion(player):
    player.at(10.0)
    player._on_trajectory(_trajectory(NAMES, [(1.0, [0.1, 0.3, 0.2], [0, 0, 0])]))
    before, _ = player.at(10.5)
    # base_yaw 0.05 → 1.05 rad in 0.1 s: 10 rad/s, the URDF allows 3 (urdf/palletizer.urdf)
    player._on_trajectory(_trajectory(NAMES, [(0.1, [1.05, 0.3, 0.2], [0, 0, 0])]))
    player._on_trajectory(_trajectory(NAMES, [(1.0, [math.nan, 0.3, 0.2], [0, 0, 0])]))
    player._on_trajectory(_trajectory(["base_yaw"], [(1.0, [0.0], [0])]))
    # shoulder_pitch 0.3 → 1.35 rad in 10 s: slow (0.1 rad/s), but above its <limit upper>
    player._on_trajectory(_trajectory(NAMES, [(10.0, [0.1, 1.35, 0.2], [0, 0, 0])]))
    again, _ = player.at(10.5)
    np.testing.assert_array_equal(again, before)
    q, _ = player.at(12.0)
    np.testing.assert_allclose(q, [0.1, 0.3, 0.2], atol=1e-12)
    assert player._follower.accepted == 1


def test_the_urdf_position_limits_reach_the_follower(player, repo_root):
    import xml.etree.ElementTree as ElementTree

    from gravity_friction_comp.errors import Reason

    player.at(10.0)
    assert player.accept_trajectory(_trajectory(NAMES, [(1.0, [0.1, 0.3, 0.2], [0, 0, 0])])) is None
    urdf = ElementTree.parse(repo_root / "urdf" / "palletizer.urdf").getroot()
    limit = {j.get("name"): j.find("limit") for j in urdf.iter("joint") if j.find("limit") is not None}
    upper = float(limit["shoulder_pitch"].get("upper"))  # 1.3
    lower = float(limit["beam_pitch"].get("lower"))  # -1.3
    error = player.accept_trajectory(_trajectory(NAMES, [(30.0, [0.1, upper + 0.01, 0.2], [0, 0, 0])]))
    assert error is not None and error.reason == Reason.RANGE and "'shoulder_pitch'" in str(error)
    error = player.accept_trajectory(_trajectory(NAMES, [(30.0, [0.1, 0.3, lower - 0.01], [0, 0, 0])]))
    assert error is not None and "'beam_pitch'" in str(error)
    assert player.accept_trajectory(_trajectory(NAMES, [(30.0, [0.1, upper, lower], [0, 0, 0])])) is None


def test_inverted_urdf_limits_are_no_position_check_not_a_crash(context, repo_root, tmp_path):
    """A URDF whose <limit lower> is above <limit upper> (the shipped Dobot Magician's
    magician_joint_prismatic_r has lower 0, upper -0.0135): the player warns at start and
    checks no position limit for that joint; before, the first trajectory raised a
    ConfigError out of the subscription's callback."""
    from rclpy.time import Time

    text = (repo_root / "urdf" / "palletizer.urdf").read_text()
    bad = text.replace('lower="-0.6" upper="1.3"', 'lower="1.3" upper="-0.6"')
    assert bad != text
    urdf = tmp_path / "inverted.urdf"
    urdf.write_text(bad)
    node = _player(context, urdf)
    try:
        node._setpoint_pub.publish = lambda msg: None
        node.get_clock().set_ros_time_override(Time(nanoseconds=10 * 10**9))
        node._tick()
        assert node.accept_trajectory(_trajectory(NAMES, [(30.0, [0.1, 0.35, 0.2], [0, 0, 0])])) is None
        error = node.accept_trajectory(_trajectory(NAMES, [(30.0, [0.1, 0.35, -1.4], [0, 0, 0])]))
        assert error is not None and "'beam_pitch'" in str(error)  # the other joints' limits stay
    finally:
        node.destroy_node()
