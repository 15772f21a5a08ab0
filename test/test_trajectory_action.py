"""FollowJointTrajectory (issue 30 point 4): the action server of the setpoint player.

``control_msgs`` is no PyPI wheel: where it is missing the player has no action server (the log
says so) and the real action test skips with that reason. The goal handling itself
(:class:`FollowJointTrajectoryServer`: the player's trajectory path, results, feedback,
replacement, cancel) runs everywhere on the real player node, on a simulated clock, with
stand-ins of the action's Result/Feedback types and goal handles.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytest.importorskip("rclpy")
pytest.importorskip("trajectory_msgs")

from test_nodes_setpoint_player_trajectory import HOME, NAMES, _trajectory, player  # noqa: E402, F401

HAS_CONTROL_MSGS = importlib.util.find_spec("control_msgs") is not None
NO_CONTROL_MSGS = (
    "control_msgs is no PyPI wheel (a ROS 2 install adds it: apt install ros-$ROS_DISTRO-control-msgs)"
)


class _Result:
    """``FollowJointTrajectory.Result``'s fields and constants (control_msgs 4.x/5.x)."""

    SUCCESSFUL, INVALID_GOAL, INVALID_JOINTS = 0, -1, -2

    def __init__(self):
        self.error_code, self.error_string = 0, ""


class _Feedback:
    def __init__(self):
        from std_msgs.msg import Header

        self.header, self.joint_names, self.desired, self.actual, self.error = Header(), [], None, None, None


class _Action:
    Result, Feedback = _Result, _Feedback


class _Goal:
    """A goal handle as rclpy's ``ServerGoalHandle`` is used: request, cancel flag, end states."""

    def __init__(self, trajectory):
        self.request = type("Request", (), {"trajectory": trajectory})()
        self.is_cancel_requested = False
        self.state = "executing"
        self.feedback: list = []

    def succeed(self):
        self.state = "succeeded"

    def abort(self):
        self.state = "aborted"

    def canceled(self):
        self.state = "canceled"

    def publish_feedback(self, feedback):
        self.feedback.append(feedback)


def _server(player):  # noqa: F811 - the fixture
    from trajectory_msgs.msg import JointTrajectoryPoint

    from gravity_friction_comp.nodes.follow_joint_trajectory import FollowJointTrajectoryServer

    return FollowJointTrajectoryServer(player, _Action, JointTrajectoryPoint)


def _step(coroutine):
    """Run the execute coroutine until it waits (``None``) or returns (its result)."""
    try:
        coroutine.send(None)
    except StopIteration as end:
        return end.value
    return None


TARGET = [0.4, 0.5, 0.1]


def test_a_goal_is_followed_with_feedback_and_succeeds_at_its_last_point(player):  # noqa: F811
    """Accepted at t = 100 s (stamp 0 = now): feedback while it runs (desired = the player's
    own setpoint; actual = the last joint_states), success once the clock reaches 100 + 1 s;
    the player then holds the last point (the values sent)."""
    from sensor_msgs.msg import JointState

    player.at(100.0)
    server = _server(player)
    goal = _Goal(_trajectory(NAMES, [(1.0, TARGET, [0.0, 0.0, 0.0])]))
    run = server.execute(goal)
    assert _step(run) is None and goal.state == "executing"
    q_mid, _ = player.at(100.5)
    server._on_joint_states(JointState(name=NAMES, position=[0.1, 0.2, 0.3]))
    server.check()
    feedback = goal.feedback[-1]
    assert feedback.joint_names == NAMES
    np.testing.assert_allclose(feedback.desired.positions, q_mid, atol=1e-12)
    np.testing.assert_allclose(feedback.error.positions, np.array([0.1, 0.2, 0.3]) - q_mid, atol=1e-12)
    player.at(101.0)
    server.check()
    result = _step(run)
    assert goal.state == "succeeded" and (result.error_code, result.error_string) == (0, "")
    q, v = player.at(102.0)
    np.testing.assert_array_equal(q, TARGET)
    np.testing.assert_array_equal(v, 0.0)
    assert server.active == []


