"""Friction identification from a joint-state log: settings, samples and the pipeline.

Pipeline per joint i (issue 7), ROS-free core of ``identify_friction``:

1. **Load** a log (:mod:`~gravity_friction_comp.ident.joint_log`): a rosbag2 folder of
   ``sensor_msgs/msg/JointState`` or a CSV file.
2. **Model torque** (:func:`friction_samples`): accelerations ``a`` from a Savitzky–Golay
   derivative of the measured velocity (SciPy ``savgol_filter``, cubic, ``savgol_window``
   s), and the velocity regressor smoothed by the same filter (noise in a regressor biases
   least squares); the rigid-body torque ``τ_rb = M(q)a + b(q, v)`` (gravity inside b) from
   :meth:`~gravity_friction_comp.model.robot_model.RobotModel.mass_matrix` and
   ``nonlinear_effects`` (Pinocchio CRBA/RNEA, mimic-reduced; with the actuator model's
   armature when one is attached, never its friction) — the inverse dynamics without
   friction. The friction sample is ``r = effort − τ_rb``.
3. **Samples used**: joint moving (``|v| ≥ min_velocity``; at rest friction is anything within
   its breakaway budget, not a function of v) and slowly accelerating (``|a| ≤
   max_acceleration``; unknown rotor inertia and filter lag matter there).
4. **Hold-out by segment**: the record is cut into contiguous blocks of ``block_duration``
   seconds; every k-th block (k = round(1/validation_fraction)) is validation, the rest is
   training — whole blocks, never random samples, so correlated neighbours do not leak.
5. **Candidate models** fitted (:mod:`~gravity_friction_comp.ident.fit`,
   :mod:`~gravity_friction_comp.ident.bam_fit`).
6. **Selection** (:mod:`~gravity_friction_comp.ident.select`): smallest validation RMS, more
   parameters only for a > 5 % gain, among the models whose validation RMS is within the
   joint's friction level (breakaway + viscous × mean |v|); none: the joint is not identified.
7. **Output** (:func:`~gravity_friction_comp.ident.report.write_outputs`): the per-arm YAML,
   BAM JSON files, one PNG per joint.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, IdentificationError, Reason
from gravity_friction_comp.friction.params import (
    DEFAULT_EPS,
    DEFAULT_STRIBECK_EXPONENT,
    DEFAULT_STRIBECK_VELOCITY,
    SYMMETRIC_KEYWORDS,
)
from gravity_friction_comp.ident.fit import EPS_NOT_IDENTIFIED, JointFit, fit_joint
from gravity_friction_comp.ident.joint_log import JointStateLog
from gravity_friction_comp.validation import number

__all__ = [
    "GAP_PERIODS",
    "MAX_DURATION",
    "MIN_TIME_STEP",
    "VELOCITY_BEYOND",
    "FrictionSamples",
    "IdentificationConfig",
    "IdentificationResult",
    "friction_samples",
    "identify",
    "log_warnings",
]


@dataclasses.dataclass(frozen=True)
class IdentificationConfig:
    """Settings of :func:`identify` (module docstring for their role).

    Attributes:
        validation_fraction: share of blocks held out, (0, 0.5].
        block_duration: hold-out block length [s] (> 0).
        min_velocity: slowest sample used [rad/s] (> 0).
        max_acceleration: largest |a| of a sample used [rad/s²] (> 0).
        savgol_window: Savitzky–Golay window for the acceleration [s] (> 0).
        min_samples: fewest moving training samples per direction per joint.
        min_load_spread: std of |τ_e − τ_m| needed to fit BAM m3–m6 [N·m].
        improvement_threshold: relative validation-RMS gain that justifies more parameters.
        eps_min, eps_max: bounds of the fitted tanh scale ε [rad/s].
    """

    validation_fraction: float = 0.25
    block_duration: float = 1.0
    min_velocity: float = 0.01
    max_acceleration: float = 2.0
    savgol_window: float = 0.05
    min_samples: int = 20
    min_load_spread: float = 0.3
    improvement_threshold: float = 0.05
    eps_min: float = 0.002
    eps_max: float = 0.2

    def __post_init__(self) -> None:
        for key in (
            "block_duration",
            "min_velocity",
            "max_acceleration",
            "savgol_window",
            "min_load_spread",
            "eps_min",
            "eps_max",
        ):
            number(key, getattr(self, key), positive=True)
        vf = self.validation_fraction
        if isinstance(vf, bool) or not isinstance(vf, (int, float)) or not 0 < vf <= 0.5:
            raise ConfigError(
                f"validation_fraction must be in (0, 0.5], got {vf!r}", key="validation_fraction", value=vf
            )
        if not number("improvement_threshold", self.improvement_threshold, nonneg=True) < 1:
            raise ConfigError(
                "improvement_threshold must be in [0, 1)",
                key="improvement_threshold",
                value=self.improvement_threshold,
            )
        if self.eps_min >= self.eps_max:
            raise ConfigError("eps_min must be < eps_max", key="eps_min", value=self.eps_min)
        if not isinstance(self.min_samples, int) or self.min_samples < 3:
            raise ConfigError("min_samples must be an int ≥ 3", key="min_samples", value=self.min_samples)


@dataclasses.dataclass(frozen=True)
class IdentificationResult:
    """Per-joint fits, in joint order. Attributes: joints (n,), fits (n,) :class:`JointFit`,
    config :class:`IdentificationConfig`."""

    joints: tuple[str, ...]
    fits: tuple[JointFit, ...]
    config: IdentificationConfig
    #: Warnings about the log (:func:`log_warnings`) and the joints left out.
    warnings: tuple[str, ...] = ()
    #: Model joints not identified, each with the reason (not requested, too little motion).
    left_out: dict[str, str] = dataclasses.field(default_factory=dict)

    def friction_keywords(self) -> dict[str, Any]:
        """``friction_comp`` keywords for :class:`~gravity_friction_comp.friction.models.FrictionModel`
        from each joint's selected model (``bam_m3``–``bam_m6`` joints fall back to their
        coulomb_viscous fit here; :func:`~gravity_friction_comp.ident.report.write_outputs` writes BAM files for them).

        ``eps`` is the selected model's fitted ε when it is identified (see
        :data:`~gravity_friction_comp.ident.fit.EPS_NOT_IDENTIFIED`), else the friction
        model's default 0.01 rad/s (a smoothing choice, not a measured value)."""
        out: dict[str, list[float]] = {k: [] for k in SYMMETRIC_KEYWORDS}
        for jf in self.fits:
            name = "coulomb_viscous" if jf.selected.startswith("bam_") else jf.selected
            p = jf.fits[name].params
            out["breakaway"].append(p["breakaway"])
            identified = "eps" in p and not any(n.startswith(EPS_NOT_IDENTIFIED) for n in jf.fits[name].notes)
            out["eps"].append(p["eps"] if identified else DEFAULT_EPS)
            out["viscous"].append(p["viscous"])
            out["stribeck_breakaway"].append(p.get("stribeck_breakaway", 0.0))
            out["stribeck_velocity"].append(p.get("stribeck_velocity", DEFAULT_STRIBECK_VELOCITY))
            out["stribeck_exponent"].append(p.get("stribeck_exponent", DEFAULT_STRIBECK_EXPONENT))
            out["offset"].append(p["offset"])
        return {k: [float(x) for x in v] for k, v in out.items()}


