"""Friction identification from joint-state logs (ROS-free core of ``identify_friction``).

Pipeline per joint i (issue 7):

1. **Load** a log: a rosbag2 folder (sqlite3 or MCAP, read with ``rosbags``) holding
   ``sensor_msgs/msg/JointState`` on a topic (default ``/joint_states``), or a CSV file with
   the column layout of :func:`load_csv`.
2. **Model torque**: accelerations ``a`` from a Savitzky–Golay derivative of the measured
   velocity (SciPy ``savgol_filter``, cubic, ``savgol_window`` s), and the velocity
   regressor smoothed by the same filter (noise in a regressor biases least squares); the rigid-body torque
   ``τ_rb = M(q)a + b(q, v)`` (gravity inside b) from
   :meth:`~gravity_friction_comp.model.robot_model.RobotModel.mass_matrix` and
   ``nonlinear_effects`` (Pinocchio CRBA/RNEA, mimic-reduced; with the actuator model's
   armature when one is attached, never its friction) — the inverse dynamics without friction. The friction sample is ``r = effort − τ_rb``.
3. **Samples used**: joint moving (``|v| ≥ min_velocity``; at rest friction is anything within
   its breakaway budget, not a function of v) and slowly accelerating (``|a| ≤
   max_acceleration``; unknown rotor inertia and filter lag matter there).
4. **Hold-out by segment**: the record is cut into contiguous blocks of ``block_duration``
   seconds; every k-th block (k = round(1/validation_fraction)) is validation, the rest is
   training — whole blocks, never random samples, so correlated neighbours do not leak.
5. **Candidate models** (friction.py equation, ``F_o`` = offset absorbs gravity-model error
   and any direction asymmetry, which is why separate ``F_c^±`` are not fitted: with the
   offset they are not identifiable from moving samples):

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

   ``bam_m3``–``bam_m6`` (Rhoban BAM, FIELD_NOTES "BAM friction models"; τ_m = effort,
   τ_e = −g(q)) are fitted only when the load is identifiable: the standard deviation of
   ``|τ_e − τ_m|`` over the training samples is at least ``min_load_spread`` [N·m];
   otherwise the result says so (``skipped``). ``τ_fm`` is BAM's friction budget evaluated by
   :meth:`~gravity_friction_comp.friction.bam.BamParameters.budget` (one definition for fitting,
   evaluation and the written JSON). M4–M6 fit every coefficient of the BAM file (bounded
   ≥ 0; the motor-side load coefficients ``K_l, K_ls`` / ``K_m, K_ms`` each ≤ 0.495 so their
   sum stays below 1, the self-locking limit bam.py enforces) *and* the Stribeck velocity
   θ̇_s ∈ [1e-4, 10] rad/s and exponent α ∈ [0.5, 5] (started from the ``stribeck`` fit) plus
   the offset F_o; the parameter count is that number. BAM uses sign(v) (no tanh), as M1/M3
   here. The motor/external split of M5/M6 is identified only through the difference
   ``τ_m + τ_e`` (friction and inertia): it is weakly determined on slow sweeps.
   ``ε`` is only identifiable when the log holds motion at |v| ≈ ε; it is bounded to
   ``[eps_min, eps_max]``, and a fit at the bound or below the slowest sample is reported as
   not identifiable (the YAML then gets the default smoothing ε).
6. **Selection**: smallest validation RMS [N·m], except that a model with more parameters
   is chosen over a simpler one only if it lowers the validation RMS by more than
   ``improvement_threshold`` (5 %) relative to the simpler one (models visited in order of
   parameter count).
7. **Output** (:func:`write_outputs`): ``friction_identified.yaml`` with a ``friction_comp``
   block (friction.py/arm_config.py schema, loads with
   :meth:`~gravity_friction_comp.friction.models.FrictionModel.from_yaml` as is) and an
   ``identification`` report section; BAM JSON files (``<joint>_m1.json``, ``_m2``, and
   ``_m3``–``_m6`` when fitted) in BAM's key layout; one PNG per joint (data and fitted curves).

No rclpy import; ``rosbags`` and matplotlib are imported only by the functions that use them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
import pathlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.friction.bam import _MODEL_KEYS as _BAM_KEYS
from gravity_friction_comp.friction.bam import COEFFICIENT_LIMITS, BamParameters
from gravity_friction_comp.friction.models import DEFAULT_EPS, FrictionModel
from gravity_friction_comp.validation import read_text

__all__ = [
    "CANDIDATE_MODELS",
    "IdentificationConfig",
    "IdentificationError",
    "IdentificationResult",
    "JointFit",
    "JointStateLog",
    "ModelFit",
    "friction_samples",
    "identify",
    "load_csv",
    "load_log",
    "load_rosbag",
    "write_csv",
    "write_outputs",
]

#: Candidate model names in order of parameter count (module docstring table).
CANDIDATE_MODELS = ("coulomb_viscous", "bam_m3", "coulomb_tanh", "stribeck", "bam_m4", "bam_m5", "bam_m6")
#: Load-dependent BAM candidates fitted by nonlinear least squares.
_BAM_NLS = ("bam_m4", "bam_m5", "bam_m6")


class IdentificationError(InputError):
    """Data that cannot be identified from (``reason``: ``"missing_topic"``,
    ``"missing_joints"``, ``"too_little_motion"``, ``"nan"``, ``"format"``, ``"file"``,
    ``"sign"``, ``"range"``)."""


class JointStateLog(NamedTuple):
    """A joint-state record, m samples of n joints.

    Attributes:
        joint_names: (n,) names. time: (m,) [s], increasing.
        position: (m, n) [rad]. velocity: (m, n) [rad/s]. effort: (m, n) [N·m].
    """

    joint_names: tuple[str, ...]
    time: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray

    def select(self, joints: Sequence[str]) -> JointStateLog:
        """The same log with only ``joints`` (in that order).

        Raises:
            IdentificationError: a joint not in the log (reason ``"missing_joints"``; lists
                the log's joints).
        """
        missing = [j for j in joints if j not in self.joint_names]
        if missing:
            raise IdentificationError(
                f"joint(s) {missing} not in the log; joints in the log: {list(self.joint_names)}",
                reason="missing_joints",
            )
        idx = [self.joint_names.index(j) for j in joints]
        return JointStateLog(
            tuple(joints), self.time, self.position[:, idx], self.velocity[:, idx], self.effort[:, idx]
        )


# -------------------------------------------------------------------------------------------
# loading


def write_csv(path: str | os.PathLike, log: JointStateLog) -> None:
    """Write ``log`` as CSV in the :func:`load_csv` layout."""
    header = ["time"]
    for name in log.joint_names:
        header += [f"{name}/position", f"{name}/velocity", f"{name}/effort"]
    data = np.empty((log.time.size, 1 + 3 * len(log.joint_names)))
    data[:, 0] = log.time
    data[:, 1::3] = log.position
    data[:, 2::3] = log.velocity
    data[:, 3::3] = log.effort
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        for row in data:
            w.writerow([repr(float(x)) for x in row])


#: Column suffixes that define a joint in a CSV log (:func:`load_csv`).
CSV_FIELDS = ("position", "velocity", "effort")


def load_csv(path: str | os.PathLike) -> JointStateLog:
    """Read a CSV log.

    Layout: a header row, then one row per sample. Column ``time`` [s] first, then for each
    joint ``<joint>/position`` [rad], ``<joint>/velocity`` [rad/s], ``<joint>/effort`` [N·m]
    (any column order after ``time``). Only columns named ``<joint>/position``, ``/velocity``
    or ``/effort`` define joints; other columns (``<joint>/command``, ``temp/celsius``, a
    text column) are ignored, their cells are not read. UTF-8, with or without a byte-order
    mark; blank lines are skipped; every other row has as many cells as the header::

        time,shoulder_pitch/position,shoulder_pitch/velocity,shoulder_pitch/effort
        0.000,0.3001,0.0,1.532

    Raises:
        IdentificationError: missing, unreadable or non-UTF-8 file (``"file"``, names the
            file); no ``time`` column first, a joint lacking one of its three columns, a
            column named twice, a row whose cell count differs from the header's, or a
            non-numeric cell in a used column (``"format"``, names the line and column).
    """
    p = pathlib.Path(path)
    try:
        text = read_text(p, "CSV log")
    except ConfigError as exc:
        raise IdentificationError(str(exc), reason="file") from None
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))  # BOM: Excel's UTF-8
    if not rows or not rows[0] or rows[0][0].strip() != "time":
        raise IdentificationError(
            f"CSV {p}: the first column must be 'time' (layout: time, "
            "<joint>/position, <joint>/velocity, <joint>/effort, ...)",
            reason="format",
        )
    header = [h.strip() for h in rows[0]]
    names: list[str] = []
    for h in header[1:]:
        name, _, field = h.rpartition("/")
        if name and field in CSV_FIELDS and name not in names:
            names.append(name)
    if not names:
        raise IdentificationError(f"CSV {p}: no '<joint>/position' columns", reason="format")
    cols = {"time": 0}
    for name in names:
        for field in CSV_FIELDS:
            key = f"{name}/{field}"
            if key not in header:
                raise IdentificationError(f"CSV {p}: joint {name!r} has no column {key!r}", reason="format")
            cols[key] = header.index(key)
    twice = sorted(k for k in cols if header.count(k) > 1)
    if twice:
        raise IdentificationError(f"CSV {p}: column(s) {twice} appear more than once", reason="format")
    used = sorted(cols.values())
    data = []
    for line, row in enumerate(rows[1:], start=2):  # line numbers of the file (1 = header)
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise IdentificationError(
                f"CSV {p}: line {line} has {len(row)} cells, the header has {len(header)} "
                "(a short, long or cut-off row)",
                reason="format",
            )
        try:
            data.append([float(row[c]) for c in used])
        except ValueError:
            bad = next(c for c in used if not _is_float(row[c]))
            raise IdentificationError(
                f"CSV {p}: line {line}, column {header[bad]!r}: not a number: {row[bad]!r}", reason="format"
            ) from None
    if not data:
        raise IdentificationError(f"CSV {p}: no data rows", reason="format")
    arr = np.array(data, dtype=float)
    at = {c: k for k, c in enumerate(used)}

    def block(field):
        return np.stack([arr[:, at[cols[f"{n}/{field}"]]] for n in names], axis=1)

    return JointStateLog(tuple(names), arr[:, 0], block("position"), block("velocity"), block("effort"))


def _is_float(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def load_rosbag(path: str | os.PathLike, topic: str = "/joint_states") -> JointStateLog:
    """Read ``sensor_msgs/msg/JointState`` messages on ``topic`` from a rosbag2 folder.

    Uses ``rosbags`` (sqlite3 and MCAP storage). Time is the message header stamp [s]
    (the record time when the stamp is zero), relative to the first message. The joint set
    is taken from the first message; later messages are reordered by name. Messages that lack
    one of the joints or whose position, velocity or effort array is shorter or longer than
    ``name`` are errors.

    Raises:
        IdentificationError: not a bag (``"file"``); topic absent (``"missing_topic"``, lists
            the JointState topics present); a position/velocity/effort array whose length is
            not that of ``name``, or missing joints in a message (``"format"``).
    """
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    p = pathlib.Path(path)
    store = get_typestore(Stores.ROS2_HUMBLE)
    try:
        reader = Reader(p)
        reader.open()
    except Exception as exc:  # rosbags raises its own ReaderError, or OSError
        raise IdentificationError(f"cannot open rosbag2 folder {p}: {exc}", reason="file") from None
    try:
        conns = [c for c in reader.connections if c.topic == topic]
        if not conns:
            present = sorted(
                {c.topic for c in reader.connections if c.msgtype == "sensor_msgs/msg/JointState"}
            )
            raise IdentificationError(
                f"bag {p}: no messages on topic {topic!r}; JointState topics in the bag: {present or 'none'}",
                reason="missing_topic",
            )
        names: tuple[str, ...] | None = None
        t, q, v, e = [], [], [], []
        for conn, stamp, raw in reader.messages(connections=conns):
            msg = store.deserialize_cdr(raw, conn.msgtype)
            if names is None:
                names = tuple(msg.name)
            idx = {n: k for k, n in enumerate(msg.name)}
            if len(idx) != len(msg.name):
                raise IdentificationError(
                    f"bag {p}: message {len(t)} on {topic!r} names a joint twice ({list(msg.name)})",
                    reason="format",
                )
            if any(n not in idx for n in names):
                raise IdentificationError(
                    f"bag {p}: a message lacks joint(s) of the first one ({list(names)})", reason="format"
                )
            short = [f for f in ("position", "velocity", "effort") if len(getattr(msg, f)) != len(msg.name)]
            if short:
                raise IdentificationError(
                    f"bag {p}: message {len(t)} on {topic!r} has {len(msg.name)} joint names "
                    f"but {', '.join(f'{len(getattr(msg, f))} {f}' for f in short)} values; "
                    "JointState messages must carry position, velocity and effort for every "
                    "joint",
                    reason="format",
                )
            order = [idx[n] for n in names]
            ts = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            t.append(ts if ts > 0 else stamp * 1e-9)
            q.append(np.asarray(msg.position)[order])
            v.append(np.asarray(msg.velocity)[order])
            e.append(np.asarray(msg.effort)[order])
    finally:
        reader.close()
    if names is None:
        raise IdentificationError(f"bag {p}: topic {topic!r} has no messages", reason="missing_topic")
    time = np.asarray(t, dtype=float)
    return JointStateLog(
        names, time - time[0], np.array(q, dtype=float), np.array(v, dtype=float), np.array(e, dtype=float)
    )


def load_log(path: str | os.PathLike, topic: str = "/joint_states") -> JointStateLog:
    """A CSV file or a rosbag2 folder (a directory), by what ``path`` is.

    Raises:
        IdentificationError: as :func:`load_csv` / :func:`load_rosbag`; missing path
            (``"file"``).
    """
    p = pathlib.Path(path)
    if p.is_dir():
        return load_rosbag(p, topic)
    if not p.exists():
        raise IdentificationError(f"log {p} does not exist", reason="file")
    return load_csv(p)


# -------------------------------------------------------------------------------------------
# configuration and results


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
            val = getattr(self, key)
            if (
                isinstance(val, bool)
                or not isinstance(val, (int, float))
                or not val > 0
                or not math.isfinite(val)
            ):
                raise ConfigError(f"{key} must be a finite number > 0, got {val!r}", key=key, value=val)
        vf = self.validation_fraction
        if isinstance(vf, bool) or not isinstance(vf, (int, float)) or not 0 < vf <= 0.5:
            raise ConfigError(
                f"validation_fraction must be in (0, 0.5], got {vf!r}", key="validation_fraction", value=vf
            )
        if not 0 <= self.improvement_threshold < 1:
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

    def predict(
        self,
        velocity: np.ndarray,
        load: np.ndarray | None = None,
        *,
        tau_m: np.ndarray | None = None,
        tau_e: np.ndarray | None = None,
    ) -> np.ndarray:
        """Model friction τ_f [N·m] at velocities (m,) [rad/s].

        ``load`` = |τ_e − τ_m| (m,) [N·m] for ``bam_m3``/``bam_m4`` (0 when ``None``);
        ``tau_m`` (effort) and ``tau_e`` (−g(q)) (m,) [N·m] for ``bam_m5``/``bam_m6`` (when
        given they also define the load of m3/m4).

        Raises:
            ValueError: ``bam_m5``/``bam_m6`` without ``tau_m`` and ``tau_e``.
        """
        velocity = np.asarray(velocity, dtype=float)
        if tau_m is not None and tau_e is not None:
            tau_m = np.asarray(tau_m, dtype=float)
            tau_e = np.asarray(tau_e, dtype=float)
            load = np.abs(tau_e - tau_m)
        elif self.name in ("bam_m5", "bam_m6"):
            raise ValueError(f"{self.name}: predict needs tau_m and tau_e, not only the load")
        else:
            load = np.zeros_like(velocity) if load is None else np.asarray(load, dtype=float)
            # |τ_e − τ_m| is all M3/M4 use: τ_e = 0, τ_m = −load reproduces it exactly
            tau_m, tau_e = -load, np.zeros_like(load)
        return _PREDICT[self.name](self.params, velocity, load, tau_m, tau_e)


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
            friction above the URDF effort limit: wrong units or scale of the log).
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
    tau_m: np.ndarray | None = None
    tau_e: np.ndarray | None = None
    warnings: tuple[str, ...] = ()

    @property
    def best(self) -> ModelFit:
        """The selected :class:`ModelFit`."""
        return self.fits[self.selected]


@dataclasses.dataclass(frozen=True)
class IdentificationResult:
    """Per-joint fits, in joint order. Attributes: joints (n,), fits (n,) :class:`JointFit`,
    config :class:`IdentificationConfig`."""

    joints: tuple[str, ...]
    fits: tuple[JointFit, ...]
    config: IdentificationConfig

    def friction_keywords(self) -> dict[str, Any]:
        """``friction_comp`` keywords for :class:`~gravity_friction_comp.friction.models.FrictionModel`
        from each joint's selected model (``bam_m3``–``bam_m6`` joints fall back to their
        coulomb_viscous fit here; :func:`write_outputs` writes BAM files for them).

        ``eps`` is the selected model's fitted ε when it is identified (see
        :func:`_eps_notes`), else friction.py's default 0.01 rad/s (a smoothing choice, not a
        measured value)."""
        out = {
            k: []
            for k in (
                "breakaway",
                "eps",
                "viscous",
                "stribeck_breakaway",
                "stribeck_velocity",
                "stribeck_exponent",
                "offset",
            )
        }
        for jf in self.fits:
            name = "coulomb_viscous" if jf.selected.startswith("bam_") else jf.selected
            p = jf.fits[name].params
            out["breakaway"].append(p["breakaway"])
            identified = "eps" in p and not any(n.startswith(EPS_NOT_IDENTIFIED) for n in jf.fits[name].notes)
            out["eps"].append(p["eps"] if identified else DEFAULT_EPS)
            out["viscous"].append(p["viscous"])
            out["stribeck_breakaway"].append(p.get("stribeck_breakaway", 0.0))
            out["stribeck_velocity"].append(p.get("stribeck_velocity", 0.1))
            out["stribeck_exponent"].append(p.get("stribeck_exponent", 2.0))
            out["offset"].append(p["offset"])
        return {k: [float(x) for x in v] for k, v in out.items()}


# -------------------------------------------------------------------------------------------
# models


def _p_cv(p, v, load, tau_m=None, tau_e=None):
    return p["breakaway"] * np.sign(v) + p["viscous"] * v + p["offset"]


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


def _bam_parameters(name: str, p: Mapping[str, float]) -> BamParameters:
    """BamParameters of fit ``name`` (``bam_m4``…) from its params (BAM keys; ``offset``
    is ours and not part of BAM). Raises ConfigError for values bam.py rejects."""
    model = name[len("bam_") :]
    return BamParameters(model=model, actuator="identified", **{k: p[k] for k in _BAM_KEYS[model]})


def _p_bam(name: str) -> Callable:
    def predict(p, v, load, tau_m, tau_e):
        # BAM's simulator: friction takes its full budget against the motion (bam.py doc)
        return np.sign(v) * _bam_parameters(name, p).budget(v, tau_m, tau_e) + p["offset"]

    return predict


_PREDICT: dict[str, Callable] = {
    "coulomb_viscous": _p_cv,
    "coulomb_tanh": _p_tanh,
    "stribeck": _p_stribeck,
    "bam_m3": _p_m3,
    **{name: _p_bam(name) for name in _BAM_NLS},
}


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x**2))) if x.size else float("nan")


def _fit_joint(
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
            [np.inf, _MOTOR_LOAD_MAX, np.inf, np.inf],
            ("friction_base", "load_friction_base", "friction_viscous", "offset"),
        )
        add(
            "bam_m3",
            {"friction_base": kc, "load_friction_base": kl, "friction_viscous": kv, "offset": fo3},
            4,
            notes,
        )
    else:
        for name in ("bam_m3",) + _BAM_NLS:
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

    best = None
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
    x = best[1]
    notes = list(_eps_notes(x[3], vmin, cfg))
    if x[5] < vmin:
        notes.append("stribeck_velocity below the slowest sample: poorly determined")
    add("stribeck", dict(zip(keys, x)), 7, tuple(notes))
    progress(f"{joint}: stribeck")

    if "bam_m3" in fits:
        _fit_bam_nls(fits, add, nls, vt, rt, tau_m[tr], tau_e[tr])
    progress(f"{joint}: bam")

    selected = select_model(fits, cfg.improvement_threshold)
    peak = float(np.max(np.abs(fits[selected].predict(v, tau_m=tau_m, tau_e=tau_e))))
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
    )


#: Significance of the mean friction along the motion in :func:`_direction_check`: this
#: many standard errors (white-noise estimate, hence generous) and this share of the
#: friction samples' RMS (so exactly-zero friction is not "significant" on clean data).
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
        IdentificationError: ``reason="sign"`` when ``D < −(5 σ_D + 1e-3·rms(r))``: the
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
            reason="sign",
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
    moved = [f"{k} {x0:.4g}" for k, x0, l, u in zip(keys, x, lb, ub) if not l <= x0 <= u]
    return out, (f"bounded (unconstrained fit: {', '.join(moved)})",)


#: Upper bound of each motor-side load coefficient (K_l, K_ls, K_m, K_ms): two of them sum
#: below 1, bam.py's self-locking limit (BamParameters.load_slope).
_MOTOR_LOAD_MAX = 0.495
_MOTOR_LOAD_KEYS = (
    "load_friction_base",
    "load_friction_stribeck",
    "load_friction_motor",
    "load_friction_motor_stribeck",
)


def _fit_bam_nls(fits, add, nls, vt, rt, tmt, tet) -> None:
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
    for name in _BAM_NLS:
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
            else _MOTOR_LOAD_MAX
            if k in _MOTOR_LOAD_KEYS
            else COEFFICIENT_LIMITS[k][0]
            if k in COEFFICIENT_LIMITS
            else np.inf
            for k in keys
        ]
        x0 = np.clip([start.get(k, 0.0) for k in keys], lb, ub)

        def resid(x, keys=keys, name=name):
            p = dict(zip(keys, x))
            return sv * _bam_parameters(name, p).budget(vt, tmt, tet) + p["offset"] - rt

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


def select_model(fits: Mapping[str, ModelFit], improvement_threshold: float = 0.05) -> str:
    """Name of the chosen model (module docstring, step 6).

    Visiting models by parameter count (ties in :data:`CANDIDATE_MODELS` order), the current
    choice is replaced by a model with more parameters only if that model's validation RMS
    is below ``(1 − improvement_threshold)`` × the current choice's.
    """
    order = sorted(fits.values(), key=lambda m: (m.n_params, CANDIDATE_MODELS.index(m.name)))
    chosen = order[0]
    for m in order[1:]:
        if m.n_params == chosen.n_params:
            if m.validation_rms < chosen.validation_rms:
                chosen = m
        elif m.validation_rms < (1.0 - improvement_threshold) * chosen.validation_rms:
            chosen = m
    return chosen.name


# -------------------------------------------------------------------------------------------
# pipeline


#: Smallest median time step [s] of a log: no joint-state record is sampled above 1 MHz;
#: below it the time column is in another unit (or garbage), and the Savitzky–Golay window
#: in samples (savgol_window / step) would overflow.
MIN_TIME_STEP = 1e-6
#: Longest log [s] (~116 days): longer is a time column in another unit (ns: 10 min at
#: 1 kHz reads as 6e11 s), and the hold-out block index would overflow.
MAX_DURATION = 1e7


def _check_log(log: JointStateLog) -> None:
    """Refuse logs :func:`identify` cannot use (NaN/inf, < 10 samples, time not strictly
    increasing, median step below :data:`MIN_TIME_STEP`, longer than
    :data:`MAX_DURATION`); raises IdentificationError."""
    for key in ("time", "position", "velocity", "effort"):
        arr = getattr(log, key)
        bad = ~np.isfinite(arr)
        if np.any(bad):
            rows = np.flatnonzero(bad.reshape(arr.shape[0], -1).any(axis=1))
            raise IdentificationError(
                f"{key} holds {int(bad.sum())} NaN/inf value(s) (first at sample {rows[0]}, "
                f"t = {log.time[rows[0]] if np.isfinite(log.time[rows[0]]) else 'nan'}); "
                "clean or cut the log",
                reason="nan",
            )
    if log.time.size < 10:
        raise IdentificationError(f"log has only {log.time.size} samples", reason="too_little_motion")
    dt = np.diff(log.time)
    if np.any(dt <= 0):
        k = int(np.flatnonzero(dt <= 0)[0]) + 1
        raise IdentificationError(
            f"time must be strictly increasing: sample {k} has t = {float(log.time[k])!r} s "
            f"after t = {float(log.time[k - 1])!r} s (duplicate or reordered messages?)",
            reason="format",
        )
    step = float(np.median(dt))
    if not step >= MIN_TIME_STEP:
        raise IdentificationError(
            f"median time step {step:.3g} s is below {MIN_TIME_STEP:g} s (a joint-state log "
            "sampled above 1 MHz is not a real record): is the time column in seconds?",
            reason="format",
        )
    span = float(log.time[-1] - log.time[0])
    if not span <= MAX_DURATION:
        raise IdentificationError(
            f"log spans {span:.3g} s, above {MAX_DURATION:g} s (~116 days, not one "
            "identification record): is the time column in seconds (not ns)?",
            reason="format",
        )


def friction_samples(
    log: JointStateLog, model, cfg: IdentificationConfig | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Friction samples ``r = effort − τ_rb`` (module docstring, step 2).

    Args:
        log: record whose joints are the model's joints in the same order (use
            :meth:`JointStateLog.select` with ``model.joint_names``).
        model: :class:`~gravity_friction_comp.model.robot_model.RobotModel` (payload as during the
            record).
        cfg: settings (savgol window).

    Returns:
        ``(r, v, a, load)`` each (m, n): friction [N·m], smoothed velocity [rad/s]
        (Savitzky–Golay, the regressor: raw velocity noise would bias the fit, errors in
        variables), filtered acceleration [rad/s²],
        BAM load ``|τ_e − τ_m|`` = ``|−g(q) − effort|`` [N·m].
    """
    r, vel, acc, tau_m, tau_e = _samples(log, model, cfg)
    return r, vel, acc, np.abs(tau_e - tau_m)


