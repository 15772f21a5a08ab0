"""setpoint_shaper: a sparse or jerky joint_setpoint stream → a jerk-limited one at the chain's rate.

Topics:
    joint_setpoint (sub, sensor_msgs/JointState): the source's stream (leader arm, script,
        player) at any rate; its stamp is the sample's time (unstamped, or more than 1 s off
        this node's clock: the arrival, with a throttled warning for the latter).
    shaped/joint_setpoint (pub, sensor_msgs/JointState): position and velocity of the shaped
        joints at ``rate_hz``, stamped with the node clock (remap it to the gravity stage's
        ``joint_setpoint``); no effort.
    joint_states (sub, sensor_msgs/JointState): the measured position, read until the first
        output: the shaped stream starts from it (at rest), so a follower whose leader is
        elsewhere moves there within the limits instead of jumping.

The numbers are :class:`~gravity_friction_comp.stage.shaper.SetpointShaper`'s (Ruckig,
jerk-limited; velocity, acceleration and jerk limits per joint from ``max_velocity`` /
``max_acceleration`` / ``max_jerk``, else the per-arm YAML's ``setpoint_shaper:`` block,
the velocity never above the URDF's ``<limit velocity>``; targets clipped to the URDF's
position limits). Joints: ``joints``, or every joint of the first setpoint. The state starts
at rest on the measured position (``joint_states`` with every shaped joint), else on the
first setpoint (the log says so); a source that goes silent is followed to rest on its last
sample. Bad setpoints (a position beyond ±``MAX_PLAUSIBLE_POSITION`` too) are dropped with a
throttled warning. Parameters: :data:`PARAMETERS`
(all read at start).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState

from gravity_friction_comp.errors import ConfigError, InputError, ModelError
from gravity_friction_comp.nodes.parameters import Param, declare_checked
from gravity_friction_comp.nodes.robot_params import ROBOT_PARAMETERS
from gravity_friction_comp.nodes.runtime import run_node
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS, clock_ns, publish_guarded
from gravity_friction_comp.stage.contract import parse_setpoint
from gravity_friction_comp.stage.shaper import SetpointShaper, shaper_limits_from_arm_yaml
from gravity_friction_comp.throttle import Throttle
from gravity_friction_comp.validation import MAX_PLAUSIBLE_POSITION, MAX_RATE_HZ, positive_rate

__all__ = ["PARAMETERS", "SHAPED_TOPIC", "SetpointShaperNode", "main", "shaper_from_values"]

#: The shaped stream's topic (the gravity stage's input when the shaper is in the chain).
SHAPED_TOPIC = "shaped/joint_setpoint"
#: [s] a setpoint stamp further than this from the node's clock is on another clock (wall vs
#: simulated time) and is replaced by the arrival time.
_CLOCK_MISMATCH = 1.0


def _limit(name: str, unit: str, what: str) -> Param:
    return Param(
        name,
        None,
        f"{what} per joint (one value or one per joint); unset: the per-arm YAML's setpoint_shaper.{name}",
        unit=unit,
        type="double",
        low=0.0,
        read_only=True,
        per_joint=True,
    )


#: Every parameter of the shaper, declared once (read-only: read at start).
PARAMETERS: tuple[Param, ...] = (
    Param(
        "rate_hz",
        1000.0,
        "output rate: the chain's (the bridge's rate, or sim_setpoint_rate_hz in lockstep)",
        "Hz",
        low=0.0,
        high=MAX_RATE_HZ,
        read_only=True,
        validate=positive_rate,
    ),
    # [""] not []: rclpy cannot infer a type from an empty list; empty entries are skipped.
    Param("joints", [""], "joints to shape (empty: every joint of the first setpoint)", read_only=True),
    Param("arm_config", "", "per-arm YAML with a setpoint_shaper block (limits)", read_only=True),
    _limit("max_velocity", "rad/s", "velocity limit, lowered to the URDF's"),
    _limit("max_acceleration", "rad/s^2", "acceleration limit"),
    _limit("max_jerk", "rad/s^3", "jerk limit"),
    Param(
        "stream_velocity",
        False,
        "target the setpoints' own velocity (true) or the difference quotient of their positions",
        read_only=True,
    ),
    dataclasses.replace(ROBOT_PARAMETERS["robot_description"], read_only=True),
    dataclasses.replace(ROBOT_PARAMETERS["urdf_path"], read_only=True),
)


def shaper_from_values(values: Mapping[str, Any], joints: list[str]) -> SetpointShaper:
    """The :class:`SetpointShaper` the parameter values describe, for ``joints``.

    Raises:
        ConfigError: an unreadable URDF or per-arm YAML, a limit missing or invalid, a
            joint the URDF lacks (when a URDF is given).
    """
    from gravity_friction_comp.model.urdf import load_description

    urdf_v = lower = upper = None
    source = values["robot_description"] or values["urdf_path"]
    if source:
        try:
            desc = load_description(source)
        except ModelError as error:
            raise ConfigError(f"setpoint_shaper: {error}", key="urdf_path") from None
        missing = [j for j in joints if j not in desc.joints]
        if missing:
            raise ConfigError(f"setpoint_shaper: joints {missing} are not in the URDF", key="joints")
        urdf_v = [desc.joints[j].velocity if desc.joints[j].velocity > 0.0 else math.inf for j in joints]
        lower = [desc.joints[j].lower for j in joints]
        upper = [desc.joints[j].upper for j in joints]
    overrides = {k: values[k] for k in ("max_velocity", "max_acceleration", "max_jerk")}
    for key, value in overrides.items():  # a one-element ROS array applies to every joint
        if isinstance(value, (list, tuple)) and len(value) == 1:
            overrides[key] = value[0]
    limits = shaper_limits_from_arm_yaml(
        values["arm_config"] or None,
        joints,
        urdf_velocity=urdf_v,
        position_lower=lower,
        position_upper=upper,
        overrides=overrides,
    )
    return SetpointShaper.from_limits(limits, 1.0 / values["rate_hz"], joints)


class SetpointShaperNode(Node):
    """The setpoint shaper as a node (node name ``setpoint_shaper``; module docstring).

    Args:
        **kwargs: passed to ``rclpy.node.Node`` (``parameter_overrides``, ``context``, ...).

    Attributes:
        shaper: The :class:`SetpointShaper` (``None`` until the joints are known).
        hand_off: Composed chain: called with each shaped setpoint before it is published.

    Raises:
        ConfigError: invalid parameters (see :func:`shaper_from_values`).
    """

    NODE_NAME = "setpoint_shaper"
    EXECUTABLE = "setpoint_shaper"

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self._values = declare_checked(self, PARAMETERS)
        self._joints = [j for j in self._values["joints"] if j]
        self.shaper: SetpointShaper | None = None
        if self._joints:
            self.shaper = shaper_from_values(self._values, self._joints)
        self._target: tuple[np.ndarray, np.ndarray | None, float | None] | None = None
        self._throttle = Throttle(2.0)
        self._msg = JointState()
        self.hand_off: Callable[[JointState], None] | None = None
        self._pub = self.create_publisher(JointState, SHAPED_TOPIC, SETPOINT_QOS)
        #: The ``joint_setpoint`` subscription (the composed chain feeds :meth:`on_setpoint` instead).
        self.setpoint_subscription = self.create_subscription(
            JointState, "joint_setpoint", self.on_setpoint, SETPOINT_QOS
        )
        self._measured: dict[str, float] = {}
        self._started = False
        self._state_sub = self.create_subscription(
            JointState, "joint_states", self._on_joint_states, SETPOINT_QOS
        )
        self.create_timer(1.0 / self._values["rate_hz"], self._tick)
        self.get_logger().info(
            f"shaping {self._joints or 'the first setpoint’s joints'} at {self._values['rate_hz']:g} Hz"
        )

    def _warn(self, key: str, text: str) -> None:
        if self._throttle.ready(key):
            self.get_logger().warning(text)

    def on_setpoint(self, msg) -> None:
        """A setpoint of the source (a ``JointState`` or the chain's hand-off of one)."""
        try:
            if self.shaper is None:
                joints = [str(n) for n in msg.name]
                self.shaper = shaper_from_values(self._values, joints)
                self._joints = joints
            sp = parse_setpoint(msg.name, msg.position, msg.velocity, msg.effort, self.shaper.joint_names)
        except ConfigError as error:
            self._warn("config", f"setpoint_shaper: cannot shape these joints: {error}")
            return
        except InputError as error:
            self._warn(error.reason, f"setpoint dropped: {error}")
            return
        try:  # 1e308: no pose (was: to the limit); the core's own check, on arrival
            position = self.shaper.check_target(sp.model_position())
        except InputError as error:
            self._warn(error.reason, f"setpoint dropped: {error}")
            return
        stamped = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        now = clock_ns(self.get_clock()) * 1e-9
        stamp: float | None = stamped
        if stamped == 0.0:
            stamp = None  # unstamped: timed on arrival
        elif abs(now - stamped) > _CLOCK_MISMATCH:  # stamped on another clock: timed on arrival
            self._warn(
                "clock",
                f"setpoint stamp {stamped:.3f} s is {now - stamped:+.3f} s off this clock: timed on arrival",
            )
            stamp = None
        velocity = sp.model_velocity() if self._values["stream_velocity"] else None
        self._target = (
            position,
            None if velocity is None else np.array(velocity),
            stamp,
        )

    def _on_joint_states(self, msg) -> None:
        """The measured state (until the first output): where the shaped stream starts."""
        if not self._started:
            self._measured.update(  # 1e308 is finite, but the shaper cannot start there
                (str(n), float(q))
                for n, q in zip(msg.name, msg.position)
                if math.isfinite(q) and abs(q) <= MAX_PLAUSIBLE_POSITION
            )

    def _start(self, shaper: SetpointShaper) -> None:
        self._started = True
        self.destroy_subscription(self._state_sub)
        if all(n in self._measured for n in shaper.joint_names):
            shaper.reset([self._measured[n] for n in shaper.joint_names])
            self.get_logger().info("shaped stream starts at rest on the measured position (joint_states)")
        else:
            self.get_logger().warning(
                "no joint_states with every shaped joint yet: the shaped stream starts on the first setpoint"
            )

    def _tick(self) -> None:
        if self._target is None or self.shaper is None:
            return
        if not self._started:
            self._start(self.shaper)
        now_ns = clock_ns(self.get_clock())
        position, velocity, stamp = self._target
        try:
            out = self.shaper.step(position, now_ns * 1e-9, target_velocity=velocity, sample_time=stamp)
        except InputError as error:
            self._warn(error.reason, f"setpoint shaper: {error}")
            return
        msg = self._msg
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now_ns, 1_000_000_000)
        msg.name = list(self.shaper.joint_names)
        msg.position = out.position.tolist()
        msg.velocity = out.velocity.tolist()
        if self.hand_off is not None:
            self.hand_off(msg)
        publish_guarded(self, self._pub, msg)


def main(args=None) -> None:
    """Entry point of the ``setpoint_shaper`` executable."""
    run_node(SetpointShaperNode, args)


if __name__ == "__main__":
    main()
