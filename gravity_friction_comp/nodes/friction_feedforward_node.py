"""friction_feedforward_node: adds joint-friction feedforward to the setpoint's effort.

Topics:
    joint_setpoint (sub, sensor_msgs/JointState): usually the gravity stage's output
        (remapped from ``gravity/joint_command``); its effort is the load for BAM models.
    joint_states (sub, sensor_msgs/JointState): measured velocity for
        ``velocity_source: measured``.
    joint_command (pub, sensor_msgs/JointState): effort = incoming + scale·friction.
    ~/effort (pub, sensor_msgs/JointState): the friction term alone.

Parameters:
    enable (bool), scale (double): see :class:`FeedforwardStageNode`.
    joints (string[]): names the per-joint arrays refer to (others pass through).
    arm_config (string): per-arm YAML (``friction_comp`` block, or OpenArm leader/follower).
    enabled, model, breakaway, breakaway_positive, breakaway_negative, eps, viscous,
        stribeck_breakaway, stribeck_velocity, stribeck_exponent, offset, bam_files:
        friction model values (:class:`~gravity_friction_comp.friction.models.FrictionModel`);
        unset ones come from ``arm_config``, set ones override it. Scalars or per joint.
    velocity_source (string): setpoint | measured | differentiated.
    velocity_cutoff_hz (double): low-pass cutoff of the differentiation [Hz].
    velocity_deadband (double): |q̇| at or below this gives no friction [rad/s].
    effort_limit (double or double[]): |effort| limit of the output [N·m] (unset: none).
All are settable at runtime and validated before they are accepted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from sensor_msgs.msg import JointState

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.friction.models import FRICTION_KEYWORDS, FrictionModel
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS, FeedforwardStageNode, run_node
from gravity_friction_comp.stage.contract import JointMap, effort_limits_from
from gravity_friction_comp.stage.velocity import MAX_PLAUSIBLE_VELOCITY, MIN_JUMP, VelocitySelector

__all__ = ["FrictionFeedforwardNode", "main"]

#: Model keywords exposed as parameters ("bam" objects are not a parameter type).
MODEL_PARAMETERS = tuple(k for k in FRICTION_KEYWORDS if k != "bam")
VELOCITY_PARAMETERS = ("velocity_source", "velocity_cutoff_hz", "velocity_deadband")


@dataclass(frozen=True)
class _FrictionConfig:
    joints: tuple[str, ...]
    model: FrictionModel
    effort_limits: np.ndarray
    velocity_source: str
    velocity_cutoff_hz: float
    velocity_deadband: float


def build_friction_config(values: Mapping[str, Any]) -> _FrictionConfig:
    """Validate the node's parameters into a config (raises ConfigError with the reason)."""
    joints = tuple(j for j in (values.get("joints") or ()) if j)
    if not joints:
        raise ConfigError("joints must name the joints the friction arrays refer to", key="joints")
    if len(set(joints)) != len(joints):
        raise ConfigError(f"joints has duplicate names: {list(joints)}", key="joints")
    overrides = {k: values.get(k) for k in MODEL_PARAMETERS}
    if isinstance(overrides.get("bam_files"), (list, tuple)):
        overrides["bam_files"] = [f or None for f in overrides["bam_files"]]
    if values.get("arm_config"):
        model = FrictionModel.from_yaml(values["arm_config"], list(joints), **overrides)
    else:
        model = FrictionModel(list(joints), **overrides)
    for key, value in (
        ("velocity_cutoff_hz", values.get("velocity_cutoff_hz")),
        ("velocity_deadband", values.get("velocity_deadband")),
    ):
        if not isinstance(value, float) or not math.isfinite(value):
            raise ConfigError(f"{key} must be a finite number, got {value!r}", key=key, value=value)
    # VelocitySelector validates source, cutoff and deadband in one place.
    VelocitySelector(
        len(joints), values.get("velocity_source"), values["velocity_cutoff_hz"], values["velocity_deadband"]
    )
    return _FrictionConfig(
        joints,
        model,
        effort_limits_from(values.get("effort_limit"), len(joints)),
        values["velocity_source"],
        values["velocity_cutoff_hz"],
        values["velocity_deadband"],
    )