#: Smallest median time step [s] of a log: no joint-state record is sampled above 1 MHz;
#: below it the time column is in another unit (or garbage), and the Savitzky–Golay window
#: in samples (savgol_window / step) would overflow.
MIN_TIME_STEP = 1e-6
#: Longest log [s] (~116 days): longer is a time column in another unit (ns: 10 min at
#: 1 kHz reads as 6e11 s), and the hold-out block index would overflow.
MAX_DURATION = 1e7
#: Largest |position| [rad], |velocity| [rad/s] and |effort| [N·m] of a log sample: beyond,
#: the column is in other units (or garbage), and the filters overflow to NaN (1e308 did).
MAX_MAGNITUDE = 1e9


#: A time step longer than this many median steps is a gap worth a warning (dropped messages).
GAP_PERIODS = 5.0
#: A measured |v| more than this many times the excitation's speed (99th percentile of
#: |Δq/Δt| from the positions) is a warning (a velocity spike, wrapped position, other units).
VELOCITY_BEYOND = 3.0


def log_warnings(log: JointStateLog, joints: Sequence[str]) -> tuple[str, ...]:
    """What in a usable log deserves a warning, for ``joints``.

    - gaps: time steps longer than :data:`GAP_PERIODS` median steps (count, longest, where);
    - velocities far beyond the excitation's: samples with ``|v|`` above
      :data:`VELOCITY_BEYOND` × the 99th percentile of the positions' ``|Δq/Δt|``.

    Args:
        log: a log :func:`identify` accepts (time strictly increasing, finite).
        joints: the joints identified.

    Returns:
        One message per finding (empty: none).
    """
    out: list[str] = []
    dt = np.diff(log.time)
    if dt.size == 0:
        return ()
    step = float(np.median(dt))
    gaps = np.flatnonzero(dt > GAP_PERIODS * step)
    if gaps.size:
        k = int(gaps[np.argmax(dt[gaps])])
        out.append(
            f"the log has {gaps.size} gap(s) longer than {GAP_PERIODS:g} sample periods "
            f"({step * 1e3:.3g} ms); the longest is {dt[k]:.3g} s at t = {log.time[k]:.3f} s "
            "(dropped messages? the filters bridge gaps badly)"
        )
    if log.velocity is not None:
        rate = np.abs(np.diff(log.position, axis=0)) / dt[:, None]
        for j in joints:
            i = log.joint_names.index(j)
            speed = float(np.percentile(rate[:, i], 99))
            beyond = np.flatnonzero(np.abs(log.velocity[:, i]) > VELOCITY_BEYOND * speed)
            if speed > 0.0 and beyond.size:
                k = int(beyond[np.argmax(np.abs(log.velocity[beyond, i]))])
                out.append(
                    f"joint {j}: {beyond.size} velocity sample(s) beyond {VELOCITY_BEYOND:g}× the "
                    f"excitation's speed ({speed:.3g} rad/s from the positions), up to "
                    f"{log.velocity[k, i]:.3g} rad/s at t = {log.time[k]:.3f} s "
                    "(velocity spikes, or velocity in other units?)"
                )
    return tuple(out)


