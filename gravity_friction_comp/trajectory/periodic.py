"""Periodic setpoint profiles: sine and triangle-wave (ramp) motion about a centre.

- :class:`SineProfile`: ``q = c + A sin(2πt/T)``, ``q̇ = (2πA/T) cos(2πt/T)``.
- :class:`RampProfile`: triangle wave starting at the centre: ``c → c+A → c−A → c`` over
  ``T``, ``|q̇| = 4A/T``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from gravity_friction_comp.trajectory.base import Profile, checked_names, duration, finite_rate, vector

__all__ = ["RampProfile", "SineProfile"]


class _PeriodicProfile(Profile):
    """A periodic motion about ``centre`` with per-joint ``amplitude`` (shared validation)."""

    _SPEED_FACTOR = 2.0 * math.pi  # peak |q̇| = factor·|A|/T

    def __init__(self, joint_names: Sequence[str], centre, amplitude, period: float, loop: bool = True):
        self.joint_names = checked_names(joint_names)
        self.centre = vector("centre", centre, self.n)
        self.amplitude = vector("amplitude", amplitude, self.n)
        self.period = duration("period", period)
        self.loop = bool(loop)
        with np.errstate(over="ignore"):
            extreme = np.abs(self.centre) + np.abs(self.amplitude)
            peak = self._SPEED_FACTOR * np.abs(self.amplitude) / self.period
        finite_rate("centre", extreme, "centre ± amplitude")
        finite_rate("amplitude", peak, "the peak velocity amplitude/period")


class SineProfile(_PeriodicProfile):
    """``q = centre + amplitude·sin(2πt/period)`` per joint.

    Args:
        joint_names: (n,) joints of the setpoint.
        centre: (n,) or scalar [rad], the mean position.
        amplitude: (n,) or scalar [rad]; 0 keeps a joint still (e.g. distal joints).
        period: [s] (≥ :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION`).
        loop: See :class:`Profile`.

    Raises:
        ConfigError / DimensionError: invalid names (not a list of strings, empty,
            duplicates), lengths or values, a period below :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION`, or an
            amplitude whose peak velocity ``2π·A/period`` is not finite.
    """

    def _at(self, t):
        w = 2.0 * math.pi / self.period
        return (self.centre + self.amplitude * math.sin(w * t), self.amplitude * w * math.cos(w * t), None)


class RampProfile(_PeriodicProfile):
    """Triangle wave: ``centre → centre+A`` (first quarter) ``→ centre−A → centre``.

    Constant speed ``4A/period`` [rad/s], sign flips at the turning points.

    Args: as :class:`SineProfile`.

    Raises: as :class:`SineProfile` (peak velocity ``4A/period``).
    """

    _SPEED_FACTOR = 4.0

    def _at(self, t):
        phase = t / self.period  # [0, 1]
        speed = 4.0 * self.amplitude / self.period
        if phase < 0.25:
            return self.centre + speed * t, speed.copy(), None
        if phase < 0.75:
            return self.centre + self.amplitude - speed * (t - 0.25 * self.period), -speed, None
        return self.centre - self.amplitude + speed * (t - 0.75 * self.period), speed.copy(), None
