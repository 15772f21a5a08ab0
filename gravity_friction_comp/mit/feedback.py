"""Motor feedback decoding by family: one entry point for Damiao, CubeMars AK and Robstride replies.

No rclpy import: pure Python.
"""

from __future__ import annotations

from gravity_friction_comp.mit.cubemars_feedback import CubeMarsFeedback, decode_feedback_cubemars
from gravity_friction_comp.mit.damiao_feedback import DamiaoFeedback, decode_feedback_damiao
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.mit.robstride_feedback import RobstrideFeedback, decode_feedback_robstride

__all__ = [
    "MotorFeedback",
    "decode_feedback",
]

#: Any family's decoded reply (same attribute names).
MotorFeedback = DamiaoFeedback | CubeMarsFeedback | RobstrideFeedback


def decode_feedback(data: bytes, limits: MotorLimits) -> MotorFeedback:
    """Decode a feedback frame with the layout of ``limits.family``.

    Both results expose ``motor_id``, ``position`` [rad], ``velocity`` [rad/s], ``torque``
    [N·m], ``is_fault``, ``fault_reason`` and ``temperatures``.

    Raises:
        InputError: malformed frame (reason ``Reason.SHAPE``).
    """
    if limits.family == "cubemars":
        return decode_feedback_cubemars(data, limits)
    if limits.family == "robstride":
        return decode_feedback_robstride(data, limits)
    return decode_feedback_damiao(data, limits)
