"""Calibration pose plan: well-conditioned static poses, each approached from both sides.

Poses are drawn uniformly within the joint limits shrunk by ``margin`` and chosen greedily
for D-optimality (each step adds the candidate that most increases
``log det(Ȳᵀ Ȳ + ε·1)``, Ȳ the stacked regressor with columns scaled by their prior
magnitude; Fedorov 1972). Each pose is then visited twice: approached from below
(``q − δ``) and from above (``q + δ``), so the static friction a stuck joint keeps has
opposite signs in the two holds and averages out. That average leaves a residual when a
joint stops without sticking from one side, so each hold may also dither (``dither`` > 0):
``q + A·sin(2π t/P)`` for ``dither_cycles + 1`` whole periods, the first left out; with the
amplitude above the stiction band (``A > F_s/kp``) the joint slips both ways, Coulomb and
viscous friction (odd in velocity) and the inertial torque (periodic) average out over the
whole cycles, and the fit averages the regressor over the window's measured positions
(exact for gravity, which is linear in the parameters). The plan is plain YAML the user can edit
(:func:`write_plan` / :func:`load_plan`), and :meth:`CalibrationPlan.profile` turns it into
the non-looping minimum-jerk :class:`~gravity_friction_comp.trajectory.waypoints.WaypointProfile`
the recorder plays.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import yaml

from gravity_friction_comp.calib.regressor import StaticRegressor
from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.files import read_yaml
from gravity_friction_comp.ident.excitation import JointLimits
from gravity_friction_comp.trajectory.base import Profile
from gravity_friction_comp.trajectory.waypoints import Waypoint, WaypointProfile
from gravity_friction_comp.validation import known_keys, number, string_keys

__all__ = [
    "IDENTIFIABLE_RTOL",
    "PLAN_KEYS",
    "CalibrationPlan",
    "DitherProfile",
    "HoldWindow",
    "load_plan",
    "plan_poses",
    "scaled_condition",
    "within_velocity_limits",
    "write_plan",
]

_VERSION = 1
#: Keys of the ``calibration_plan:`` block (:func:`write_plan` writes them all).
PLAN_KEYS = (
    "version",
    "joints",
    "home",
    "approach",
    "move_time",
    "approach_time",
    "hold_time",
    "settle_time",
    "condition",
    "dither",
    "dither_period",
    "dither_cycles",
    "poses",
)
#: A direction of the scaled regressor is identifiable when its singular value exceeds this
#: fraction of the largest; the condition numbers (plan and fit) are over those directions.
IDENTIFIABLE_RTOL = 1e-3


@dataclass(frozen=True)
class HoldWindow:
    """One hold of the plan: pose index, approach side (−1 below, +1 above), settled window [s]."""

    pose: int
    side: int
    start: float
    end: float


@dataclass(frozen=True)
class CalibrationPlan:
    """Poses and timing of a calibration run.

    Attributes:
        joints: Joint names (n,), model order. poses: (k, n) [rad].
        home: (n,) [rad] start and end pose.
        approach: δ [rad] of the approach from each side (0: one side only, from below).
        move_time, approach_time, hold_time, settle_time: [s] per move to the approach
            point, per final approach, per hold, and the start of each hold left out of the
            average (the arm settles).
        condition: condition number of the scaled stacked regressor over its identifiable
            subspace (:func:`scaled_condition`).
        dither: A [rad] of the sine dither in each hold (0: a still hold); with a dither the
            hold is ``(dither_cycles + 1)·dither_period`` and its first period is settling.
        dither_period: P [s]. dither_cycles: whole periods averaged.
    """

    joints: tuple[str, ...]
    poses: np.ndarray
    home: np.ndarray
    approach: float = 0.1
    move_time: float = 1.2
    approach_time: float = 0.6
    hold_time: float = 1.0
    settle_time: float = 0.5
    condition: float = float("nan")
    dither: float = 0.0
    dither_period: float = 1.0
    dither_cycles: int = 2

    def sides(self) -> tuple[int, ...]:
        return (-1, 1) if self.approach > 0.0 else (-1,)

    def waypoints(self, lower: np.ndarray, upper: np.ndarray) -> list[Waypoint]:
        """Home, then per pose and side: approach point, pose (held), …, home."""
        out = [Waypoint(tuple(self.home), self.move_time, 0.5)]
        delta = max(self.approach, 0.05)
        for q in self.poses:
            for side in self.sides():
                a = np.clip(q + side * delta, lower, upper)
                out.append(Waypoint(tuple(a), self.move_time, 0.0))
                out.append(Waypoint(tuple(q), self.approach_time, self.hold_time))
        out.append(Waypoint(tuple(self.home), self.move_time, 0.5))
        return out

    def profile(self, lower, upper) -> Profile:
        """The plan as a non-looping profile (starts and ends at ``home``; dithered holds)."""
        base = WaypointProfile(self.joints, self.waypoints(np.asarray(lower), np.asarray(upper)), loop=False)
        if self.dither <= 0.0:
            return base
        arrivals = [base.segment_times(k)[1] for k in range(2, len(base.move_times) - 1, 2)]
        return DitherProfile(base, arrivals, self.dither, self.dither_period, self.hold_time)

    def duration(self) -> float:
        """[s] of the whole run (the profile's period): home, every hold, back home."""
        return self.holds()[-1].end + self.move_time + 0.5

    def holds(self) -> list[HoldWindow]:
        """Settled windows of every hold, in profile time [s]."""
        t = self.move_time + 0.5
        out = []
        for k in range(len(self.poses)):
            for side in self.sides():
                t += self.move_time + self.approach_time
                out.append(HoldWindow(k, side, t + self.settle_time, t + self.hold_time))
                t += self.hold_time
        return out


class DitherProfile(Profile):
    """``base`` plus ``A·sin(2π(t − t_k)/P)`` on every joint during each hold [t_k, t_k + T_hold]
    (``T_hold`` whole periods, so the setpoint is continuous at both ends)."""

    def __init__(self, base: WaypointProfile, arrivals, amplitude: float, period: float, hold: float):
        self.joint_names, self.period, self.loop = base.joint_names, base.period, False
        self._base, self._arrivals = base, np.asarray(arrivals, dtype=float)
        self._a, self._w, self._hold = float(amplitude), 2.0 * np.pi / float(period), float(hold)

    def _at(self, t):
        q, v, holding = self._base._at(t)
        k = int(np.searchsorted(self._arrivals, t, side="right")) - 1
        if k >= 0 and t - self._arrivals[k] < self._hold:
            phase = self._w * (t - self._arrivals[k])
            q = q + self._a * np.sin(phase)
            v = v + self._a * self._w * np.cos(phase)
        return q, v, holding


def scaled_condition(y: np.ndarray, scale: np.ndarray, rtol: float = IDENTIFIABLE_RTOL) -> tuple[float, int]:
    """(condition number, rank) of ``y·diag(scale)`` over its identifiable subspace:
    ``σ_max/σ_r`` over the ``r`` singular values above ``rtol·σ_max``. The regressor of a
    serial arm is rank-deficient (unidentifiable combinations), so its full condition
    number is infinite; this is the conditioning of what the fit can identify."""
    s = np.linalg.svd(y * scale, compute_uv=False)
    if s.size == 0 or s[0] <= 0.0:
        return float("inf"), 0
    keep = s > rtol * s[0]
    return float(s[0] / s[keep][-1]), int(keep.sum())


def parameter_scale(regressor: StaticRegressor) -> np.ndarray:
    """Typical size of each parameter (p,) [kg, kg·m]: masses ≥ 0.05 kg, moments ≥ m·5 cm."""
    prior = regressor.prior.reshape(-1, 4)
    m = np.maximum(np.abs(prior[:, 0]), 0.05)
    return np.column_stack([m, np.maximum(np.abs(prior[:, 1:]), m[:, None] * 0.05)]).reshape(-1)


def plan_poses(
    regressor: StaticRegressor,
    count: int = 24,
    *,
    margin: float = 0.15,
    approach: float = 0.1,
    candidates: int = 1500,
    seed: int = 0,
    fixed: dict[str, float] | None = None,
    home: Sequence[float] | None = None,
    move_time: float = 1.2,
    approach_time: float = 0.6,
    hold_time: float = 1.0,
    settle_time: float = 0.5,
    dither: float = 0.0,
    dither_period: float = 1.0,
    dither_cycles: int = 2,
) -> CalibrationPlan:
    """A D-optimal pose set (module docstring).

    Args:
        regressor: The static regressor of the (URDF) model.
        count: Poses (2..200). margin: [rad] kept from each joint limit (a range narrower
            than 2·margin uses its middle). approach: δ [rad]. candidates: random candidates.
        fixed: joint → position [rad] held in every pose (e.g. gripper fingers).
        home: (n,) start/end pose, default the middle of the shrunk range.
        dither, dither_period, dither_cycles: see :class:`CalibrationPlan`; with a dither,
            ``hold_time``/``settle_time`` become ``(cycles + 1)·period`` / ``period``.

    Raises:
        ConfigError: a count out of range, a fixed joint not in the model.
    """
    model = regressor.model
    if not 2 <= int(count) <= 200:
        raise ConfigError(f"pose count must be within 2..200, got {count}", key="count", value=count)
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    lo, hi = lower + margin, upper - margin
    mid = 0.5 * (lower + upper)
    narrow = lo > hi
    lo[narrow] = hi[narrow] = mid[narrow]
    fixed = fixed or {}
    for name, value in fixed.items():
        if name not in model.joint_names:
            raise ConfigError(
                f"fixed joint {name!r} not in the model; joints: {list(model.joint_names)}", key=name
            )
        i = model.joint_names.index(name)
        lo[i] = hi[i] = float(value)
    rng = np.random.default_rng(seed)
    cand = rng.uniform(lo, hi, size=(candidates, model.n))
    scale = parameter_scale(regressor)
    blocks = [regressor.matrix(q) * scale for q in cand]
    p = regressor.n_params
    info = 1e-6 * np.eye(p)
    chosen: list[int] = []
    for _ in range(int(count)):
        inv = np.linalg.inv(info)
        # det(A + Bᵀ B) = det(A)·det(1 + B A⁻¹ Bᵀ): score each candidate by the second factor
        scores = [
            np.linalg.slogdet(np.eye(b.shape[0]) + b @ inv @ b.T)[1] if i not in chosen else -np.inf
            for i, b in enumerate(blocks)
        ]
        best = int(np.argmax(scores))
        chosen.append(best)
        info = info + blocks[best].T @ blocks[best]
    poses = cand[chosen]
    if len(np.unique(np.round(poses, 3), axis=0)) < 2:
        raise ConfigError(
            f"all {len(poses)} poses are alike (within 1 mrad; margin {margin} rad leaves no joint range): "
            "they identify nothing beyond one pose; lower the margin",
            key="margin",
            value=margin,
        )
    condition, _ = scaled_condition(regressor.stack(poses), scale)
    home_q = np.clip(mid, lo, hi) if home is None else np.asarray(home, dtype=float)
    if dither > 0.0:
        hold_time, settle_time = (int(dither_cycles) + 1) * dither_period, dither_period
    plan = CalibrationPlan(
        joints=tuple(model.joint_names),
        poses=poses,
        home=home_q,
        approach=float(approach),
        move_time=move_time,
        approach_time=approach_time,
        hold_time=hold_time,
        settle_time=settle_time,
        condition=condition,
        dither=float(dither),
        dither_period=float(dither_period),
        dither_cycles=int(dither_cycles),
    )
    return within_velocity_limits(plan, lower, upper, JointLimits.from_model(model).velocity)


def within_velocity_limits(plan: CalibrationPlan, lower, upper, velocity) -> CalibrationPlan:
    """``plan`` with ``move_time``/``approach_time`` lengthened (never shortened) so every
    minimum-jerk move's peak speed ``(15/8)·|step|/T`` stays within ``velocity`` (n,) [rad/s]
    (a non-finite or non-positive entry: no limit).

    Raises:
        ConfigError: the hold dither's peak speed ``A·2π/P`` exceeds a joint's limit.
    """
    v = np.asarray(velocity, dtype=float)
    v = np.where(np.isfinite(v) & (v > 0.0), v, np.inf)
    q = np.array([w.position for w in plan.waypoints(np.asarray(lower), np.asarray(upper))])
    need = np.max((15.0 / 8.0) * np.abs(np.diff(q, axis=0)) / v, axis=1)  # [s] per move
    # waypoints: home, then (approach point: move_time, pose: approach_time) per hold, home
    to_pose = np.zeros(len(need), dtype=bool)
    to_pose[1:-1:2] = True
    move = float(np.ceil(need[~to_pose].max(initial=0.0) * 100.0) / 100.0)  # whole 10 ms, up
    approach = float(np.ceil(need[to_pose].max(initial=0.0) * 100.0) / 100.0)
    if plan.dither > 0.0:
        peak = plan.dither * 2.0 * np.pi / plan.dither_period
        over = np.flatnonzero(peak > v)
        if over.size:
            j = int(over[0])
            raise ConfigError(
                f"dither peak speed {peak:.3g} rad/s (2π·dither/dither_period) exceeds {plan.joints[j]}'s "
                f"velocity limit {v[j]:.3g} rad/s; lower the dither or lengthen the period",
                key="dither",
                value=plan.dither,
            )
    return dataclasses.replace(
        plan, move_time=max(move, plan.move_time), approach_time=max(approach, plan.approach_time)
    )


def write_plan(path: str | os.PathLike, plan: CalibrationPlan) -> None:
    """Write ``plan`` as YAML (``calibration_plan:`` block; the user may edit the poses)."""
    body = {
        "version": _VERSION,
        "joints": list(plan.joints),
        "home": [float(x) for x in plan.home],
        "approach": float(plan.approach),
        "move_time": float(plan.move_time),
        "approach_time": float(plan.approach_time),
        "hold_time": float(plan.hold_time),
        "settle_time": float(plan.settle_time),
        "condition": float(plan.condition),
        "dither": float(plan.dither),
        "dither_period": float(plan.dither_period),
        "dither_cycles": int(plan.dither_cycles),
        "poses": [[round(float(x), 6) for x in q] for q in plan.poses],
    }
    header = (
        "# Gravity calibration poses [rad], joint order as `joints`; check each against the\n"
        "# arm's workspace before recording. approach [rad]: each pose is approached from\n"
        "# q - approach and q + approach (0: one side). Times [s].\n"
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(header + yaml.safe_dump({"calibration_plan": body}, sort_keys=False, width=200))


def load_plan(path: str | os.PathLike) -> CalibrationPlan:
    """Read a plan written by :func:`write_plan` (possibly edited).

    Raises:
        ConfigError: unreadable file, missing or unknown keys (file, key and valid keys
            named), poses of the wrong length or not finite.
    """
    data = read_yaml(path, "plan")
    body = data.get("calibration_plan") if isinstance(data, dict) else None
    if not isinstance(body, dict):
        raise ConfigError(f"{path}: no calibration_plan block", key="calibration_plan")
    known_keys("", string_keys("plan", data), ("calibration_plan",), file=path)
    known_keys("calibration_plan", string_keys("calibration_plan", body), PLAN_KEYS, file=path)
    try:
        joints = tuple(str(j) for j in body["joints"])
        poses = np.array(body["poses"], dtype=float)
        home = np.array(body["home"], dtype=float)
        plan = CalibrationPlan(
            joints=joints,
            poses=poses.reshape(-1, len(joints)),
            home=home,
            approach=float(body.get("approach", 0.1)),
            move_time=float(body.get("move_time", 1.2)),
            approach_time=float(body.get("approach_time", 0.6)),
            hold_time=float(body.get("hold_time", 1.0)),
            settle_time=float(body.get("settle_time", 0.5)),
            condition=float(body.get("condition", float("nan"))),
            dither=float(body.get("dither", 0.0)),
            dither_period=float(body.get("dither_period", 1.0)),
            dither_cycles=int(body.get("dither_cycles", 2)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: bad calibration_plan ({exc})", key="calibration_plan") from None
    if plan.home.shape != (len(joints),) or not np.all(np.isfinite(plan.poses)) or len(plan.poses) < 1:
        raise ConfigError(f"{path}: poses and home need {len(joints)} finite numbers each", key="poses")
    try:  # NaN passes every comparison below: reject it (and signs) by name first
        for key in ("approach", "dither"):
            number(key, getattr(plan, key), nonneg=True)
        for key in ("move_time", "approach_time", "hold_time", "dither_period"):
            number(key, getattr(plan, key), positive=True, unit="[s]")
        number("settle_time", plan.settle_time, nonneg=True, unit="[s]")
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}", key=exc.key) from None
    if not 0.0 <= plan.settle_time < plan.hold_time:
        raise ConfigError(f"{path}: settle_time must be within [0, hold_time)", key="settle_time")
    if plan.dither < 0.0 or (plan.dither > 0.0 and (plan.dither_period <= 0.0 or plan.dither_cycles < 1)):
        raise ConfigError(f"{path}: dither needs amplitude ≥ 0, period > 0, cycles ≥ 1", key="dither")
    return plan
