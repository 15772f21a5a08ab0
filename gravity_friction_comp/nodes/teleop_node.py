"""teleop_node: a leader's joint_states drive a follower's joint_setpoint, the follower's contact fed back.

Around :class:`~gravity_friction_comp.teleop.link.TeleopLink` (mapping, soft engage, hold),
:class:`~gravity_friction_comp.stage.shaper.SetpointShaper` (the jerk-limited stream at the
follower chain's rate) and :class:`~gravity_friction_comp.teleop.feedback.ForceFeedback`
(all numerics and checks there; docs/teleop.md).

Topics (relative: ``teleop.launch.py`` remaps them into the arms' namespaces):
    leader_joint_states (sub, sensor_msgs/JointState): the leader bridge's measured state;
        ``leader_state_topics`` instead: one topic per bus's bridge, merged by joint name.
    follower_joint_states (sub, sensor_msgs/JointState): the follower bridge's measured
        state; ``follower_state_topics`` instead: one per bus (the bimanual arm's
        ``left``/``right`` bridges), merged by joint name, a silent one holds the follower
        (the diagnostic names it).
    follower_external_effort (sub, sensor_msgs/JointState): the follower's observer estimate
        (effort per joint, N·m); ``follower_effort_topics`` instead: one per bus's observer
        (each with its bus's joints), each joint's latest estimate kept, a stale one fed back as 0.
    /diagnostics (sub): an ERROR status of a follower bridge (``follower_bridges``'
        statuses: one per bus) latches a follower fault: the follower holds, feedback stops, until
        ``~/clear_fault``.
    follower_setpoint (pub, sensor_msgs/JointState): the shaped setpoint (position,
        velocity), every ``1/rate_hz`` on the node clock once the follower's state is in.
    leader_feedback_effort (pub, sensor_msgs/JointState): the feedback effort per leader
        joint (the leader's free_drive ``feedback_effort``), on every external-effort message.
    /diagnostics (pub): ``<fqn>: link`` with the link's state and why it is not following.

Services: ``~/clear_fault`` (std_srvs/Trigger).

Runtime parameters: ``enable`` (follow or hold), ``feedback.enable``, ``feedback.gain``,
``feedback.cap`` (a number or one per mapped joint; refused with the reason, the settings
in force kept). The per-pair YAML (``pair_config``) gives their start values unless given.
"""

from __future__ import annotations

from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.nodes.parameters import Param, declare_checked
from gravity_friction_comp.nodes.runtime import run_node
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS, publish_guarded
from gravity_friction_comp.stage.free_drive import fixed_pose
from gravity_friction_comp.teleop.config import TeleopPairConfig, load_pair_config
from gravity_friction_comp.teleop.feedback import ForceFeedback
from gravity_friction_comp.teleop.link import TeleopLink
from gravity_friction_comp.validation import MAX_RATE_HZ

__all__ = ["PARAMETERS", "TeleopNode", "build_teleop", "main"]

