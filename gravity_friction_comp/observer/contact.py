"""Contact detection on the observer's estimate: per-joint thresholds, a speed band, a latch.

Joint i is in contact when

.. math::

    |r_i| > \\tau_{th,i} + b_i\\,|\\dot q_i| + [\\,|\\dot q_i| \\le v_{rest}\\,]\\;s_i

with ``τ_th`` the absolute threshold [N·m], ``b`` the speed band [N·m·s/rad] (the friction
model's error grows with speed: viscous and Stribeck terms it gets wrong) and ``s`` the rest
band [N·m] added while the joint is (nearly) still, |q̇| ≤ ``v_rest``: a joint stuck by
static friction holds any torque within ± its breakaway, which no velocity-driven friction
model can tell from an external one (the stiction band, docs/observer.md). The first
detection latches (:attr:`ContactDetector.latched`: joint, estimate, threshold, time) until
:meth:`ContactDetector.clear` (the bridge's ``clear_faults``); what the bridge then does is
the ``reaction``, one of :data:`REACTIONS`: ``none`` (report only), or one of the bridge's
safe behaviours ``damp | hold | disable`` (:data:`~gravity_friction_comp.mit.bridge_config.BEHAVIORS`,
applied by :meth:`~gravity_friction_comp.mit.bridge_core.MitBridgeCore.react`).

No rclpy import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_config import BEHAVIORS
from gravity_friction_comp.validation import joint_names, number, per_joint, vector

__all__ = ["DEFAULT_REST_VELOCITY", "REACTIONS", "Contact", "ContactDetector", "validate_reaction"]

#: [rad/s] at or below this |q̇| a joint counts as still (the rest band applies): where the
#: lockstep arms' stick-slip ends (docs/observer.md).
DEFAULT_REST_VELOCITY = 0.05

#: What the bridge does on a detected contact: nothing (report only) or a safe behaviour.
REACTIONS = ("none", *BEHAVIORS)


def validate_reaction(reaction: Any) -> str:
    """``reaction`` if it is one of :data:`REACTIONS`.

    Raises:
        ConfigError: anything else (key ``contact.reaction``, choices listed).
    """
    if not isinstance(reaction, str) or reaction not in REACTIONS:
        raise ConfigError(
            f"contact.reaction must be one of {', '.join(REACTIONS)}; got {reaction!r}",
            key="contact.reaction",
            value=reaction,
        )
    return reaction


@dataclass(frozen=True)
class Contact:
    """A latched contact.

    Attributes:
        joint: Joint name. index: Its index in the detector's joint order.
        estimate: The estimate r_i that crossed [N·m]. threshold: The threshold it crossed
            (absolute + band·|q̇|) [N·m]. time: The sample's time [s].
    """

    joint: str
    index: int
    estimate: float
    threshold: float
    time: float

    def describe(self) -> str:
        """One line for a log or a diagnostics message."""
        return (
            f"contact on {self.joint}: external torque {self.estimate:+.3f} N·m beyond "
            f"±{self.threshold:.3f} N·m at t = {self.time:.3f} s"
        )


class ContactDetector:
    """Thresholds on the estimate with a latch (module docstring).

    Args:
        joints: Joint names, the order of every vector.
        threshold: Absolute threshold [N·m], one number or one per joint, finite and > 0
            (a joint that should never trip takes a large value).
        speed_band: [N·m·s/rad] added per |q̇|, one number or one per joint, ≥ 0.
        reaction: One of :data:`REACTIONS`.
        rest_band: [N·m] added while |q̇| ≤ ``rest_velocity``, one number or one per joint, ≥ 0.
        rest_velocity: [rad/s] ≥ 0.

    Raises:
        ConfigError: bad names, thresholds, band or reaction (key named).
        DimensionError: a per-joint list of the wrong length.
    """

    def __init__(
        self,
        joints: Sequence[str],
        threshold: Any,
        speed_band: Any = 0.0,
        reaction: str = "none",
        rest_band: Any = 0.0,
        rest_velocity: float = DEFAULT_REST_VELOCITY,
    ):
        self.joint_names = joint_names("joints", tuple(joints))
        self._n = len(self.joint_names)
        self.set_thresholds(threshold, speed_band, rest_band, rest_velocity)
        self.reaction = validate_reaction(reaction)
        self.latched: Contact | None = None
        self.detections = 0

    def set_thresholds(
        self,
        threshold: Any,
        speed_band: Any = 0.0,
        rest_band: Any = 0.0,
        rest_velocity: float = DEFAULT_REST_VELOCITY,
    ) -> None:
        """Replace the thresholds (all checked before any is used).

        Raises:
            ConfigError, DimensionError: as the constructor; the thresholds in force are kept.
        """
        absolute = per_joint("contact.threshold", threshold, self._n, positive=True)
        band = per_joint("contact.speed_band", speed_band, self._n, nonneg=True)
        rest = per_joint("contact.rest_band", rest_band, self._n, nonneg=True)
        still = number("contact.rest_velocity", rest_velocity, nonneg=True, unit="[rad/s]")
        self.threshold, self.speed_band, self.rest_band, self.rest_velocity = absolute, band, rest, still

    def set_reaction(self, reaction: str) -> None:
        """Use ``reaction`` for the next detection (a latched one keeps what it triggered).

        Raises:
            ConfigError: not one of :data:`REACTIONS`.
        """
        self.reaction = validate_reaction(reaction)

    def thresholds(self, velocity: Sequence[float] | np.ndarray) -> np.ndarray:
        """τ_th + b·|q̇| (+ s at rest) (n,) [N·m] at joint velocity ``velocity`` (n,) [rad/s]."""
        speed = np.abs(vector("velocity", velocity, self._n, names=self.joint_names))
        return (
            self.threshold
            + self.speed_band * speed
            + np.where(speed <= self.rest_velocity, self.rest_band, 0.0)
        )

    def check(
        self, t: float, estimate: Sequence[float] | np.ndarray, velocity: Sequence[float] | np.ndarray
    ) -> Contact | None:
        """The contact newly detected at this sample, or ``None`` (none, or one already latched).

        The joint whose estimate exceeds its threshold by the largest ratio is named.

        Args:
            t: Sample time [s]. estimate: r (n,) [N·m]. velocity: q̇ (n,) [rad/s].

        Raises:
            InputError: a vector not (n,) or not finite (the detector is unchanged).
        """
        r = vector("estimate", estimate, self._n, names=self.joint_names)
        limit = self.thresholds(velocity)
        if self.latched is not None:
            return None
        ratio = np.abs(r) / limit
        i = int(np.argmax(ratio))
        if not ratio[i] > 1.0:
            return None
        self.latched = Contact(self.joint_names[i], i, float(r[i]), float(limit[i]), float(t))
        self.detections += 1
        return self.latched

    def clear(self) -> Contact | None:
        """Unlatch; returns the contact that was latched (``None`` if none)."""
        latched, self.latched = self.latched, None
        return latched
