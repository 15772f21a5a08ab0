"""free_drive_node: the measured joint state as the chain's setpoint (free drive), or the follow source.

Around a :class:`~gravity_friction_comp.stage.free_drive.FreeDriveSource` (all numerics and
checks there). In ``arm.launch.py mode:=free_drive`` it sits where the setpoint source sits:
the gravity stage then computes g(q) of the measured pose, the friction stage (``velocity_source:
measured``) τ_f of the measured velocity, and the bridge runs kp = 0 with a small kd.

Topics:
    joint_states (sub, sensor_msgs/JointState): the bridge's measured state.
    follow_setpoint (sub, sensor_msgs/JointState): the follow source (used in ``follow`` mode).
    /diagnostics (sub, diagnostic_msgs/DiagnosticArray; absolute, as the bridge publishes it):
        the per-motor ``stale`` flag and ``missed_replies`` of ``bridge_node`` (its statuses
        only: ``<bridge fqn>: <joint>``), its ``rate_hz`` from its bus status.
    feedback_effort (sub, sensor_msgs/JointState): an effort [N·m] added to the free-drive
        setpoint's (teleoperation's force feedback, already saturated by its sender); 0 once
        older than ``feedback_timeout``.
    joint_setpoint (pub, sensor_msgs/JointState): measured position, velocity 0, effort the
        feedback effort (free drive), or the follow setpoint (blended from the measured pose
        after a switch).

Publishing: on every ``joint_states`` (free drive; the freshest pose) and every
``follow_setpoint`` (follow); with ``rate_hz`` > 0 also on a timer of the node clock and at
most once per clock reading (in lockstep: the bridge's ``sim_setpoint_rate_hz``, so each tick
is answered once, also when the clock waits for the first setpoint). While free drive
has no good measurement (stale, jump, non-finite: see the core) nothing is published and the
bridge's ``command_timeout`` brings its ``timeout_behavior``; the reason is logged as an ERROR
(once per fault, and when it clears).

``mode`` is settable at runtime (the switch). With ``free_drive_kd`` set the node also sets
the bridge's gains (``bridge_node``'s ``kp``/``kd`` parameters): kp 0 and ``free_drive_kd``
after its first free-drive setpoint (position = measured, so the kp term was ≈ 0 already),
``follow_kp``/``follow_kd`` after its first follow setpoint (which starts at the measured
pose), kp and kd in one atomic set. Gains the bridge refuses (its motors' limits) are logged
as an ERROR and leave its gains as they were; refused follow gains switch ``mode`` back to
``free_drive`` (the bridge still runs kp 0). Without it the gains are left to the launch file. The three gain parameters are
settable at runtime (the bridge gets them with the next setpoint of the mode they are for);
gains of the wrong length, negative or not finite are refused, at start-up (ConfigError) and
at runtime (the set fails with the reason), by :func:`bridge_gains`.

In one process with the chain (:mod:`gravity_friction_comp.nodes.composed_free_drive`)
:attr:`FreeDriveNode.hand_off` takes each setpoint straight to the gravity stage and the
bridge calls :meth:`FreeDriveNode.on_state` directly (its subscription is removed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue, SetParametersResult
from rcl_interfaces.srv import SetParametersAtomically
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.nodes.parameters import Param, declare_checked
from gravity_friction_comp.nodes.runtime import run_node
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS, publish_guarded
from gravity_friction_comp.stage.free_drive import (
    FreeDriveConfig,
    FreeDriveSource,
    stale_reply_ages,
    validate_mode,
)
from gravity_friction_comp.throttle import Throttle
from gravity_friction_comp.validation import per_joint

__all__ = ["GAIN_PARAMETERS", "FreeDriveNode", "PARAMETERS", "bridge_gains", "main"]


def _mode(value: Any) -> None:
    validate_mode(value)


def bridge_gains(values: Mapping[str, Any], n: int) -> dict[str, tuple[list[float], list[float]]]:
    """The bridge gains ``{mode: (kp, kd)}`` the switch sets, from the node's parameter values.

    ``free_drive_kd`` unset: ``{}`` (gains left to the launch file). Each gain is a number
    (every joint) or one per measured joint, finite and ≥ 0 (the bridge's own rule).

    Args:
        values: ``free_drive_kd`` [N·m·s/rad], ``follow_kp`` [N·m/rad], ``follow_kd``
            [N·m·s/rad]; ``None`` = unset.
        n: Number of measured joints (``joints``).

    Returns:
        ``"free_drive"``: (n zeros, free_drive_kd); ``"follow"`` too when follow_kp/kd are set.

    Raises:
        DimensionError: a list whose length is not n. ConfigError: not numbers, not finite,
            negative; follow_kp without follow_kd (or the reverse), or either without
            free_drive_kd (they would never be applied). The key names the parameter.
    """
    kp_f, kd_f = values["follow_kp"], values["follow_kd"]
    if values["free_drive_kd"] is None:
        for key in ("follow_kp", "follow_kd"):
            if values[key] is not None:
                raise ConfigError(f"{key} needs free_drive_kd (gains are set only with it)", key=key)
        return {}
    if (kp_f is None) != (kd_f is None):
        key = "follow_kd" if kd_f is None else "follow_kp"
        raise ConfigError(f"follow_kp and follow_kd go together: {key} is unset", key=key)

    def gains(key: str, value: Any) -> list[float]:
        return per_joint(key, value, n, nonneg=True).tolist()

    out = {"free_drive": ([0.0] * n, gains("free_drive_kd", values["free_drive_kd"]))}
    if kp_f is not None:
        out["follow"] = (gains("follow_kp", kp_f), gains("follow_kd", kd_f))
    return out


#: Every parameter of the node, declared once.
PARAMETERS: tuple[Param, ...] = (
    Param("mode", "free_drive", "follow | free_drive (settable at runtime: the switch)", validate=_mode),
    Param("joints", [""], "measured (bridged) joints", read_only=True),
    Param("fixed_joints", [""], "model joints nobody measures, published at fixed_positions", read_only=True),
    Param(
        "fixed_positions", [0.0], "positions of fixed_joints (empty list when none)", "rad", read_only=True
    ),
    Param(
        "stale_timeout",
        0.05,
        "measured state (or a stale motor's last reply) older than this: no free-drive setpoint; "
        "arm.launch.py sets 25 bridge periods",
        "s",
        low=0.0,
        read_only=True,
    ),
    Param(
        "max_jump", 0.2, "|position change| between samples counted as a jump", "rad", low=0.0, read_only=True
    ),
    Param("recover_samples", 10, "good samples after a bad one before output resumes", low=1, read_only=True),
    Param(
        "blend_time",
        1.0,
        "follow after free drive: blend from the measured pose",
        "s",
        low=0.0,
        read_only=True,
    ),
    Param(
        "feedback_timeout",
        0.05,
        "a feedback_effort message older than this counts 0",
        "s",
        low=0.0,
        read_only=True,
    ),
    Param(
        "rate_hz",
        0.0,
        "0: publish on each input; > 0: timer on the node clock (lockstep)",
        "Hz",
        low=0.0,
        read_only=True,
    ),
    Param(
        "bridge_node",
        "mit_bridge",
        "node whose kp/kd the switch sets (with free_drive_kd); a relative name is in this node's namespace",
        read_only=True,
    ),
    Param(
        "free_drive_kd",
        None,
        "bridge kd in free drive, ≥ 0: a number or one per joint (unset: gains left alone)",
        "N·m·s/rad",
    ),
    Param("follow_kp", None, "bridge kp in follow, ≥ 0 (with follow_kd and free_drive_kd)", "N·m/rad"),
    Param("follow_kd", None, "bridge kd in follow, ≥ 0 (with follow_kp and free_drive_kd)", "N·m·s/rad"),
)

#: The gain parameters (settable at runtime, checked together by :func:`bridge_gains`).
GAIN_PARAMETERS = ("free_drive_kd", "follow_kp", "follow_kd")


class FreeDriveNode(Node):
    """Free-drive setpoint source (node name ``free_drive``), see the module docstring.

    Raises:
        ConfigError: invalid parameters (key named).
    """

    NODE_NAME = "free_drive"

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        values = declare_checked(self, PARAMETERS)
        fixed = [j for j in values["fixed_joints"] if j]
        positions = list(values["fixed_positions"]) if fixed else []
        self.source = FreeDriveSource(
            FreeDriveConfig(
                values["joints"],
                fixed,
                positions,
                stale_timeout=values["stale_timeout"],
                max_jump=values["max_jump"],
                recover_samples=values["recover_samples"],
                blend_time=values["blend_time"],
                feedback_timeout=values["feedback_timeout"],
            ),
            values["mode"],
        )
        self._gains = bridge_gains(values, len(self.source.config.joints))
        self._bridge_node = values["bridge_node"]
        # relative to this node's namespace (/left/mit_bridge for a bimanual pair), as ROS resolves names
        bridge = self._bridge_node
        self._bridge_fqn = (
            bridge if bridge.startswith("/") else f"{self.get_namespace().rstrip('/')}/{bridge}"
        )
        self._set_params: Any = None  # the bridge's set_parameters client, made once gains exist
        if self._gains:  # now, so it has found the bridge by the first setpoint
            self._bridge_client()
        self._pending_gains: dict[str, tuple[list[float], list[float]]] | None = None
        self._gains_for: str | None = None  # the mode whose gains the bridge has (None: unknown)
        self._fault = ""
        self._fault_throttle = Throttle(2.0)  # a changing reason while faulted: once per 2 s
        self._published_ns = -1
        self._pub = self.create_publisher(JointState, "joint_setpoint", SETPOINT_QOS)
        #: Called with each published setpoint before the DDS copy (the composed chain).
        self.hand_off: Callable[[JointState], None] | None = None
        self.state_subscription = self.create_subscription(
            JointState, "joint_states", self.on_state, SETPOINT_QOS
        )
        self.create_subscription(JointState, "follow_setpoint", self._on_follow, SETPOINT_QOS)
        self.create_subscription(JointState, "feedback_effort", self.on_feedback, SETPOINT_QOS)
        self.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, SETPOINT_QOS)
        self.add_on_set_parameters_callback(self._on_parameters)
        self.add_post_set_parameters_callback(self._after_parameters)
        self._rate = float(values["rate_hz"])
        if self._rate > 0:
            self.create_timer(1.0 / self._rate, self._publish)
        self.get_logger().info(
            f"{self.source.mode} on {list(self.source.config.joints)}"
            + (f", fixed {fixed}" if fixed else "")
            + (f", bridge gains set on a switch ({values['bridge_node']})" if self._gains else "")
        )

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_parameters(self, params) -> SetParametersResult:
        self._pending_gains = None  # a set refused after this callback leaves nothing behind
        proposed = {p.name: p.value for p in params if p.name in GAIN_PARAMETERS}
        if proposed:
            values = {name: self.get_parameter(name).value for name in GAIN_PARAMETERS} | proposed
            try:
                self._pending_gains = bridge_gains(values, len(self.source.config.joints))
            except ConfigError as error:
                return SetParametersResult(successful=False, reason=str(error))
        for p in params:
            if p.name == "mode":
                try:
                    self.source.switch(p.value, self._now())
                except (ConfigError, InputError) as error:
                    return SetParametersResult(successful=False, reason=str(error))
                self.get_logger().info(f"mode -> {p.value}")
        return SetParametersResult(successful=True)

    def _after_parameters(self, params) -> None:
        if self._pending_gains is None:
            return
        gains, self._pending_gains = self._pending_gains, None
        if gains.get(self.source.mode) != self._gains.get(self.source.mode):
            self._gains_for = None  # the bridge gets the new gains with the next setpoint
        self._gains = gains
        self.get_logger().info(f"bridge gains per mode: {gains or 'left alone'}")

    def on_state(self, msg: JointState) -> None:
        """A measured ``joint_states`` message (the subscription's callback)."""
        t = self._now()
        why = self.source.measured(msg.name, msg.position, t)
        if why:
            self._report(why)
        if self.source.mode == "free_drive":
            self._publish()

    def _on_follow(self, msg: JointState) -> None:
        try:
            self.source.follow(msg.name, msg.position, msg.velocity)
        except InputError as error:
            self.get_logger().warning(f"follow_setpoint ignored: {error}", throttle_duration_sec=2.0)
            return
        if self.source.mode == "follow":
            self._publish()

    def on_feedback(self, msg: JointState) -> None:
        """A ``feedback_effort`` message (teleoperation's force feedback), taken at its arrival."""
        try:
            self.source.feedback(msg.name, msg.effort, self._now())
        except InputError as error:
            self.get_logger().warning(f"feedback_effort ignored: {error}", throttle_duration_sec=2.0)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        """The bridge's motors flagged stale, with the age of each one's last reply [s]
        (missed replies / the bridge's ``rate_hz``; ``None`` without a bus status)."""
        prefix = f"{self._bridge_fqn}: "
        ours = {
            st.name[len(prefix) :]: {kv.key: kv.value for kv in st.values}
            for st in msg.status
            if st.name.startswith(prefix)
        }
        if not ours:
            return  # another node's diagnostics (every node publishes on /diagnostics)
        rates = [float(v["rate_hz"]) for k, v in ours.items() if k.startswith("bus ") and "rate_hz" in v]
        rate = rates[0] if rates and rates[0] > 0 else None
        joints = set(self.source.config.joints)
        missed = {
            joint: int(v.get("missed_replies", "0"))
            for joint, v in ours.items()
            if joint in joints and v.get("stale") == "True"
        }
        self.source.set_stale(stale_reply_ages(missed, rate))

    def _report(self, why: str) -> None:
        """Log a new fault at once, the way back at once; while faulted, a changed reason (the
        recovery countdown, a new jump) at most once per 2 s, not once per sample."""
        if why != self._fault:
            was, self._fault = self._fault, why
            if why and (self._fault_throttle.ready("fault") or not was):
                self.get_logger().error(
                    f"free drive: no setpoint ({why}); the bridge falls back to its timeout behaviour"
                )
            else:
                self.get_logger().info("free drive: measured state good again, setpoints resumed")

    def _publish(self) -> None:
        now_ns = self.get_clock().now().nanoseconds
        if self._rate > 0 and now_ns == self._published_ns:
            return  # once per tick of the node clock (lockstep: each tick answered once)
        t = now_ns * 1e-9
        sp = self.source.setpoint(t)
        if self.source.mode == "free_drive":
            self._report(self.source.fault(t))
        if sp is None:
            return
        msg = JointState()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.name = list(sp.names)
        msg.position = sp.position.tolist()
        msg.velocity = sp.velocity.tolist()
        if sp.effort.any():
            msg.effort = sp.effort.tolist()
        if self.hand_off is not None:  # the chain first: the command before the DDS copy
            self.hand_off(msg)
        publish_guarded(self, self._pub, msg)
        self._published_ns = now_ns
        self._apply_gains()

    def _bridge_client(self) -> Any:
        if self._set_params is None:
            self._set_params = self.create_client(
                SetParametersAtomically, f"{self._bridge_fqn}/set_parameters_atomically"
            )
        return self._set_params

    def _apply_gains(self) -> None:
        mode = self.source.mode
        if mode not in self._gains or self._gains_for == mode:
            return
        if not self._bridge_client().service_is_ready():
            return
        kp, kd = self._gains[mode]
        request = SetParametersAtomically.Request()  # kp and kd together or neither
        for name, values in (("kp", kp), ("kd", kd)):
            value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=values)
            request.parameters.append(ParameterMsg(name=name, value=value))
        self._set_params.call_async(request).add_done_callback(lambda f: self._bridge_reply(f, mode))
        self._gains_for = mode
        self.get_logger().info(f"bridge gains for {mode}: kp={kp} kd={kd}")

    def _bridge_reply(self, future, mode: str) -> None:
        # the bridge checks what this node cannot (the motors' gain limits): say when it refused
        reply = future.result()
        result = None if reply is None else reply.result
        if result is None or result.successful:
            return
        self.get_logger().error(f"{self._bridge_node} refused the {mode} gains: {result.reason}")
        if mode == "follow" and self.source.mode == "follow":
            # the bridge kept its free-drive gains (kp 0): following would only look engaged
            self.set_parameters([Parameter("mode", value="free_drive")])
            self.get_logger().error("mode -> free_drive: the bridge has no follow gains")


def main(args=None) -> None:
    """Entry point of the ``free_drive_node`` executable."""
    run_node(FreeDriveNode, args)


if __name__ == "__main__":
    main()
