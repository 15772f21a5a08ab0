"""What :class:`~gravity_friction_comp.mit.bridge_core.MitBridgeCore` reports: the measured
joint state and each motor's status (re-exported by ``bridge_core``). No rclpy import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = ["JointStateArrays", "MotorStatus"]


class JointStateArrays(NamedTuple):
    """Measured joint state, each array shape (n_joints,); ``valid`` False until a reply.

    position [rad], velocity [rad/s], effort [N·m] (0.0 where not valid).
    """

    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    valid: np.ndarray


@dataclass(frozen=True)
class MotorStatus:
    """Per-motor status for diagnostics.

    Attributes:
        name, can_id: Joint name and motor CAN id.
        behavior: What was sent in the last step: ``command`` | ``damp`` | ``hold`` |
            ``disable`` | ``clear_fault`` | ``shutdown`` | ``none`` (before the first step).
        reason: Why (``""`` for ``command``), e.g. ``"command timeout"``, ``"fault: over-current"``.
        fault: Fault latched. fault_reason: Its text (``""`` when none).
        stale: ``stale_cycles`` or more consecutive replies missing.
        missed_replies: Consecutive missed replies. total_missed_replies: Since start.
        replies: Replies received.
        effort_clamped: The last command's τ_ff was clamped.
        position_clamped: The last command's position was outside [position_lower,
            position_upper] and clamped.
        motor_enabled: Damiao state nibble says enabled (``None`` when unknown/CubeMars).
        temperatures: (name, °C) pairs from the last reply.
        last_reply_time: ``now`` of the last reply [s] (``None`` before the first).
    """

    name: str
    can_id: int
    behavior: str
    reason: str
    fault: bool
    fault_reason: str
    stale: bool
    missed_replies: int
    total_missed_replies: int
    replies: int
    effort_clamped: bool
    position_clamped: bool
    motor_enabled: bool | None
    temperatures: tuple[tuple[str, int], ...]
    last_reply_time: float | None
