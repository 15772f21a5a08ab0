"""Stiction dither: a zero-mean alternating torque that lowers the torque a resting joint needs to start.

Friction compensation from the measured velocity is 0 on a stuck joint (q̇ = 0 exactly), so
it cannot lower the breakaway. Dither can (Armstrong-Hélouvry, Dupont & Canudas de Wit, "A
survey of models, analysis tools and compensation methods for the control of machines with
friction", Automatica 30(7), 1994, §5 "dither"): per joint i, at setpoint time t [s],

.. math::

    \\tau_{d,i}(t) = (-1)^{\\lfloor 2 f_d t \\rfloor}\\, d\\, f_i\\, B_i^{\\pm}, \\qquad
    f_i = \\operatorname{clip}(2 - |\\dot q_i| / \\dot q_{db},\\ 0,\\ 1)

with ``d_i`` = ``dither`` [-] in [0, 0.95] (one number or one per joint) and ``q̇`` the
**measured** velocity before the deadband ``q̇_db``: the dither is whole within the deadband,
where the stage counts the joint at rest (a resting MIT motor reads up to ±½ LSB, e.g.
0.007 rad/s), and fades linearly to 0 at twice the deadband while the velocity-driven
compensation, on from the deadband, takes over. ``B^±`` is the model's breakaway torque at
rest in the half-period's direction (:func:`breakaway_at_rest`). A square wave of frequency
``f_d`` = ``dither_hz`` on the setpoints' clock: deterministic, the same in lockstep and on
hardware (the sign flips at each setpoint that starts a new half-period, so at or above the
setpoint rate it alternates per setpoint rather than alias to a constant push); zero-mean for
symmetric friction (with ``F_c^+ ≠ F_c^-`` each half uses its
direction's level).

Why a low frequency (default 5 Hz) and not half the setpoint rate: a joint that breaks away
in one half-period stops again in the next unless it reached the deadband by then. Measured
in lockstep (palletizer base_yaw, 500 Hz setpoints, external 0.08 N·m, movement in 1 s):
d = 0.7 at 50 Hz 0.8 mrad, at 12.5 Hz 3.2 mrad, at 5 Hz it ran (478 mrad); flipping at every
setpoint (250 Hz, d = 0.6) 0.02 mrad. The time to reach the deadband grows with the link
inertia over the torque excess, so a heavier arm needs a lower ``dither_hz``.

The creep rule, for a resting joint with a constant residual torque ``r`` (the hand, a
gravity error, a model offset): in the half-period that adds to ``r`` the joint feels
``|r| + d·B_model``, so it starts once ``|r| > B_true − d·B_model`` and otherwise stays
exactly as without dither. Hence ``d_i < (B_true,i − |r_i|) / B_model,i`` for every joint
that must hold still (docs/free_drive.md).

No rclpy import.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.friction.bam_solver import BamStack
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.validation import number, per_joint

__all__ = ["MAX_DITHER", "StictionDither", "breakaway_at_rest", "validate_dither", "validate_dither_hz"]

#: Dither must stay below the breakaway: at d = 1 any residual torque would start a joint.
MAX_DITHER = 0.95


def validate_dither(dither: Any, n: int) -> np.ndarray:
    """Check a dither fraction [-], one number or one per joint: finite, in [0, :data:`MAX_DITHER`].

    Returns:
        (n,) read-only float array.

    Raises:
        ConfigError: otherwise (key ``dither``). DimensionError: a list of another length.
    """
    value = per_joint("dither", dither, n, nonneg=True)
    if np.any(value > MAX_DITHER):
        raise ConfigError(
            f"dither must be ≤ {MAX_DITHER:g} (a fraction of the breakaway torque), got {value.tolist()}",
            key="dither",
            value=value.tolist(),
        )
    return value


def validate_dither_hz(frequency: float) -> float:
    """Check a dither frequency [Hz]: finite and > 0.

    Raises:
        ConfigError: otherwise (key ``dither_hz``).
    """
    return number("dither_hz", frequency, positive=True, unit="[Hz]")


def breakaway_at_rest(model: FrictionModel, load: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The model's breakaway torque at zero velocity, ``(B^+, B^-)`` (n,) each [N·m], ≥ 0.

    Coulomb joints: ``F_c^± + F_s`` (the Stribeck excess is whole at rest). BAM joints: their
    friction budget at rest (:meth:`~gravity_friction_comp.friction.bam_solver.BamStack.budget`
    at q̇ = 0 with the motor holding ``load`` against the external torque ``-load``; M1/M2:
    ``K_c + K_cs``), the same in both directions. Offsets are not breakaway and are left out.

    Args:
        model: The friction model.
        load: (n,) torque the motor holds [N·m] (the incoming effort); ``None``: 0.
    """
    p = model.params
    positive = p.breakaway_positive + p.stribeck_breakaway
    negative = p.breakaway_negative + p.stribeck_breakaway
    idx = [i for i, b in enumerate(p.bam) if b is not None] if model.model == "bam" else []
    if idx:
        stack = BamStack([b for b in p.bam if b is not None])  # idx order
        tau_m = np.zeros(len(idx)) if load is None else np.asarray(load, dtype=float)[idx]
        budget = stack.budget(np.zeros(len(idx)), tau_m, -tau_m)
        positive, negative = positive.copy(), negative.copy()
        positive[idx] += budget
        negative[idx] += budget
    return positive, negative


