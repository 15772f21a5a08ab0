"""Joint velocity for the friction stage: filtered differentiation and a standstill deadband.

Two facts shape it (FIELD_NOTES): a setpoint may carry no velocity, and MIT feedback cannot
encode 0 rad/s (it reads ±½ LSB at rest), so a friction term driven by the measured sign
dithers at standstill unless small velocities are zeroed.
"""

from __future__ import annotations

import math

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.validation import MAX_PLAUSIBLE_VELOCITY, number

__all__ = [
    "MAX_PLAUSIBLE_VELOCITY",
    "MIN_JUMP",
    "VELOCITY_SOURCES",
    "VelocityEstimator",
    "VelocitySelector",
    "apply_deadband",
    "validate_cutoff",
    "validate_deadband",
    "validate_velocity_source",
]

#: Where the friction stage takes q̇ from.
VELOCITY_SOURCES = ("setpoint", "measured", "differentiated")


#: [rad or m] the smallest step that can be a jump: two setpoints handled microseconds apart
#: (unstamped, or bunched by the transport) give huge difference quotients from tiny steps.
MIN_JUMP = 0.5


def validate_velocity_source(source: str) -> str:
    """Check a velocity source name.

    Raises:
        ConfigError: not one of :data:`VELOCITY_SOURCES` (key ``velocity_source``).
    """
    if source not in VELOCITY_SOURCES:
        raise ConfigError(
            f"velocity_source {source!r} unknown; valid choices: " + ", ".join(VELOCITY_SOURCES),
            key="velocity_source",
            value=source,
        )
    return source


def validate_cutoff(cutoff_hz: float) -> float:
    """Check a low-pass cutoff frequency [Hz]: finite and > 0.

    Raises:
        ConfigError: otherwise (key ``velocity_cutoff_hz``).
    """
    return number("velocity_cutoff_hz", cutoff_hz, positive=True, unit="[Hz]")


def validate_deadband(deadband: float) -> float:
    """Check a velocity deadband [rad/s]: finite and ≥ 0.

    Raises:
        ConfigError: otherwise (key ``velocity_deadband``).
    """
    return number("velocity_deadband", deadband, nonneg=True, unit="[rad/s]")


