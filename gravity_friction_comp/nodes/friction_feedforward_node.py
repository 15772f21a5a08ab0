"""friction_feedforward_node: adds joint-friction feedforward to the setpoint's effort.

Topics:
    joint_setpoint (sub, sensor_msgs/JointState): usually the gravity stage's output
        (remapped from ``gravity/joint_command``); its effort is the load for BAM models.
    joint_states (sub, sensor_msgs/JointState; the ``joint_states_topic`` parameter):
        measured velocity for ``velocity_source: measured``, measured position for
        ``drive: position_error``.
    joint_command (pub, sensor_msgs/JointState): effort = incoming + scale·friction.
    ~/effort (pub, sensor_msgs/JointState): the friction term alone.

Parameters:
    enable (bool), scale (double or double[] in ``joints`` order): see
        :class:`FeedforwardStageNode`.
    joints (string[]): names the per-joint arrays refer to (others pass through).
    arm_config (string): per-arm YAML (``friction_comp`` block, or OpenArm leader/follower).
    enabled, model, breakaway, breakaway_positive, breakaway_negative, eps, viscous,
        stribeck_breakaway, stribeck_velocity, stribeck_exponent, offset, eps_setpoint, bam_files:
        friction model values (:class:`~gravity_friction_comp.friction.models.FrictionModel`);
        unset ones come from ``arm_config``, set ones override it. Scalars or per joint.
        ``eps_setpoint`` is the tanh scale of a setpoint's velocity (``velocity_source``
        setpoint or differentiated; unset there too: ``eps``), ``eps`` the measured one's.
        A ``friction_comp`` block without ``enabled``/``enable`` is off (logged at start-up).
    velocity_source (string): setpoint | measured | differentiated.
    velocity_cutoff_hz (double): low-pass cutoff of the differentiation [Hz].
    velocity_deadband (double): |q̇| at or below this gives no friction [rad/s].
    effort_limit (double or double[]): |effort| limit of the output [N·m] (unset: none).
    drive (string): velocity | position_error (breakaway±·tanh(e/eps_position), e =
        setpoint − measured position; :mod:`gravity_friction_comp.stage.friction`).
    eps_position (double or double[]): tanh position scale of the position_error drive [rad].
    measurement_timeout (double): older measured positions give no term [s].
    dither (double or double[]): stiction dither, a fraction of the breakaway at rest [-] (0: off; needs
        ``velocity_source: measured`` and a deadband; :mod:`gravity_friction_comp.stage.dither`).
    dither_hz (double): its square-wave frequency [Hz].
    joint_states_topic (string, read-only): measurement topic; ``""``: none (then
        ``drive: position_error`` and ``velocity_source: measured`` are refused).
All but ``joint_states_topic`` are settable at runtime and validated before they are accepted.

With ``velocity_source: measured``, setpoints spanning more than :data:`NO_STATES_WARN_AFTER`
(each stamp step counted up to :data:`STATES_STEP_MAX`) while no ``joint_states`` message has
arrived log a throttled warning naming
the topic listened on (a bridge per bus publishes ``<bus>/joint_states``, not the arm's
``joint_states``: the term then ran on a velocity of 0, silently).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from gravity_friction_comp.errors import InputError
from gravity_friction_comp.friction.arm_yaml import friction_block_enable
from gravity_friction_comp.friction.models import FRICTION_KEYWORDS, FrictionModel
from gravity_friction_comp.nodes.parameters import Param
from gravity_friction_comp.nodes.runtime import run_node
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS, STAGE_PARAMETERS, FeedforwardStageNode
from gravity_friction_comp.stage.friction import FrictionConfig, FrictionStage, validate_joints
from gravity_friction_comp.stage.velocity import MAX_PLAUSIBLE_VELOCITY, MIN_JUMP

__all__ = ["FrictionFeedforwardNode", "PARAMETERS", "build_friction_config", "friction_off_reason", "main"]

#: Model keywords exposed as parameters ("bam" objects are not a parameter type).
MODEL_PARAMETERS = tuple(k for k in FRICTION_KEYWORDS if k != "bam")
VELOCITY_PARAMETERS = ("velocity_source", "velocity_cutoff_hz", "velocity_deadband")
#: What a model parameter's description adds to "friction model value; unset: from arm_config".
_MODEL_NOTES = {
    "eps": " (tanh velocity scale, rad/s; a setpoint's velocity takes eps_setpoint when set)",
    "eps_setpoint": ", else eps (tanh scale of a setpoint's velocity: velocity_source setpoint or "
    "differentiated, rad/s)",
}
DRIVE_PARAMETERS = ("drive", "eps_position", "measurement_timeout")
#: [s] on the setpoints' clock: with ``velocity_source: measured``, no ``joint_states`` this
#: long after the first setpoint is warned about (a bridge publishes at 100s of Hz).
NO_STATES_WARN_AFTER = 1.0
#: [s] the most one setpoint's stamp step counts toward it (exact for setpoints at 2 Hz or faster).
STATES_STEP_MAX = 0.5

#: Every parameter of the node, declared once.
PARAMETERS: tuple[Param, ...] = (
    *STAGE_PARAMETERS,
    Param("joints", [""], "joint names the per-joint arrays refer to"),
    Param("arm_config", "", "per-arm YAML with a friction_comp block (defaults for the model)"),
    *(
        Param(name, None, "friction model value; unset: from arm_config" + _MODEL_NOTES.get(name, ""))
        for name in MODEL_PARAMETERS
    ),
    Param(
        "effort_limit",
        None,
        "|effort| limit of the output (one value or one per joint); unset: none",
        unit="N·m",
    ),
    Param("velocity_source", "setpoint", "setpoint | measured | differentiated"),
    Param(
        "velocity_cutoff_hz", 20.0, "low-pass cutoff for differentiated velocity (> 0)", unit="Hz", low=0.0
    ),
    Param("velocity_deadband", 0.0, "|velocity| at or below this gives no friction", unit="rad/s", low=0.0),
    Param(
        "drive",
        "velocity",
        "velocity (friction of q̇) | position_error (breakaway±·tanh((setpoint − measured)/eps_position))",
    ),
    Param(
        "eps_position",
        0.01,
        "tanh position scale of the position_error drive (> 0; one value or one per joint)",
        unit="rad",
        low=0.0,
        per_joint=True,
    ),
    Param(
        "measurement_timeout",
        0.1,
        "a measured position older than this gives no position_error term (> 0)",
        unit="s",
        low=0.0,
    ),
    Param(
        "dither",
        0.0,
        "stiction dither: ±dither × breakaway at rest, a dither_hz square wave, faded out over the "
        "deadband (0: off; needs velocity_source measured, deadband > 0)",
        low=0.0,
        high=0.95,
        per_joint=True,
    ),
    Param("dither_hz", 5.0, "square-wave frequency of the stiction dither (> 0)", unit="Hz", low=0.0),
    Param(
        "joint_states_topic",
        "joint_states",
        "measured joint states topic; empty: none (position_error drive and measured velocity refused)",
        read_only=True,
    ),
)


def build_friction_config(values: Mapping[str, Any]) -> FrictionConfig:
    """The node's parameter values as a :class:`FrictionConfig` (raises ConfigError with the reason)."""
    joints = validate_joints(values["joints"])
    overrides = {k: values.get(k) for k in MODEL_PARAMETERS}
    bam_files = overrides.get("bam_files")
    if isinstance(bam_files, (list, tuple)):
        overrides["bam_files"] = [f or None for f in bam_files]
    if values.get("arm_config"):
        model = FrictionModel.from_yaml(values["arm_config"], list(joints), **overrides)
    else:
        model = FrictionModel(list(joints), **overrides)
    return FrictionConfig(
        model,
        joints,
        effort_limit=values.get("effort_limit"),
        velocity_source=values["velocity_source"],
        velocity_cutoff_hz=values["velocity_cutoff_hz"],
        velocity_deadband=values["velocity_deadband"],
        drive=values["drive"],
        eps_position=values["eps_position"],
        measurement_timeout=values["measurement_timeout"],
        dither=values["dither"],
        dither_hz=values["dither_hz"],
        measured=bool(values["joint_states_topic"]),
    )