def _samples(log: JointStateLog, model, cfg: IdentificationConfig | None = None):
    """:func:`friction_samples` with BAM's ``tau_m = effort`` and ``tau_e = −g(q)`` (m, n)
    [N·m] in place of the load."""
    from scipy.signal import savgol_filter

    cfg = IdentificationConfig() if cfg is None else cfg
    dt = float(np.median(np.diff(log.time)))
    win = max(5, int(round(cfg.savgol_window / dt)) | 1)
    if win > log.time.size:
        win = (log.time.size - 1) | 1 if log.time.size > 5 else 5
    acc = savgol_filter(log.velocity, win, 3, deriv=1, delta=dt, axis=0, mode="interp")
    vel = savgol_filter(log.velocity, win, 3, axis=0, mode="interp")
    r = np.empty_like(log.effort)
    tau_e = np.empty_like(log.effort)
    for k in range(log.time.size):
        q, v = log.position[k], vel[k]
        # M(q)·a + b(q, v): the rigid-body (+ armature) part of inverse dynamics, without
        # any actuator-model friction (that is what is being identified)
        r[k] = log.effort[k] - (model.mass_matrix(q) @ acc[k] + model.nonlinear_effects(q, v))
        tau_e[k] = -model.gravity(q)
    return r, vel, acc, log.effort.copy(), tau_e


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
        joints: joints to identify (default: all model joints).
        config: settings.
        progress: called with a short text after each fit step (for a progress bar).

    Raises:
        IdentificationError: NaN/inf in the log (``"nan"``); model joints missing from the log
            (``"missing_joints"``); a joint without ``min_samples`` moving training samples in
            each direction (``"too_little_motion"``); unknown ``joints`` (``"missing_joints"``);
            time not strictly increasing, a median step below :data:`MIN_TIME_STEP` or a
            span above :data:`MAX_DURATION` (``"format"``); friction that pushes along the motion, i.e. a reversed effort or
            velocity sign convention (``"sign"``, :func:`_direction_check`).

    Friction not resolved above the noise, or identified friction above the joint's URDF
    effort limit over the logged velocities (wrong units or scale of the effort), are not
    errors (URDF limits are often placeholders) but warnings in
    :attr:`JointFit.warnings`, which :func:`write_outputs` and the CLI report.
    """
    cfg = IdentificationConfig() if config is None else config
    progress = progress or (lambda s: None)
    names = tuple(model.joint_names)
    joints = names if joints is None else tuple(joints)
    bad = [j for j in joints if j not in names]
    if bad:
        raise IdentificationError(
            f"joint(s) {bad} not in the URDF model; model joints: {list(names)}", reason="missing_joints"
        )
    log = log.select(names)
    _check_log(log)
    r, vel, acc, tau_m, tau_e = _samples(log, model, cfg)
    progress("model torque")
    k = max(2, int(round(1.0 / cfg.validation_fraction)))
    block = np.floor((log.time - log.time[0]) / cfg.block_duration).astype(int)
    val_all = (block % k) == (k - 1)
    fits = []
    for j in joints:
        i = names.index(j)
        v = vel[:, i]
        use = (np.abs(v) >= cfg.min_velocity) & (np.abs(acc[:, i]) <= cfg.max_acceleration)
        tr = use & ~val_all
        n_pos, n_neg = int(np.sum(tr & (v > 0))), int(np.sum(tr & (v < 0)))
        if min(n_pos, n_neg) < cfg.min_samples or not np.any(use & val_all):
            raise IdentificationError(
                f"joint {j}: too little motion: {n_pos} / {n_neg} training samples moving "
                f"+/− at |v| ≥ {cfg.min_velocity} rad/s with |a| ≤ {cfg.max_acceleration} "
                f"rad/s² (need {cfg.min_samples} each, and some in the validation blocks); "
                "record constant-velocity sweeps in both directions",
                reason="too_little_motion",
            )
        fits.append(
            _fit_joint(
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
        )
    return IdentificationResult(joints, tuple(fits), cfg)


# -------------------------------------------------------------------------------------------
# output


def _bam_dict(name: str, params: Mapping[str, float]) -> dict[str, Any]:
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
            "load_friction_base": min(max(params["load_friction_base"], 0.0), _MOTOR_LOAD_MAX),
        }
    return _bam_parameters(name, params).to_dict()


def write_outputs(
    result: IdentificationResult,
    out_dir: str | os.PathLike,
    *,
    plots: bool = True,
    all_joints: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Write the per-arm YAML, BAM JSON files and per-joint PNGs into ``out_dir``.

    Args:
        result: from :func:`identify`.
        out_dir: created if absent.
        plots: write ``<joint>_friction.png`` (matplotlib Agg).
        all_joints: joint order of the YAML's per-joint lists (default: the identified joints);
            joints not identified get zero friction.

    Returns:
        ``{"yaml": path, "bam": {joint: {model: path}}, "plots": [paths]}``.

    Raises:
        IdentificationError: ``reason="range"`` when the written YAML does not load with
            :meth:`~gravity_friction_comp.friction.models.FrictionModel.from_yaml` (e.g. a
            coefficient beyond friction.py's ±1e6 bound: the log's effort is in other
            units); the YAML is removed.
        OSError: ``out_dir`` cannot be created or written.

    The YAML holds ``joints``, the ``friction_comp`` block (``model: coulomb``; if a joint
    selected ``bam_m3``–``bam_m6``, ``model: bam`` with ``bam_files`` naming that model's
    JSON and that joint's tanh terms zero)
    and an ``identification`` section (per model validation RMS and parameter count, and the
    joint's ``warnings`` when it has any: see :attr:`JointFit.warnings`).
    """
    import yaml

    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    order = tuple(all_joints) if all_joints is not None else result.joints
    kw = result.friction_keywords()
    n = len(order)
    block: dict[str, Any] = {"enabled": True, "model": "coulomb"}
    lists = {k: [0.0] * n for k in kw}
    lists["eps"] = [0.01] * n
    lists["stribeck_velocity"] = [0.1] * n
    lists["stribeck_exponent"] = [2.0] * n
    bam_paths: dict[str, dict[str, str]] = {}
    bam_files: list[str | None] = [None] * n
    report: dict[str, Any] = {}
    for idx, jf in enumerate(result.fits):
        i = order.index(jf.joint)
        for k in kw:
            lists[k][i] = kw[k][idx]
        bam_paths[jf.joint] = {}
        for name in ("coulomb_viscous", "stribeck", "bam_m3") + _BAM_NLS:
            if name in jf.fits:
                d = _bam_dict(name, jf.fits[name].params)
                path = out / f"{jf.joint}_{d['model']}.json"
                path.write_text(json.dumps(d, indent=2) + "\n", encoding="utf-8")
                bam_paths[jf.joint][d["model"]] = str(path)
        if jf.selected.startswith("bam_"):
            bam_files[i] = pathlib.Path(bam_paths[jf.joint][jf.selected[len("bam_") :]]).name
            for k in ("breakaway", "viscous", "stribeck_breakaway"):
                lists[k][i] = 0.0
            lists["offset"][i] = jf.best.params["offset"]
        report[jf.joint] = {
            "selected": jf.selected,
            "samples": {"train": jf.n_train, "validation": jf.n_validation},
            "models": {
                name: {
                    "validation_rms": round(m.validation_rms, 6),
                    "train_rms": round(m.train_rms, 6),
                    "n_params": m.n_params,
                    "params": {k: round(x, 6) for k, x in m.params.items()},
                    **({"notes": list(m.notes)} if m.notes else {}),
                }
                for name, m in jf.fits.items()
            },
            "skipped": dict(jf.skipped),
            **({"warnings": list(jf.warnings)} if jf.warnings else {}),
        }
    block.update({k: [round(x, 6) for x in v] for k, v in lists.items()})
    # the YAML's offset carries a sign; friction.py requires the others ≥ 0
    for k in ("breakaway", "viscous", "stribeck_breakaway"):
        block[k] = [max(x, 0.0) for x in block[k]]
    if any(b is not None for b in bam_files):
        block["model"] = "bam"
        block["bam_files"] = bam_files
    doc = {
        "joints": list(order),
        "friction_comp": block,
        "identification": {
            "criterion": (
                f"smallest validation RMS; a model with more parameters only if it "
                f"lowers the validation RMS by > "
                f"{100 * result.config.improvement_threshold:g} %"
            ),
            "validation": (
                f"every {max(2, round(1 / result.config.validation_fraction))}-th "
                f"{result.config.block_duration:g} s block held out"
            ),
            "joints": report,
        },
    }
    yaml_path = out / "friction_identified.yaml"
    header = (
        "# Identified by identify_friction (gravity_friction_comp.ident.identification).\n"
        "# friction_comp: tau = offset + viscous*v + (breakaway + stribeck_breakaway*"
        "exp(-|v/stribeck_velocity|^stribeck_exponent))*tanh(v/eps)\n"
    )
    yaml_path.write_text(
        header + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, allow_unicode=True),
        encoding="utf-8",
    )
    # the consumer's own check: never leave a YAML the friction node would refuse
    try:
        FrictionModel.from_yaml(yaml_path, list(order))
    except ConfigError as exc:
        yaml_path.unlink()
        raise IdentificationError(
            f"the identified friction is not a valid friction_comp block ({exc}); not "
            f"written. Check the log's effort units and scale",
            reason="range",
        ) from None
    plots_out = []
    if plots:
        plots_out = _plot(result, out)
    return {"yaml": str(yaml_path), "bam": bam_paths, "plots": plots_out}


