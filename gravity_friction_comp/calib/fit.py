"""Gravity fit: hold averages → identifiable combinations → regularized least squares → validation.

1. Each hold's settled window (:meth:`~gravity_friction_comp.calib.plan.CalibrationPlan.holds`)
   is averaged: q̄, τ̄ (a hold whose joints still move is dropped). A dithered hold (whole
   sine cycles, :mod:`.plan`) is not still: its settled test allows the dither's range and
   speed, and its regressor row is the mean of ``Y(q(t))`` over the window's measured
   positions (:func:`hold_regressors`), exact for gravity (linear in θ) at any amplitude.
2. Stacked static regressor ``Y`` (:mod:`.regressor`), columns scaled by the parameters'
   typical size ``S``; its SVD gives the identifiable directions (singular values above
   ``rtol·σ_max``) and the condition number; QR with column pivoting names one base
   parameter per identifiable direction (Gautier & Khalil 1990).
3. Fit with a prior pulling every direction toward the URDF's values θ₀ (Tikhonov):

   .. math::

       \\hat\\theta = \\theta_0 + S\\,\\arg\\min_x \\lVert Y S x - (\\bar\\tau - Y\\theta_0)\\rVert^2
       + \\lambda^2 \\lVert x\\rVert^2, \\qquad \\lambda = \\text{regularization}\\cdot\\sigma_{max}

   solved with ``scipy.linalg.lstsq`` on the stacked system; directions the data do not
   see stay at θ₀.
4. Poses held out (every ``holdout``-th pose, both its holds) give the per-joint RMS of
   ``τ̄ − Y θ`` before (θ₀) and after (θ̂).

Bad input is refused with :class:`~gravity_friction_comp.errors.IdentificationError`:
a recording that is not the plan's run (joints the plan does not have, shorter than the
plan's last hold or longer than its run by more than one hold cycle), fewer than half of
the planned holds settled, poses all alike, efforts whose sign contradicts the model on a
joint, a fit that drives a link's mass to zero or below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from gravity_friction_comp.calib.plan import (
    IDENTIFIABLE_RTOL,
    CalibrationPlan,
    parameter_scale,
    scaled_condition,
)
from gravity_friction_comp.calib.regressor import PARAMS_PER_BODY, StaticRegressor
from gravity_friction_comp.errors import IdentificationError, Reason
from gravity_friction_comp.ident.joint_log import JointStateLog

__all__ = ["GravityFit", "Holds", "fit_gravity", "hold_averages", "hold_regressors", "link_changes"]

#: A hold is settled when every joint's speed stays below this [rad/s] ...
SETTLED_SPEED = 0.02
#: ... and its position within this range [rad] over the window.
SETTLED_RANGE = 0.002
#: Below this RMS [N·m] a joint's model gravity is too small to judge its sign.
SIGN_FLOOR = 0.05


@dataclass(frozen=True)
class Holds:
    """Hold averages: pose index (h,), side (h,), q̄ (h, n) [rad] model order, τ̄ (h, m) [N·m]
    for the ``measured`` joints (indices into the model joints), and the dropped holds."""

    pose: np.ndarray
    side: np.ndarray
    position: np.ndarray
    effort: np.ndarray
    measured: tuple[int, ...]
    dropped: tuple[int, ...] = ()
    samples: tuple[np.ndarray, ...] | None = None
    planned: np.ndarray | None = None  # (h, n) [rad] the commanded pose of each hold
    planned_holds: int = 0  # holds in the plan (kept + dropped)


#: Dithered holds: the regressor is averaged over every this-many-th window sample.
SAMPLE_STRIDE = 4


def hold_regressors(regressor: StaticRegressor, holds: Holds) -> np.ndarray:
    """Regressor of each hold (h, n, p): ``Y(q̄)``, or the mean of ``Y(q(t))`` over the
    window's samples when the holds carry them (dithered holds)."""
    if holds.samples is None:
        return np.array([regressor.matrix(q) for q in holds.position])
    return np.array([np.mean([regressor.matrix(q) for q in qs], axis=0) for qs in holds.samples])


