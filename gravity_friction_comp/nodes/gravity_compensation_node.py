"""gravity_compensation_node: adds g(q) from the URDF (Pinocchio) to the setpoint's effort.

Topics:
    joint_setpoint (sub, sensor_msgs/JointState): position required, any joint order.
    gripper/holding (sub, std_msgs/Bool): switches to the payload model at once.
    robot_description (sub, std_msgs/String, transient local): used when neither the
        ``robot_description`` nor the ``urdf_path`` parameter is set; rebuilds on change.
    joint_command (pub, sensor_msgs/JointState): setpoint with effort = incoming + scale·g(q).
    ~/effort (pub, sensor_msgs/JointState): the gravity term alone.

Parameters: ``enable``, ``scale`` (see :class:`FeedforwardStageNode`; one number or one per
model joint, model order), the robot and payload parameters of
:mod:`gravity_friction_comp.nodes.robot_params`, and

    mode (string): ``gravity`` (default): τ = g(q). ``inverse_dynamics``:
        τ = M(q)q̈ + C(q, q̇)q̇ + g(q) with the reflected rotor inertia, q̇ from the setpoint
        and q̈ from filtered differentiation of setpoint velocities. Joint friction is never
        added here: it belongs to the friction stage, so it is not counted twice.
    acceleration_cutoff_hz (double): low-pass cutoff of that differentiation [Hz].
    effort_limit (double or double[]): |effort| limit per model joint [N·m], overriding the
        URDF's ``<limit effort>`` (for URDFs with placeholder limits); unset: the URDF's.
    arm_config (string): per-arm YAML whose ``actuators:`` block gives rotor inertia and gear
        ratio (:class:`~gravity_friction_comp.model.actuator.ActuatorModel`) and whose
        ``gravity_scale:`` (i2rt's ``gravity_comp_factor``, by the file's ``joints:``) is the
        scale while ``scale`` is not set; empty: none.

``scale`` precedence: a value given at start-up (``-p``, ``--params-file``) or set at
runtime > the ``arm_config``'s ``gravity_scale`` > 1.0. Once ``scale`` was set, it stays in
force across ``arm_config`` changes. All are settable at runtime, validated before they are
accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Bool, String

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.friction.arm_yaml import actuator_model_from_arm_yaml, gravity_scale_from_arm_yaml
from gravity_friction_comp.nodes.parameters import Param
from gravity_friction_comp.nodes.robot_params import (
    ROBOT_PARAMETERS,
    RobotModels,
    build_robot_models,
    log_model_warnings,
)
from gravity_friction_comp.nodes.runtime import run_node
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS, STAGE_PARAMETERS, FeedforwardStageNode
from gravity_friction_comp.stage.gravity import GravityConfig, GravityStage, validate_mode
from gravity_friction_comp.stage.inverse_dynamics import validate_acceleration_cutoff

__all__ = ["GravityCompensationNode", "PARAMETERS", "main"]

#: Every parameter of the node, declared once.
PARAMETERS: tuple[Param, ...] = (
    *STAGE_PARAMETERS,
    *ROBOT_PARAMETERS.values(),
    Param("mode", "gravity", "gravity | inverse_dynamics (M(q)qdd + C(q,qd)qd + g(q), no friction)"),
    Param(
        "acceleration_cutoff_hz",
        20.0,
        "low-pass cutoff of the setpoint-velocity differentiation (> 0)",
        unit="Hz",
        low=0.0,
    ),
    Param(
        "arm_config",
        "",
        "per-arm YAML with an actuators: block (rotor inertia, gear ratio) and a gravity_scale "
        "(the scale while scale is not set)",
    ),
    Param(
        "effort_limit",
        None,
        "|effort| limit per joint (one value or one per joint) overriding the URDF; unset: URDF",
        unit="N·m",
    ),
)


@dataclass(frozen=True)
class _Built:
    models: RobotModels | None
    config: GravityConfig | None  # None: no robot description yet
    arm_scale: np.ndarray | None = None  # arm_config's gravity_scale, model order


def _with_actuators(models: RobotModels | None, arm_config: str) -> RobotModels | None:
    """Attach the ``actuators:`` block of ``arm_config`` to both models (no file: unchanged)."""
    if models is None or not arm_config:
        return models
    actuators = actuator_model_from_arm_yaml(arm_config, robot=models.bare)
    return RobotModels(
        models.bare.with_actuators(actuators), models.loaded.with_actuators(actuators), models.source_key
    )


class GravityCompensationNode(FeedforwardStageNode):
    """Gravity feedforward stage (node name ``gravity_compensation``) around a
    :class:`~gravity_friction_comp.stage.gravity.GravityStage`."""

    NODE_NAME = "gravity_compensation"
    PARAMETERS = PARAMETERS
    stage: GravityStage | None

    def __init__(self, **kwargs):
        self._description_xml: str | None = None
        self._holding = False
        self._started = False
        self._scale_explicit: bool | None = None  # None: not looked up yet (start-up)
        super().__init__(self.NODE_NAME, **kwargs)
        self._started = True
        self.create_subscription(Bool, "gripper/holding", self._on_holding, SETPOINT_QOS)
        latched = QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
        )
        self.create_subscription(String, "robot_description", self._on_description, latched)
        models = self._config.models
        if models is None:
            self.get_logger().info(
                "no robot_description/urdf_path parameter: waiting for the robot_description topic"
            )
        else:
            self._log_model(models)

    def build_config(self, values: Mapping[str, Any], changed: set[str], previous) -> _Built:
        # the cheap checks first (the same validators GravityConfig runs), then the model
        validate_mode(values["mode"])
        validate_acceleration_cutoff(values["acceleration_cutoff_hz"])
        models = build_robot_models(values, previous.models if previous else None, self._description_xml)
        if models is None and previous is not None and previous.models is not None:
            raise ConfigError(
                "this would leave no robot description (robot_description, "
                "urdf_path and the topic are all empty); keeping the model",
                key="urdf_path",
            )
        models = _with_actuators(models, values["arm_config"])
        if models is None:
            return _Built(None, None)
        arm_scale = None
        if values["arm_config"]:
            arm_scale = gravity_scale_from_arm_yaml(values["arm_config"], models.bare.joint_names)
        config = GravityConfig(
            models.bare,
            models.loaded,
            mode=values["mode"],
            acceleration_cutoff_hz=values["acceleration_cutoff_hz"],
            effort_limit=values["effort_limit"],
        )
        return _Built(models, config, arm_scale)

    def joint_count(self, config: _Built) -> int | None:
        return None if config.config is None else config.config.model.n

    def stage_settings(self, values, changed, config: _Built):
        if self._scale_explicit is None:  # start-up: given on the command line or in a file?
            self._scale_explicit = "scale" in (getattr(self, "_parameter_overrides", None) or {})
        explicit = self._scale_explicit or (self._started and "scale" in changed)
        if not explicit and config.arm_scale is not None:
            values = {**values, "scale": config.arm_scale}
        return super().stage_settings(values, changed, config)

    def configure_stage(self, settings, config: _Built, values, changed) -> None:
        if "payload.attached" in changed:
            self._holding = bool(values["payload.attached"])
        if self._started and "scale" in changed:
            self._scale_explicit = True
        if not self._scale_explicit and config.arm_scale is not None:
            current = self.stage.settings.scale if self.stage is not None else None
            if current is None or not np.array_equal(current, settings.scale):
                self.get_logger().info(
                    f"scale {np.asarray(settings.scale).tolist()} from arm_config gravity_scale "
                    "(scale not set)"
                )
        stage = self.stage
        if config.config is None:
            return
        if stage is None:
            self.stage = GravityStage(config.config, settings, self._holding)
        else:
            stage.set_config(config.config, settings)
            stage.set_holding(self._holding)

    def after_update(self) -> None:
        if self.stage is not None and self.stage.velocity_clamped:
            self.warn_throttled(
                "velocity_clamped",
                "setpoint velocity beyond the URDF velocity "
                "limit: clamped for the inverse-dynamics feedforward",
            )

    def no_stage(self) -> None:
        self.warn_throttled(
            "no_model",
            "setpoint dropped: no robot model yet (set "
            "robot_description or urdf_path, or publish robot_description)",
        )

    # ----------------------------------------------------------------- other inputs
    def _on_holding(self, msg: Bool) -> None:
        holding = bool(msg.data)
        if holding != self._holding:
            self._holding = holding
            if self.stage is not None:
                self.stage.set_holding(holding)
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
            settings = self.stage_settings(values, set(), config)
        except ConfigError as error:
            self._description_xml = previous_xml
            self.get_logger().error(f"robot_description rejected, keeping the last model: {error}")
            return
        self._configure(settings, config, values, set())
        if config.models is not None:
            self._log_model(config.models)
        self.republish()

    def _log_model(self, models: RobotModels) -> None:
        model = models.bare
        self.get_logger().info(
            f"model: {model.n} joints {list(model.joint_names)}, total mass "
            f"{model.total_mass:.3f} kg, payload "
            f"{'none' if models.loaded is models.bare else models.loaded.payload}"
        )
        log_model_warnings(self.get_logger(), models)


def main(args=None) -> None:
    """Entry point of the ``gravity_compensation_node`` executable."""
    run_node(GravityCompensationNode, args)


if __name__ == "__main__":
    main()
