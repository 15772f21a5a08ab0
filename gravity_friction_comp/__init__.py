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
from .payload import Payload
from .robot_model import ModelWarning, RobotModel

__all__ = [
    "ConfigError",
    "DimensionError",
    "GravityFrictionCompError",
    "InputError",
    "ModelError",
    "ModelWarning",
    "Payload",
    "RobotModel",
]
