"""Simulated arm: the URDF's reduced rigid-body dynamics with sticking joint friction.

The simulator's "true" parameters come from a sim YAML (:meth:`SimConfig.from_yaml`) and may
differ on purpose from what the compensator believes (mass scale, friction), so the effect
of model error can be studied on the same code path as the hardware (the bridge talks MIT
frames to emulated motors that drive this arm, see :mod:`gravity_friction_comp.sim.bus`).

Equation of motion per step (joint space, n = independent joints, mimic joints reduced):

.. math::

    (s\\,M(q) + A)\\,\\ddot q = \\tau_m - s\\,b(q, \\dot q) - \\tau_f

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
- Integration: semi-implicit (symplectic) Euler, ``q̇⁺ = q̇ + dt·q̈``, ``q⁺ = q + dt·q̇⁺``,
  at ``physics_rate_hz`` (≥ 1 kHz). Continuous joints integrate their angle.
- Joint limits: a position leaving ``[lower, upper]`` is clamped to the limit and that
  joint's velocity set to 0 (a perfectly inelastic hard stop; no contact model).

No rclpy import.
"""

from __future__ import annotations

import math
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError
from gravity_friction_comp.model.actuator import ActuatorModel
from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.validation import number, read_yaml, string_keys

__all__ = [
    "JOINT_KEYS",
    "JointSimParams",
    "MIN_PHYSICS_RATE_HZ",
    "SimConfig",
    "SimulatedArm",
    "SimState",
]

#: Lowest physics rate accepted [Hz] (the issue asks for ≥ 1 kHz).
MIN_PHYSICS_RATE_HZ = 1000.0

#: Per-joint keys of the sim YAML (``simulation.joints.<name>``).
JOINT_KEYS = (
    "coulomb",
    "stribeck_breakaway",
    "stribeck_velocity",
    "stribeck_exponent",
    "viscous",
    "armature",
    "initial_position",
    "initial_velocity",
)
_TOP_KEYS = ("version", "physics_rate_hz", "mass_scale", "joints", "actuators")
_SCHEMA_VERSION = 1


def _number(key: str, value: Any, *, positive: bool = False, nonneg: bool = False) -> float:
    return number(key, value, positive=positive, nonneg=nonneg, text=True)


@dataclass(frozen=True)
class JointSimParams:
    """True per-joint values of the simulated arm (joint side).

    Attributes:
        coulomb: Coulomb friction level F_c [N·m] (≥ 0); friction.py calls it ``breakaway``.
        stribeck_breakaway: Static level above Coulomb F_s [N·m] (≥ 0); breakaway torque at
            rest is ``coulomb + stribeck_breakaway``.
        stribeck_velocity: v_s [rad/s] (> 0).
        stribeck_exponent: δ [-] (> 0); 2 is the Gaussian Stribeck curve.
        viscous: F_v [N·m·s/rad] (≥ 0).
        armature: Reflected rotor inertia n²·J_rotor [kg·m²] (≥ 0), joint side, added to M's
            diagonal. Deprecated: prefer the ``actuators:`` block (rotor_inertia, gear_ratio),
            the schema the compensator uses; kept for existing sim YAMLs.
        initial_position: q(0) [rad]. initial_velocity: q̇(0) [rad/s].

    Raises:
        ConfigError: a value out of range (key names the field).

    Source: Stribeck curve as in friction.py (Armstrong-Hélouvry et al. 1994); BAM's
    ``friction_base``/``friction_stribeck``/``dtheta_stribeck``/``alpha``/``friction_viscous``/
    ``armature`` (FIELD_NOTES).
    """

    coulomb: float = 0.0
    stribeck_breakaway: float = 0.0
    stribeck_velocity: float = 0.1
    stribeck_exponent: float = 2.0
    viscous: float = 0.0
    armature: float = 0.0
    initial_position: float = 0.0
    initial_velocity: float = 0.0

    def __post_init__(self) -> None:
        for key in ("coulomb", "stribeck_breakaway", "viscous", "armature"):
            object.__setattr__(self, key, _number(key, getattr(self, key), nonneg=True))
        for key in ("stribeck_velocity", "stribeck_exponent"):
            object.__setattr__(self, key, _number(key, getattr(self, key), positive=True))
        for key in ("initial_position", "initial_velocity"):
            object.__setattr__(self, key, _number(key, getattr(self, key)))

    @property
    def breakaway(self) -> float:
        """Friction budget at rest [N·m]: ``coulomb + stribeck_breakaway``."""
        return self.coulomb + self.stribeck_breakaway


