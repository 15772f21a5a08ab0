"""BAM friction candidates of the identification: prediction, fitting and BAM JSON output.

``bam_m3``–``bam_m6`` (Rhoban BAM, FIELD_NOTES "BAM friction models"; τ_m = effort,
τ_e = −g(q)) predict ``sign(v)·τ_fm(v, τ_m, τ_e) + F_o`` with ``τ_fm`` BAM's friction budget
evaluated by :meth:`~gravity_friction_comp.friction.bam.BamParameters.budget` (one definition
for fitting, evaluation and the written JSON). M4–M6 fit every coefficient of the BAM file
(bounded ≥ 0; the motor-side load coefficients ``K_l, K_ls`` / ``K_m, K_ms`` each ≤ 0.495 so
their sum stays below 1, the self-locking limit bam.py enforces) *and* the Stribeck velocity
θ̇_s ∈ [1e-4, 10] rad/s and exponent α ∈ [0.5, 5] plus the offset F_o. The linear ``bam_m3``
fit is in :mod:`~gravity_friction_comp.ident.fit`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gravity_friction_comp.friction.bam import _MODEL_KEYS as _BAM_KEYS
from gravity_friction_comp.friction.bam import COEFFICIENT_LIMITS, BamParameters

__all__ = ["BAM_NLS", "MOTOR_LOAD_MAX", "bam_dict", "bam_parameters", "bam_predictor", "fit_bam_nls"]

#: Load-dependent BAM candidates fitted by nonlinear least squares.
BAM_NLS = ("bam_m4", "bam_m5", "bam_m6")


def bam_parameters(name: str, p: Mapping[str, float]) -> BamParameters:
    """BamParameters of fit ``name`` (``bam_m4``…) from its params (BAM keys; ``offset``
    is ours and not part of BAM). Raises ConfigError for values bam.py rejects."""
    model = name[len("bam_") :]
    coefficients: dict[str, Any] = {k: p[k] for k in _BAM_KEYS[model]}
    return BamParameters(model=model, actuator="identified", **coefficients)


def bam_predictor(name: str) -> Callable:
    """``predict(params, v, load, tau_m, tau_e) -> τ_f`` (m,) [N·m] of BAM candidate ``name``."""

    def predict(p, v, load, tau_m, tau_e):
        # BAM's simulator: friction takes its full budget against the motion (bam.py doc)
        return np.sign(v) * bam_parameters(name, p).budget(v, tau_m, tau_e) + p["offset"]

    return predict


#: Upper bound of each motor-side load coefficient (K_l, K_ls, K_m, K_ms): two of them sum
#: below 1, bam.py's self-locking limit (BamParameters.load_slope).
MOTOR_LOAD_MAX = 0.495
_MOTOR_LOAD_KEYS = (
    "load_friction_base",
    "load_friction_stribeck",
    "load_friction_motor",
    "load_friction_motor_stribeck",
)


def fit_bam_nls(fits, add, nls, vt, rt, tmt, tet) -> None:
    """Fit BAM m4, m5, m6 (+ offset) by bounded nonlinear least squares; each starts from
    the simpler fit (m4 from m3 and stribeck, m5 from m4 with K_e = K_m = K_l and
    K_es = K_ms = K_ls, which is m4 exactly, m6 from m5 with zero quadratic terms)."""
    m3, st = fits["bam_m3"].params, fits["stribeck"].params
    start = {
        "friction_base": max(st["breakaway"], 1e-4),
        "friction_viscous": max(m3["friction_viscous"], 0.0),
        "friction_stribeck": max(st["stribeck_breakaway"], 1e-4),
        "load_friction_base": min(max(m3["load_friction_base"], 1e-3), 0.4),
        "load_friction_stribeck": 1e-3,
        "dtheta_stribeck": st["stribeck_velocity"],
        "alpha": st["stribeck_exponent"],
        "offset": m3["offset"],
    }
    sv = np.sign(vt)
    for name in BAM_NLS:
        keys = _BAM_KEYS[name[len("bam_") :]] + ("offset",)
        lb = [
            -np.inf if k == "offset" else 1e-4 if k == "dtheta_stribeck" else 0.5 if k == "alpha" else 0.0
            for k in keys
        ]
        # BamParameters refuses coefficients beyond its plausibility limits: the residual
        # must never ask it for one
        ub = [
            np.inf
            if k in ("offset",)
            else 10.0
            if k == "dtheta_stribeck"
            else 5.0
            if k == "alpha"
            else MOTOR_LOAD_MAX
            if k in _MOTOR_LOAD_KEYS
            else COEFFICIENT_LIMITS[k][0]
            if k in COEFFICIENT_LIMITS
            else np.inf
            for k in keys
        ]
        x0 = np.clip([start.get(k, 0.0) for k in keys], lb, ub)

        def resid(x, keys=keys, name=name):
            p = dict(zip(keys, x))
            return sv * bam_parameters(name, p).budget(vt, tmt, tet) + p["offset"] - rt

        x = nls(resid, x0, lb, ub)
        p = dict(zip(keys, (float(y) for y in x)))
        add(name, p, len(keys))
        # the next model's start: this fit written in its general form
        start = dict(p)
        if name == "bam_m4":
            start.update(
                load_friction_motor=p["load_friction_base"],
                load_friction_external=p["load_friction_base"],
                load_friction_motor_stribeck=p["load_friction_stribeck"],
                load_friction_external_stribeck=p["load_friction_stribeck"],
            )


def bam_dict(name: str, params: Mapping[str, float]) -> dict[str, Any]:
    if name == "coulomb_viscous":
        # BAM (bam.py) requires coefficients >= 0; an unbounded linear fit can go below
        return {
            "model": "m1",
            "actuator": "identified",
            "friction_base": max(params["breakaway"], 0.0),
            "friction_viscous": max(params["viscous"], 0.0),
        }
    if name == "stribeck":
        return {
            "model": "m2",
            "actuator": "identified",
            "friction_base": params["breakaway"],
            "friction_viscous": params["viscous"],
            "friction_stribeck": params["stribeck_breakaway"],
            "dtheta_stribeck": params["stribeck_velocity"],
            "alpha": params["stribeck_exponent"],
        }
    if name == "bam_m3":
        return {
            "model": "m3",
            "actuator": "identified",
            "friction_base": max(params["friction_base"], 0.0),
            "friction_viscous": max(params["friction_viscous"], 0.0),
            "load_friction_base": min(max(params["load_friction_base"], 0.0), MOTOR_LOAD_MAX),
        }
    return bam_parameters(name, params).to_dict()