def _check_log(log: JointStateLog) -> None:
    """Refuse logs :func:`identify` cannot use (NaN/inf, a value beyond :data:`MAX_MAGNITUDE`,
    < 10 samples, time not strictly increasing, median step below :data:`MIN_TIME_STEP`, longer than
    :data:`MAX_DURATION`); raises IdentificationError."""
    velocity, effort = _velocity_effort(log)
    for key, arr in (
        ("time", log.time),
        ("position", log.position),
        ("velocity", velocity),
        ("effort", effort),
    ):
        bad = ~np.isfinite(arr)
        if np.any(bad):
            rows = np.flatnonzero(bad.reshape(arr.shape[0], -1).any(axis=1))
            raise IdentificationError(
                f"{key} holds {int(bad.sum())} NaN/inf value(s) (first at sample {rows[0]}, "
                f"t = {log.time[rows[0]] if np.isfinite(log.time[rows[0]]) else 'nan'}); "
                "clean or cut the log",
                reason=Reason.NOT_FINITE,
            )
        big = np.abs(arr) > MAX_MAGNITUDE if key != "time" else bad
        if np.any(big):
            row, col = (int(x) for x in np.argwhere(big.reshape(arr.shape[0], -1))[0])
            raise IdentificationError(
                f"{key} holds {int(big.sum())} value(s) beyond ±{MAX_MAGNITUDE:g} (first "
                f"{arr[row, col]:g} at sample {row}, t = {log.time[row]}): other units or "
                "garbage; clean or cut the log",
                reason=Reason.RANGE,
            )
    if log.time.size < 10:
        raise IdentificationError(f"log has only {log.time.size} samples", reason=Reason.TOO_LITTLE_MOTION)
    dt = np.diff(log.time)
    if np.any(dt <= 0):
        k = int(np.flatnonzero(dt <= 0)[0]) + 1
        raise IdentificationError(
            f"time must be strictly increasing: sample {k} has t = {float(log.time[k])!r} s "
            f"after t = {float(log.time[k - 1])!r} s (duplicate or reordered messages?)",
            reason=Reason.FORMAT,
        )
    step = float(np.median(dt))
    if not step >= MIN_TIME_STEP:
        raise IdentificationError(
            f"median time step {step:.3g} s is below {MIN_TIME_STEP:g} s (a joint-state log "
            "sampled above 1 MHz is not a real record): is the time column in seconds?",
            reason=Reason.FORMAT,
        )
    span = float(log.time[-1] - log.time[0])
    if not span <= MAX_DURATION:
        raise IdentificationError(
            f"log spans {span:.3g} s, above {MAX_DURATION:g} s (~116 days, not one "
            "identification record): is the time column in seconds (not ns)?",
            reason=Reason.FORMAT,
        )