def hold_averages(log: JointStateLog, plan: CalibrationPlan, joint_names: Sequence[str]) -> Holds:
    """Average position and effort over each hold's settled window.

    Joints of the model missing from the log are taken at the plan's pose (they are not
    driven); only joints with effort in the log give rows.

    Raises:
        IdentificationError: no effort in the log or joints the plan lacks
            (``Reason.MISSING_JOINTS``); a log shorter than the plan's last hold or longer
            than its run by more than one hold cycle, no hold that is settled (names the
            windows and the worst speed seen) or fewer than half (``Reason.RANGE``).
    """
    if log.effort is None:
        raise IdentificationError("the recording has no effort column", reason=Reason.MISSING_JOINTS)
    names = list(joint_names)
    _check_log_matches_plan(log, plan, names)
    measured = tuple(i for i, j in enumerate(names) if j in log.joint_names)
    cols = [log.joint_names.index(names[i]) for i in measured]
    if not measured:
        raise IdentificationError(
            f"no joint of the model in the recording ({list(log.joint_names)})", reason=Reason.MISSING_JOINTS
        )
    pose, side, qs, taus, dropped, samples = [], [], [], [], [], []
    worst = 0.0
    dither = max(float(plan.dither), 0.0)
    max_speed = SETTLED_SPEED + 2.0 * dither * 2.0 * np.pi / plan.dither_period if dither else SETTLED_SPEED
    max_range = SETTLED_RANGE + 4.0 * dither
    for h, w in enumerate(plan.holds()):
        # a dither window is whole cycles: half-open, so no sample counts twice
        sel = (log.time >= w.start) & ((log.time < w.end) if dither else (log.time <= w.end))
        if sel.sum() < 3:
            dropped.append(h)
            continue
        q = log.position[sel][:, cols]
        speed = (
            np.abs(log.velocity[sel][:, cols]).max()
            if log.velocity is not None
            else np.abs(np.diff(q, axis=0)).max()
        )
        spread = float(np.ptp(q, axis=0).max())
        worst = max(worst, float(speed))
        if speed > max_speed or spread > max_range:
            dropped.append(h)
            continue
        full = np.array(plan.poses[w.pose], dtype=float)
        full[list(measured)] = q.mean(axis=0)
        pose.append(w.pose)
        side.append(w.side)
        qs.append(full)
        taus.append(log.effort[sel][:, cols].mean(axis=0))
        if dither:
            window = np.repeat(full[None, :], len(q[::SAMPLE_STRIDE]), axis=0)
            window[:, list(measured)] = q[::SAMPLE_STRIDE]
            samples.append(window)
    if not pose:
        raise IdentificationError(
            f"no settled hold in the recording: {len(plan.holds())} hold windows, none with every "
            f"joint below {SETTLED_SPEED} rad/s and within {SETTLED_RANGE} rad (fastest {worst:.3g} rad/s); "
            "is the recording the plan's run, started with the plan?",
            reason=Reason.RANGE,
        )
    planned_holds = len(plan.holds())
    if 2 * len(pose) < planned_holds:
        raise IdentificationError(
            f"only {len(pose)} of the plan's {planned_holds} holds settled (every joint below "
            f"{max_speed:.3g} rad/s and within {max_range:.3g} rad; fastest {worst:.3g} rad/s): "
            "is the recording the plan's run, started with the plan, with gains that hold the poses?",
            reason=Reason.RANGE,
        )
    return Holds(
        np.array(pose),
        np.array(side),
        np.array(qs),
        np.array(taus),
        measured,
        tuple(dropped),
        tuple(samples) if dither else None,
        np.array([plan.poses[k] for k in pose], dtype=float),
        planned_holds,
    )