@dataclass(frozen=True)
class SimConfig:
    """The simulated arm's "true" values (sim YAML schema version 1).

    Attributes:
        joints: Joint name → :class:`JointSimParams`; joints of the model not listed get
            the defaults (no friction, no armature, q(0) = 0).
        mass_scale: s [-] (1e-3..1e3): true inertial parameters = URDF's × s (payload included).
        physics_rate_hz: Integration rate [Hz] (≥ :data:`MIN_PHYSICS_RATE_HZ`).
        actuators: The "true" :class:`~gravity_friction_comp.model.actuator.ActuatorModel` (named,
            mimic joints allowed, or count-only in the model's joint order) whose reflected
            inertia n²·J the simulated arm uses, or ``None`` (then the model's attached one,
            if any). Its viscous and Coulomb must be 0: the sim's friction is the per-joint
            sticking model.

    YAML (``simulation:`` at the top level; unknown keys are errors)::

        simulation:
          version: 1
          physics_rate_hz: 2000.0
          mass_scale: 1.05
          joints:
            shoulder_pitch: {coulomb: 0.08, stribeck_breakaway: 0.04, stribeck_velocity: 0.05,
                             stribeck_exponent: 2.0, viscous: 0.03, initial_position: 0.3}
          actuators:                  # ActuatorModel.from_arm_yaml schema (README, actuator.py)
            joints: [base_yaw, shoulder_pitch]    # required here
            rotor_inertia: [2.0e-5, 4.0e-5]       # [kg·m²] motor side, >= 0
            gear_ratio: [10, 40]                  # θ_motor/θ_joint, 1e-3 <= |n| <= 1e4

    Raises:
        ConfigError: bad values or keys (key names the offending entry); in the
            ``actuators`` block also a missing ``joints`` list, non-zero ``viscous``/``coulomb``
            or ``urdf_dynamics: true`` (friction belongs in ``joints.<name>``).
        DimensionError: an ``actuators`` list of the wrong length.
    """

    joints: Mapping[str, JointSimParams] = field(default_factory=dict)
    mass_scale: float = 1.0
    physics_rate_hz: float = 1000.0
    actuators: ActuatorModel | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.joints, Mapping):
            raise ConfigError("joints must be a mapping name → parameters", key="joints", value=self.joints)
        clean = {}
        for name, params in self.joints.items():
            if not isinstance(name, str) or not name:
                raise ConfigError(
                    f"joint name must be a non-empty string, got {name!r}", key="joints", value=name
                )
            if isinstance(params, Mapping):
                params = _joint_params(name, params)
            if not isinstance(params, JointSimParams):
                raise ConfigError(
                    f"joints.{name} must be a mapping or JointSimParams", key=f"joints.{name}", value=params
                )
            clean[name] = params
        object.__setattr__(self, "joints", MappingProxyType(clean))
        scale = _number("mass_scale", self.mass_scale, positive=True)
        if not 1e-3 <= scale <= 1e3:  # a model off by 1000× is not "the truth differs a bit"
            raise ConfigError(
                f"mass_scale must be within 1e-3..1e3, got {scale!r}", key="mass_scale", value=self.mass_scale
            )
        object.__setattr__(self, "mass_scale", scale)
        rate = _number("physics_rate_hz", self.physics_rate_hz, positive=True)
        if rate < MIN_PHYSICS_RATE_HZ:
            raise ConfigError(
                f"physics_rate_hz must be ≥ {MIN_PHYSICS_RATE_HZ:g}, got {rate:g}",
                key="physics_rate_hz",
                value=self.physics_rate_hz,
            )
        object.__setattr__(self, "physics_rate_hz", rate)
        if self.actuators is not None:
            _check_sim_actuators(self.actuators)

    @property
    def dt(self) -> float:
        """Physics step [s] = 1 / physics_rate_hz."""
        return 1.0 / self.physics_rate_hz

    def joint(self, name: str) -> JointSimParams:
        """Parameters of joint ``name`` (defaults when not listed)."""
        return self.joints.get(name, _DEFAULT_JOINT)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, origin: str = "<mapping>") -> SimConfig:
        """Build from the parsed YAML (with or without the ``simulation:`` wrapper).

        Raises:
            ConfigError: unknown or non-string keys (at the top, in ``joints`` or a joint's
                entry), a version other than the integer 1 (``true`` refused), bad values
                such as an integer beyond the float range (message names ``origin``).
            DimensionError: an ``actuators`` list of the wrong length.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"{origin}: sim config must be a mapping", key="simulation", value=data)
        body = data.get("simulation", data) if set(data) <= {"simulation"} else data
        if not isinstance(body, Mapping):
            raise ConfigError(f"{origin}: 'simulation' must be a mapping", key="simulation", value=body)
        _string_keys(origin, "simulation", body)  # YAML allows `1: 2`; sorting would fail
        unknown = sorted(set(body) - set(_TOP_KEYS))
        if unknown:
            raise ConfigError(
                f"{origin}: unknown key(s) {unknown}; valid keys: {', '.join(_TOP_KEYS)}",
                key=str(unknown[0]),
                value=body[unknown[0]],
            )
        version = body.get("version", _SCHEMA_VERSION)
        if isinstance(version, (bool, np.bool_)) or version != _SCHEMA_VERSION:  # true == 1
            raise ConfigError(
                f"{origin}: version must be {_SCHEMA_VERSION}, got {version!r}", key="version", value=version
            )
        joints = body.get("joints") or {}
        if not isinstance(joints, Mapping):
            raise ConfigError(
                f"{origin}: joints must be a mapping name → parameters", key="joints", value=joints
            )
        _string_keys(origin, "joints", joints)
        for name, entry in joints.items():
            if isinstance(entry, Mapping):
                _string_keys(origin, f"joints.{name}", entry)
        kwargs = {k: body[k] for k in ("mass_scale", "physics_rate_hz") if k in body}
        try:
            if body.get("actuators") is not None:
                kwargs["actuators"] = _actuators_from_block(body["actuators"])
            return cls(joints={str(k): v for k, v in joints.items()}, **kwargs)
        except DimensionError:
            raise  # keeps its type; the message names the key, expected and actual length
        except ConfigError as error:
            raise ConfigError(f"{origin}: {error}", key=error.key, value=error.value) from None

    @classmethod
    def from_yaml(cls, path: str | pathlib.Path) -> SimConfig:
        """Load a sim YAML file (schema in the class docstring).

        Raises:
            ConfigError: missing/unreadable/non-UTF-8 file, bad YAML, or invalid content (key
                ``sim_config`` for file errors).
            DimensionError: an ``actuators`` list of the wrong length.
        """
        p = pathlib.Path(path)
        data = read_yaml(p, "sim_config")  # missing, unreadable, not UTF-8, invalid YAML
        return cls.from_mapping(data or {}, origin=str(p))


def _string_keys(origin: str, key: str, mapping: Mapping[str, Any]) -> None:
    try:
        string_keys(key, mapping)
    except ConfigError as error:
        raise ConfigError(f"{origin}: {error}", key=key, value=error.value) from None


def _joint_params(name: str, values: Mapping[str, Any]) -> JointSimParams:
    string_keys(f"joints.{name}", values)
    unknown = sorted(set(values) - set(JOINT_KEYS))
    if unknown:
        raise ConfigError(
            f"joints.{name}: unknown key(s) {unknown}; valid keys: {', '.join(JOINT_KEYS)}",
            key=f"joints.{name}.{unknown[0]}",
            value=values[unknown[0]],
        )
    try:
        return JointSimParams(**values)
    except ConfigError as error:
        raise ConfigError(
            f"joints.{name}.{error.key}: {error}", key=f"joints.{name}.{error.key}", value=error.value
        ) from None


_DEFAULT_JOINT = JointSimParams()


def _actuators_from_block(block: Any) -> ActuatorModel:
    """The sim YAML's ``actuators:`` block → ActuatorModel (same parser as the arm YAML)."""
    if isinstance(block, Mapping) and "joints" not in block:
        raise ConfigError(
            "actuators.joints is required in the sim YAML (names the lists)", key="actuators.joints"
        )
    if isinstance(block, Mapping) and block.get("urdf_dynamics") is True:
        raise ConfigError(
            "actuators.urdf_dynamics: true is not accepted in the sim YAML: the "
            "simulator's friction is joints.<name>.coulomb/viscous (sticking model)",
            key="actuators.urdf_dynamics",
            value=True,
        )
    return ActuatorModel.from_arm_yaml({"actuators": block})


