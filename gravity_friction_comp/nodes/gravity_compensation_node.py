"""gravity_compensation_node: adds g(q) from the URDF (Pinocchio) to the setpoint's effort.

Topics:
    joint_setpoint (sub, sensor_msgs/JointState): position required, any joint order.
    gripper/holding (sub, std_msgs/Bool): switches to the payload model at once.
    robot_description (sub, std_msgs/String, transient local): used when neither the
        ``robot_description`` nor the ``urdf_path`` parameter is set; rebuilds on change.
    joint_command (pub, sensor_msgs/JointState): setpoint with effort = incoming + scale·g(q).
    ~/effort (pub, sensor_msgs/JointState): the gravity term alone.

Parameters: ``enable``, ``scale`` (see :class:`FeedforwardStageNode`), the robot and
payload parameters of :mod:`gravity_friction_comp.nodes.robot_params`, and

    mode (string): ``gravity`` (default): τ = g(q). ``inverse_dynamics``:
        τ = M(q)q̈ + C(q, q̇)q̇ + g(q) with the reflected rotor inertia, q̇ from the setpoint
        and q̈ from filtered differentiation of setpoint velocities. Joint friction is never
        added here: it belongs to the friction stage, so it is not counted twice.
    acceleration_cutoff_hz (double): low-pass cutoff of that differentiation [Hz].
    effort_limit (double or double[]): |effort| limit per model joint [N·m], overriding the
        URDF's ``<limit effort>`` (for URDFs with placeholder limits); unset: the URDF's.
    arm_config (string): per-arm YAML whose ``actuators:`` block gives rotor inertia and gear
        ratio (:class:`~gravity_friction_comp.model.actuator.ActuatorModel`); empty: none.

All are settable at runtime, validated before they are accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Bool, String

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.model.actuator import ActuatorModel
from gravity_friction_comp.nodes.robot_params import RobotModels, build_robot_models, declare_robot_parameters
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS, FeedforwardStageNode, run_node
from gravity_friction_comp.stage.contract import clamp_free_scale, effort_limits_from
from gravity_friction_comp.stage.inverse_dynamics import (
    InverseDynamicsFeedforward,
    validate_acceleration_cutoff,
)

__all__ = ["GravityCompensationNode", "main"]


MODES = ("gravity", "inverse_dynamics")


@dataclass(frozen=True)
class _GravityConfig:
    models: RobotModels | None
    attached: bool
    mode: str
    acceleration_cutoff_hz: float
    effort_limits: np.ndarray | None
    clamp_free_scale: tuple[float, float] = (0.0, 0.0)  # (bare, loaded): no clamp up to |scale|


def _with_actuators(models: RobotModels | None, arm_config: str) -> RobotModels | None:
    """Attach the ``actuators:`` block of ``arm_config`` to both models (no file: unchanged)."""
    if models is None or not arm_config:
        return models
    actuators = ActuatorModel.from_arm_yaml(arm_config, robot=models.bare)
    return RobotModels(
        models.bare.with_actuators(actuators), models.loaded.with_actuators(actuators), models.source_key
    )


class GravityCompensationNode(FeedforwardStageNode):
    """Gravity feedforward stage (node name ``gravity_compensation``)."""

    NODE_NAME = "gravity_compensation"

    def __init__(self, **kwargs):
        self._description_xml: str | None = None
        self._holding = False
        self._feedforward: InverseDynamicsFeedforward | None = None
        self._motion: tuple[np.ndarray, np.ndarray] | None = None  # last (q̇, q̈)
        super().__init__(self.NODE_NAME, **kwargs)
        self._holding = self._config.attached
        self._reset_feedforward(self._config)
        self.create_subscription(Bool, "gripper/holding", self._on_holding, SETPOINT_QOS)
        latched = QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
        )
        self.create_subscription(String, "robot_description", self._on_description, latched)
        if self._config.models is None:
            self.get_logger().info(
                "no robot_description/urdf_path parameter: waiting for the robot_description topic"
            )
        else:
            self._log_model(self._config.models)

    def declare_stage_parameters(self) -> None:
        declare_robot_parameters(self)
        self.declare_parameter(
            "mode",
            "gravity",
            ParameterDescriptor(
                description="gravity | inverse_dynamics (M(q)qdd + C(q,qd)qd + g(q), no friction)"
            ),
        )
        self.declare_parameter(
            "acceleration_cutoff_hz",
            20.0,
            ParameterDescriptor(description="low-pass cutoff of the setpoint-velocity differentiation [Hz]"),
        )
        self.declare_parameter(
            "arm_config",
            "",
            ParameterDescriptor(
                description="per-arm YAML with an actuators: block (rotor inertia, gear ratio)"
            ),
        )
        self.declare_parameter(
            "effort_limit",
            None,
            ParameterDescriptor(
                dynamic_typing=True,
                description="|effort| limit per joint [N·m] overriding the URDF; unset: URDF",
            ),
        )

    def build_config(self, values: Mapping[str, Any], changed: set[str], previous) -> Any:
        if values["mode"] not in MODES:
            raise ConfigError(
                f"mode {values['mode']!r} unknown; valid choices: " + ", ".join(MODES),
                key="mode",
                value=values["mode"],
            )
        cutoff = values["acceleration_cutoff_hz"]
        validate_acceleration_cutoff(cutoff)
        models = build_robot_models(values, previous.models if previous else None, self._description_xml)
        if models is None and previous is not None and previous.models is not None:
            raise ConfigError(
                "this would leave no robot description (robot_description, "
                "urdf_path and the topic are all empty); keeping the model",
                key="urdf_path",
            )
        models = _with_actuators(models, values["arm_config"])
        attached = values["payload.attached"]
        if previous is not None and "payload.attached" not in changed:
            attached = previous.attached
        limits = None  # checked once a model gives the joint count
        if models is not None:
            limits = effort_limits_from(values["effort_limit"], models.bare.n, models.bare.effort_limits)
        clamp_free = (0.0, 0.0)
        if models is not None:
            clamp_free = (
                clamp_free_scale(models.bare.gravity_bound, limits),
                clamp_free_scale(models.loaded.gravity_bound, limits),
            )
        return _GravityConfig(models, bool(attached), values["mode"], float(cutoff), limits, clamp_free)

    def _post_set_parameters(self, params) -> None:
        pending = self._pending
        if any(p.name == "payload.attached" for p in params) and pending is not None:
            self._holding = pending[1].attached
        super()._post_set_parameters(params)
        if pending is not None:
            self._reset_feedforward(pending[1])

    def _reset_feedforward(self, config: _GravityConfig) -> None:
        # Only the filter lives here; the torque is computed with the model in force.
        previous = self._feedforward
        if config.mode != "inverse_dynamics" or config.models is None:
            self._feedforward, self._motion = None, None
        elif (
            previous is None
            or previous.cutoff_hz != config.acceleration_cutoff_hz
            or previous.model.joint_names != config.models.bare.joint_names
        ):
            self._feedforward = InverseDynamicsFeedforward(
                config.models.bare.copy(), config.acceleration_cutoff_hz
            )
            self._motion = None

    # ----------------------------------------------------------------- stage hooks
    def _model(self, config):
        return None if config.models is None else config.models.select(self._holding)

    def model_joint_names(self, config) -> tuple[str, ...]:
        model = self._model(config)
        return () if model is None else model.joint_names

    def effort_limits(self, config) -> np.ndarray:
        return config.effort_limits

    def term_within_limits(self, config, scale: float) -> bool:
        # g(q) is bounded for every q (RobotModel.gravity_bound); M(q)q̈ is not.
        if config.mode != "gravity" or config.models is None:
            return False
        return abs(scale) <= config.clamp_free_scale[self._holding]

    def on_setpoint_accepted(self, setpoint, stamp) -> None:
        if self._feedforward is None:
            return
        terms = self._feedforward.update(
            setpoint.model_position(), setpoint.model_velocity(), self.setpoint_time(stamp)
        )
        self._motion = (terms.velocity, terms.acceleration)
        if self._feedforward.velocity_clamped:
            self.warn_throttled(
                "velocity_clamped",
                "setpoint velocity beyond the URDF velocity "
                "limit: clamped for the inverse-dynamics feedforward",
            )

    def compute_term(self, setpoint, config):
        model = self._model(config)
        q = setpoint.model_position()
        if config.mode == "inverse_dynamics" and self._motion is not None:
            velocity, acceleration = self._motion
            return model.inverse_dynamics(q, velocity, acceleration, include_friction=False)
        # the checked call: it also drops |q| > ~1e154 (absurd, and mimic multipliers > 1
        # would overflow it to NaN), which parsing alone lets through
        return model.gravity(q)

    def _process(self, msg, fresh):
        if self._config.models is None:
            self.warn_throttled(
                "no_model",
                "setpoint dropped: no robot model yet (set "
                "robot_description or urdf_path, or publish robot_description)",
            )
            if fresh:
                self._last_setpoint = msg
            return
        super()._process(msg, fresh)

    # ----------------------------------------------------------------- other inputs
    def _on_holding(self, msg: Bool) -> None:
        holding = bool(msg.data)
        if holding != self._holding:
            self._holding = holding
            self.get_logger().info(f"holding={holding}: payload {'attached' if holding else 'released'}")
            self.republish()

    def _on_description(self, msg: String) -> None:
        values = self._current_values()
        if values["robot_description"] or values["urdf_path"]:
            return  # parameters take precedence over the topic
        if msg.data == self._description_xml:
            return
        if not msg.data.strip():
            self.get_logger().error("empty robot_description ignored, keeping the last model")
            return
        previous_xml = self._description_xml
        self._description_xml = msg.data
        try:
            config = self.build_config(values, set(), self._config)
        except ConfigError as error:
            self._description_xml = previous_xml
            self.get_logger().error(f"robot_description rejected, keeping the last model: {error}")
            return
        self._config = config
        self._log_model(config.models)
        self.republish()

    def _log_model(self, models: RobotModels) -> None:
        model = models.bare
        self.get_logger().info(
            f"model: {model.n} joints {list(model.joint_names)}, total mass "
            f"{model.total_mass:.3f} kg, payload "
            f"{'none' if models.loaded is models.bare else models.loaded.payload}"
        )


def main(args=None) -> None:
    """Entry point of the ``gravity_compensation_node`` executable."""
    run_node(GravityCompensationNode, args)


if __name__ == "__main__":
    main()