def friction_off_reason(values: Mapping[str, Any], config: FrictionConfig) -> str | None:
    """Why the friction model is off, for the start-up log (``None`` when it is on)."""
    if config.model.enabled:
        return None
    if values.get("enabled") is not None:
        return "the enabled parameter is false"
    path = values.get("arm_config")
    if path and friction_block_enable(path) is None:
        return (
            f"arm_config {path}: its friction_comp block has no enabled/enable key, and a block "
            "is off unless it says enabled: true (as i2rt)"
        )
    return f"arm_config {path}: friction_comp says enabled: false"


class FrictionFeedforwardNode(FeedforwardStageNode):
    """Friction feedforward stage (node name ``friction_feedforward``) around a
    :class:`~gravity_friction_comp.stage.friction.FrictionStage`."""

    NODE_NAME = "friction_feedforward"
    PARAMETERS = PARAMETERS
    stage: FrictionStage | None

    def __init__(self, **kwargs):
        self._warned_fallback = False
        self._jumps = 0
        self._states_seen = False  # a joint_states message has arrived
        # (setpoint time [s], seconds of setpoints counted) while no joint_states has come
        self._awaiting_states: tuple[float, float] | None = None
        super().__init__(self.NODE_NAME, **kwargs)
        topic = self.get_parameter("joint_states_topic").value
        self.joint_states_subscription = None
        if topic:
            # serialised: most configs use no measurement, and decoding a JointState is the
            # dearest part of taking one (~25 µs warm, ~90 µs in a 1 kHz process)
            self.joint_states_subscription = self.create_subscription(
                JointState, topic, self._on_joint_states_raw, SETPOINT_QOS, raw=True
            )
        config = self._config
        source = (
            f"position error (eps_position {config.eps_position.tolist()} rad)"
            if config.drive == "position_error"
            else f"velocity from {config.velocity_source}"
        )
        self.get_logger().info(f"friction model {config.model!r} on joints {list(config.joints)}, {source}")
        reason = friction_off_reason(self._current_values(), config)
        if reason is not None:
            self.get_logger().info(f"friction is off: {reason}")

    def build_config(self, values, changed, previous) -> FrictionConfig:
        return build_friction_config(values)

    def joint_count(self, config: FrictionConfig) -> int:
        return len(config.joints)

    def configure_stage(self, settings, config: FrictionConfig, values, changed) -> None:
        stage = self.stage
        if stage is None:
            stage = self.stage = FrictionStage(config, settings)
        else:
            stage.set_config(config, settings)
        self._jumps = stage.selector.jumps
        if config.velocity_source != "measured":
            self._awaiting_states = None  # counted again from the first setpoint once measured

    def after_update(self) -> None:
        if self.stage is None:
            return
        if not self._states_seen and self.stage.config.velocity_source == "measured":
            self._warn_no_states()
        problem = self.stage.measurement_problem
        if problem is not None:
            self.warn_throttled(
                f"measurement_{problem}",
                f"no position_error friction term: measured position {problem} "
                f"(joint_states older than measurement_timeout or not received)",
            )
        selector = self.stage.selector
        if selector.jumps != self._jumps:
            self._jumps = selector.jumps
            self.warn_throttled(
                "position_jump",
                f"setpoint position jumped (more than "
                f"{MIN_JUMP:g} rad, faster than {MAX_PLAUSIBLE_VELOCITY:g} "
                "rad/s): differentiated velocity restarted at 0",
            )
        if selector.fell_back and not self._warned_fallback:
            self._warned_fallback = True
            self.get_logger().warning(
                "setpoint has no velocity: using differentiated setpoint "
                "positions (velocity_cutoff_hz) instead"
            )

    def _warn_no_states(self) -> None:
        """Warn (throttled) when the setpoints taken since the first span more than
        :data:`NO_STATES_WARN_AFTER` and no ``joint_states`` has come (each step counted up to
        :data:`STATES_STEP_MAX`)."""
        last = self._last_setpoint
        if last is None:
            return
        t = self.setpoint_time(last.header.stamp)
        # each setpoint counts its step from the one before, at most STATES_STEP_MAX: one
        # bogus stamp (far ahead or behind) cannot make a second look like an hour
        previous, waited = self._awaiting_states or (t, 0.0)
        if t > previous:  # (not for NaN, nor a stamp going back)
            waited += min(t - previous, STATES_STEP_MAX)
        self._awaiting_states = (t, waited)
        if waited > NO_STATES_WARN_AFTER:
            sub = self.joint_states_subscription
            topic = sub.topic_name if sub is not None else self.get_parameter("joint_states_topic").value
            self.warn_throttled(
                "no_joint_states",
                f"velocity_source measured, but no joint_states on {topic} in {waited:.1f} s of "
                "setpoints: the friction term runs on a measured velocity of 0 (does a bridge "
                "publish there? one bridge per bus publishes <bus>/joint_states)",
            )

    def _on_joint_states_raw(self, data: bytes) -> None:
        """The ``joint_states`` subscription's callback: decoded only when the stage uses it."""
        self._states_seen = True
        if self.stage is not None and self.stage.uses_measurement:
            self.on_joint_states(deserialize_message(data, JointState))

    def on_joint_states(self, msg: JointState) -> None:
        """A measured ``joint_states`` message (the subscription's callback; the composed
        free-drive chain calls it directly)."""
        self._states_seen = True
        if self.stage is None or not self.stage.uses_measurement:
            return  # nothing to store: no field read, no stamp converted
        try:
            self.stage.update_measured(
                msg.name, msg.velocity, msg.position, self.setpoint_time(msg.header.stamp)
            )
        except InputError as error:
            self.warn_throttled(f"joint_states_{error.reason}", f"joint_states ignored: {error}")


def main(args=None) -> None:
    """Entry point of the ``friction_feedforward_node`` executable."""
    run_node(FrictionFeedforwardNode, args)


if __name__ == "__main__":
    main()
