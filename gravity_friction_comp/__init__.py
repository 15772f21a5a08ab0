"""Gravity and friction feedforward for MIT-mode CAN robot arms.

The ROS-free core lives in subpackages, one idea each: :mod:`.model` (URDF, mimic coupling,
RobotModel, payload, actuator), :mod:`.friction` (models, BAM, per-arm YAML), :mod:`.stage`
(the stage contract and the gravity / friction stages), :mod:`.mit` (codec, motor table,
bridge core and config, the python-can bus), :mod:`.sim` (simulated arm, emulated motors and
bus), :mod:`.trajectory` (setpoint profiles), :mod:`.ident` (excitation, friction fit). The
rclpy adapters are in :mod:`.nodes`, the programs in :mod:`.tools`.

The names below are importable from the root, loaded on first use (as python-can loads its
backends): ``from gravity_friction_comp import encode_command`` imports neither Pinocchio nor
python-can.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING, Any

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "ActuatorModel": "model.actuator",
    "ActuatorTerms": "model.actuator",
    "apply_stage": "stage.contract",
    "ArmProfile": "profiles.arm_profiles",
    "BAM_MODELS": "friction.bam",
    "BamParameters": "friction.bam",
    "bridge_config_from_values": "mit.bridge_params",
    "BridgeCanIO": "mit.bus",
    "BridgeConfig": "mit.bridge_config",
    "BusOpenError": "errors",
    "CanSettings": "mit.bus",
    "ConfigError": "errors",
    "decode_command": "mit.codec",
    "decode_feedback": "mit.feedback",
    "DimensionError": "errors",
    "EmulatedMotor": "sim.motor_emulator",
    "encode_command": "mit.codec",
    "excitation_profile": "ident.excitation",
    "ExcitationConfig": "ident.excitation",
    "FeedforwardStage": "stage.contract",
    "FeedforwardTerms": "stage.inverse_dynamics",
    "FRICTION_KEYWORDS": "friction.params",
    "FRICTION_MODELS": "friction.params",
    "friction_params_from_arm_yaml": "friction.arm_yaml",
    "friction_params_from_openarm_yaml": "friction.arm_yaml",
    "FrictionConfig": "stage.friction",
    "FrictionModel": "friction.models",
    "FrictionParams": "friction.params",
    "FrictionStage": "stage.friction",
    "GravityConfig": "stage.gravity",
    "GravityFrictionCompError": "errors",
    "GravityStage": "stage.gravity",
    "IdentificationConfig": "ident.identify",
    "IdentificationError": "errors",
    "IdentificationResult": "ident.identify",
    "identify": "ident.identify",
    "InputError": "errors",
    "InverseDynamicsFeedforward": "stage.inverse_dynamics",
    "JointLimits": "ident.excitation",
    "JointMotorMap": "mit.joint_motor_map",
    "JointSimParams": "sim.config",
    "JointStateLog": "ident.joint_log",
    "list_arms": "profiles.arm_profiles",
    "load_arm": "profiles.arm_profiles",
    "load_arm_yaml": "friction.arm_yaml",
    "load_log": "ident.joint_log",
    "LockstepStalled": "errors",
    "MitBridgeCore": "mit.bridge_core",
    "ModelError": "errors",
    "ModelWarning": "errors",
    "motor_limits": "mit.motor_table",
    "MOTOR_TABLE": "mit.motor_table",
    "motor_types": "mit.motor_table",
    "MotorConfig": "mit.bridge_config",
    "MotorLimits": "mit.motor_table",
    "MotorStatus": "mit.bridge_core",
    "open_bus": "mit.bus",
    "parse_setpoint": "stage.contract",
    "Payload": "model.payload",
    "read_damiao_limits": "mit.bus",
    "Reason": "errors",
    "record_simulated": "ident.excitation",
    "RobotModel": "model.robot_model",
    "RunIncomplete": "errors",
    "SimConfig": "sim.config",
    "SimState": "sim.arm",
    "SimulatedArm": "sim.arm",
    "SimulatedMotor": "sim.bus",
    "SimulatedMotorBus": "sim.bus",
    "StageSettings": "stage.contract",
    "VelocityEstimator": "stage.velocity",
    "VelocitySelector": "stage.velocity",
    "write_outputs": "ident.report",
}

__all__ = sorted(_EXPORTS, key=str.lower)


def __getattr__(name: str) -> Any:
    """Import the module holding ``name`` on first access (PEP 562)."""
    if name == "__version__":  # read on demand: a plain import reads no file
        from gravity_friction_comp.version import package_version

        globals()[name] = version = package_version()
        return version
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(_importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names and the module's dunders: not its imports (``Any``, ``TYPE_CHECKING``
    -- kept by name for static checkers --, ``annotations``) nor its subpackages."""
    dunders = {n for n in globals() if n.startswith("__") and n.endswith("__")}
    return sorted(set(__all__) | dunders | {"__version__"})


if TYPE_CHECKING:  # static checkers see the eager imports
    from gravity_friction_comp.errors import (
        BusOpenError,
        ConfigError,
        DimensionError,
        GravityFrictionCompError,
        IdentificationError,
        InputError,
        LockstepStalled,
        ModelError,
        ModelWarning,
        Reason,
        RunIncomplete,
    )
    from gravity_friction_comp.friction.arm_yaml import (
        friction_params_from_arm_yaml,
        friction_params_from_openarm_yaml,
        load_arm_yaml,
    )
    from gravity_friction_comp.friction.bam import BAM_MODELS, BamParameters
    from gravity_friction_comp.friction.models import FrictionModel
    from gravity_friction_comp.friction.params import FRICTION_KEYWORDS, FRICTION_MODELS, FrictionParams
    from gravity_friction_comp.ident.excitation import (
        ExcitationConfig,
        JointLimits,
        excitation_profile,
        record_simulated,
    )
    from gravity_friction_comp.ident.identify import IdentificationConfig, IdentificationResult, identify
    from gravity_friction_comp.ident.joint_log import JointStateLog, load_log
    from gravity_friction_comp.ident.report import write_outputs
    from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig
    from gravity_friction_comp.mit.bridge_core import MitBridgeCore, MotorStatus
    from gravity_friction_comp.mit.bridge_params import bridge_config_from_values
    from gravity_friction_comp.mit.bus import BridgeCanIO, CanSettings, open_bus, read_damiao_limits
    from gravity_friction_comp.mit.codec import decode_command, encode_command
    from gravity_friction_comp.mit.feedback import decode_feedback
    from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
    from gravity_friction_comp.mit.motor_table import MOTOR_TABLE, MotorLimits, motor_limits, motor_types
    from gravity_friction_comp.model.actuator import ActuatorModel, ActuatorTerms
    from gravity_friction_comp.model.payload import Payload
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import ArmProfile, list_arms, load_arm
    from gravity_friction_comp.sim.arm import SimState, SimulatedArm
    from gravity_friction_comp.sim.bus import SimulatedMotor, SimulatedMotorBus
    from gravity_friction_comp.sim.config import JointSimParams, SimConfig
    from gravity_friction_comp.sim.motor_emulator import EmulatedMotor
    from gravity_friction_comp.stage.contract import (
        FeedforwardStage,
        StageSettings,
        apply_stage,
        parse_setpoint,
    )
    from gravity_friction_comp.stage.friction import FrictionConfig, FrictionStage
    from gravity_friction_comp.stage.gravity import GravityConfig, GravityStage
    from gravity_friction_comp.stage.inverse_dynamics import FeedforwardTerms, InverseDynamicsFeedforward
    from gravity_friction_comp.stage.velocity import VelocityEstimator, VelocitySelector
