"""Hold profile: one pose for ever (the setpoint of a chain with no motion source).

The ``setpoint_player``'s ``hold`` profile: ``arm.launch.py`` starts it when ``player:=none``,
so that the gravity and friction terms reach the bridge while the arm stands still. The pose
is the measured one (the player reads ``joint_states``) or the profile's home pose. No rclpy
import.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gravity_friction_comp.trajectory.base import Profile, checked_names, vector

__all__ = ["HoldProfile"]


class HoldProfile(Profile):
    """Position ``pose`` and velocity 0 at every time; never finishes (``loop=True``).

    Args:
        joint_names: (n,) joint names.
        pose: (n,) or scalar [rad or m], finite.

    Raises:
        ConfigError: bad names, a pose of the wrong length or not finite.
    """

    def __init__(self, joint_names: Sequence[str], pose):
        self.joint_names = checked_names(joint_names)
        self.pose = vector("home", pose, len(self.joint_names))
        self.period = 1.0  # [s] any: the sample is the same at every time
        self.loop = True

    def _at(self, t: float) -> tuple[np.ndarray, np.ndarray, bool | None]:
        return self.pose.copy(), np.zeros(self.n), None