class FrictionFeedforwardNode(FeedforwardStageNode):
    """Friction feedforward stage (node name ``friction_feedforward``)."""

    NODE_NAME = "friction_feedforward"

    def __init__(self, **kwargs):
        self._selector: VelocitySelector | None = None
        self._warned_fallback = False
        self._velocity: np.ndarray | None = None
        super().__init__(self.NODE_NAME, **kwargs)
        self._reset_selector(self._config)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, SETPOINT_QOS)
        model = self._config.model
        self.get_logger().info(
            f"friction model {model!r} on joints {list(self._config.joints)}, "
            f"velocity from {self._config.velocity_source}"
        )

    def declare_stage_parameters(self) -> None:
        self.declare_parameter(
            "joints", [""], ParameterDescriptor(description="joint names the per-joint arrays refer to")
        )
        self.declare_parameter(
            "arm_config",
            "",
            ParameterDescriptor(
                description="per-arm YAML with a friction_comp block (defaults for the model)"
            ),
        )
        dynamic = ParameterDescriptor(
            dynamic_typing=True, description="friction model value; unset: from arm_config"
        )
        for name in (*MODEL_PARAMETERS, "effort_limit"):
            self.declare_parameter(name, None, dynamic)
        self.declare_parameter(
            "velocity_source",
            "setpoint",
            ParameterDescriptor(description="setpoint | measured | differentiated"),
        )
        self.declare_parameter(
            "velocity_cutoff_hz",
            20.0,
            ParameterDescriptor(description="low-pass cutoff for differentiated velocity [Hz]"),
        )
        self.declare_parameter(
            "velocity_deadband",
            0.0,
            ParameterDescriptor(description="|velocity| at or below this gives no friction [rad/s]"),
        )

    def build_config(self, values, changed, previous):
        return build_friction_config(values)

    def _post_set_parameters(self, params) -> None:
        pending = self._pending
        super()._post_set_parameters(params)
        if pending is not None:
            self._reset_selector(pending[1])

    def _reset_selector(self, config: _FrictionConfig) -> None:
        self._selector = VelocitySelector(
            len(config.joints), config.velocity_source, config.velocity_cutoff_hz, config.velocity_deadband
        )

    # ----------------------------------------------------------------- stage hooks
    def model_joint_names(self, config) -> tuple[str, ...]:
        return config.joints

    def effort_limits(self, config) -> np.ndarray:
        return config.effort_limits

    def on_setpoint_accepted(self, setpoint, stamp) -> None:
        jumps = self._selector.jumps
        self._velocity = self._selector.velocity(
            setpoint.model_position(), setpoint.model_velocity(), self.setpoint_time(stamp)
        )
        if self._selector.jumps != jumps:
            self.warn_throttled(
                "position_jump",
                f"setpoint position jumped (more than "
                f"{MIN_JUMP:g} rad, faster than {MAX_PLAUSIBLE_VELOCITY:g} "
                "rad/s): differentiated velocity restarted at 0",
            )
        if self._selector.fell_back and not self._warned_fallback:
            self._warned_fallback = True
            self.get_logger().warning(
                "setpoint has no velocity: using differentiated setpoint "
                "positions (velocity_cutoff_hz) instead"
            )

    def compute_term(self, setpoint, config):
        model = config.model
        if model.is_zero:
            return None  # bit-identical pass-through
        load = setpoint.model_effort() if model.uses_load else None
        # parse_setpoint and the selector hand over finite float64 (n,) arrays only
        return model.torque(self._velocity, load, checked=False)

    # ----------------------------------------------------------------- measurement
    def _on_joint_states(self, msg: JointState) -> None:
        if self._config.velocity_source != "measured":
            return
        try:
            if len(msg.velocity) != len(msg.name):
                raise InputError("joint_states velocity does not match its names", reason="length_mismatch")
            index = JointMap.for_names(msg.name, self._config.joints).index
            velocity = np.asarray(msg.velocity, dtype=float)[index]
            if not np.isfinite(velocity).all():
                raise InputError("non-finite measured velocity", reason="not_finite")
        except InputError as error:
            self.warn_throttled(f"joint_states_{error.reason}", f"joint_states ignored: {error}")
            return
        self._selector.update_measured(velocity)


def main(args=None) -> None:
    """Entry point of the ``friction_feedforward_node`` executable."""
    run_node(FrictionFeedforwardNode, args)


if __name__ == "__main__":
    main()