def apply_deadband(velocity: np.ndarray, deadband: float | np.ndarray) -> np.ndarray:
    """Zero the velocities with ``|v| <= deadband`` (returns a new array of ``velocity``'s
    shape [rad/s]: (n,), or a (k, n) batch); ``deadband`` one number or (n,), one per joint.

    With ``deadband`` above ½ LSB of the motor's velocity field (DM4340: 0.0024 rad/s), a
    joint at rest reads exactly 0 and gets no friction torque.
    """
    velocity = np.asarray(velocity, dtype=float)
    if isinstance(deadband, np.ndarray) or velocity.ndim != 1:  # (the loop below: one joint axis)
        return np.where(np.abs(velocity) <= deadband, 0.0, velocity)
    if deadband <= 0.0:
        return velocity.copy()
    # one number, a few joints: on Python floats (cheaper than numpy's calls), same values
    return np.array([0.0 if abs(v) <= deadband else v for v in velocity.tolist()])


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
        detect_jumps: Restart the filter (q̇ = 0 from that sample on) at a step larger than
            :data:`MIN_JUMP` and faster than :data:`MAX_PLAUSIBLE_VELOCITY`, instead of letting
            one bad position sample ring through it for seconds. For positions only: the
            thresholds are no bound for differentiated velocities (accelerations).

    Raises:
        ConfigError: invalid cutoff.
    """

    def __init__(self, n: int, cutoff_hz: float, *, detect_jumps: bool = False):
        self._n = int(n)
        self._detect_jumps = bool(detect_jumps)
        self._tau = 1.0 / (2.0 * math.pi * validate_cutoff(cutoff_hz))
        self._last_q: np.ndarray | None = None
        self._last_t = 0.0  # [s] meaningful only while _last_q is set
        self._v = np.zeros(self._n)
        #: Jumps that restarted the filter (``detect_jumps``).
        self.jumps = 0

    def reset(self) -> None:
        """Forget history; the next update returns zeros."""
        self._last_q = None
        self._last_t = 0.0
        self._v = np.zeros(self._n)

    def update(self, position: np.ndarray, t: float) -> np.ndarray:
        """Feed one sample and return the filtered velocity.

        Args:
            position: (n,) [rad].
            t: Sample time [s]; a sample not later than the previous one is ignored (repeated
                or reordered stamps must not divide by zero).

        Returns:
            (n,) filtered velocity [rad/s] (a copy); zeros at a jump (``detect_jumps``,
            counted in :attr:`jumps`).
        """
        q = np.asarray(position, dtype=float)
        if self._last_q is None or q.shape != self._last_q.shape:
            self._last_q, self._last_t = q.copy(), t
            self._v = np.zeros(q.shape)
            return self._v.copy()
        dt = t - self._last_t
        if not dt > 0.0:
            return self._v.copy()
        step = q - self._last_q
        self._last_q, self._last_t = q.copy(), t
        if self._detect_jumps:
            limit = max(MIN_JUMP, MAX_PLAUSIBLE_VELOCITY * dt)
            if np.count_nonzero(np.abs(step) <= limit) != step.size:  # NaN/overflow too
                self.jumps += 1
                self._v = np.zeros(q.shape)
                return self._v.copy()
        rate = step / dt  # after the jump check: a huge step over a tiny dt overflows
        alpha = dt / (dt + self._tau)
        self._v += alpha * (rate - self._v)
        return self._v.copy()


class VelocitySelector:
    """The friction stage's q̇: from the setpoint, the measurement, or differentiated positions.

    ``setpoint`` uses the setpoint's velocity and falls back to ``differentiated`` when a
    setpoint has none (:attr:`fell_back` tells the caller to warn once). ``measured`` uses the
    latest measured velocity (zeros until one arrives). The deadband applies to all sources.

    Args:
        n: Number of joints.
        source: One of :data:`VELOCITY_SOURCES`.
        cutoff_hz: Low-pass cutoff of the differentiation [Hz], > 0.
        deadband: |q̇| at or below this is 0 [rad/s], ≥ 0.

    Raises:
        ConfigError: invalid source, cutoff or deadband.
    """

    def __init__(self, n: int, source: str, cutoff_hz: float, deadband: float):
        self.source = validate_velocity_source(source)
        self.deadband = validate_deadband(deadband)
        self._estimator = VelocityEstimator(n, cutoff_hz, detect_jumps=True)
        self._measured = np.zeros(int(n))
        self._unfiltered: tuple[np.ndarray, float] | None = None  # last sample not yet filtered
        self.fell_back = False

    @property
    def jumps(self) -> int:
        """Position jumps the differentiator has restarted at (see :class:`VelocityEstimator`)."""
        return self._estimator.jumps

    def update_measured(self, velocity: np.ndarray) -> None:
        """Store the latest measured velocity, (n,) [rad/s] in the stage's joint order."""
        self._measured = np.array(velocity, dtype=float)

    def velocity(self, position: np.ndarray, velocity: np.ndarray | None, t: float) -> np.ndarray:
        """q̇ for one setpoint, (n,) [rad/s].

        Args:
            position: (n,) setpoint position [rad]; kept (not copied: treat it as read-only)
                so that a later switch to differentiation starts from the previous sample.
            velocity: (n,) setpoint velocity [rad/s] or ``None``.
            t: Setpoint time [s].

        The differentiator only runs while it is the source (it is most of this call's
        cost): after a switch its first output is the filtered difference from the last
        sample with the filter state starting at 0.
        """
        if self.source == "measured":
            chosen = self._measured
        elif self.source == "setpoint" and velocity is not None:
            chosen = velocity
        else:
            if self.source == "setpoint":
                self.fell_back = True
            if self._unfiltered is not None:
                self._estimator.reset()
                self._estimator.update(*self._unfiltered)
                self._unfiltered = None
            return apply_deadband(self._estimator.update(position, t), self.deadband)
        self._unfiltered = (position, t)
        return apply_deadband(chosen, self.deadband)