def _plot(result: IdentificationResult, out: pathlib.Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for jf in result.fits:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        ax.plot(
            jf.velocity[~jf.is_validation],
            jf.friction[~jf.is_validation],
            ".",
            ms=2,
            color="0.6",
            label="training data",
        )
        ax.plot(
            jf.velocity[jf.is_validation],
            jf.friction[jf.is_validation],
            ".",
            ms=2,
            color="tab:orange",
            label="validation data",
        )
        vmax = float(np.max(np.abs(jf.velocity)))
        vv = np.concatenate([np.linspace(-vmax, -1e-4, 300), np.linspace(1e-4, vmax, 300)])
        # curves at the median-load sample's τ_m, τ_e (the load models depend on them)
        k = int(np.argsort(jf.load)[jf.load.size // 2])
        if jf.tau_m is not None and jf.tau_e is not None:
            at = dict(tau_m=np.full_like(vv, jf.tau_m[k]), tau_e=np.full_like(vv, jf.tau_e[k]))
        else:
            at = dict(load=np.full_like(vv, jf.load[k]))
        for name, m in jf.fits.items():
            style = "-" if name == jf.selected else "--"
            ax.plot(
                vv,
                m.predict(vv, **at),
                style,
                label=f"{name} (val RMS {m.validation_rms:.4f} N·m, {m.n_params} p)"
                + (" ← selected" if name == jf.selected else ""),
            )
        ax.set_xlabel("velocity [rad/s]")
        ax.set_ylabel("friction torque [N·m]")
        ax.set_title(f"{jf.joint}: effort − model torque")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        path = out / f"{jf.joint}_friction.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(str(path))
    return paths


def text_progress(total: int, stream=None) -> Callable[[str], None]:
    """A textual progress bar on ``stream`` (stderr): returns a callback for :func:`identify`
    that advances one of ``total`` steps per call."""
    stream = sys.stderr if stream is None else stream
    count = [0]

    def step(label: str) -> None:
        count[0] = min(count[0] + 1, total)
        width = 30
        filled = int(width * count[0] / total)
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {count[0]}/{total} {label[:40]:<40}")
        if count[0] == total:
            stream.write("\n")
        stream.flush()

    return step
