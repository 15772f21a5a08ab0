"""Start-up check of the MIT bridge: motors that never answered in MIT mode, named by joint, CAN id and bus.

The core counts missed replies per motor (:class:`~gravity_friction_comp.mit.bridge_core.MotorStatus`);
a motor that has not answered a single frame after ``stale_cycles`` cycles is reported once,
with what to check for its family. A factory Robstride motor is the common case: it speaks
Robstride's private protocol (29-bit extended frames) until it is switched to MIT mode, so
it ignores the bridge's 11-bit MIT frames (and any 29-bit frame it sends is not a reply the
bridge can decode).

No rclpy, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig

__all__ = ["StartupCheck", "silent_motor_message"]

_HINT = {
    "robstride": (
        "a factory Robstride motor speaks its private protocol (29-bit frames) until switched to "
        "MIT mode: switch it once with RobStride's tool or its protocol-switch command "
        "(docs/robstride.md), then power-cycle it"
    ),
    "damiao": "check power, CAN wiring and termination, the bitrate and the motor's can_id/master_id",
    "cubemars": "check power, CAN wiring and termination, the bitrate, the can_id and that the motor is in MIT mode",
}


def silent_motor_message(motor: MotorConfig, bus: str, cycles: int) -> str:
    """The error text for ``motor`` on ``bus`` that has not answered in ``cycles`` cycles."""
    return (
        f"{motor.name}: no MIT-mode reply from the {motor.limits.family} motor at CAN id "
        f"0x{motor.can_id:02X} (replies expected on 0x{motor.master_id:02X}) on bus {bus} after "
        f"{cycles} cycles since start-up; {_HINT.get(motor.limits.family, _HINT['damiao'])}"
    )


class StartupCheck:
    """Reports each motor that has never answered, once.

    Args:
        config: The bridge's config (``stale_cycles`` is the patience [cycles]).
        default_bus: Name of the ``""`` bus (the ``can.channel``).
    """

    def __init__(self, config: BridgeConfig, default_bus: str):
        self.config = config
        self.default_bus = default_bus
        self._reported: set[str] = set()

    def poll(self, statuses: Sequence[Any]) -> list[str]:
        """Messages for motors newly found silent (``replies == 0`` and at least ``stale_cycles``
        missed); ``statuses``: the core's :meth:`~gravity_friction_comp.mit.bridge_core.MitBridgeCore.status`,
        in joint order."""
        out = []
        for motor, status in zip(self.config.motors, statuses):
            missed = status.total_missed_replies
            if (
                status.replies == 0
                and missed >= self.config.stale_cycles
                and motor.name not in self._reported
            ):
                self._reported.add(motor.name)
                out.append(silent_motor_message(motor, motor.bus or self.default_bus, missed))
        return out
