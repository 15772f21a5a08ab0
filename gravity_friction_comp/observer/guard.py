"""What a bridge does with each measurement: estimate, detect, react (issue 29.3).

:class:`ContactGuard` ties a :class:`~gravity_friction_comp.observer.momentum.MomentumObserver`,
a :class:`~gravity_friction_comp.observer.contact.ContactDetector` and, optionally, the
bridge core it protects: a newly detected contact with a reaction other than ``none`` calls
:meth:`MitBridgeCore.react <gravity_friction_comp.mit.bridge_core.MitBridgeCore.react>` with
the contact's description, so every motor gets the reaction's safe behaviour from the next
frame exchange until :meth:`ContactGuard.clear` (the bridge's ``clear_faults``). The bridge
node and the lockstep simulation run this same object.

No rclpy import.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_config import BridgeConfig
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.codec import velocity_step
from gravity_friction_comp.observer.contact import Contact, ContactDetector
from gravity_friction_comp.observer.momentum import MomentumObserver

__all__ = ["DEADBAND_STEPS", "ContactGuard", "feedback_deadband"]

#: The observer's velocity deadband in velocity steps of the feedback: above ½, the ±½ step a
#: joint at rest reads (a 12-bit field has no code for 0), so rest gives no friction term.
DEADBAND_STEPS = 0.6


def feedback_deadband(config: BridgeConfig) -> np.ndarray:
    """(m,) [rad/s] per bridge joint: :data:`DEADBAND_STEPS` × the joint-side velocity step
    of its motor's feedback (the motor's step / |gear ratio|; DM4310: 8.8 mrad/s)."""
    return np.array(
        [DEADBAND_STEPS * velocity_step(m.limits) / abs(m.mapping.gear_ratio) for m in config.motors]
    )


class ContactGuard:
    """Observer + detector (+ the bridge core that reacts); see the module docstring.

    Args:
        observer: The observer (model joint order).
        detector: Its detector, over the same joints.
        core: The bridge core to react on; ``None``: detect and report only.

    Attributes:
        joints: The measured joints of the last sample (message order). estimate: Their r
            [N·m], shape (len(joints),).

    Raises:
        ConfigError: detector joints that are not the observer's.
    """

    def __init__(
        self, observer: MomentumObserver, detector: ContactDetector, core: MitBridgeCore | None = None
    ):
        if tuple(detector.joint_names) != tuple(observer.joint_names):
            raise ConfigError(
                f"detector joints {list(detector.joint_names)} are not the observer's {list(observer.joint_names)}",
                key="joints",
            )
        self.observer, self.detector, self.core = observer, detector, core
        self.joints: tuple[str, ...] = ()
        self.estimate = np.zeros(0)

    def update(
        self,
        t: float,
        names: Sequence[str],
        position: Sequence[float] | np.ndarray,
        velocity: Sequence[float] | np.ndarray,
        effort: Sequence[float] | np.ndarray,
    ) -> Contact | None:
        """One measurement (a ``joint_states`` message's fields, by name): the estimate in
        :attr:`joints` / :attr:`estimate`; a contact newly detected on a measured joint is
        returned (and reacted to), else ``None``; none before the observer has
        :attr:`~gravity_friction_comp.observer.momentum.MomentumObserver.settled`.

        Raises:
            InputError: as :meth:`MomentumObserver.update_named`; nothing is changed.
        """
        self.joints, self.estimate = self.observer.update_named(t, names, position, velocity, effort)
        full = np.zeros(self.observer.n)
        for joint, value in zip(self.joints, self.estimate):  # joints not measured never trip
            full[self.observer.joint_names.index(joint)] = value
        settled = self.observer.settled  # the first interval after a (re)start is not trusted
        contact = self.detector.check(t, full, self.observer.velocity) if settled else None
        reaction = self.detector.reaction
        if contact is not None and self.core is not None and reaction != "none":
            self.core.react(reaction, contact.describe())
        return contact

    def clear(self) -> Contact | None:
        """Unlatch the contact and end the core's reaction; returns the contact (``None`` if none)."""
        if self.core is not None:
            self.core.clear_reaction()
        return self.detector.clear()
