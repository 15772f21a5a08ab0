"""Setpoint profile base: time → (position, velocity, holding), and the shared argument checks.

A profile maps time ``t`` [s] to a joint setpoint: position (n,) [rad], velocity (n,)
[rad/s] (the exact time derivative of the position, so a friction stage can use it), and
optionally the gripper's holding state. Profiles repeat with :attr:`Profile.period` when
sampled past their end (``loop=True``) or hold their last sample (``loop=False``).

Every duration (period, move and grip time, replay time step) must be at least
:data:`MIN_DURATION` (1 µs), and the velocities a profile implies must be finite: dividing an
amplitude by a shorter time overflows to inf/NaN, and no real setpoint stream is that fast.
No rclpy import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.validation import joint_names as unique_names
from gravity_friction_comp.validation import number, per_joint

__all__ = ["MIN_DURATION", "Profile", "ProfileSample"]

#: Shortest accepted period, move/grip time or replay time step [s]: 1 µs is far below any
#: controller tick (so nothing real is refused) and keeps ``amplitude / time`` finite.
MIN_DURATION = 1e-6


class ProfileSample(NamedTuple):
    """One setpoint.

    Attributes:
        position: (n,) [rad or m] in :attr:`Profile.joint_names` order.
        velocity: (n,) [rad/s or m/s], the time derivative of ``position``.
        holding: Gripper holding state at this time, or ``None`` when the profile does not
            drive the gripper.
    """

    position: np.ndarray
    velocity: np.ndarray
    holding: bool | None


def name_list(joint_names) -> tuple[str, ...]:
    """``joint_names`` as a tuple of strings (may be empty); a bare string is refused (it
    would otherwise become one joint per character)."""
    if not isinstance(joint_names, (list, tuple, np.ndarray)) or not all(
        isinstance(n, str) for n in joint_names
    ):
        raise ConfigError(
            f"joint_names must be a list of joint names (strings), got {joint_names!r}",
            key="joint_names",
            value=joint_names,
        )
    return tuple(str(n) for n in joint_names)


def checked_names(joint_names: Sequence[str]) -> tuple[str, ...]:
    return unique_names("joint_names", name_list(joint_names))


def vector(key: str, value, n: int) -> np.ndarray:
    """A finite, flat (n,) float copy; a scalar or a one-element list is broadcast
    (:func:`~gravity_friction_comp.validation.per_joint` rules otherwise)."""
    if isinstance(value, (list, tuple, np.ndarray)) and len(value) == 1 and np.ndim(value[0]) == 0:
        value = value[0]
    return np.array(per_joint(key, value, n), dtype=float)


def duration(key: str, value) -> float:
    """A duration [s] of at least :data:`MIN_DURATION`."""
    x = number(key, value, positive=True, unit="[s]", text=True)
    if x < MIN_DURATION:
        raise ConfigError(f"{key} must be >= {MIN_DURATION:g} [s], got {value!r}", key=key, value=value)
    return x


def finite_rate(key: str, values: np.ndarray, what: str) -> None:
    """Refuse ``values`` (implied velocities or steps) that overflowed to inf/NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        ok = np.isfinite(values).all()
    if not ok:
        raise ConfigError(f"{key}: {what} is not finite (values too large for the times)", key=key)


class Profile:
    """Base class: ``sample(t)`` → :class:`ProfileSample`.

    Attributes:
        joint_names: (n,) names of every joint the setpoint carries.
        period: Length of one cycle [s].
        loop: ``True``: ``t`` wraps modulo :attr:`period`; ``False``: the last sample holds.
    """

    joint_names: tuple[str, ...]
    period: float
    loop: bool = True

    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.joint_names)

    def sample(self, t: float) -> ProfileSample:
        """The setpoint at time ``t`` [s] (≥ 0).

        Raises:
            InputError: ``t`` not a number (``Reason.TYPE``), not finite (``Reason.NOT_FINITE``)
                or negative (``Reason.RANGE``).
        """
        try:
            t = float(t)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"profile time must be a number [s], got {t!r}", reason=Reason.TYPE) from None
        if not math.isfinite(t):
            raise InputError(f"profile time must be finite and ≥ 0 [s], got {t!r}", reason=Reason.NOT_FINITE)
        if t < 0.0:
            raise InputError(f"profile time must be finite and ≥ 0 [s], got {t!r}", reason=Reason.RANGE)
        if t >= self.period:
            if not self.loop:
                position, _, holding = self._at(self.period)
                return ProfileSample(position, np.zeros(self.n), holding)
            t = math.fmod(t, self.period)
        return ProfileSample(*self._at(t))

    def _at(self, t: float) -> tuple[np.ndarray, np.ndarray, bool | None]:
        raise NotImplementedError