#: Every parameter of the node, declared once.
PARAMETERS: tuple[Param, ...] = (
    Param(
        "pair_config", "", "per-pair YAML (docs/teleop.md); empty: identity mapping of joints", read_only=True
    ),
    Param("joints", [""], "identity mapping (no pair_config): the joints both arms share", read_only=True),
    Param("urdf_path", "", "the follower's URDF (position and velocity limits)", read_only=True),
    Param("arm_config", "", "the follower's per-arm YAML (setpoint_shaper block)", read_only=True),
    Param(
        "max_acceleration",
        None,
        "shaper a_max over the pair YAML's and the arm YAML's: a number or one per joint",
        "rad/s²",
        read_only=True,
    ),
    Param(
        "max_jerk",
        None,
        "shaper j_max over the pair YAML's and the arm YAML's: a number or one per joint",
        "rad/s³",
        read_only=True,
    ),
    Param(
        "fixed_joints",
        [""],
        "follower model joints no bridge drives, published at fixed_positions",
        read_only=True,
    ),
    Param(
        "fixed_positions", [0.0], "positions of fixed_joints (empty list when none)", "rad", read_only=True
    ),
    Param(
        "leader_state_topics",
        [""],
        "the leader's joint_states, one per bus's bridge (empty: the topic leader_joint_states)",
        read_only=True,
    ),
    Param(
        "follower_state_topics",
        [""],
        "the follower's joint_states, one per bus's bridge (empty: the topic follower_joint_states)",
        read_only=True,
    ),
    Param(
        "follower_effort_topics",
        [""],
        "the follower's external-torque estimates, one per bus's observer (empty: the topic "
        "follower_external_effort)",
        read_only=True,
    ),
    Param(  # 1e9 was taken: a 1 ns timer, the node busy for ever
        "rate_hz",
        500.0,
        "follower setpoint rate (the follower chain's)",
        "Hz",
        low=1.0,
        high=MAX_RATE_HZ,
        read_only=True,
    ),
    Param(
        "leader_effort_limit",
        None,
        "leader effort limit per mapped joint (pair order): feedback is clipped to it; required "
        "(unset: refused at start, the node knows no leader URDF)",
        "N·m",
        type="double[]",
        read_only=True,
    ),
    Param(
        "follower_bridges",
        ["/follower/mit_bridge"],
        "the follower's bridge nodes, one per bus (their ERROR diagnostics: fault)",
        read_only=True,
    ),
    Param("enable", True, "follow (engage first) or hold"),
    Param("feedback.enable", None, "force feedback on/off (unset: the pair YAML's)", type="bool"),
    Param("feedback.gain", None, "feedback gain, 0..MAX_FEEDBACK_GAIN, one or per joint (unset: YAML)"),
    Param("feedback.cap", None, "feedback |τ| cap at the leader, ≥ 0, one or per joint (unset: YAML)", "N·m"),
)


def _topics(values: dict[str, Any], key: str, default: str) -> list[str]:
    """One arm's state topics: ``values[key]`` (non-empty entries, distinct), else ``default``.

    Raises:
        ConfigError: a topic given twice.
    """
    topics = [str(t) for t in values[key] if str(t)]
    if len(set(topics)) != len(topics):
        raise ConfigError(f"{key} must be distinct topics, got {topics}", key=key)
    return topics or [default]


def _settings_value(value: Any, joints) -> Any:
    """A ROS number or list (one per mapped joint; one element: every joint, as a number) →
    what FeedbackSettings.build takes.

    Raises:
        ConfigError: a list of another length.
    """
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        values = list(value)
        if len(values) == 1:  # `ros2 param set ... "[0.5]"`: the message promises 1 value
            return values[0]
        if len(values) != len(joints):
            raise ConfigError(f"expected 1 or {len(joints)} values (one per mapped joint), got {len(values)}")
        return dict(zip(joints, values))
    return value


def build_teleop(values: dict[str, Any]) -> tuple[TeleopPairConfig, TeleopLink, ForceFeedback, Any]:
    """The node's core objects from its parameter values: (pair, link, feedback, shaper).

    Raises:
        ConfigError: an unreadable/invalid pair YAML or URDF, a shaper limit missing, a
            feedback value refused (key named).
    """
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.stage.shaper import SetpointShaper, shaper_limits_from_arm_yaml

    if values["pair_config"]:
        pair = load_pair_config(values["pair_config"])
    else:
        pair = TeleopPairConfig.identity([j for j in values["joints"] if j])
    if not values["urdf_path"]:
        raise ConfigError("urdf_path must name the follower's URDF", key="urdf_path")
    model = RobotModel.from_urdf(values["urdf_path"])
    missing = [j for j in pair.follower_joints if j not in model.joint_names]
    if missing:
        raise ConfigError(f"follower joints {missing} not in {values['urdf_path']}", key="urdf_path")
    idx = [model.joint_names.index(j) for j in pair.follower_joints]
    lower, upper, velocity = model.position_lower[idx], model.position_upper[idx], model.velocity_limits[idx]
    link = TeleopLink(pair, lower, upper, velocity)
    limits_given = values["leader_effort_limit"]
    leader_joints = [pair.joints[j].leader for j in pair.joints]
    if limits_given is not None and len(limits_given) != len(leader_joints):
        raise ConfigError(
            f"leader_effort_limit: {len(leader_joints)} values (one per mapped joint), got {len(limits_given)}",
            key="leader_effort_limit",
        )
    feedback = ForceFeedback(
        pair, dict(zip(leader_joints, limits_given)) if limits_given is not None else None
    )
    fj = list(pair.joints)
    fb = {
        k: values[f"feedback.{k}"]
        for k in ("enable", "gain", "cap")
        if values.get(f"feedback.{k}") is not None
    }
    if fb:
        feedback.update(**{k: v if k == "enable" else _settings_value(v, fj) for k, v in fb.items()})
    overrides = dict(pair.shaper) | {
        k: values[k] for k in ("max_acceleration", "max_jerk") if values[k] is not None
    }
    limits = shaper_limits_from_arm_yaml(
        values["arm_config"] or None,
        pair.follower_joints,
        urdf_velocity=velocity,
        position_lower=lower,
        position_upper=upper,
        overrides=overrides,
    )
    shaper = SetpointShaper.from_limits(limits, 1.0 / values["rate_hz"], pair.follower_joints)
    return pair, link, feedback, shaper