class StictionDither:
    """The alternating dither term of a friction stage (module docstring).

    Args:
        model: The friction model (its breakaway at rest is the amplitude's unit).
        dither: ``d`` [-], one number or (n,) (:func:`validate_dither`).
        deadband: ``q̇_db`` [rad/s], > 0: full dither up to it, 0 from twice it on.
        frequency_hz: ``f_d`` [Hz], > 0 (:func:`validate_dither_hz`).

    Raises:
        ConfigError: a value out of range (key named).
    """

    def __init__(self, model: FrictionModel, dither: float, deadband: float, frequency_hz: float):
        if not deadband > 0.0:
            raise ConfigError(
                "dither needs a velocity_deadband > 0 (its fade-out speed)", key="velocity_deadband"
            )
        self.dither = validate_dither(dither, model.n_joints)
        self.deadband = float(deadband)
        self.frequency_hz = validate_dither_hz(frequency_hz)
        self._model = model
        self._static: tuple[np.ndarray, np.ndarray] | None = None
        self._index: int | None = None  # half-period of the last setpoint (sign)
        self._sign = 1.0
        if not model.uses_load:
            self._static = breakaway_at_rest(model)

    def sign(self, t: float) -> float:
        """The square wave's sign at setpoint time ``t`` [s]: ``(-1)^floor(2·f_d·t)`` while
        every half-period holds a setpoint; it flips at each setpoint that starts a new one.

        Flipping instead of the parity keeps the wave zero-mean when ``dither_hz`` is at or
        above the setpoint rate: sampled parity there is constant (``f_d`` = the rate: every
        setpoint lands on an even half-period), a steady push of ``d·B`` instead of a dither.
        """
        # the 1e-9 keeps a stamp on a half-period boundary on one side however it rounds
        phase = 2.0 * self.frequency_hz * t + 1e-9
        # a finite t whose phase overflows (|t| beyond ~1e306 s: no stamp, a caller's clock):
        # a new half-period at each setpoint, so the wave still flips (math.floor(inf) raised)
        index = math.floor(phase) if math.isfinite(phase) else (self._index or 0) + 1
        if self._index is None:
            self._sign = 1.0 if index % 2 == 0 else -1.0
        elif index != self._index:
            self._sign = -self._sign
        self._index = index
        return self._sign

    def torque(self, measured_velocity: np.ndarray, t: float, load: np.ndarray | None = None) -> np.ndarray:
        """τ_d (n,) [N·m] at setpoint time ``t`` [s].

        Args:
            measured_velocity: (n,) measured q̇ before the deadband [rad/s].
            t: setpoint time [s].
            load: (n,) the incoming effort [N·m] (load-dependent BAM joints).
        """
        sign = self.sign(t)
        static = self._static if self._static is not None else breakaway_at_rest(self._model, load)
        positive, negative = static
        level = positive if sign > 0 else negative
        fade = np.clip(2.0 - np.abs(measured_velocity) / self.deadband, 0.0, 1.0)
        return sign * self.dither * fade * level + 0.0
