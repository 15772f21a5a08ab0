"""Simulated arm: the URDF's reduced rigid-body dynamics with sticking joint friction.

The simulator's "true" parameters come from a sim YAML (:meth:`SimConfig.from_yaml`) and may
differ on purpose from what the compensator believes (mass scale, friction), so the effect
of model error can be studied on the same code path as the hardware (the bridge talks MIT
frames to emulated motors that drive this arm, see :mod:`gravity_friction_comp.sim.bus`).

Equation of motion per step (joint space, n = independent joints, mimic joints reduced):

.. math::

    (s\\,M(q) + A)\\,\\ddot q = \\tau_m + \\tau_{ext} - s\\,b(q, \\dot q) - \\tau_f

(``τ_ext``: :meth:`SimulatedArm.set_external_effort`, a simulated hand; 0 by default.)

- ``M``, ``b`` from :class:`~gravity_friction_comp.model.robot_model.RobotModel` (Pinocchio CRBA and
  RNEA, mimic-reduced: ``M = Gᵀ M_full G``, ``b = Gᵀ b_full``; FIELD_NOTES).
- ``s`` = ``mass_scale``: every link's mass, first moment and rotational inertia scaled by
  the same factor (densities × s), payload included. M and b are linear in the inertial
  parameters, so this is exactly ``s·M`` and ``s·b`` — no model rebuild.
- ``A = diag(n²·J_rotor)`` [kg·m²], joint side: reflected rotor inertia from an
  :class:`~gravity_friction_comp.model.actuator.ActuatorModel` — the same class, folding (mimic
  joints: k²·n²J onto the master) and YAML schema the compensator uses — taken from, first
  that applies: (1) the sim YAML's ``actuators:`` block (:attr:`SimConfig.actuators`, the
  sim's own "true" values, which may differ from the compensator's), else (2) the actuator
  model attached to the :class:`RobotModel` given to :class:`SimulatedArm`
  (``model.with_actuators(...)``, "the same actuator model as the compensator"). Plus the
  deprecated per-joint ``armature`` [kg·m², joint side] (BAM's name for n²·J); a joint that
  gets both a non-zero ``armature`` and a non-zero n²·J is rejected (it would count the rotor
  twice). ``mass_scale`` does not scale A (the rotor is not a link). Reflected inertia only:
  the actuator model's ``viscous``/``coulomb`` are **not** used by the simulator, whose
  friction is the sticking model below (``joints.<name>``); adding them as smooth terms too
  would count friction twice (the sim YAML's ``actuators:`` block rejects non-zero values).
- ``τ_f``: joint friction that sticks, as in Rhoban BAM's simulator (FIELD_NOTES "BAM
  friction models"): the friction budget

  .. math::

      \\tau_{fm,i} = F_{c,i} + F_{v,i}|\\dot q_i| + F_{s,i}\\,e^{-|\\dot q_i / v_{s,i}|^{\\delta_i}}

  (Coulomb, viscous, Stribeck level above Coulomb; breakaway at rest = F_c + F_s) bounds the
  torque that would stop joint i within this step,
  ``τ_stop,i = (J_i/dt)·q̇_i + (τ_m − s·b)_i`` with ``J_i`` the diagonal of ``s·M + A``;
  ``τ_f,i = clip(τ_stop,i, −τ_fm,i, τ_fm,i)``. BAM does this for one joint; for a coupled
  arm the per-joint test is the initial guess and the step is then made consistent: joints
  whose friction is within budget are stuck (``q̇_i`` becomes exactly 0), the others slide
  with the full budget against the motion; the stuck joints' required friction is recomputed
  from the coupled equation and any joint that would need more than its budget is released
  (at most n passes). A joint below its breakaway torque therefore does not creep.
  A joint may instead carry a BAM model M1–M6 (``joints.<name>.bam``), whose budget also
  depends on the joint's motor torque and load ``−s·b``
  (:mod:`gravity_friction_comp.sim.bam_friction`).
- Integration: ``q̇⁺ = q̇ + dt·q̈``, then ``q⁺ = q + dt·q̇⁺`` (semi-implicit Euler, default)
  or BAM's ``q⁺ = q + dt·q̇⁺ + ½dt²·q̈`` (sim YAML ``integrator: bam``), at
  ``physics_rate_hz`` (≥ 1 kHz). Continuous joints integrate their angle.
- Joint limits: a position leaving ``[lower, upper]`` is clamped to the limit and that
  joint's velocity set to 0 (a perfectly inelastic hard stop; no contact model).

No rclpy import.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.model.actuator import ActuatorModel
from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.sim import bam_friction
from gravity_friction_comp.sim.config import MIN_PHYSICS_RATE_HZ, SimConfig
from gravity_friction_comp.sim.link_truth import true_model
from gravity_friction_comp.validation import check_shape

__all__ = [
    "SimState",
    "SimulatedArm",
]


@dataclass(frozen=True)
class SimState:
    """A snapshot of the simulated arm.

    Attributes:
        time: Simulated time since start [s].
        position: q (n,) [rad]. velocity: q̇ (n,) [rad/s].
        friction: τ_f applied in the last step (n,) [N·m] (positive opposes positive motion).
        stuck: (n,) bool, joints held by friction in the last step.
        holding: Payload attached.
    """

    time: float
    position: np.ndarray
    velocity: np.ndarray
    friction: np.ndarray
    stuck: np.ndarray
    holding: bool


class SimulatedArm:
    """The reduced arm dynamics with sticking friction (equations in the module docstring).

    Args:
        model: The robot (mimic-reduced); copied, never mutated. Its payload is ignored (the
            sim uses ``payload``). Its actuator model, if any, gives the reflected rotor
            inertia unless ``config.actuators`` is set (which then replaces it; never both);
            its viscous/Coulomb are ignored (the sim's friction is its sticking model).
        config: True values (:class:`SimConfig`); per-joint entries must name joints of
            ``model``.
        payload: Payload attached while holding (``None``: holding changes nothing).
        holding: Initial holding state.

    Raises:
        ConfigError: ``config`` names a joint the model does not have (lists the joints),
            an initial position outside the joint limits, or a joint with both a non-zero
            ``armature`` and a non-zero actuator n²·J (key ``joints.<name>.armature``).

    Not thread-safe: one thread steps it (the simulated motor bus); :meth:`set_holding` only
    swaps a reference and may be called from another thread.
    """

    def __init__(
        self,
        model: RobotModel,
        config: SimConfig | None = None,
        *,
        payload: Payload | None = None,
        holding: bool = False,
    ):
        if not isinstance(model, RobotModel):
            raise ConfigError("model must be a RobotModel", key="model", value=model)
        config = SimConfig() if config is None else config
        if not isinstance(config, SimConfig):
            raise ConfigError("config must be a SimConfig", key="sim_config", value=config)
        names = model.joint_names
        unknown = sorted(set(config.joints) - set(names))
        if unknown:
            raise ConfigError(
                f"sim config names joint(s) {unknown} not in the model; joints: {list(names)}",
                key=f"joints.{unknown[0]}",
                value=unknown[0],
            )
        bam_friction.check_bam_joints(model, {n: p.bam for n, p in config.joints.items() if p.bam})
        self.config = config
        model = true_model(model, config.links)  # per-link truth (sim/link_truth.py), if any
        # rigid links only: the reflected inertia is added once, below, as diag(A) (so an
        # actuator model on the caller's RobotModel is never counted twice)
        self._bare = model.with_actuators(None).with_payload(None)
        actuators = config.actuators if config.actuators is not None else model.actuators
        self._actuators = actuators
        rotor = (
            self._bare.with_actuators(actuators).actuator_terms.reflected_inertia
            if actuators is not None
            else np.zeros(len(names))
        )
        self._loaded = self._bare.with_payload(payload) if payload is not None else self._bare
        self._model = self._loaded if holding else self._bare
        self._holding = bool(holding)
        params = [config.joint(n) for n in names]
        ro = _readonly_array
        self.coulomb = ro([p.coulomb for p in params])
        self.stribeck_breakaway = ro([p.stribeck_breakaway for p in params])
        self.stribeck_velocity = ro([p.stribeck_velocity for p in params])
        self.stribeck_exponent = ro([p.stribeck_exponent for p in params])
        self.viscous = ro([p.viscous for p in params])
        self._truth = bam_friction.SimFriction(
            self.coulomb,
            self.stribeck_breakaway,
            self.stribeck_velocity,
            self.stribeck_exponent,
            self.viscous,
            [p.bam for p in params],
        )
        legacy = np.array([p.armature for p in params])
        both = (legacy != 0.0) & (rotor != 0.0)
        if np.any(both):
            i = int(np.flatnonzero(both)[0])
            raise ConfigError(
                f"joint {names[i]} has armature {legacy[i]} and reflected rotor inertia n²·J = "
                f"{rotor[i]} from the actuator model: give one (armature is deprecated)",
                key=f"joints.{names[i]}.armature",
                value=float(legacy[i]),
            )
        #: (n,) [kg·m²] joint-side diagonal A: actuator n²·J (folded) + deprecated armature
        self.armature = ro(rotor + legacy)
        self._armature_matrix = ro(np.diag(self.armature))  # diag(A), built once for step()
        self._lower = np.array(model.position_lower, dtype=float)
        self._upper = np.array(model.position_upper, dtype=float)
        self._limits = (self._lower.tolist(), self._upper.tolist())  # for step()'s joint loop
        q0 = np.array([p.initial_position for p in params])
        bad = (q0 < self._lower) | (q0 > self._upper)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ConfigError(
                f"initial_position of {names[i]} = {q0[i]} outside its limits "
                f"[{self._lower[i]}, {self._upper[i]}]",
                key=f"joints.{names[i]}.initial_position",
                value=float(q0[i]),
            )
        self._q = q0
        self._v = np.array([p.initial_velocity for p in params])
        self._friction = np.zeros(len(names))
        self._stuck = np.zeros(len(names), dtype=bool)
        self._time = 0.0
        self._external = np.zeros(len(names))  # τ_ext (n,) [N·m]: a hand on the arm

    # --- properties ------------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        """Joint order of every array."""
        return self._bare.joint_names

    @property
    def n(self) -> int:
        """Number of joints."""
        return self._bare.n

    @property
    def actuators(self) -> ActuatorModel | None:
        """The actuator model whose n²·J is in :attr:`armature` (``config.actuators``, else
        the model's), or ``None``. Only its reflected inertia is used."""
        return self._actuators

    @property
    def dt(self) -> float:
        """Configured physics step [s]."""
        return self.config.dt

    @property
    def holding(self) -> bool:
        """Payload attached."""
        return self._holding

    @property
    def model(self) -> RobotModel:
        """The model in use (bare or with payload), before ``mass_scale``."""
        return self._model

    @property
    def position(self) -> np.ndarray:
        """q (n,) [rad] (copy)."""
        return self._q.copy()

    @property
    def velocity(self) -> np.ndarray:
        """q̇ (n,) [rad/s] (copy)."""
        return self._v.copy()

    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return self._time

    def state(self) -> SimState:
        """A snapshot (copies)."""
        return SimState(
            self._time,
            self._q.copy(),
            self._v.copy(),
            self._friction.copy(),
            self._stuck.copy(),
            self._holding,
        )

    # --- inputs ----------------------------------------------------------------------------
    def set_holding(self, holding: bool) -> None:
        """Attach (True) or release (False) the payload (swaps prebuilt models)."""
        self._holding = bool(holding)
        self._model = self._loaded if self._holding else self._bare

    def set_external_effort(self, effort: Sequence[float] | np.ndarray) -> None:
        """External joint torque τ_ext (n,) [N·m] added to τ_m from the next step on (a hand
        pushing the arm; :mod:`gravity_friction_comp.sim.external_effort`).

        Raises:
            InputError: not of shape (n,) (reason ``Reason.SHAPE``), non-finite (``Reason.NOT_FINITE``).
        """
        self._external = self._vector("external_effort", effort)

    @property
    def external_effort(self) -> np.ndarray:
        """τ_ext (n,) [N·m] in force (copy)."""
        return self._external.copy()

    def reset(self, position: Sequence[float], velocity: Sequence[float] | None = None) -> None:
        """Set q (n,) [rad] and q̇ (n,) [rad/s] (zeros when ``None``); time is kept.

        Raises:
            InputError: not of shape (n,) (reason ``Reason.SHAPE``), non-finite (``Reason.NOT_FINITE``).
        """
        q = self._vector("position", position)
        v = np.zeros(self.n) if velocity is None else self._vector("velocity", velocity)
        self._q, self._v = np.clip(q, self._lower, self._upper), v

    def _vector(self, key: str, values) -> np.ndarray:
        arr = np.array(values, dtype=float)
        check_shape(key, arr, self.n)
        if not np.isfinite(arr).all():
            raise InputError(f"{key} contains NaN/inf: {arr.tolist()}", reason=Reason.NOT_FINITE)
        return arr

    # --- physics ---------------------------------------------------------------------------
    def friction_budget(
        self,
        velocity: Sequence[float] | np.ndarray,
        tau_motor: Sequence[float] | np.ndarray | None = None,
        tau_external: Sequence[float] | np.ndarray | None = None,
    ) -> np.ndarray:
        """τ_fm (n,) [N·m] at joint velocity q̇ (n,) [rad/s] (module docstring, BAM M2 form),
        BAM joints loaded by motor torque ``tau_motor`` and load ``tau_external`` (n,) [N·m]
        (``None``: 0)."""
        v = np.asarray(velocity, dtype=float)
        zero = np.zeros(v.shape)
        tau_m = zero if tau_motor is None else np.asarray(tau_motor, dtype=float)
        tau_e = zero if tau_external is None else np.asarray(tau_external, dtype=float)
        return self._truth.budget(v, tau_m, tau_e)

    def mass_matrix(self, q: Sequence[float] | np.ndarray) -> np.ndarray:
        """True inertia s·M(q) + diag(A) (n, n) [kg·m²]; A = :attr:`armature` (n²·J + armature)."""
        return self.config.mass_scale * self._model.mass_matrix(q) + self._armature_matrix

    def gravity(self, q: Sequence[float] | np.ndarray) -> np.ndarray:
        """True gravity torque s·g(q) (n,) [N·m] (what holds the simulated arm still)."""
        return self.config.mass_scale * self._model.gravity(q)

    def step(
        self, tau_motor: Sequence[float] | np.ndarray, dt: float | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Advance one step with joint torques ``tau_motor`` (n,) [N·m] held over ``dt`` [s].

        Args:
            tau_motor: Torque the motors apply at the joints, (n,) [N·m].
            dt: Step [s] (> 0, ≤ 1/MIN_PHYSICS_RATE_HZ); default :attr:`dt`.

        Returns:
            New ``(q, q̇)``, copies, (n,) each [rad], [rad/s].

        Raises:
            InputError: not of shape (n,) (``Reason.SHAPE``), non-finite torque (``Reason.NOT_FINITE``)
            or a bad dt (reason ``Reason.RANGE``); the state is unchanged.
        """
        tau = self._vector("tau_motor", tau_motor)
        h = self.dt if dt is None else float(dt)
        if not (math.isfinite(h) and 0 < h <= 1.0 / MIN_PHYSICS_RATE_HZ + 1e-12):
            raise InputError(
                f"dt must be in (0, {1.0 / MIN_PHYSICS_RATE_HZ}] s, got {dt!r}", reason=Reason.RANGE
            )
        q, v = self._q, self._v
        s = self.config.mass_scale
        mass, nonlinear = self._model.mass_and_nonlinear_effects(q, v)  # q, v checked once
        mass = s * mass + self._armature_matrix
        bias = -s * nonlinear
        load = self._external + bias  # BAM's load: the hand's torque, gravity, Coriolis
        rhs = tau + self._external + bias
        accel, friction, stuck = _sticking_step(mass, rhs, v, self._truth.budget(v, tau, load), h)
        # per joint in Python floats: the same IEEE operations as numpy's element-wise ones,
        # bit for bit, at a fraction of their call cost for a few joints
        q_new, v_new = [], []
        rule = self.config.integrator
        for qi, vi, ai, held, lo, hi in zip(
            q.tolist(), v.tolist(), accel.tolist(), stuck.tolist(), self._limits[0], self._limits[1]
        ):
            vi = 0.0 if held else vi + h * ai  # exact: stuck joints stop this step
            qi = bam_friction.integrate_position(qi, vi, ai, h, rule)
            if qi < lo or qi > hi:  # hard stop: clamped, velocity 0
                qi, vi = min(max(qi, lo), hi), 0.0
            q_new.append(qi)
            v_new.append(vi)
        self._q, self._v = np.array(q_new), np.array(v_new)
        self._friction, self._stuck = friction, stuck
        self._time += h
        return self._q.copy(), self._v.copy()


def _sticking_step(
    mass: np.ndarray, rhs: np.ndarray, v: np.ndarray, budget: np.ndarray, dt: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Accelerations, friction and stuck mask for ``mass·a = rhs − τ_f`` (module docstring).

    Args:
        mass: (n, n) [kg·m²]. rhs: τ_m − b (n,) [N·m]. v: q̇ (n,) [rad/s].
        budget: τ_fm (n,) [N·m]. dt: step [s].

    Returns:
        ``(a, τ_f, stuck)``; stuck joints have ``a = −q̇/dt``.
    """
    n = rhs.shape[0]
    # Per joint in Python floats (the same IEEE operations as numpy's element-wise ones, bit
    # for bit, cheaper for a few joints); products and solves stay numpy's (BLAS, LAPACK).
    r, vel, cap = rhs.tolist(), v.tolist(), budget.tolist()
    # BAM per-joint test with J = M_ii as the initial guess
    stop = [m / dt * x + y for m, x, y in zip(mass.diagonal().tolist(), vel, r)]
    stuck = [abs(x) <= c for x, c in zip(stop, cap)]
    slide = [_sign(x) * c for x, c in zip(stop, cap)]
    if not any(stuck):  # every joint slides (an arm in motion): one solve, no sub-matrices
        sliding = np.array(slide)
        return np.linalg.solve(mass, rhs - sliding), sliding, np.zeros(n, dtype=bool)
    for _ in range(n + 1):
        p = _partition(n, tuple(stuck))
        a_stuck = np.array([-vel[i] / dt for i in p.stuck_list])
        a = np.empty(n)
        a[p.stuck] = a_stuck
        friction = [0.0 if held else f for held, f in zip(stuck, slide)]
        if p.free_list:
            b_free = np.array([r[i] - slide[i] for i in p.free_list]) - mass.take(p.free_stuck) @ a_stuck
            a[p.free] = np.linalg.solve(mass.take(p.free_free), b_free)
        released = False
        if p.stuck_list:
            # friction the stuck joints need to stay stuck; beyond its budget a joint slides
            need = (rhs[p.stuck] - mass.take(p.stuck_rows) @ a).tolist()
            for i, x in zip(p.stuck_list, need):
                friction[i] = x
                if abs(x) > cap[i] * (1.0 + 1e-12):
                    stuck[i], slide[i], released = False, _sign(x) * cap[i], True
        if not released:
            break
    return a, np.array(friction), np.array(stuck)  # each pass frees ≥ 1 joint: ≤ n + 1 passes


def _sign(x: float) -> float:
    # numpy's sign: ±1.0, 0.0 for ±0.0, NaN for NaN
    return 1.0 if x > 0 else -1.0 if x < 0 else 0.0 if x == 0 else x


class _Partition(NamedTuple):
    """Indices of one stuck/free split of n joints (flat ones into an (n, n) matrix)."""

    stuck: np.ndarray  # (k,) joint indices
    free: np.ndarray  # (n - k,)
    stuck_list: list[int]  # the same as Python ints
    free_list: list[int]
    free_free: np.ndarray  # (n - k, n - k) flat indices of M_ff
    free_stuck: np.ndarray  # (n - k, k) flat indices of M_fs
    stuck_rows: np.ndarray  # (k, n) flat indices of the stuck rows of M


@functools.lru_cache(maxsize=256)
def _partition(n: int, stuck: tuple[bool, ...]) -> _Partition:
    # built once per pattern (an arm visits few of the 2ⁿ): np.ix_ each step cost more than the solve
    s = np.flatnonzero(stuck)
    f = np.flatnonzero(~np.array(stuck))
    flat = np.arange(n * n).reshape(n, n)
    return _Partition(s, f, s.tolist(), f.tolist(), flat[np.ix_(f, f)], flat[np.ix_(f, s)], flat[s])


def _readonly_array(values) -> np.ndarray:
    arr = np.array(values, dtype=float)
    arr.setflags(write=False)
    return arr