class FrictionSamples(NamedTuple):
    """Friction samples of a log, each (m, n).

    Attributes:
        friction: ``r = effort − τ_rb`` [N·m].
        velocity: smoothed velocity [rad/s] (Savitzky–Golay, the regressor: raw velocity
            noise would bias the fit, errors in variables).
        acceleration: filtered acceleration [rad/s²].
        tau_m: BAM motor torque, the effort [N·m].
        tau_e: BAM external torque ``−g(q)`` [N·m].
    """

    friction: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    tau_m: np.ndarray
    tau_e: np.ndarray


def friction_samples(log: JointStateLog, model, cfg: IdentificationConfig | None = None) -> FrictionSamples:
    """Friction samples ``r = effort − τ_rb`` (module docstring, step 2).

    Args:
        log: record whose joints are the model's joints in the same order (use
            :meth:`~gravity_friction_comp.ident.joint_log.JointStateLog.select` with ``model.joint_names``), with velocity and effort.
        model: :class:`~gravity_friction_comp.model.robot_model.RobotModel` (payload as during the
            record).
        cfg: settings (savgol window).

    Raises:
        IdentificationError: the log has no velocity or no effort (``Reason.FORMAT``).
    """
    from scipy.signal import savgol_filter

    velocity, effort = _velocity_effort(log)
    cfg = IdentificationConfig() if cfg is None else cfg
    dt = float(np.median(np.diff(log.time)))
    win = max(5, int(round(cfg.savgol_window / dt)) | 1)
    if win > log.time.size:
        win = (log.time.size - 1) | 1 if log.time.size > 5 else 5
    acc = savgol_filter(velocity, win, 3, deriv=1, delta=dt, axis=0, mode="interp")
    vel = savgol_filter(velocity, win, 3, axis=0, mode="interp")
    r = np.empty_like(effort)
    tau_e = np.empty_like(effort)
    for k in range(log.time.size):
        q, v = log.position[k], vel[k]
        # M(q)·a + b(q, v): the rigid-body (+ armature) part of inverse dynamics, without
        # any actuator-model friction (that is what is being identified)
        mass, bias = model.mass_and_nonlinear_effects(q, v)
        r[k] = effort[k] - (mass @ acc[k] + bias)
        tau_e[k] = -model.gravity(q)
    return FrictionSamples(r, vel, acc, effort.copy(), tau_e)


def _velocity_effort(log: JointStateLog) -> tuple[np.ndarray, np.ndarray]:
    """The log's velocity and effort; IdentificationError when one was not recorded."""
    if log.velocity is None or log.effort is None:
        missing = [f for f in ("velocity", "effort") if getattr(log, f) is None]
        raise IdentificationError(
            f"the log has no {' or '.join(missing)}: cannot identify", reason=Reason.FORMAT
        )
    return log.velocity, log.effort


