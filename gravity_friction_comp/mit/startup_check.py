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

import math
from collections.abc import Sequence
from typing import Any

from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig

__all__ = ["StartupCheck", "silent_motor_message", "wrapped_reading_message"]

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


def wrapped_reading_message(motor: MotorConfig, q: float) -> str | None:
    """The error text for a first reading ``q`` [rad] of ``motor``'s joint outside its
    ``position_lower``/``position_upper``, ``None`` when inside (or unbounded).

    A Damiao motor re-reads its position within ±π (motor side) of its saved zero after a
    power cycle, so a shaft parked more than π from it reads 2π off (docs/FIELD_NOTES.md,
    "Start-up position and the 2π shift"): the message names the reading, the limits and
    which shifted reading, q ± 2π/r at the joint, would be inside them.
    """
    lo, hi = motor.position_lower, motor.position_upper
    if lo <= q <= hi:
        return None
    turn = 2.0 * math.pi / motor.mapping.gear_ratio
    inside = [x for x in (q - turn, q + turn) if lo <= x <= hi]
    why = (
        f"{inside[0]:.3f} rad (one motor turn away) would be inside: the motor may have re-read its "
        "position a turn off after a power cycle (its zero is kept within one turn only)"
        if inside
        else "no whole motor turn brings it inside: check offset, direction and gear_ratio"
    )
    return (
        f"{motor.name}: first reading {q:.3f} rad is outside its position limits [{lo:g}, {hi:g}]; "
        f"{why}; commands are clamped to the limits, so re-zero or home the joint before commanding "
        "it (docs/FIELD_NOTES.md)"
    )


class StartupCheck:
    """Reports each motor that has never answered, and each first reading outside the
    joint's position limits, once.

    Args:
        config: The bridge's config (``stale_cycles`` is the patience [cycles]).
        default_bus: Name of the ``""`` bus (the ``can.channel``).
    """

    def __init__(self, config: BridgeConfig, default_bus: str):
        self.config = config
        self.default_bus = default_bus
        self._reported: set[str] = set()
        self._read: set[str] = set()  # motors whose first reading was checked

    def poll(self, statuses: Sequence[Any], positions: Sequence[float] | None = None) -> list[str]:
        """Messages for motors newly found silent (``replies == 0`` and at least ``stale_cycles``
        missed), and, with ``positions`` (the measured joint positions [rad], joint order), for
        a motor whose first readings put its joint outside its position limits
        (:func:`wrapped_reading_message`); ``statuses``: the core's
        :meth:`~gravity_friction_comp.mit.bridge_core.MitBridgeCore.status`, in joint order."""
        out = []
        for i, (motor, status) in enumerate(zip(self.config.motors, statuses)):
            if positions is not None and status.replies > 0 and motor.name not in self._read:
                self._read.add(motor.name)
                text = wrapped_reading_message(motor, float(positions[i]))
                if text:
                    out.append(text)
            missed = status.total_missed_replies
            if (
                status.replies == 0
                and missed >= self.config.stale_cycles
                and motor.name not in self._reported
            ):
                self._reported.add(motor.name)
                out.append(silent_motor_message(motor, motor.bus or self.default_bus, missed))
        return out
