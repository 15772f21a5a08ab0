"""momentum_observer: the external joint torque of an arm from its ``joint_states`` (docs/observer.md).

Around an :class:`~gravity_friction_comp.nodes.observer_runtime.ObserverRuntime` (the
ROS-free :class:`~gravity_friction_comp.observer.momentum.MomentumObserver` and
:class:`~gravity_friction_comp.observer.contact.ContactDetector`). For an arm whose bridge
runs elsewhere, or a second estimate of a bridged arm (a teleoperation leader); the bridge
itself runs the same observer with ``observer.enable:=true`` and then also reacts to a contact.

Topics:
    joint_states (sub, sensor_msgs/JointState): measured position [rad], velocity [rad/s]
        and joint-side motor torque [N·m] (the bridge's: MIT feedback mapped through gear
        and direction), by name.
    gripper/holding (sub, std_msgs/Bool): the payload model while true.
    ~/external_effort (pub, sensor_msgs/JointState): effort = the estimate per measured
        joint [N·m], stamped with the measurement it comes from.

Service:
    ~/clear_faults (std_srvs/Trigger): unlatch a detected contact (this node only reports it,
        as an ERROR log line; the bridge's reaction is the bridge's).

Parameters: :data:`PARAMETERS`; ``observer.*`` and ``contact.*`` but ``observer.arm_config``
settable at runtime (validated: a refused set names the reason); ``observer.enable`` false
stops the estimate, true restarts it from the next measurement.
"""

from __future__ import annotations

from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.nodes.observer_runtime import (
    NODE_ENABLE,
    OBSERVER_PARAMETERS,
    ObserverHook,
    ObserverRuntime,
)
from gravity_friction_comp.nodes.parameters import Param, declare_checked
from gravity_friction_comp.nodes.robot_params import build_robot_models, log_model_warnings, robot_parameters
from gravity_friction_comp.nodes.runtime import run_node
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

try:  # std_srvs is pinned in requirements.txt; keep the node usable without it
    from std_srvs.srv import Trigger
except ImportError:  # pragma: no cover - depends on the install
    Trigger = None

__all__ = ["PARAMETERS", "ObserverNode", "main"]

#: Every parameter of the node, declared once.
PARAMETERS: tuple[Param, ...] = (NODE_ENABLE, *OBSERVER_PARAMETERS, *robot_parameters(read_only=True))


class ObserverNode(Node):
    """The momentum observer node (node name ``momentum_observer``); see the module docstring."""

    NODE_NAME = "momentum_observer"
    PARAMETERS = PARAMETERS

    def __init__(self, **kwargs: Any):
        super().__init__(self.NODE_NAME, **kwargs)
        self._hook: ObserverHook | None = None
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._post_set_parameters)
        values = declare_checked(self, PARAMETERS)
        models = build_robot_models(values)
        if models is None:
            raise ConfigError(
                "the observer needs the robot model: set urdf_path or robot_description", key="urdf_path"
            )
        log_model_warnings(self.get_logger(), models)
        self._hook = ObserverHook(self, values, models)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, SETPOINT_QOS)
        self.create_subscription(Bool, "gripper/holding", self._on_holding, SETPOINT_QOS)
        if Trigger is not None:
            self.create_service(Trigger, "~/clear_faults", self._on_clear)

    @property
    def runtime(self) -> ObserverRuntime | None:
        """The observer and its contact detection (``observer.enable``), else ``None``."""
        return None if self._hook is None else self._hook.runtime

    # ------------------------------------------------------------------ parameters
    def _on_set_parameters(self, params) -> SetParametersResult:
        reason = None if self._hook is None else self._hook.check(params)  # None: declaring
        return SetParametersResult(successful=reason is None, reason=reason or "")

    def _post_set_parameters(self, params) -> None:
        if self._hook is not None:
            self._hook.apply()

    # ------------------------------------------------------------------ inputs
    def _on_holding(self, msg: Bool) -> None:
        if self._hook is not None:
            self._hook.set_holding(bool(msg.data))

    def on_joint_states(self, msg: JointState) -> None:
        """One measurement: estimate, detect, publish ``~/external_effort``."""
        if self._hook is not None:
            self._hook.observe(msg)

    def _on_clear(self, request, response):
        latched = None if self._hook is None else self._hook.clear()
        response.success = True
        response.message = "no latched contact" if latched is None else f"cleared: {latched.describe()}"
        self.get_logger().info(f"clear_faults: {response.message}")
        return response


def main(args=None) -> None:
    """Entry point of the ``momentum_observer`` executable."""
    run_node(ObserverNode, args)


if __name__ == "__main__":
    main()
