"""setpoint_player: publishes a joint setpoint stream from a named profile.

Topics:
    joint_setpoint (pub, sensor_msgs/JointState): position and velocity of every joint in
        ``joint_names`` (stamped with the node clock), at ``rate_hz``.
    gripper/holding (pub, std_msgs/Bool): the pick_place profile's gripper state, on every
        change and once per second (late subscribers catch up).
    ~/done (pub, std_msgs/Bool, transient local): ``false`` at start, ``true`` once when a
        profile with ``loop:=false`` has finished (the log says so once; the player then keeps
        publishing the last pose, so the arm stays held).
    joint_states (sub, sensor_msgs/JointState): profile ``hold`` only, until the pose is set.
    joint_trajectory (sub, trajectory_msgs/JointTrajectory): a MoveIt / JTC-style trajectory
        of exactly the player's joints; accepted, it replaces the profile (or the running
        trajectory) from the current setpoint and is followed at ``rate_hz`` with
        ``joint_trajectory_controller``'s interpolation, its last point then held
        (:mod:`gravity_friction_comp.trajectory.joint_trajectory`; the profile's gripper
        state and ``~/done`` stop with it). A refused one (the log
        says why) leaves the current motion running. The position- and velocity-limit checks use
        the URDF of ``robot_description`` / ``urdf_path`` (none given: no check; the log says so).

Action (where ``control_msgs`` is importable: a ROS install, no PyPI wheel):
    follow_joint_trajectory (control_msgs/action/FollowJointTrajectory): the same trajectory
        path as the topic, with a result and feedback
        (:mod:`gravity_friction_comp.nodes.follow_joint_trajectory`).

Profile ``hold`` (what ``arm.launch.py`` starts with ``player:=none``): the first
``joint_states`` message that carries every joint of ``joint_names`` with a finite position
sets the pose (empty ``joint_names``: every joint it carries); none within ``hold_wait`` [s]
(wall clock; in lockstep the bridge publishes ``joint_states`` only once the chain has
answered) and the pose is ``home``. Nothing is published before the pose is set; the log
says which pose is held.

Parameters: :data:`PARAMETERS` (name, type, default, unit, range, description; all read at
start). The profile math is :mod:`gravity_friction_comp.trajectory.profiles`; ``start_delay``
[s] holds the first pose that long before the profile starts (the arm settles on it).

Time is the node clock: with ``use_sim_time`` (lockstep with the simulated arm) the timer
ticks on ``/clock`` and publishes once per tick at most (stamp = the tick), so a setpoint
stream at ``rate_hz`` equal to the bridge's ``sim_setpoint_rate_hz`` answers every tick;
the gripper change is published before that tick's setpoint.
"""

from __future__ import annotations

import dataclasses
import math
import time
from types import MappingProxyType

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from trajectory_msgs.msg import JointTrajectory

from gravity_friction_comp.errors import ConfigError, InputError, ModelError, Reason
from gravity_friction_comp.nodes.parameters import Param, declare_checked
from gravity_friction_comp.nodes.robot_params import ROBOT_PARAMETERS
from gravity_friction_comp.nodes.runtime import run_node
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS
from gravity_friction_comp.throttle import Throttle
from gravity_friction_comp.trajectory.base import MIN_DURATION, Profile
from gravity_friction_comp.trajectory.hold import HoldProfile
from gravity_friction_comp.trajectory.joint_trajectory import TrajectoryFollower, TrajectoryPoint
from gravity_friction_comp.trajectory.profiles import PROFILE_NAMES, profile_from_options
from gravity_friction_comp.validation import MAX_RATE_HZ, positive_rate

__all__ = ["PARAMETERS", "SetpointPlayerNode", "main"]

#: ``~/done``: latched, so a recorder that subscribes late still learns the profile ended.
DONE_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
_HOLD_CHECK_PERIOD = 0.02  # [s] wall: how often hold looks at its hold_wait deadline


def _finite(value: float) -> None:
    if not math.isfinite(value):
        raise ConfigError(f"start_delay must be finite [s], got {value!r}", key="start_delay", value=value)