def _check_log_matches_plan(log: JointStateLog, plan: CalibrationPlan, names: Sequence[str]) -> None:
    """Refuse a recording that cannot be the plan's run: joints the plan lacks, or a length
    that does not fit the plan's poses (the recorder records exactly the plan's profile)."""
    foreign = [j for j in log.joint_names if j not in names]
    if foreign:
        raise IdentificationError(
            f"the recording has joints the plan does not: {foreign} (plan joints: {list(names)}); "
            "is it this arm's recording?",
            reason=Reason.MISSING_JOINTS,
        )
    if log.time.size == 0:
        raise IdentificationError("the recording has no samples", reason=Reason.MISSING)
    holds = plan.holds()
    end, duration = float(log.time[-1]), plan.duration()
    cycle = plan.move_time + plan.approach_time + plan.hold_time
    if end < holds[-1].end - 1e-6:
        covered = sum(w.end <= end + 1e-6 for w in holds)
        raise IdentificationError(
            f"the recording lasts {end:.1f} s but the plan's {len(plan.poses)} poses ({len(holds)} holds) "
            f"need {duration:.1f} s: it covers {covered} holds; is it the plan's run, or was it cut short?",
            reason=Reason.RANGE,
        )
    if end > duration + cycle:
        raise IdentificationError(
            f"the recording lasts {end:.1f} s, the plan's run ({len(plan.poses)} poses, {len(holds)} holds) "
            f"{duration:.1f} s: it was recorded with another plan (more poses or longer times?)",
            reason=Reason.RANGE,
        )


@dataclass(frozen=True)
class GravityFit:
    """Result of :func:`fit_gravity`.

    Attributes:
        theta: θ̂ (p,) [kg, kg·m]; prior: θ₀ (p,). names: (p,).
        rank: identifiable directions (σ > rtol·σ_max of the scaled regressor); condition:
            σ_max/σ_rank, the condition number of the identifiable subspace (the full
            regressor's is infinite when rank < p). rtol: that threshold.
        identifiable: one base-parameter name per identifiable direction (QR pivots).
        joints: measured joint names; rms_before, rms_after: (m,) [N·m] on held-out holds.
        holds_fit, holds_validation: counts; validation_poses: pose indices held out.
    """

    theta: np.ndarray
    prior: np.ndarray
    names: tuple[str, ...]
    rank: int
    condition: float
    identifiable: tuple[str, ...]
    joints: tuple[str, ...]
    rms_before: np.ndarray
    rms_after: np.ndarray
    holds_fit: int
    holds_validation: int
    validation_poses: tuple[int, ...]
    residual_fit: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rtol: float = IDENTIFIABLE_RTOL
    holds_dropped: int = 0


def _check_signs(y0: np.ndarray, tau: np.ndarray, joints: Sequence[str]) -> None:
    for k, name in enumerate(joints):
        model, meas = y0[:, k], tau[:, k]
        if np.sqrt(np.mean(model**2)) < SIGN_FLOOR or np.std(meas) == 0.0:
            continue
        corr = float(np.corrcoef(model, meas)[0, 1]) if np.std(model) > 0 else float(np.sign(model @ meas))
        if corr < -0.5:
            raise IdentificationError(
                f"joint {name}: measured efforts contradict the model's sign (correlation {corr:.2f} "
                f"with the URDF gravity over the holds); check its direction in the motor map",
                reason=Reason.RANGE,
            )


