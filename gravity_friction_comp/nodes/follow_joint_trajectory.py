"""FollowJointTrajectory action server of the setpoint player, where ``control_msgs`` is importable.

``control_msgs/action/FollowJointTrajectory`` is what MoveIt's
``moveit_simple_controller_manager`` sends by default. ``control_msgs`` is no PyPI wheel, so it
is no dependency of the pip environment: :func:`start_action_server` adds the server to the
:class:`~gravity_friction_comp.nodes.setpoint_player.SetpointPlayerNode` only where the
package imports (a ROS 2 install: ``apt install ros-$ROS_DISTRO-control-msgs``), and the log
says which. Action ``follow_joint_trajectory`` (in the player's namespace; remap it to where
MoveIt sends, e.g. ``arm_controller/follow_joint_trajectory``).

A goal feeds the player's own trajectory path
(:meth:`~gravity_friction_comp.nodes.setpoint_player.SetpointPlayerNode.accept_trajectory`,
the one the ``joint_trajectory`` topic uses: the same interpolation, replacement and
refusals), as joint_trajectory_controller's action interface does:

- every goal is accepted by the action layer (rclpy's goal response carries no reason), then
  handed to the player: refused, it is **aborted** with ``error_code`` ``INVALID_JOINTS``
  (joints missing, unknown or repeated) or ``INVALID_GOAL`` (anything else: unsorted times,
  NaN, ending at or before now, too fast for the URDF, ...) and ``error_string`` = the
  player's reason;
- followed, it gets feedback every :data:`CHECK_PERIOD` (``desired`` = the player's setpoint,
  ``actual`` = the last ``joint_states``, ``error`` = actual − desired; empty ``actual`` and
  ``error`` until a ``joint_states`` with every joint arrived) and **succeeds**
  (``SUCCESSFUL``) once the node clock reaches its last point;
- replaced by a newer trajectory (another goal or the topic) it is **aborted**
  (``INVALID_GOAL``, "replaced by a newer trajectory"), as JTC aborts a preempted goal;
- a cancel request is accepted: the player holds its current setpoint (JTC holds the
  position) and the goal ends **canceled**.

``path_tolerance``, ``goal_tolerance`` and ``goal_time_tolerance`` are not checked: the player
is the setpoint source; how well the arm follows is the chain's (its own diagnostics).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from rclpy.task import Future
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from gravity_friction_comp.errors import InputError, Reason
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

if TYPE_CHECKING:
    from gravity_friction_comp.nodes.setpoint_player import SetpointPlayerNode

__all__ = ["ACTION_NAME", "CHECK_PERIOD", "FollowJointTrajectoryServer", "error_code", "start_action_server"]

#: The action's name (relative: in the player's namespace).
ACTION_NAME = "follow_joint_trajectory"
#: [s] node clock: how often a running goal is checked and gets feedback.
CHECK_PERIOD = 0.02
#: Refusal reasons of :class:`~gravity_friction_comp.trajectory.joint_trajectory.TrajectoryFollower`
#: that are wrong joints (``INVALID_JOINTS``).
_JOINT_REASONS = (Reason.MISSING_JOINTS, Reason.DUPLICATE_NAMES)


def error_code(result_type: Any, error: InputError) -> int:
    """FollowJointTrajectory ``Result.error_code`` for a refusal ``error`` of the player.

    Args:
        result_type: ``FollowJointTrajectory.Result`` (its constants are read from it).
        error: The player's refusal.
    """
    if error.reason in _JOINT_REASONS:
        return int(result_type.INVALID_JOINTS)
    return int(result_type.INVALID_GOAL)


class FollowJointTrajectoryServer:
    """The action's goal handling on a player node (module docstring).

    Args:
        player: The :class:`~gravity_friction_comp.nodes.setpoint_player.SetpointPlayerNode`.
        action_type: ``control_msgs.action.FollowJointTrajectory`` (its ``Result`` and
            ``Feedback`` are built here).
        point_type: ``trajectory_msgs.msg.JointTrajectoryPoint`` (feedback points).

    :meth:`execute` is the action server's execute callback (a coroutine: it waits on a
    future the node's timer completes, so one single-threaded executor serves the player
    and its goals). :attr:`active`: the running goals (at most one is followed).
    """

    def __init__(self, player: SetpointPlayerNode, action_type: Any, point_type: Any):
        self.player = player
        self.action_type = action_type
        self.point_type = point_type
        self.active: list[tuple[Any, int, Future]] = []  # (goal handle, trajectory count, done)
        self._actual: dict[str, float] = {}
        player.create_subscription(JointState, "joint_states", self._on_joint_states, SETPOINT_QOS)
        player.create_timer(CHECK_PERIOD, self.check)

    def _on_joint_states(self, msg: JointState) -> None:
        self._actual.update((str(n), float(q)) for n, q in zip(msg.name, msg.position) if math.isfinite(q))

    def _result(self, code: int, text: str) -> Any:
        result = self.action_type.Result()
        result.error_code = code
        result.error_string = text
        return result

    async def execute(self, goal_handle: Any) -> Any:
        """Hand the goal's trajectory to the player and wait for its end (module docstring)."""
        result_type = self.action_type.Result
        error = self.player.accept_trajectory(goal_handle.request.trajectory)
        if error is not None:
            goal_handle.abort()
            self.player.get_logger().warning(f"follow_joint_trajectory goal aborted: {error}")
            return self._result(error_code(result_type, error), str(error))
        follower = self.player.follower
        assert follower is not None  # accepted: the player follows it
        done: Future = Future()
        self.active.append((goal_handle, follower.accepted, done))
        self.check()
        return await done

    def check(self) -> None:
        """Per :data:`CHECK_PERIOD`: end the goals that are done, replaced or canceled; feedback."""
        follower = self.player.follower
        if not self.active or follower is None:
            return
        now = self.player.get_clock().now().nanoseconds * 1e-9
        result_type = self.action_type.Result
        for entry in list(self.active):
            goal_handle, count, done = entry
            if goal_handle.is_cancel_requested:
                if count == follower.accepted:  # JTC holds the position
                    self.player.accept_trajectory(self._hold(goal_handle))
                goal_handle.canceled()
                outcome = self._result(result_type.SUCCESSFUL, "canceled: holding the current setpoint")
            elif count != follower.accepted:
                goal_handle.abort()
                outcome = self._result(result_type.INVALID_GOAL, "replaced by a newer trajectory")
            elif follower.done(now):
                goal_handle.succeed()
                outcome = self._result(result_type.SUCCESSFUL, "")
            else:
                goal_handle.publish_feedback(self._feedback(follower, now))
                continue
            self.active.remove(entry)
            done.set_result(outcome)

    def _hold(self, goal_handle: Any) -> Any:
        """An empty trajectory of the goal's joints: the player holds its current setpoint."""
        hold = JointTrajectory()
        hold.joint_names = list(self.player.follower.joint_names)  # type: ignore[union-attr]
        return hold

    def _feedback(self, follower: Any, now: float) -> Any:
        sample = follower.sample(now)
        feedback = self.action_type.Feedback()
        feedback.header.stamp = self.player.get_clock().now().to_msg()
        feedback.joint_names = list(follower.joint_names)
        feedback.desired = self.point_type(
            positions=sample.position.tolist(), velocities=sample.velocity.tolist()
        )
        if all(n in self._actual for n in follower.joint_names):
            actual = [self._actual[n] for n in follower.joint_names]
            feedback.actual = self.point_type(positions=actual)
            feedback.error = self.point_type(positions=[a - d for a, d in zip(actual, sample.position)])
        return feedback