#: Every parameter of the player, declared once (read-only: read at start).
PARAMETERS: tuple[Param, ...] = (
    Param("profile", "sine", f"profile: {' | '.join(PROFILE_NAMES)}", read_only=True),
    # [""] not []: rclpy cannot infer a type from an empty list; empty entries are skipped.
    Param(
        "joint_names", [""], "joints of the setpoint (csv/bag: joints to keep, empty: all)", read_only=True
    ),
    Param(
        "home", [0.0], "centre of sine/ramp, home pose of pick_place, one per joint", "rad", read_only=True
    ),
    Param(
        "amplitude", [0.1], "amplitude per joint or one for all; 0 keeps a joint still", "rad", read_only=True
    ),
    Param("period", 8.0, "sine/ramp period", "s", low=MIN_DURATION, read_only=True),
    Param("pick", [0.0], "pick_place pick pose (one value: home + amplitude)", "rad", read_only=True),
    Param("place", [0.0], "pick_place place pose (one value: home - amplitude)", "rad", read_only=True),
    Param("move_time", 2.0, "pick_place move duration", "s", low=MIN_DURATION, read_only=True),
    Param("dwell_time", 1.5, "pick_place stop duration", "s", low=0.0, read_only=True),
    Param("grip_time", 0.2, "pick_place gripper closing time", "s", low=MIN_DURATION, read_only=True),
    Param("csv_path", "", "CSV file for profile csv", read_only=True),
    Param("bag_path", "", "rosbag2 folder for profile bag", read_only=True),
    Param("bag_topic", "joint_states", "JointState topic in the bag", read_only=True),
    Param("loop", True, "repeat the profile; false holds the last pose", read_only=True),
    Param(
        "rate_hz",
        250.0,
        "publication rate",
        "Hz",
        low=0.0,
        high=MAX_RATE_HZ,
        read_only=True,
        validate=positive_rate,
    ),
    Param(
        "start_delay",
        0.0,
        "hold the first pose this long before the profile starts",
        "s",
        low=0.0,
        read_only=True,
        validate=_finite,
    ),
    Param(
        "hold_wait",
        10.0,
        "profile hold: wall time to wait for joint_states (the bridge starting) before holding home",
        "s",
        low=0.0,
        high=60.0,
        read_only=True,
    ),
    # the URDF's <limit velocity> for the joint_trajectory check (the robot parameters' own)
    dataclasses.replace(ROBOT_PARAMETERS["robot_description"], read_only=True),
    dataclasses.replace(ROBOT_PARAMETERS["urdf_path"], read_only=True),
)

#: name → (default, description), derived from :data:`PARAMETERS` (defaults by name).
PLAYER_PARAMETERS = MappingProxyType({p.name: (p.default, p.description) for p in PARAMETERS})


def profile_from_parameters(values) -> Profile:
    """Build the profile the player's parameter values describe.

    Raises:
        ConfigError: unknown profile (valid names listed), bad lengths or values, unreadable
            replay source.
    """
    names = [n for n in values["joint_names"] if n]
    pose = lambda key: [] if len(values[key]) <= 1 else list(values[key])  # noqa: E731
    home = list(values["home"])
    if len(home) == 1 and len(names) > 1:
        home = home * len(names)
    return profile_from_options(
        values["profile"],
        names,
        home=home,
        amplitude=list(values["amplitude"]),
        period=values["period"],
        pick=pose("pick"),
        place=pose("place"),
        move_time=values["move_time"],
        dwell_time=values["dwell_time"],
        grip_time=values["grip_time"],
        csv_path=values["csv_path"],
        bag_path=values["bag_path"],
        topic=values["bag_topic"],
        loop=values["loop"],
    )


