"""setpoint_player: publishes a joint setpoint stream from a named profile.

Topics:
    joint_setpoint (pub, sensor_msgs/JointState): position and velocity of every joint in
        ``joint_names`` (stamped with the node clock), at ``rate_hz``.
    gripper/holding (pub, std_msgs/Bool): the pick_place profile's gripper state, on every
        change and once per second (late subscribers catch up).

Parameters (read at start; the profile math is :mod:`gravity_friction_comp.trajectory.profiles`):
    profile (string): sine | ramp | pick_place | csv | bag.
    joint_names (string[]): joints of the setpoint (csv/bag: joints to keep, empty = all).
    home (double[]): [rad] centre of sine/ramp, home pose of pick_place (one per joint).
    amplitude (double[]): [rad] per joint, or one value for all; 0 keeps a joint still.
    period (double): [s] sine/ramp period.
    pick, place (double[]): [rad] pick_place poses (empty: home + amplitude, home − amplitude).
    move_time, dwell_time, grip_time (double): [s] pick_place move, stop and gripper
        closing durations.
    csv_path (string), bag_path (string), bag_topic (string): replay sources.
    loop (bool): repeat the profile; false holds the last pose (velocity 0).
    rate_hz (double): publication rate [Hz] (default 250).
    start_delay (double): [s] the first pose is held this long before the profile starts
        (the arm settles on it).
"""

from __future__ import annotations

import math

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS, run_node
from gravity_friction_comp.trajectory.base import Profile
from gravity_friction_comp.trajectory.profiles import PROFILE_NAMES, profile_from_options

__all__ = ["SetpointPlayerNode", "main"]

#: name → (default, description)
PLAYER_PARAMETERS = {
    "profile": ("sine", f"profile: {' | '.join(PROFILE_NAMES)}"),
    "joint_names": ([""], "joints of the setpoint (csv/bag: joints to keep, empty: all)"),
    "home": ([0.0], "centre of sine/ramp, home pose of pick_place [rad], one per joint"),
    "amplitude": ([0.1], "amplitude per joint or one for all [rad]; 0 keeps a joint still"),
    "period": (8.0, "sine/ramp period [s]"),
    "pick": ([0.0], "pick_place pick pose [rad] (one value: home + amplitude)"),
    "place": ([0.0], "pick_place place pose [rad] (one value: home - amplitude)"),
    "move_time": (2.0, "pick_place move duration [s]"),
    "dwell_time": (1.5, "pick_place stop duration [s]"),
    "grip_time": (0.2, "pick_place gripper closing time [s]"),
    "csv_path": ("", "CSV file for profile csv"),
    "bag_path": ("", "rosbag2 folder for profile bag"),
    "bag_topic": ("joint_states", "JointState topic in the bag"),
    "loop": (True, "repeat the profile; false holds the last pose"),
    "rate_hz": (250.0, "publication rate [Hz]"),
    "start_delay": (0.0, "hold the first pose this long before the profile starts [s]"),
}


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

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        for name, (default, description) in PLAYER_PARAMETERS.items():
            self.declare_parameter(
                name, default, ParameterDescriptor(description=description, read_only=True)
            )
        values = {n: self.get_parameter(n).value for n in PLAYER_PARAMETERS}
        rate = values["rate_hz"]
        if not (isinstance(rate, float) and math.isfinite(rate) and 0 < rate <= 5000):
            raise ConfigError(f"rate_hz must be in (0, 5000] [Hz], got {rate!r}", key="rate_hz", value=rate)
        delay = values["start_delay"]
        if not (isinstance(delay, float) and math.isfinite(delay) and delay >= 0):
            raise ConfigError(f"start_delay must be ≥ 0 [s], got {delay!r}", key="start_delay", value=delay)
        self.start_delay = delay
        self.profile = profile_from_parameters(values)
        self._setpoint_pub = self.create_publisher(JointState, "joint_setpoint", SETPOINT_QOS)
        self._holding_pub = self.create_publisher(Bool, "gripper/holding", SETPOINT_QOS)
        self._holding: bool | None = None
        self._start_ns: int | None = None
        self._last_holding_ns = 0
        self.create_timer(1.0 / rate, self._tick)
        self.get_logger().info(
            f"profile {values['profile']} on {list(self.profile.joint_names)}, period "
            f"{self.profile.period:.3f} s, {rate:g} Hz, loop={values['loop']}"
        )

    def elapsed(self) -> float:
        """Time since the first published setpoint [s] (0 before it); the profile's own
        time is ``elapsed() - start_delay``."""
        if self._start_ns is None:
            return 0.0
        return (self.get_clock().now().nanoseconds - self._start_ns) * 1e-9

    def _tick(self) -> None:
        now = self.get_clock().now()
        if self._start_ns is None:
            self._start_ns = now.nanoseconds
        t = (now.nanoseconds - self._start_ns) * 1e-9 - self.start_delay
        sample = self.profile.sample(max(t, 0.0))
        if t < 0.0:  # settling on the first pose
            sample = sample._replace(velocity=sample.velocity * 0.0)
        if sample.holding is not None and (
            sample.holding != self._holding or now.nanoseconds - self._last_holding_ns > 1e9
        ):
            self._holding = sample.holding
            self._last_holding_ns = now.nanoseconds
            self._holding_pub.publish(Bool(data=bool(sample.holding)))
        msg = JointState()
        msg.header.stamp = now.to_msg()
        msg.name = list(self.profile.joint_names)
        msg.position = sample.position.tolist()
        msg.velocity = sample.velocity.tolist()
        self._setpoint_pub.publish(msg)


def main(args=None) -> None:
    """Entry point of the ``setpoint_player`` executable."""
    run_node(SetpointPlayerNode, args)


if __name__ == "__main__":
    main()
