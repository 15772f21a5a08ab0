"""Friction-model fitting of one joint: the candidate models, their fits and hold-out RMS.

Candidate models (friction/models.py equation, ``F_o`` = offset absorbs gravity-model error
and any direction asymmetry, which is why separate ``F_c^±`` are not fitted: with the offset
they are not identifiable from moving samples):

================  ==============================================  ======  ============
name              τ_f(v)                                          params  fit
================  ==============================================  ======  ============
coulomb_viscous   F_c·sign(v) + F_v·v + F_o  (= BAM m1 + offset)  3       numpy lstsq¹
coulomb_tanh      F_c·tanh(v/ε) + F_v·v + F_o                     4       SciPy least_squares
stribeck          (F_c + F_s e^{−|v/v_s|^δ})·tanh(v/ε) + F_v·v    7       SciPy least_squares
                  + F_o  (= BAM m2 + offset)
bam_m3            sign(v)(K_c + K_l|τ_e − τ_m|) + K_v v + F_o     4       numpy lstsq¹
bam_m4            sign(v)·τ_fm^{m4}(v, τ_m, τ_e) + F_o            8       SciPy least_squares
bam_m5            sign(v)·τ_fm^{m5}(v, τ_m, τ_e) + F_o            10      SciPy least_squares
bam_m6            sign(v)·τ_fm^{m6}(v, τ_m, τ_e) + F_o            12      SciPy least_squares
================  ==============================================  ======  ============

¹ refitted with bounds (SciPy ``lsq_linear``; coefficients ≥ 0, K_l ≤ 0.495) when the
unconstrained solution leaves them, so every reported RMS is that of the coefficients
written. Before fitting, the mean friction along the motion of the unconstrained
Coulomb + viscous fit must not be significantly negative: friction pushing along the
motion means the log's effort or velocity sign convention is reversed (an error).

``bam_m3``–``bam_m6`` (:mod:`~gravity_friction_comp.ident.bam_fit`) are fitted only when the
load is identifiable: the standard deviation of ``|τ_e − τ_m|`` over the training samples is
at least ``min_load_spread`` [N·m]; otherwise the result says so (``skipped``). BAM uses
sign(v) (no tanh), as M1/M3 here. The motor/external split of M5/M6 is identified only
through the difference ``τ_m + τ_e`` (friction and inertia): it is weakly determined on slow
sweeps. ``ε`` is only identifiable when the log holds motion at |v| ≈ ε; it is bounded to
``[eps_min, eps_max]``, and a fit at the bound or below the slowest sample is reported as
not identifiable (the YAML then gets the default smoothing ε).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from gravity_friction_comp.errors import IdentificationError, Reason
from gravity_friction_comp.ident.bam_fit import BAM_NLS, MOTOR_LOAD_MAX, bam_predictor, fit_bam_nls
from gravity_friction_comp.ident.select import select_model

if TYPE_CHECKING:
    from gravity_friction_comp.ident.identify import IdentificationConfig

__all__ = ["EPS_NOT_IDENTIFIED", "NOT_IDENTIFIED", "JointFit", "ModelFit", "fit_joint"]


@dataclasses.dataclass(frozen=True)
class ModelFit:
    """One fitted candidate model of one joint.

    Attributes:
        name: one of :data:`CANDIDATE_MODELS`.
        params: coefficient name → value (friction.py names: ``breakaway`` [N·m],
            ``viscous`` [N·m·s/rad], ``offset`` [N·m], ``eps`` [rad/s], ``stribeck_*``; BAM
            names for ``bam_m3``–``bam_m6``, plus ``offset``).
        n_params: number of fitted parameters.
        train_rms, validation_rms: RMS of (data − model) [N·m].
        notes: remarks (e.g. ``"eps not identifiable: at the lower bound"``).
    """

    name: str
    params: Mapping[str, float]
    n_params: int
    train_rms: float
    validation_rms: float
    notes: tuple[str, ...] = ()

    def predict(self, velocity: np.ndarray, *, tau_m: np.ndarray, tau_e: np.ndarray) -> np.ndarray:
        """Model friction τ_f [N·m] at velocities (m,) [rad/s], BAM motor torque ``tau_m``
        (effort) and external torque ``tau_e`` (−g(q)) (m,) [N·m] (the ``bam_`` models use
        them; m3/m4 through the load ``|τ_e − τ_m|``)."""
        velocity = np.asarray(velocity, dtype=float)
        tau_m = np.asarray(tau_m, dtype=float)
        tau_e = np.asarray(tau_e, dtype=float)
        return _PREDICT[self.name](self.params, velocity, np.abs(tau_e - tau_m), tau_m, tau_e)


@dataclasses.dataclass(frozen=True)
class JointFit:
    """Fits of one joint.

    Attributes:
        joint: name. fits: candidate name → :class:`ModelFit`. selected: chosen name.
        n_train, n_validation: samples used. skipped: model name → reason not fitted.
        time, velocity, friction, load, is_validation: the samples used (plots), (k,) each.
        tau_m, tau_e: BAM motor torque (effort) and external torque (−g(q)) [N·m] of the
            samples used, (k,) each.
        warnings: texts for the user (friction not resolved above the noise; identified
            friction above the URDF effort limit: wrong units or scale of the log; not
            identified).
        friction_level: [N·m] the joint's friction along the motion, breakaway + viscous ×
            mean |v| of the coulomb_viscous fit: a model whose validation RMS exceeds it is
            not identified (a note) and not selected; ``selected`` is ``""`` when none is left.
    """

    joint: str
    fits: Mapping[str, ModelFit]
    selected: str
    n_train: int
    n_validation: int
    skipped: Mapping[str, str]
    time: np.ndarray
    velocity: np.ndarray
    friction: np.ndarray
    load: np.ndarray
    is_validation: np.ndarray
    tau_m: np.ndarray
    tau_e: np.ndarray
    warnings: tuple[str, ...] = ()
    friction_level: float = math.inf

    @property
    def identified(self) -> bool:
        """Whether a model was selected (some fit's validation RMS within the friction level)."""
        return bool(self.selected)

    @property
    def best(self) -> ModelFit:
        """The selected :class:`ModelFit` (KeyError when not :attr:`identified`)."""
        return self.fits[self.selected]


def _p_cv(p, v, load, tau_m=None, tau_e=None):
    return p["breakaway"] * np.sign(v) + p["viscous"] * v + p["offset"]


#: Note (and warning) prefix of a model whose validation RMS exceeds the joint's friction level.
NOT_IDENTIFIED = "not identified"

#: Note prefix on a fit whose ε the data cannot resolve.
EPS_NOT_IDENTIFIED = "eps not identifiable"


def _eps_notes(eps: float, v_slowest: float, cfg: IdentificationConfig) -> tuple[str, ...]:
    """Why a fitted tanh scale ε is not identified, if it is not.

    ε sets where tanh(v/ε) turns over. Samples only exist at |v| ≥ ``v_slowest`` (the
    stuck band below ``min_velocity`` is excluded), so a fitted ε at its lower bound or below
    the slowest sample describes a transition no sample lies in: the data cannot tell it from
    any smaller ε, and the friction YAML gets the default smoothing instead.
    """
    if eps <= cfg.eps_min * 1.01:
        return (f"{EPS_NOT_IDENTIFIED}: at the lower bound",)
    if eps < v_slowest:
        return (f"{EPS_NOT_IDENTIFIED}: {eps:.4g} rad/s is below the slowest sample ({v_slowest:.4g} rad/s)",)
    return ()


def _p_tanh(p, v, load, tau_m=None, tau_e=None):
    return p["breakaway"] * np.tanh(v / p["eps"]) + p["viscous"] * v + p["offset"]


def _p_stribeck(p, v, load, tau_m=None, tau_e=None):
    level = p["breakaway"] + p["stribeck_breakaway"] * np.exp(
        -(np.abs(v / p["stribeck_velocity"]) ** p["stribeck_exponent"])
    )
    return level * np.tanh(v / p["eps"]) + p["viscous"] * v + p["offset"]


def _p_m3(p, v, load, tau_m=None, tau_e=None):
    return (
        np.sign(v) * (p["friction_base"] + p["load_friction_base"] * load)
        + p["friction_viscous"] * v
        + p["offset"]
    )


_PREDICT: dict[str, Callable] = {
    "coulomb_viscous": _p_cv,
    "coulomb_tanh": _p_tanh,
    "stribeck": _p_stribeck,
    "bam_m3": _p_m3,
    **{name: bam_predictor(name) for name in BAM_NLS},
}


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x**2))) if x.size else float("nan")