class SetpointPlayerNode(Node):
    """Plays a :class:`~gravity_friction_comp.trajectory.profiles.Profile` (node name ``setpoint_player``).

    Args:
        **kwargs: passed to ``rclpy.node.Node`` (``parameter_overrides``, ``context``, …).

    Raises:
        ConfigError: invalid parameters (see :func:`profile_from_parameters`).
    """

    NODE_NAME = "setpoint_player"
    EXECUTABLE = "setpoint_player"  # setup.py's console script (no _node suffix)

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        values = declare_checked(self, PARAMETERS)
        rate = values["rate_hz"]
        delay = values["start_delay"]
        self.start_delay = delay
        self._name = values["profile"]
        self._names = [n for n in values["joint_names"] if n]
        hold = self._name == "hold"
        # hold without joint names: the joints come with the measurement (no home pose then)
        self.profile: Profile | None = None if hold and not self._names else profile_from_parameters(values)
        self._setpoint_pub = self.create_publisher(JointState, "joint_setpoint", SETPOINT_QOS)
        self._holding_pub = self.create_publisher(Bool, "gripper/holding", SETPOINT_QOS)
        self._done_pub = self.create_publisher(Bool, "~/done", DONE_QOS)
        self._done_pub.publish(Bool(data=False))
        self._done = False
        self._holding: bool | None = None
        self._start_ns: int | None = None
        self._last_holding_ns = 0
        self._pose_set = not hold  # hold: nothing is published before the pose is known
        self._missed_tick = False
        self._follower: TrajectoryFollower | None = None
        self._joint_limits = _urdf_joint_limits(values)
        if self._joint_limits is None:
            self.get_logger().info(
                "joint_trajectory: no robot_description / urdf_path, so no position- and velocity-limit check"
            )
        else:
            inverted = {n: lim[:2] for n, lim in self._joint_limits.items() if lim[0] > lim[1]}
            if inverted:  # a URDF error the URDF parsers accept (e.g. a mimic gripper finger's)
                self.get_logger().warning(
                    f"joint_trajectory: <limit lower> above <limit upper> for {inverted}: "
                    "no position-limit check for those joints"
                )
                for n in inverted:
                    self._joint_limits[n] = (-math.inf, math.inf, self._joint_limits[n][2])
        self._throttle = Throttle(2.0)
        self.create_subscription(JointTrajectory, "joint_trajectory", self._on_trajectory, SETPOINT_QOS)
        from gravity_friction_comp.nodes.follow_joint_trajectory import start_action_server

        #: FollowJointTrajectory server where control_msgs imports (``None`` otherwise).
        self.action_server = start_action_server(self)
        self.create_timer(1.0 / rate, self._tick)
        if hold:
            self._hold_deadline = time.monotonic() + values["hold_wait"]
            self._hold_warned = False
            self._state_sub = self.create_subscription(
                JointState, "joint_states", self._on_joint_states, SETPOINT_QOS
            )
            # wall clock: with use_sim_time the node clock stands still until the chain answers
            self._hold_timer = self.create_timer(
                _HOLD_CHECK_PERIOD, self._hold_check, clock=Clock(clock_type=ClockType.STEADY_TIME)
            )
            self._hold_wait = values["hold_wait"]
            if self._hold_wait > 0.0:
                self.get_logger().info(
                    f"profile hold: waiting up to {self._hold_wait:g} s for joint_states to hold the "
                    f"measured position, {rate:g} Hz"
                )
        else:
            assert self.profile is not None
            self.get_logger().info(
                f"profile {values['profile']} on {list(self.profile.joint_names)}, period "
                f"{self.profile.period:.3f} s, {rate:g} Hz, loop={values['loop']}"
            )

    # ------------------------------------------------------------------ hold
    def _on_joint_states(self, msg: JointState) -> None:
        if self._pose_set:
            return
        measured = dict(zip(msg.name, msg.position))
        names = self._names or list(measured)
        if not names or not all(n in measured and math.isfinite(measured[n]) for n in names):
            return  # a joint not measured yet (the bridge publishes valid joints only)
        pose = np.array([measured[n] for n in names])
        self._set_pose(HoldProfile(names, pose), "the measured position of joint_states")

    def _hold_check(self) -> None:
        if self._pose_set or time.monotonic() < self._hold_deadline:
            return
        if self.profile is not None:
            why = (
                f" (no joint_states with every joint within {self._hold_wait:g} s)" if self._hold_wait else ""
            )
            self._set_pose(self.profile, f"the home pose{why}")
        elif not self._hold_warned:
            self._hold_warned = True
            self.get_logger().warning(
                "profile hold: no joint_states yet and no joint_names (so no home pose): "
                "nothing is held until joint_states arrives"
            )

    def _set_pose(self, profile: Profile, what: str) -> None:
        self.profile = profile
        self._pose_set = True
        self.destroy_timer(self._hold_timer)
        self.destroy_subscription(self._state_sub)
        pose = ", ".join(f"{n} {q:.4f}" for n, q in zip(profile.joint_names, profile.sample(0.0).position))
        self.get_logger().info(f"no setpoint source (profile hold): holding {what}: {pose} [rad]")
        if self._missed_tick:  # lockstep: the clock waits for this tick's answer
            self._tick()

    # ------------------------------------------------------------------ trajectories
    def _on_trajectory(self, msg: JointTrajectory) -> None:
        error = self.accept_trajectory(msg)
        if error is not None and self._throttle.ready(error.reason):  # a flood stays readable
            self.get_logger().warning(f"{error}; the current motion goes on")

    def accept_trajectory(self, msg: JointTrajectory) -> InputError | None:
        """Follow ``msg`` from now on (the ``joint_trajectory`` topic's and the
        FollowJointTrajectory action's one path; module docstring).

        Returns:
            ``None`` when accepted, else why it was refused (``reason``
            :data:`~gravity_friction_comp.errors.Reason.NOT_READY` before the pose is set);
            the current motion goes on then.
        """
        if not self._pose_set or self.profile is None:
            return InputError(
                "joint_trajectory refused: no current setpoint yet (profile hold waiting)",
                reason=Reason.NOT_READY,
            )
        now_ns = self.get_clock().now().nanoseconds
        follower = self._follower
        if follower is None:
            current = self._sample(now_ns)
            follower = TrajectoryFollower(self.profile.joint_names, current.position, *self._limits())
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        points = [
            TrajectoryPoint(
                p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec,
                p.positions,
                p.velocities,
                p.accelerations,
            )
            for p in msg.points
        ]
        try:
            follower.set_trajectory(list(msg.joint_names), points, stamp, now_ns * 1e-9)
        except InputError as error:
            return error
        if self._follower is None:
            self.get_logger().info(
                f"joint_trajectory accepted: following it instead of profile {self._name} (last point held)"
            )
        self._follower = follower
        return None

    @property
    def follower(self) -> TrajectoryFollower | None:
        """The trajectory being followed (``None`` until one is accepted); its ``accepted``
        count tells a newer trajectory from the one a caller handed in."""
        return self._follower

    def _limits(self) -> tuple:
        """(velocity limits, (lower, upper)) of the profile's joints from the URDF, or Nones."""
        if self._joint_limits is None or self.profile is None:
            return None, None
        lim = [self._joint_limits.get(n, (-math.inf, math.inf, math.inf)) for n in self.profile.joint_names]
        return np.array([x[2] for x in lim]), (np.array([x[0] for x in lim]), np.array([x[1] for x in lim]))

    def _sample(self, now_ns: int):
        """The profile's sample at node time ``now_ns`` [ns] (velocity 0 while settling)."""
        assert self.profile is not None
        start = now_ns if self._start_ns is None else self._start_ns
        t = (now_ns - start) * 1e-9 - self.start_delay
        sample = self.profile.sample(max(t, 0.0))
        return sample._replace(velocity=sample.velocity * 0.0) if t < 0.0 else sample

    def elapsed(self) -> float:
        """Time since the first published setpoint [s] (0 before it); the profile's own
        time is ``elapsed() - start_delay``."""
        if self._start_ns is None:
            return 0.0
        return (self.get_clock().now().nanoseconds - self._start_ns) * 1e-9

    def _tick(self) -> None:
        if not self._pose_set or self.profile is None:
            self._missed_tick = True
            return
        now = self.get_clock().now()
        if self._start_ns is None:
            self._start_ns = now.nanoseconds
        if self._follower is not None:  # a joint_trajectory took over: the profile is done with
            followed = self._follower.sample(now.nanoseconds * 1e-9)
            self._publish(now, followed.position, followed.velocity)
            return
        t = (now.nanoseconds - self._start_ns) * 1e-9 - self.start_delay
        sample = self._sample(now.nanoseconds)
        if not self.profile.loop and t >= self.profile.period and not self._done:
            self._done = True
            self._done_pub.publish(Bool(data=True))
            self.get_logger().info(
                f"profile {self._name} done after {self.profile.period:.3f} s (loop=false): "
                "holding its last pose"
            )
        if sample.holding is not None and (
            sample.holding != self._holding or now.nanoseconds - self._last_holding_ns > 1e9
        ):
            self._holding = sample.holding
            self._last_holding_ns = now.nanoseconds
            self._holding_pub.publish(Bool(data=bool(sample.holding)))
        self._publish(now, sample.position, sample.velocity)

    def _publish(self, now, position: np.ndarray, velocity: np.ndarray) -> None:
        assert self.profile is not None
        msg = JointState()
        msg.header.stamp = now.to_msg()
        msg.name = list(self.profile.joint_names)
        msg.position = position.tolist()
        msg.velocity = velocity.tolist()
        self._setpoint_pub.publish(msg)


def _urdf_joint_limits(values) -> dict[str, tuple[float, float, float]] | None:
    """Joint → URDF ``<limit lower, upper, velocity>`` [rad, rad, rad/s] (``-inf, inf, inf``
    where absent) of the ``robot_description`` / ``urdf_path`` parameters, ``None`` when
    neither is set.

    Raises:
        ConfigError: an unreadable or invalid robot description.
    """
    from gravity_friction_comp.model.urdf import load_description

    source = values["robot_description"] or values["urdf_path"]
    if not source:
        return None
    try:
        desc = load_description(source)
    except ModelError as error:
        raise ConfigError(f"joint_trajectory limits: {error}", key="urdf_path") from None
    return {
        name: (j.lower, j.upper, j.velocity if j.velocity > 0.0 else math.inf)
        for name, j in desc.joints.items()
    }


def main(args=None) -> None:
    """Entry point of the ``setpoint_player`` executable."""
    run_node(SetpointPlayerNode, args)


if __name__ == "__main__":
    main()
