"""Joint ↔ motor map: direction, offset and gear ratio between joint space and the MIT frame.

No rclpy import: pure Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.validation import number, short_repr

__all__ = [
    "GEAR_RATIO_RANGE",
    "JointMotorMap",
]

#: Plausible range of :attr:`JointMotorMap.gear_ratio` (motor turns per joint turn). Generous:
#: real drives are 1–~300:1; outside 1e-3..1e4 is not a gearbox, and r² in the gain law
#: kp/r² must stay a normal double (r = 1e-200 gave a ZeroDivisionError on every command).
GEAR_RATIO_RANGE = (1e-3, 1e4)


# --- joint ↔ motor mapping --------------------------------------------------------------------


@dataclass(frozen=True)
class JointMotorMap:
    """Per-joint map between joint space and the motor's MIT frame (output shaft of the motor).

    With direction d ∈ {−1, +1}, gear ratio r > 0 (joint = motor / r) and offset q₀ [rad]:

    .. math::

        q = d\\,θ/r + q_0, \\quad \\dot q = d\\,\\dot θ/r, \\quad τ_q = d\\,r\\,τ_θ,
        \\quad kp_θ = kp_q / r^2, \\quad kd_θ = kd_q / r^2

    (θ, θ̇, τ_θ motor-side; the gain law follows from power conservation of an ideal
    gear: τ_q = d r kp_θ (θ_des − θ) = r² kp_θ (q_des − q)).

    Attributes:
        direction: +1 or −1.
        offset: q₀ [rad], joint position when the motor reads 0.
        gear_ratio: r, motor turns per joint turn (1 when the motor drives the joint directly),
            within :data:`GEAR_RATIO_RANGE` (1e-3..1e4).

    Raises:
        ConfigError: direction not ±1, offset not a finite number (bools and ints beyond the
            float range refused), ratio not finite or outside :data:`GEAR_RATIO_RANGE`.
    """

    direction: int = 1
    offset: float = 0.0
    gear_ratio: float = 1.0

    def __post_init__(self) -> None:
        if self.direction not in (-1, 1) or isinstance(self.direction, bool):
            raise ConfigError(
                f"direction must be 1 or -1, got {self.direction!r}", key="direction", value=self.direction
            )
        object.__setattr__(self, "direction", int(self.direction))
        try:
            off = number("offset", self.offset, text=True)
        except ConfigError:
            raise ConfigError(
                f"offset must be a finite number [rad], got {short_repr(self.offset)}",
                key="offset",
                value=self.offset,
            ) from None
        object.__setattr__(self, "offset", off)
        ratio = number("gear_ratio", self.gear_ratio, positive=True, text=True)
        low, high = GEAR_RATIO_RANGE
        if not low <= ratio <= high:
            raise ConfigError(
                f"gear_ratio {ratio!r} outside the plausible range {low:g}..{high:g} (motor turns "
                "per joint turn; real drives are 1 to a few hundred)",
                key="gear_ratio",
                value=self.gear_ratio,
            )
        object.__setattr__(self, "gear_ratio", ratio)

    # joint → motor
    def position_to_motor(self, q: float) -> float:
        """Motor position θ [rad] for joint position q [rad]: θ = d r (q − q₀)."""
        return self.direction * self.gear_ratio * (q - self.offset)

    def velocity_to_motor(self, qd: float) -> float:
        """Motor velocity [rad/s] for joint velocity [rad/s]: θ̇ = d r q̇."""
        return self.direction * self.gear_ratio * qd

    def torque_to_motor(self, tau: float) -> float:
        """Motor torque [N·m] for joint torque [N·m]: τ_θ = d τ_q / r."""
        return self.direction * tau / self.gear_ratio

    def kp_to_motor(self, kp: float) -> float:
        """Motor kp [N·m/rad] for joint kp [N·m/rad]: kp_θ = kp_q / r²."""
        return kp / (self.gear_ratio * self.gear_ratio)

    def kd_to_motor(self, kd: float) -> float:
        """Motor kd [N·m·s/rad] for joint kd [N·m·s/rad]: kd_θ = kd_q / r²."""
        return kd / (self.gear_ratio * self.gear_ratio)

    # motor → joint
    def position_from_motor(self, theta: float) -> float:
        """Joint position [rad] for motor position θ [rad]: q = d θ / r + q₀."""
        return self.direction * theta / self.gear_ratio + self.offset

    def velocity_from_motor(self, theta_dot: float) -> float:
        """Joint velocity [rad/s] for motor velocity [rad/s]: q̇ = d θ̇ / r."""
        return self.direction * theta_dot / self.gear_ratio

    def torque_from_motor(self, tau_motor: float) -> float:
        """Joint torque [N·m] for motor torque [N·m]: τ_q = d r τ_θ."""
        return self.direction * self.gear_ratio * tau_motor

    def kp_from_motor(self, kp_motor: float) -> float:
        """Joint kp [N·m/rad] for motor kp: kp_q = r² kp_θ."""
        return kp_motor * self.gear_ratio * self.gear_ratio

    def command_to_motor(
        self, q: float, qd: float, kp: float, kd: float, tau: float
    ) -> tuple[float, float, float, float, float]:
        """The motor-side ``(θ, θ̇, kp_θ, kd_θ, τ_θ)`` of a joint command, each checked finite.

        A finite joint value can overflow on the motor side (velocity 1e308 at gear 2,
        kp 1e308 at gear 0.5): such a command is refused here instead of reaching the
        encoder as ``inf``.

        Args:
            q [rad], qd [rad/s], kp [N·m/rad], kd [N·m·s/rad], tau [N·m]: joint-side values.

        Raises:
            InputError: a motor-side value not finite (reason ``"range"``; the message names it).
        """
        values = (
            self.position_to_motor(q),
            self.velocity_to_motor(qd),
            self.kp_to_motor(kp),
            self.kd_to_motor(kd),
            self.torque_to_motor(tau),
        )
        for name, joint, motor in zip(
            ("position", "velocity", "kp", "kd", "effort"), (q, qd, kp, kd, tau), values
        ):
            if not math.isfinite(motor):
                raise InputError(
                    f"{name} {joint!r} overflows on the motor side (gear ratio {self.gear_ratio:g})",
                    reason=Reason.RANGE,
                )
        return values

    def torque_limit_joint(self, limits: MotorLimits) -> float:
        """The motor's T_MAX expressed at the joint [N·m]: r · t_max."""
        return self.gear_ratio * limits.t_max
