"""Gravity and friction feedforward for MIT-mode CAN robot arms.

The ROS-free core (robot model, payload, friction, actuator, MIT codec, simulation) imports
without rclpy; the nodes in :mod:`gravity_friction_comp.nodes` are thin adapters on top.
"""

from .exceptions import (
    ConfigError,
    DimensionError,
    GravityFrictionCompError,
    InputError,
    ModelError,
)
from .actuator import ActuatorModel, ActuatorTerms
from .arm_config import (
    friction_params_from_arm_yaml,
    friction_params_from_openarm_yaml,
    load_arm_yaml,
)
from .bam import BAM_MODELS, BamParameters
from .can_io import (
    BridgeCanIO,
    BusOpenError,
    CanSettings,
    SimulatedMotor,
    SimulatedMotorBus,
    bridge_config_from_values,
    open_bus,
    read_damiao_limits,
)
from .bridge_core import BridgeConfig, MitBridgeCore, MotorConfig, MotorStatus
from .friction import FRICTION_KEYWORDS, FRICTION_MODELS, FrictionModel, FrictionParams
from .excitation import ExcitationConfig, JointLimits, excitation_profile, record_simulated
from .identification import (
    IdentificationConfig,
    IdentificationError,
    IdentificationResult,
    identify,
    load_log,
    write_outputs,
)
from .inverse_dynamics import FeedforwardTerms, InverseDynamicsFeedforward
from .mit_codec import decode_command, decode_feedback, encode_command
from .motor_emulator import EmulatedMotor
from .motor_table import MOTOR_TABLE, JointMotorMap, MotorLimits, motor_limits, motor_types
from .payload import Payload
from .robot_model import ModelWarning, RobotModel
from .simulation import JointSimParams, SimConfig, SimState, SimulatedArm
from .stage import StageSettings, apply_stage, parse_setpoint
from .velocity import VelocityEstimator, VelocitySelector

__all__ = [
    "ActuatorModel",
    "ActuatorTerms",
    "BAM_MODELS",
    "BamParameters",
    "BridgeCanIO",
    "BridgeConfig",
    "BusOpenError",
    "CanSettings",
    "ConfigError",
    "DimensionError",
    "EmulatedMotor",
    "ExcitationConfig",
    "FRICTION_KEYWORDS",
    "FRICTION_MODELS",
    "FeedforwardTerms",
    "FrictionModel",
    "FrictionParams",
    "GravityFrictionCompError",
    "IdentificationConfig",
    "IdentificationError",
    "IdentificationResult",
    "InputError",
    "InverseDynamicsFeedforward",
    "JointLimits",
    "JointMotorMap",
    "JointSimParams",
    "MOTOR_TABLE",
    "MitBridgeCore",
    "ModelError",
    "ModelWarning",
    "MotorConfig",
    "MotorLimits",
    "MotorStatus",
    "Payload",
    "RobotModel",
    "SimConfig",
    "SimState",
    "SimulatedArm",
    "SimulatedMotor",
    "SimulatedMotorBus",
    "StageSettings",
    "VelocityEstimator",
    "VelocitySelector",
    "apply_stage",
    "bridge_config_from_values",
    "decode_command",
    "decode_feedback",
    "encode_command",
    "excitation_profile",
    "friction_params_from_arm_yaml",
    "friction_params_from_openarm_yaml",
    "identify",
    "load_arm_yaml",
    "load_log",
    "motor_limits",
    "motor_types",
    "open_bus",
    "parse_setpoint",
    "read_damiao_limits",
    "record_simulated",
    "write_outputs",
]
