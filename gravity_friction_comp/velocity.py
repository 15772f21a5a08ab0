"""Joint velocity for the friction stage: filtered differentiation and a standstill deadband.

Two facts shape it (FIELD_NOTES): a setpoint may carry no velocity, and MIT feedback cannot
encode 0 rad/s (it reads ±½ LSB at rest), so a friction term driven by the measured sign
dithers at standstill unless small velocities are zeroed.
"""

from __future__ import annotations

import math

import numpy as np

from .exceptions import ConfigError

__all__ = ["VelocityEstimator", "apply_deadband", "validate_cutoff", "validate_deadband"]


def validate_cutoff(cutoff_hz: float) -> float:
    """Check a low-pass cutoff frequency [Hz]: finite and > 0.

    Raises:
        ConfigError: otherwise (key ``velocity_cutoff_hz``).
    """
    if isinstance(cutoff_hz, bool) or not isinstance(cutoff_hz, (int, float)) \
            or not math.isfinite(cutoff_hz) or cutoff_hz <= 0.0:
        raise ConfigError(f"velocity_cutoff_hz must be finite and > 0 [Hz], got {cutoff_hz!r}",
                          key="velocity_cutoff_hz", value=cutoff_hz)
    return float(cutoff_hz)


def validate_deadband(deadband: float) -> float:
    """Check a velocity deadband [rad/s]: finite and ≥ 0.

    Raises:
        ConfigError: otherwise (key ``velocity_deadband``).
    """
    if isinstance(deadband, bool) or not isinstance(deadband, (int, float)) \
            or not math.isfinite(deadband) or deadband < 0.0:
        raise ConfigError(f"velocity_deadband must be finite and >= 0 [rad/s], got {deadband!r}",
                          key="velocity_deadband", value=deadband)
    return float(deadband)


def apply_deadband(velocity: np.ndarray, deadband: float) -> np.ndarray:
    """Zero the velocities with ``|v| <= deadband`` (returns a new (n,) array [rad/s]).

    With ``deadband`` above ½ LSB of the motor's velocity field (DM4340: 0.0024 rad/s), a
    joint at rest reads exactly 0 and gets no friction torque.
    """
    velocity = np.asarray(velocity, dtype=float)
    if deadband <= 0.0:
        return velocity.copy()
    return np.where(np.abs(velocity) <= deadband, 0.0, velocity)


class VelocityEstimator:
    """Velocity from successive positions: backward difference through a first-order low-pass.

    .. math::

        \\hat v_k = \\hat v_{k-1} + \\alpha\\,\\Big(\\frac{q_k - q_{k-1}}{\\Delta t} - \\hat v_{k-1}\\Big),
        \\qquad \\alpha = \\frac{\\Delta t}{\\Delta t + 1/(2\\pi f_c)}

    (exact discretisation of an RC low-pass with the backward-Euler rule; e.g. Franklin,
    Powell & Workman, *Digital Control of Dynamic Systems*, ch. 6).

    Args:
        n: Number of joints.
        cutoff_hz: Low-pass cutoff f_c [Hz], > 0.

    Raises:
        ConfigError: invalid cutoff.
    """

    def __init__(self, n: int, cutoff_hz: float):
        self._n = int(n)
        self._tau = 1.0 / (2.0 * math.pi * validate_cutoff(cutoff_hz))
        self._last_q: np.ndarray | None = None
        self._last_t: float | None = None
        self._v = np.zeros(self._n)

    def reset(self) -> None:
        """Forget history; the next update returns zeros."""
        self._last_q = None
        self._last_t = None
        self._v = np.zeros(self._n)

    def update(self, position: np.ndarray, t: float) -> np.ndarray:
        """Feed one sample and return the filtered velocity.

        Args:
            position: (n,) [rad].
            t: Sample time [s]; a sample not later than the previous one is ignored (repeated
                or reordered stamps must not divide by zero).

        Returns:
            (n,) filtered velocity [rad/s] (a copy).
        """
        q = np.asarray(position, dtype=float)
        if self._last_q is None or q.shape != self._last_q.shape:
            self._last_q, self._last_t = q.copy(), t
            self._v = np.zeros(q.shape)
            return self._v.copy()
        dt = t - self._last_t
        if not dt > 0.0:
            return self._v.copy()
        alpha = dt / (dt + self._tau)
        self._v += alpha * ((q - self._last_q) / dt - self._v)
        self._last_q, self._last_t = q.copy(), t
        return self._v.copy()
