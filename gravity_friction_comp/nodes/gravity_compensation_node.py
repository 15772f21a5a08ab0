"""gravity_compensation_node: adds g(q) from the URDF (Pinocchio) to the setpoint's effort.

Topics:
    joint_setpoint (sub, sensor_msgs/JointState): position required, any joint order.
    gripper/holding (sub, std_msgs/Bool): switches to the payload model at once.
    robot_description (sub, std_msgs/String, transient local): used when neither the
        ``robot_description`` nor the ``urdf_path`` parameter is set; rebuilds on change.
    joint_command (pub, sensor_msgs/JointState): setpoint with effort = incoming + scale·g(q).
    ~/effort (pub, sensor_msgs/JointState): the gravity term alone.

Parameters: ``enable``, ``scale`` (see :class:`FeedforwardStageNode`) and the robot and
payload parameters of :mod:`gravity_friction_comp.nodes.robot_params`; all settable at
runtime, validated before they are accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Bool, String

from ..exceptions import ConfigError
from .robot_params import RobotModels, build_robot_models, declare_robot_parameters
from .stage_node import SETPOINT_QOS, FeedforwardStageNode, run_node

__all__ = ["GravityCompensationNode", "main"]


@dataclass(frozen=True)
class _GravityConfig:
    models: RobotModels | None
    attached: bool


class GravityCompensationNode(FeedforwardStageNode):
    """Gravity feedforward stage (node name ``gravity_compensation``)."""

    NODE_NAME = "gravity_compensation"

    def __init__(self, **kwargs):
        self._description_xml: str | None = None
        self._holding = False
        super().__init__(self.NODE_NAME, **kwargs)
        self._holding = self._config.attached
        self.create_subscription(Bool, "gripper/holding", self._on_holding, SETPOINT_QOS)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.create_subscription(String, "robot_description", self._on_description, latched)
        if self._config.models is None:
            self.get_logger().info("no robot_description/urdf_path parameter: waiting for the "
                                   "robot_description topic")
        else:
            self._log_model(self._config.models)

    def declare_stage_parameters(self) -> None:
        declare_robot_parameters(self)

    def build_config(self, values: Mapping[str, Any], changed: set[str], previous) -> Any:
        models = build_robot_models(values, previous.models if previous else None,
                                    self._description_xml)
        attached = values["payload.attached"]
        if previous is not None and "payload.attached" not in changed:
            attached = previous.attached
        return _GravityConfig(models, bool(attached))

    def _post_set_parameters(self, params) -> None:
        if any(p.name == "payload.attached" for p in params) and self._pending is not None:
            self._holding = self._pending[1].attached
        super()._post_set_parameters(params)

    # ----------------------------------------------------------------- stage hooks
    def _model(self, config):
        return None if config.models is None else config.models.select(self._holding)

    def model_joint_names(self, config) -> tuple[str, ...]:
        model = self._model(config)
        return () if model is None else model.joint_names

    def effort_limits(self, config) -> np.ndarray:
        return self._model(config).effort_limits

    def compute_term(self, setpoint, config):
        return self._model(config).gravity(setpoint.model_position())

    def _process(self, msg, fresh):
        if self._config.models is None:
            self.warn_throttled("no_model", "setpoint dropped: no robot model yet (set "
                                "robot_description or urdf_path, or publish robot_description)")
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
            f"{'none' if models.loaded is models.bare else models.loaded.payload}")


def main(args=None) -> None:
    """Entry point of the ``gravity_compensation_node`` executable."""
    run_node(GravityCompensationNode, args)


if __name__ == "__main__":
    main()