@pytest.mark.parametrize(
    "names, points, code, text",
    [
        (["base_yaw", "shoulder_pitch", "elbow"], [(1.0, TARGET, [0.0] * 3)], -2, "elbow"),
        (NAMES, [(1.0, [0.4, float("nan"), 0.1], [0.0] * 3)], -1, "finite"),
        (NAMES, [(0.01, [2.0, 0.3, 0.2], [0.0] * 3)], -1, "velocity limit"),
    ],
)
def test_a_refused_goal_is_aborted_with_the_players_reason(player, names, points, code, text):  # noqa: F811
    """Unknown joint (INVALID_JOINTS), NaN and a jump beyond the URDF's 3 rad/s on base_yaw
    (INVALID_GOAL): aborted at once with the player's refusal text; the profile goes on."""
    player.at(100.0)
    goal = _Goal(_trajectory(names, points))
    result = _step(_server(player).execute(goal))
    assert goal.state == "aborted" and result.error_code == code
    assert "trajectory refused" in result.error_string and text in result.error_string
    q, _ = player.at(100.5)
    np.testing.assert_array_equal(q, HOME)  # the still profile, not the refused target


def test_a_replaced_goal_is_aborted_and_a_canceled_one_holds(player):  # noqa: F811
    """A newer trajectory on the topic aborts the running goal ("replaced"); the newer goal
    canceled halfway leaves the player holding where its setpoint was (velocity 0)."""
    player.at(100.0)
    server = _server(player)
    first = _Goal(_trajectory(NAMES, [(5.0, TARGET, [0.0] * 3)]))
    run = server.execute(first)
    _step(run)
    player.at(100.2)
    assert player.accept_trajectory(_trajectory(NAMES, [(4.0, HOME, [0.0] * 3)])) is None
    server.check()
    result = _step(run)
    assert first.state == "aborted" and result.error_string == "replaced by a newer trajectory"

    second = _Goal(_trajectory(NAMES, [(2.0, TARGET, [0.0] * 3)]))
    run = server.execute(second)
    _step(run)
    q_mid, v_mid = player.at(101.0)
    assert np.any(np.abs(v_mid) > 0.0)  # moving when the cancel comes
    second.is_cancel_requested = True
    server.check()
    result = _step(run)
    assert second.state == "canceled" and result.error_code == 0
    q, v = player.at(103.0)  # past the canceled goal's end: still where the cancel found it
    np.testing.assert_allclose(q, q_mid, atol=1e-12)
    np.testing.assert_array_equal(v, 0.0)


@pytest.mark.skipif(HAS_CONTROL_MSGS, reason="control_msgs is importable here: the server is started")
def test_without_control_msgs_the_player_has_no_action_server(player):  # noqa: F811
    assert player.action_server is None


@pytest.mark.skipif(not HAS_CONTROL_MSGS, reason=NO_CONTROL_MSGS)
def test_with_control_msgs_the_player_serves_follow_joint_trajectory(player):  # noqa: F811
    """The real action: a client in the test's process sends a goal, gets SUCCESSFUL."""
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from rclpy.executors import SingleThreadedExecutor

    assert player.action_server is not None
    executor = SingleThreadedExecutor(context=player.context)
    executor.add_node(player)
    client = ActionClient(player, FollowJointTrajectory, "follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=10.0)
    player.at(100.0)
    goal = FollowJointTrajectory.Goal(trajectory=_trajectory(NAMES, [(0.5, TARGET, [0.0] * 3)]))
    sent = client.send_goal_async(goal)
    executor.spin_until_future_complete(sent, timeout_sec=10.0)
    assert sent.result() is not None and sent.result().accepted
    server = player.action_server
    for _ in range(200):  # until the execute callback has handed the goal to the player
        if server.active:
            break
        executor.spin_once(timeout_sec=0.05)
    assert server.active, "the goal never reached the execute callback"
    result = sent.result().get_result_async()
    # stamp 0 = the clock when execute ran: 100 s, held until now (had the clock moved on
    # first, the goal would start later and a fixed end time could miss it); check() at once
    # rather than waiting for the ROS-time timer to notice the override
    player.at(102.0)
    server.check()
    executor.spin_until_future_complete(result, timeout_sec=10.0)
    assert result.result() is not None, "no result"
    assert result.result().result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    client.destroy()
    executor.shutdown()