def _check_sim_actuators(actuators: Any) -> None:
    if not isinstance(actuators, ActuatorModel):
        raise ConfigError("actuators must be an ActuatorModel or None", key="actuators", value=actuators)
    for key in ("viscous", "coulomb"):
        values = getattr(actuators, key)
        if np.any(values != 0.0):
            raise ConfigError(
                f"actuators.{key} must be 0 in the sim config, got {values.tolist()}: "
                f"the simulator's friction is joints.<name>.{key} (sticking model); "
                "both would count friction twice",
                key=f"actuators.{key}",
                value=values.tolist(),
            )


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
        self.config = config
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
        self._lower = np.array(model.position_lower, dtype=float)
        self._upper = np.array(model.position_upper, dtype=float)
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

    def reset(self, position: Sequence[float], velocity: Sequence[float] | None = None) -> None:
        """Set q (n,) [rad] and q̇ (n,) [rad/s] (zeros when ``None``); time is kept.

        Raises:
            DimensionError: wrong length. InputError: non-finite (reason ``"nan"``).
        """
        q = self._vector("position", position)
        v = np.zeros(self.n) if velocity is None else self._vector("velocity", velocity)
        self._q, self._v = np.clip(q, self._lower, self._upper), v

    def _vector(self, key: str, values) -> np.ndarray:
        arr = np.array(values, dtype=float).reshape(-1)
        if arr.shape[0] != self.n:
            raise DimensionError(key, self.n, arr.shape[0])
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{key} contains NaN/inf: {arr.tolist()}", reason="nan")
        return arr

    # --- physics ---------------------------------------------------------------------------
    def friction_budget(self, velocity: Sequence[float] | np.ndarray) -> np.ndarray:
        """τ_fm (n,) [N·m] at joint velocity q̇ (n,) [rad/s] (module docstring, BAM M2 form)."""
        v = np.abs(np.asarray(velocity, dtype=float))
        stribeck = np.exp(-np.power(v / self.stribeck_velocity, self.stribeck_exponent))
        return self.coulomb + self.viscous * v + self.stribeck_breakaway * stribeck

    def mass_matrix(self, q: Sequence[float] | np.ndarray) -> np.ndarray:
        """True inertia s·M(q) + diag(A) (n, n) [kg·m²]; A = :attr:`armature` (n²·J + armature)."""
        return self.config.mass_scale * self._model.mass_matrix(q) + np.diag(self.armature)

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
            DimensionError: wrong length. InputError: non-finite torque (reason ``"nan"``)
            or a bad dt (reason ``"dt"``); the state is unchanged.
        """
        tau = self._vector("tau_motor", tau_motor)
        h = self.dt if dt is None else float(dt)
        if not (math.isfinite(h) and 0 < h <= 1.0 / MIN_PHYSICS_RATE_HZ + 1e-12):
            raise InputError(f"dt must be in (0, {1.0 / MIN_PHYSICS_RATE_HZ}] s, got {dt!r}", reason="dt")
        q, v = self._q, self._v
        s = self.config.mass_scale
        mass = s * self._model.mass_matrix(q) + np.diag(self.armature)
        rhs = tau - s * self._model.nonlinear_effects(q, v)
        accel, friction, stuck = _sticking_step(mass, rhs, v, self.friction_budget(v), h)
        v_new = v + h * accel
        v_new[stuck] = 0.0  # exact: stuck joints stop this step
        q_new = q + h * v_new
        hit = (q_new < self._lower) | (q_new > self._upper)
        if np.any(hit):
            q_new = np.clip(q_new, self._lower, self._upper)
            v_new[hit] = 0.0
        self._q, self._v = q_new, v_new
        self._friction, self._stuck = friction, stuck
        self._time += h
        return q_new.copy(), v_new.copy()


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
    # BAM per-joint test with J = M_ii as the initial guess
    stop = np.diag(mass) / dt * v + rhs
    stuck = np.abs(stop) <= budget
    slide_friction = np.sign(stop) * budget
    for _ in range(n + 1):
        free = ~stuck
        a = np.empty(n)
        a[stuck] = -v[stuck] / dt
        friction = np.where(free, slide_friction, 0.0)
        if np.any(free):
            m_ff = mass[np.ix_(free, free)]
            b_f = rhs[free] - friction[free] - mass[np.ix_(free, stuck)] @ a[stuck]
            a[free] = np.linalg.solve(m_ff, b_f)
        if not np.any(stuck):
            return a, friction, stuck
        # friction the stuck joints need to stay stuck
        need = rhs[stuck] - mass[stuck] @ a
        friction[stuck] = need
        over = np.abs(need) > budget[stuck] * (1.0 + 1e-12)
        if not np.any(over):
            return a, friction, stuck
        idx = np.flatnonzero(stuck)[over]
        stuck[idx] = False
        slide_friction[idx] = np.sign(need[over]) * budget[idx]
    return a, friction, stuck  # unreachable: each pass frees ≥ 1 joint


def _readonly_array(values) -> np.ndarray:
    arr = np.array(values, dtype=float)
    arr.setflags(write=False)
    return arr