class TeleopNode(Node):
    """Leader → follower link and force feedback (node name ``teleop``), module docstring.

    Raises:
        ConfigError: invalid parameters (key named).
    """

    NODE_NAME = "teleop"

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        values = declare_checked(self, PARAMETERS)
        self.pair, self.link, self.feedback, self.shaper = build_teleop(values)
        self.link.enable(values["enable"])
        self._bridges = [f"{b}: " for b in values["follower_bridges"] if b]
        # NaN / a mapped joint again were published in every follower setpoint
        fixed, positions = fixed_pose(
            self.pair.follower_joints, values["fixed_joints"], values["fixed_positions"]
        )
        self._fixed = (list(fixed), list(positions))
        self._follower_state: tuple[list[str], list[float]] | None = None
        self._shaping = False
        self._reported = None
        self._setpoint_pub = self.create_publisher(JointState, "follower_setpoint", SETPOINT_QOS)
        self._feedback_pub = self.create_publisher(JointState, "leader_feedback_effort", SETPOINT_QOS)
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        for topic in _topics(values, "leader_state_topics", "leader_joint_states"):
            self.create_subscription(
                JointState, topic, lambda msg, s=topic: self.on_leader(msg, s), SETPOINT_QOS
            )
        #: The follower state subscriptions (the composed form replaces them by a call).
        self.follower_subscriptions = [
            self.create_subscription(
                JointState, topic, lambda msg, s=topic: self.on_follower(msg, s), SETPOINT_QOS
            )
            for topic in _topics(values, "follower_state_topics", "follower_joint_states")
        ]
        for topic in _topics(values, "follower_effort_topics", "follower_external_effort"):
            self.create_subscription(
                JointState, topic, lambda msg, s=topic: self.on_external(msg, s), SETPOINT_QOS
            )
        self.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, SETPOINT_QOS)
        self.create_service(Trigger, "~/clear_fault", self._clear_fault)
        self.add_on_set_parameters_callback(self._on_parameters)
        #: Called with each follower setpoint before the DDS copy (the composed form).
        self.hand_off = None
        self.create_timer(1.0 / values["rate_hz"], self._tick)
        self.create_timer(0.5, self._diagnostics)
        s = self.feedback.settings
        self.get_logger().info(
            f"teleop {list(self.pair.leader_joints)} -> {list(self.pair.follower_joints)}, "
            f"feedback {'on' if s.enable else 'off'} (gain {dict(s.gain)})"
        )

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def on_leader(self, msg: JointState, source: str = "leader_joint_states") -> None:
        """A leader ``joint_states`` message from ``source`` (its topic)."""
        why = self.link.leader(msg.name, msg.position, self._now(), msg.velocity or None, source)
        if why:
            self.get_logger().warning(f"leader state ignored: {why}", throttle_duration_sec=2.0)

    def on_follower(self, msg: JointState, source: str = "follower_joint_states") -> None:
        """A follower ``joint_states`` message from ``source`` (its topic)."""
        why = self.link.follower(msg.name, msg.position, self._now(), source)
        if why:
            self.get_logger().warning(f"follower state ignored: {why}", throttle_duration_sec=2.0)

    def on_external(self, msg: JointState, source: str = "follower_external_effort") -> None:
        """The follower's external-torque estimate from ``source`` (its topic; all or some of
        the joints): feedback to the leader at once."""
        t = self._now()
        why = self.feedback.external(msg.name, msg.effort, t, source)
        if why:
            self.get_logger().warning(f"external effort ignored: {why}", throttle_duration_sec=2.0)
        out = self.feedback.effort(t)
        fb = JointState()
        fb.header.stamp = self.get_clock().now().to_msg()
        fb.name = list(out.names)
        fb.effort = out.effort.tolist()
        publish_guarded(self, self._feedback_pub, fb)

    def _tick(self) -> None:
        t = self._now()
        target = self.link.target(t)
        if target is None:
            return
        try:
            if not self._shaping:  # start at the follower's measured pose, at rest
                self.shaper.reset(target)
                self._shaping = True
            shaped = self.shaper.step(target, t, target_velocity=self.link.velocity, sample_time=t)
        except InputError as error:
            self.get_logger().error(f"shaper refused the target: {error}", throttle_duration_sec=2.0)
            return
        msg = JointState()
        msg.header.stamp = self.get_clock().now().to_msg()
        fixed, positions = self._fixed
        msg.name = list(self.pair.follower_joints) + fixed
        msg.position = shaped.position.tolist() + positions
        msg.velocity = shaped.velocity.tolist() + [0.0] * len(fixed)
        if self.hand_off is not None:
            self.hand_off(msg)
        publish_guarded(self, self._setpoint_pub, msg)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for st in msg.status:
            prefix = next((p for p in self._bridges if st.name.startswith(p)), None)
            if prefix is not None and st.level == DiagnosticStatus.ERROR and not self.link.fault:
                reason = f"{st.name}: {st.message}"
                self.link.set_fault(reason)
                self.feedback.set_fault(True)
                self.get_logger().error(
                    f"follower fault ({reason}): follower holds, feedback off until clear_fault"
                )

    def _clear_fault(self, request, response):
        had = self.link.fault
        self.link.clear_fault()
        self.feedback.set_fault(False)
        response.success = True
        response.message = f"cleared: {had}" if had else "no fault"
        self.get_logger().info(response.message)
        return response

    def _on_parameters(self, params) -> SetParametersResult:
        changes: dict[str, Any] = {}
        for p in params:
            if p.name == "enable":
                if not isinstance(p.value, bool):
                    return SetParametersResult(successful=False, reason="enable must be true or false")
                changes["enable"] = p.value
            elif p.name.startswith("feedback."):
                if p.value is None:
                    return SetParametersResult(
                        successful=False, reason=f"{p.name} cannot be unset at runtime"
                    )
                if p.name == "feedback.enable":  # a bool, never per joint: build() names it
                    changes[p.name] = p.value
                    continue
                try:
                    changes[p.name] = _settings_value(p.value, list(self.pair.joints))
                except ConfigError as error:
                    return SetParametersResult(successful=False, reason=f"{p.name}: {error}")
        fb = {k.split(".", 1)[1]: v for k, v in changes.items() if k.startswith("feedback.")}
        if fb:
            try:
                self.feedback.update(**fb)
            except ConfigError as error:
                return SetParametersResult(successful=False, reason=str(error))
        if "enable" in changes:
            self.link.enable(changes["enable"])
        return SetParametersResult(successful=True)

    def _diagnostics(self) -> None:
        state, why = self.link.state, self.link.status()
        level = {
            "following": DiagnosticStatus.OK,
            "engaging": DiagnosticStatus.OK,
            "waiting": DiagnosticStatus.WARN,
            "holding": DiagnosticStatus.ERROR if self.link.fault else DiagnosticStatus.WARN,
        }[state]
        st = DiagnosticStatus(
            level=level, name=f"{self.get_fully_qualified_name()}: link", message=why or state
        )
        s = self.feedback.settings
        st.values = [
            KeyValue(key="state", value=state),
            KeyValue(key="fault", value=self.link.fault),
            KeyValue(key="feedback_enable", value=str(s.enable)),
        ]
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        arr.status = [st]
        self._diag_pub.publish(arr)
        if (state, why) != self._reported and state == "holding":
            self.get_logger().warning(f"follower holds: {why}")
        self._reported = (state, why)


def main(args=None) -> None:
    """Entry point of the ``teleop_node`` executable."""
    run_node(TeleopNode, args)


if __name__ == "__main__":
    main()