def identify(
    log: JointStateLog,
    model,
    joints: Sequence[str] | None = None,
    config: IdentificationConfig | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> IdentificationResult:
    """Fit every candidate model per joint and select one (module docstring).

    Args:
        log: the record (may hold more joints than the model, in any order).
        model: :class:`~gravity_friction_comp.model.robot_model.RobotModel` with the payload state
            of the record.
        joints: joints to identify (default: every model joint with enough motion; the
            others are left out with a warning, and an error only when none is left).
        config: settings.
        progress: called with a short text after each fit step (for a progress bar).

    Raises:
        IdentificationError: NaN/inf in the log (``Reason.NOT_FINITE``); model joints missing from the log
            (``Reason.MISSING_JOINTS``); a requested joint without ``min_samples`` moving training
            samples in each direction, or (``joints=None``) no such joint at all
            (``Reason.TOO_LITTLE_MOTION``); unknown ``joints`` (``Reason.MISSING_JOINTS``);
            time not strictly increasing, a median step below :data:`MIN_TIME_STEP` or a
            span above :data:`MAX_DURATION` (``Reason.FORMAT``); friction that pushes along the motion, i.e. a reversed effort or
            velocity sign convention (``Reason.SIGN``); no joint identified because every
            fit's validation RMS exceeds the joint's friction level (``Reason.NO_SOLUTION``).

    A joint whose every fit has a validation RMS above its friction level
    (:attr:`~gravity_friction_comp.ident.fit.JointFit.friction_level`) is not identified:
    left out (:attr:`IdentificationResult.left_out`, a warning), requested or not.

    Friction not resolved above the noise, or identified friction above the joint's URDF
    effort limit over the logged velocities (wrong units or scale of the effort), are not
    errors (URDF limits are often placeholders) but warnings in
    :attr:`~gravity_friction_comp.ident.fit.JointFit.warnings`, which
    :func:`~gravity_friction_comp.ident.report.write_outputs` and the CLI report; so are the
    log's gaps and velocity spikes (:func:`log_warnings`) and the joints left out, in
    :attr:`IdentificationResult.warnings`.
    """
    cfg = IdentificationConfig() if config is None else config
    progress = progress or (lambda s: None)
    names = tuple(model.joint_names)
    automatic = joints is None
    joints = names if joints is None else tuple(joints)
    bad = [j for j in joints if j not in names]
    if bad:
        raise IdentificationError(
            f"joint(s) {bad} not in the URDF model; model joints: {list(names)}", reason=Reason.MISSING_JOINTS
        )
    log = log.select(names)
    _check_log(log)
    r, vel, acc, tau_m, tau_e = friction_samples(log, model, cfg)
    progress("model torque")
    k = max(2, int(round(1.0 / cfg.validation_fraction)))
    block = np.floor((log.time - log.time[0]) / cfg.block_duration).astype(int)
    val_all = (block % k) == (k - 1)
    fits = []
    left_out = {j: "not requested" for j in names if j not in joints}
    first_error: IdentificationError | None = None
    for j in joints:
        i = names.index(j)
        v = vel[:, i]
        use = (np.abs(v) >= cfg.min_velocity) & (np.abs(acc[:, i]) <= cfg.max_acceleration)
        tr = use & ~val_all
        n_pos, n_neg = int(np.sum(tr & (v > 0))), int(np.sum(tr & (v < 0)))
        if min(n_pos, n_neg) < cfg.min_samples or not np.any(use & val_all):
            error = IdentificationError(
                f"joint {j}: too little motion: {n_pos} / {n_neg} training samples moving "
                f"+/− at |v| ≥ {cfg.min_velocity} rad/s with |a| ≤ {cfg.max_acceleration} "
                f"rad/s² (need {cfg.min_samples} each, and some in the validation blocks); "
                "record constant-velocity sweeps in both directions",
                reason=Reason.TOO_LITTLE_MOTION,
            )
            if not automatic:
                raise error
            left_out[j] = f"too little motion ({n_pos} / {n_neg} training samples moving +/−)"
            first_error = first_error or error
            continue
        jf = fit_joint(
            j,
            log.time[use],
            v[use],
            r[use, i],
            tau_m[use, i],
            tau_e[use, i],
            val_all[use],
            cfg,
            progress,
            float(model.effort_limits[i]),
        )
        if not jf.identified:
            best = min(m.validation_rms for m in jf.fits.values())
            left_out[j] = (
                f"not identified (best validation RMS {best:.3g} N·m above its friction level "
                f"{jf.friction_level:.3g} N·m)"
            )
            first_error = first_error or IdentificationError(
                f"joint {j}: {left_out[j]}", reason=Reason.NO_SOLUTION
            )
            continue
        fits.append(jf)
    if not fits:
        raise first_error or IdentificationError("no joint to identify", reason=Reason.TOO_LITTLE_MOTION)
    done = tuple(jf.joint for jf in fits)
    warnings = log_warnings(log, done)
    if left_out:
        warnings += (
            "joints left out (not in the YAML, no friction written for them): "
            + "; ".join(f"{j}: {why}" for j, why in left_out.items()),
        )
    return IdentificationResult(done, tuple(fits), cfg, warnings, left_out)