def fit_gravity(
    regressor: StaticRegressor,
    holds: Holds,
    *,
    holdout: int = 4,
    regularization: float = 0.02,
    rtol: float = IDENTIFIABLE_RTOL,
    use_sides: Sequence[int] = (-1, 1),
) -> GravityFit:
    """Fit θ̂ from hold averages (module docstring).

    Args:
        regressor: Static regressor of the believed URDF (θ₀ its values).
        holds: :func:`hold_averages`.
        holdout: every ``holdout``-th pose is held out for validation when there are at
            least ``2·holdout`` poses (0 or fewer poses: none, then the RMS figures are on
            the fitted holds).
        regularization: λ / σ_max. rtol: identifiability threshold σ/σ_max.
        use_sides: approach sides used in the fit (``(-1,)``: from below only).

    Raises:
        IdentificationError: fewer than two distinct poses, nothing identifiable, a joint's
            efforts of the wrong sign, a link mass driven to ≤ 0 (names the link).
    """
    # commanded poses first: stuck joints spread the measured ones of one commanded pose
    commanded = holds.position if holds.planned is None else holds.planned
    distinct = min(len(np.unique(np.round(q, 3), axis=0)) for q in (commanded, holds.position))
    if distinct < 2:
        raise IdentificationError(
            f"all {len(holds.position)} held poses are alike (within 1 mrad): they identify nothing "
            "beyond one pose; plan poses spread over the workspace",
            reason=Reason.RANGE,
        )
    rows = list(holds.measured)
    joints = tuple(regressor.model.joint_names[i] for i in rows)
    y_all = hold_regressors(regressor, holds)[:, rows]  # (h, m, p)
    _check_signs(y_all @ regressor.prior, holds.effort, joints)
    poses = np.unique(holds.pose)
    held = set(poses[holdout - 1 :: holdout].tolist()) if holdout and len(poses) >= 2 * holdout else set()
    val = np.array([p in held for p in holds.pose])
    fit_sel = ~val & np.isin(holds.side, list(use_sides))
    if not fit_sel.any():
        raise IdentificationError(
            "no hold left to fit (all held out or of unused sides)", reason=Reason.RANGE
        )
    scale = parameter_scale(regressor)
    y = y_all[fit_sel].reshape(-1, regressor.n_params)
    ys = y * scale
    r = holds.effort[fit_sel].reshape(-1) - y @ regressor.prior
    condition, rank = scaled_condition(y, scale, rtol)
    if rank == 0:
        raise IdentificationError("the poses identify nothing (regressor is zero)", reason=Reason.RANGE)
    s_max = float(np.linalg.norm(ys, 2))
    _, _, piv = scipy.linalg.qr(ys, mode="economic", pivoting=True)
    identifiable = tuple(regressor.names[i] for i in sorted(piv[:rank]))
    lam = regularization * s_max
    a = np.vstack([ys, lam * np.eye(regressor.n_params)])
    b = np.concatenate([r, np.zeros(regressor.n_params)])
    x = scipy.linalg.lstsq(a, b)[0]
    theta = regressor.prior + scale * x
    link_changes(regressor, theta)  # refuses a link mass ≤ 0
    eval_sel = val if val.any() else fit_sel
    y_val = y_all[eval_sel]
    tau_val = holds.effort[eval_sel]
    before = np.sqrt(np.mean((tau_val - y_val @ regressor.prior) ** 2, axis=0))
    after = np.sqrt(np.mean((tau_val - y_val @ theta) ** 2, axis=0))
    return GravityFit(
        theta=theta,
        prior=regressor.prior.copy(),
        names=regressor.names,
        rank=rank,
        condition=condition,
        identifiable=identifiable,
        joints=joints,
        rms_before=before,
        rms_after=after,
        holds_fit=int(fit_sel.sum()),
        holds_validation=int(val.sum()),
        validation_poses=tuple(sorted(held)),
        residual_fit=(ys @ x - r),
        rtol=float(rtol),
        holds_dropped=max(holds.planned_holds - len(holds.pose), 0),
    )


def link_changes(regressor: StaticRegressor, theta: np.ndarray, tol: float = 1e-9) -> dict[str, dict]:
    """New ``{"mass", "xyz"}`` of each body's child link whose parameters changed.

    The body change (Δm, Δ(m·c)) in the joint frame, which is the child link's frame
    (URDF), goes onto the child link: ``m' = m + Δm``, ``c' = (m·c + Δ(m·c))/m'``; links
    merged into the body by fixed joints keep their values, and ``<inertia>`` (about the
    COM) is kept, so it stays positive definite.

    Raises:
        IdentificationError: a link mass driven to ≤ 0 (names the link and the value).
    """
    from gravity_friction_comp.model.urdf_inertial import read_inertials

    inertials = read_inertials(regressor.model.description.xml)
    delta = (np.asarray(theta) - regressor.prior).reshape(-1, PARAMS_PER_BODY)
    out = {}
    for link, d in zip(regressor.bodies, delta):
        if np.all(np.abs(d) <= tol):
            continue
        base = inertials.get(link)
        m0, c0 = (base.mass, base.xyz) if base is not None else (0.0, np.zeros(3))
        mass = m0 + d[0]
        if mass <= 0.0:
            raise IdentificationError(
                f"link {link}: the fit drives its mass to {mass:.4g} kg (URDF {m0:.4g} kg); "
                "the recording or the plan cannot support this link's parameters",
                reason=Reason.RANGE,
            )
        out[link] = {"mass": float(mass), "xyz": (m0 * c0 + d[1:]) / mass}
    return out