def fit_joint(
    joint: str,
    t: np.ndarray,
    v: np.ndarray,
    r: np.ndarray,
    tau_m: np.ndarray,
    tau_e: np.ndarray,
    val: np.ndarray,
    cfg: IdentificationConfig,
    progress: Callable[[str], None],
    effort_limit: float = math.inf,
) -> JointFit:
    """Fit every candidate model to one joint's friction samples and select one.

    Args:
        joint: name (for messages).
        t, v, r: (k,) time [s], velocity [rad/s] and friction sample [N·m] of the samples used.
        tau_m, tau_e: (k,) BAM motor torque (effort) and external torque (−g(q)) [N·m].
        val: (k,) bool, True for validation samples.
        cfg: settings (ε bounds, load spread, selection threshold).
        progress: called with a short text after each fit step.
        effort_limit: URDF effort limit [N·m]; friction above it is a warning.

    Raises:
        IdentificationError: friction pushing along the motion (``Reason.SIGN``).
    """
    from scipy.optimize import least_squares

    tr = ~val
    load = np.abs(tau_e - tau_m)
    vt, rt, lt = v[tr], r[tr], load[tr]
    fits: dict[str, ModelFit] = {}
    skipped: dict[str, str] = {}

    def add(name, params, n_params, notes=()):
        m = ModelFit(name, {k: float(x) for k, x in params.items()}, n_params, 0.0, 0.0, notes)
        m = dataclasses.replace(
            m,
            train_rms=_rms(rt - m.predict(vt, tau_m=tau_m[tr], tau_e=tau_e[tr])),
            validation_rms=_rms(r[val] - m.predict(v[val], tau_m=tau_m[val], tau_e=tau_e[val])),
        )
        fits[name] = m

    # Coulomb + viscous + offset: linear least squares
    a = np.column_stack([np.sign(vt), vt, np.ones_like(vt)])
    x_free, *_ = np.linalg.lstsq(a, rt, rcond=None)
    warnings = list(_direction_check(joint, a, rt, x_free, float(np.mean(np.abs(vt)))))
    (fc, fv, fo), notes = _bounded_lstsq(
        a, rt, x_free, [0.0, 0.0, -np.inf], [np.inf, np.inf, np.inf], ("breakaway", "viscous", "offset")
    )
    add("coulomb_viscous", {"breakaway": fc, "viscous": fv, "offset": fo}, 3, notes)
    progress(f"{joint}: coulomb_viscous")

    # BAM m3: linear in (K_c, K_l, K_v, F_o) once the load term is fixed
    spread = float(np.std(lt))
    if spread >= cfg.min_load_spread:
        a3 = np.column_stack([np.sign(vt), np.sign(vt) * lt, vt, np.ones_like(vt)])
        x3, *_ = np.linalg.lstsq(a3, rt, rcond=None)
        (kc, kl, kv, fo3), notes = _bounded_lstsq(
            a3,
            rt,
            x3,
            [0.0, 0.0, 0.0, -np.inf],
            [np.inf, MOTOR_LOAD_MAX, np.inf, np.inf],
            ("friction_base", "load_friction_base", "friction_viscous", "offset"),
        )
        add(
            "bam_m3",
            {"friction_base": kc, "load_friction_base": kl, "friction_viscous": kv, "offset": fo3},
            4,
            notes,
        )
    else:
        for name in ("bam_m3",) + BAM_NLS:
            skipped[name] = (
                f"load |τ_e − τ_m| varies too little (std {spread:.3g} N·m < "
                f"{cfg.min_load_spread:g}) to identify load terms"
            )

    def nls(fun, x0, lb, ub):
        # lsmr: the "exact" trust-region solver takes a full SVD of the (m, p) Jacobian
        res = least_squares(
            fun,
            x0,
            bounds=(lb, ub),
            method="trf",
            x_scale="jac",
            tr_solver="lsmr",
            max_nfev=300,
            loss="soft_l1",
            f_scale=max(3 * fits["coulomb_viscous"].train_rms, 1e-6),
        )
        return res.x

    fc0, fv0 = max(fc, 1e-4), max(fv, 0.0)
    eps0 = max(cfg.eps_min * 2, min(cfg.eps_max / 2, 0.01))
    x = nls(
        lambda x: _p_tanh(dict(breakaway=x[0], viscous=x[1], offset=x[2], eps=x[3]), vt, lt) - rt,
        [fc0, fv0, fo, eps0],
        [0, 0, -np.inf, cfg.eps_min],
        [np.inf, np.inf, np.inf, cfg.eps_max],
    )
    vmin = float(np.min(np.abs(vt)))
    vmed = float(np.median(np.abs(vt)))
    notes = _eps_notes(x[3], vmin, cfg)
    add("coulomb_tanh", dict(breakaway=x[0], viscous=x[1], offset=x[2], eps=x[3]), 4, notes)
    progress(f"{joint}: coulomb_tanh")

    keys = (
        "breakaway",
        "viscous",
        "offset",
        "eps",
        "stribeck_breakaway",
        "stribeck_velocity",
        "stribeck_exponent",
    )

    def strib(x):
        return _p_stribeck(dict(zip(keys, x)), vt, lt) - rt

    best: tuple[float, np.ndarray] | None = None
    for vs0 in (2 * vmin, 0.5 * vmed, vmed):  # a few starts: v_s is the hard direction
        x0 = [fc0 * 0.8, fv0, fo, eps0, fc0 * 0.3, max(vs0, 1e-3), 2.0]
        x = nls(
            strib,
            x0,
            [0, 0, -np.inf, cfg.eps_min, 0, 1e-4, 0.5],
            [np.inf, np.inf, np.inf, cfg.eps_max, np.inf, 10.0, 5.0],
        )
        cost = float(np.sum(strib(x) ** 2))
        if best is None or cost < best[0]:
            best = (cost, x)
    x = best[1]  # type: ignore[index]  # three starts: never None
    st_notes = list(_eps_notes(x[3], vmin, cfg))
    if x[5] < vmin:
        st_notes.append("stribeck_velocity below the slowest sample: poorly determined")
    add("stribeck", dict(zip(keys, x)), 7, tuple(st_notes))
    progress(f"{joint}: stribeck")

    if "bam_m3" in fits:
        fit_bam_nls(fits, add, nls, vt, rt, tau_m[tr], tau_e[tr])
    progress(f"{joint}: bam")

    cv = fits["coulomb_viscous"].params
    level = max(cv["breakaway"] + cv["viscous"] * float(np.mean(np.abs(vt))), 0.0)
    for name, m in list(fits.items()):
        if not m.validation_rms <= level:  # NaN too
            fits[name] = dataclasses.replace(
                m,
                notes=m.notes
                + (
                    f"{NOT_IDENTIFIED}: validation RMS {m.validation_rms:.3g} N·m above the joint's "
                    f"friction level {level:.3g} N·m",
                ),
            )
    kept = {name: m for name, m in fits.items() if m.validation_rms <= level}
    selected = select_model(kept, cfg.improvement_threshold) if kept else ""
    if not selected:
        warnings.append(
            f"joint {joint}: {NOT_IDENTIFIED}: every model's validation RMS (best "
            f"{min(m.validation_rms for m in fits.values()):.3g} N·m) is above its friction level "
            f"{level:.3g} N·m (breakaway + viscous × mean |v| of coulomb_viscous): the fit explains "
            "less than the noise around it; no friction written for it"
        )
    peak = float(np.max(np.abs(fits[selected].predict(v, tau_m=tau_m, tau_e=tau_e)))) if selected else 0.0
    if peak > effort_limit:
        warnings.append(
            f"joint {joint}: the identified friction ({selected}) reaches {peak:.4g} N·m over "
            f"the logged velocities, above the URDF effort limit {effort_limit:g} N·m: the "
            "log's effort is probably in other units or scaled (or the URDF limit is wrong); "
            "check before using the YAML"
        )
    return JointFit(
        joint,
        fits,
        selected,
        int(tr.sum()),
        int(val.sum()),
        skipped,
        t,
        v,
        r,
        load,
        val,
        tau_m,
        tau_e,
        tuple(warnings),
        level,
    )


