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
from .bridge_core import BridgeConfig, MitBridgeCore, MotorConfig, MotorStatus
from .friction import FRICTION_KEYWORDS, FRICTION_MODELS, FrictionModel, FrictionParams
from .inverse_dynamics import FeedforwardTerms, InverseDynamicsFeedforward
from .mit_codec import decode_command, decode_feedback, encode_command
from .motor_emulator import EmulatedMotor
from .motor_table import MOTOR_TABLE, JointMotorMap, MotorLimits, motor_limits, motor_types
from .payload import Payload
from .robot_model import ModelWarning, RobotModel
from .stage import StageSettings, apply_stage, parse_setpoint
from .velocity import VelocityEstimator, VelocitySelector

__all__ = [
    "ActuatorModel",
    "ActuatorTerms",
    "BAM_MODELS",
    "BamParameters",
    "BridgeConfig",
    "ConfigError",
    "DimensionError",
    "EmulatedMotor",
    "FRICTION_KEYWORDS",
    "FRICTION_MODELS",
    "FeedforwardTerms",
    "FrictionModel",
    "FrictionParams",
    "GravityFrictionCompError",
    "InputError",
    "InverseDynamicsFeedforward",
    "JointMotorMap",
    "MOTOR_TABLE",
    "MitBridgeCore",
    "ModelError",
    "ModelWarning",
    "MotorConfig",
    "MotorLimits",
    "MotorStatus",
    "Payload",
    "RobotModel",
    "StageSettings",
    "VelocityEstimator",
    "VelocitySelector",
    "apply_stage",
    "decode_command",
    "decode_feedback",
    "encode_command",
    "friction_params_from_arm_yaml",
    "friction_params_from_openarm_yaml",
    "load_arm_yaml",
    "motor_limits",
    "motor_types",
    "parse_setpoint",
]