def start_action_server(player: SetpointPlayerNode) -> FollowJointTrajectoryServer | None:
    """The FollowJointTrajectory server on ``player`` when ``control_msgs`` imports, else
    ``None`` (the log says the topic is the way in)."""
    try:
        from control_msgs.action import FollowJointTrajectory  # type: ignore[import-not-found]
    except ImportError:
        player.get_logger().info(
            "FollowJointTrajectory: control_msgs is not importable (no PyPI wheel; a ROS install "
            "adds it: ros-$ROS_DISTRO-control-msgs): the joint_trajectory topic only"
        )
        return None
    from rclpy.action import ActionServer, CancelResponse
    from rclpy.callback_groups import ReentrantCallbackGroup
    from trajectory_msgs.msg import JointTrajectoryPoint

    server = FollowJointTrajectoryServer(player, FollowJointTrajectory, JointTrajectoryPoint)
    server.action = ActionServer(  # type: ignore[attr-defined]
        player,
        FollowJointTrajectory,
        ACTION_NAME,
        execute_callback=server.execute,
        cancel_callback=lambda goal_handle: CancelResponse.ACCEPT,
        # a waiting goal must never hold the player's timers (rclpy versions that run the
        # execute callback inside the server's callback group)
        callback_group=ReentrantCallbackGroup(),
    )
    player.get_logger().info(f"FollowJointTrajectory action server on {ACTION_NAME}")
    return server