#: Significance of the mean friction along the motion in :func:`_direction_check`: this
#: many standard errors (white-noise estimate, hence generous) and this share of the

_SIGN_SIGMAS = 5.0
_SIGN_FLOOR = 1e-3


def _direction_check(
    joint: str, a: np.ndarray, r: np.ndarray, x: np.ndarray, mean_speed: float
) -> tuple[str, ...]:
    """Check that the friction opposes the motion (dissipates energy).

    ``D = F_c + F_v·mean|v|`` of the unconstrained Coulomb + viscous fit ``x`` (columns of
    ``a``: sign(v), v, 1) is the mean friction along the direction of motion; its standard
    error ``σ_D`` is the least-squares one, ``sqrt(s² gᵀ(AᵀA)⁻¹g)``, g = (1, mean|v|, 0).
    Individual negative coefficients are legitimate (a Stribeck drop gives F_v < 0 in this
    linear fit), a negative D is not: the log's effort pushes along the motion.

    Returns:
        Warnings: one when D is not significantly above zero (no friction resolved).

    Raises:
        IdentificationError: reason ``Reason.SIGN`` when ``D < −(5 σ_D + 1e-3·rms(r))``: the
            effort or the velocity sign convention of the log is reversed.
    """
    fc, fv = float(x[0]), float(x[1])
    d = fc + fv * mean_speed
    resid = r - a @ x
    dof = max(r.size - a.shape[1], 1)
    g = np.array([1.0, mean_speed, 0.0])
    # pinv: with one speed magnitude sign(v) and v are collinear, D is still determined
    var = float(np.sum(resid**2) / dof * (g @ np.linalg.pinv(a.T @ a) @ g))
    margin = _SIGN_SIGMAS * math.sqrt(max(var, 0.0)) + _SIGN_FLOOR * _rms(r)
    if d < -margin:
        raise IdentificationError(
            f"joint {joint}: the fitted friction pushes along the motion (breakaway "
            f"{fc:.4g} N·m, viscous {fv:.4g} N·m·s/rad: mean {d:.4g} N·m along the motion); "
            "friction must oppose the velocity, so the effort or the velocity sign "
            "convention of the log is probably reversed (negate one of them)",
            reason=Reason.SIGN,
        )
    if d <= margin:
        return (
            f"joint {joint}: no friction opposing the motion resolved (mean {d:.3g} ± "
            f"{math.sqrt(max(var, 0.0)):.2g} N·m along the motion): the YAML gets about "
            "0 for it; if the joint has friction, check the effort sign convention and "
            "the effort noise",
        )
    return ()


def _bounded_lstsq(
    a: np.ndarray, r: np.ndarray, x: np.ndarray, lb, ub, keys: Sequence[str]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """The least-squares solution ``x`` of ``a·x ≈ r`` if within ``[lb, ub]``, else the
    bounded one (SciPy ``lsq_linear``, BVLS), so the reported fit and RMS are those of the
    coefficients the YAML/BAM files can hold (friction.py and bam.py require them ≥ 0).

    Returns:
        ``(x, notes)``; notes name the coefficients that were bounded.
    """
    lb, ub = np.asarray(lb, dtype=float), np.asarray(ub, dtype=float)
    if np.all((x >= lb) & (x <= ub)):
        return x, ()
    from scipy.optimize import lsq_linear

    out = np.clip(lsq_linear(a, r, bounds=(lb, ub), method="bvls").x, lb, ub)
    moved = [f"{k} {x0:.4g}" for k, x0, lo, hi in zip(keys, x, lb, ub) if not lo <= x0 <= hi]
    return out, (f"bounded (unconstrained fit: {', '.join(moved)})",)
