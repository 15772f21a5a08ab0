"""Sim YAML config: the simulated arm's "true" per-joint friction, rotor inertia, mass scale, rate.

Read from a sim YAML (``simulation:`` block, :meth:`SimConfig.from_yaml`); the values may
differ on purpose from what the compensator believes, to study model error. The equations
that use them are in :mod:`gravity_friction_comp.sim.arm`.

No rclpy import.
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError, DimensionError
from gravity_friction_comp.files import read_yaml
from gravity_friction_comp.friction.bam import BamParameters
from gravity_friction_comp.friction.params import MAX_COEFFICIENT
from gravity_friction_comp.model.actuator import ActuatorModel
from gravity_friction_comp.sim import bam_friction
from gravity_friction_comp.sim.link_truth import LinkTruth, parse_links
from gravity_friction_comp.validation import MAX_PLAUSIBLE_VELOCITY, known_keys, number, string_keys

__all__ = [
    "JOINT_KEYS",
    "JointSimParams",
    "MAX_PHYSICS_RATE_HZ",
    "MIN_PHYSICS_RATE_HZ",
    "SimConfig",
]

MIN_PHYSICS_RATE_HZ = 1000.0
#: A step under 1 µs only burns CPU; beyond it the lockstep's integer-nanosecond clock rounds.
MAX_PHYSICS_RATE_HZ = 1e6
#: Plausibility ceilings of the per-joint truth (docs/safety.md): past them the physics
#: overflows, as it would in the compensator's own friction model (same 1e6 ceiling).
_JOINT_LIMITS: dict[str, tuple[float, str]] = {
    "coulomb": (MAX_COEFFICIENT, " N·m"),
    "stribeck_breakaway": (MAX_COEFFICIENT, " N·m"),
    "viscous": (MAX_COEFFICIENT, " N·m·s/rad"),
    "armature": (1e6, " kg·m²"),
    "stribeck_velocity": (MAX_PLAUSIBLE_VELOCITY, " rad/s"),
    "stribeck_exponent": (100.0, ""),
}

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
    "bam",
)
_TOP_KEYS = ("version", "physics_rate_hz", "mass_scale", "joints", "actuators", "integrator", "links")
_SCHEMA_VERSION = 1


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
        initial_position: q(0) [rad]. initial_velocity: q̇(0) [rad/s], within
            ±:data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_VELOCITY`.
        bam: BAM friction model M1–M6 replacing coulomb/stribeck_*/viscous (which must then
            be 0): a :class:`~gravity_friction_comp.friction.bam.BamParameters`, a BAM JSON
            path or its content as a mapping (:mod:`gravity_friction_comp.sim.bam_friction`).

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
    bam: BamParameters | None = None

    def __post_init__(self) -> None:
        for key in ("coulomb", "stribeck_breakaway", "viscous", "armature"):
            object.__setattr__(self, key, number(key, getattr(self, key), nonneg=True, text=True))
        for key in ("stribeck_velocity", "stribeck_exponent"):
            object.__setattr__(self, key, number(key, getattr(self, key), positive=True, text=True))
        for key, (limit, unit) in _JOINT_LIMITS.items():
            if getattr(self, key) > limit:
                raise ConfigError(
                    f"{key} must be ≤ {limit:g}{unit}, got {getattr(self, key):g}",
                    key=key,
                    value=getattr(self, key),
                )
        for key in ("initial_position", "initial_velocity"):
            object.__setattr__(self, key, number(key, getattr(self, key), text=True))
        if abs(self.initial_velocity) > MAX_PLAUSIBLE_VELOCITY:  # else the first step() raises
            raise ConfigError(
                f"initial_velocity must be within ±{MAX_PLAUSIBLE_VELOCITY:g} rad/s, got {self.initial_velocity:g}",
                key="initial_velocity",
                value=self.initial_velocity,
            )
        if self.bam is not None:
            object.__setattr__(self, "bam", bam_friction.as_bam(self.bam))
            bam_friction.check_plain_friction_zero(vars(self))

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
        physics_rate_hz: Integration rate [Hz] (:data:`MIN_PHYSICS_RATE_HZ` … :data:`MAX_PHYSICS_RATE_HZ`).
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
          links:                      # per-link truth (sim/link_truth.py)
            upper_arm: {mass_scale: 1.2, com_offset: [0.01, 0.0, -0.015]}

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
    integrator: str = bam_friction.DEFAULT_INTEGRATOR
    #: URDF link → :class:`~gravity_friction_comp.sim.link_truth.LinkTruth` (``links:`` block):
    #: per-link true mass, COM and extra mass (applied by the simulated arm).
    links: Mapping[str, LinkTruth] = field(default_factory=dict)

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
        scale = number("mass_scale", self.mass_scale, positive=True, text=True)
        if not 1e-3 <= scale <= 1e3:  # a model off by 1000× is not "the truth differs a bit"
            raise ConfigError(
                f"mass_scale must be within 1e-3..1e3, got {scale!r}", key="mass_scale", value=self.mass_scale
            )
        object.__setattr__(self, "mass_scale", scale)
        rate = number("physics_rate_hz", self.physics_rate_hz, positive=True, text=True)
        if not MIN_PHYSICS_RATE_HZ <= rate <= MAX_PHYSICS_RATE_HZ:
            raise ConfigError(
                f"physics_rate_hz must be within {MIN_PHYSICS_RATE_HZ:g}..{MAX_PHYSICS_RATE_HZ:g}, got {rate:g}",
                key="physics_rate_hz",
                value=self.physics_rate_hz,
            )
        object.__setattr__(self, "physics_rate_hz", rate)
        if self.actuators is not None:
            _check_sim_actuators(self.actuators)
        bam_friction.check_integrator(self.integrator)
        object.__setattr__(self, "links", MappingProxyType(parse_links(self.links)))

    @property
    def dt(self) -> float:
        """Physics step [s] = 1 / physics_rate_hz."""
        return 1.0 / self.physics_rate_hz

    def joint(self, name: str) -> JointSimParams:
        """Parameters of joint ``name`` (defaults when not listed)."""
        return self.joints.get(name, _DEFAULT_JOINT)

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, origin: str = "<mapping>", base: pathlib.Path | None = None
    ) -> SimConfig:
        """Build from the parsed YAML (with or without the ``simulation:`` wrapper); relative
        ``bam`` JSON paths are taken from folder ``base`` (default: the working directory).

        Raises:
            ConfigError: unknown or non-string keys (at the top, in ``joints`` or a joint's
                entry), a version other than the integer 1 (``true`` refused), bad values
                such as an integer beyond the float range (message names ``origin``).
            DimensionError: an ``actuators`` list of the wrong length.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"{origin}: sim config must be a mapping", key="simulation", value=data)
        _string_keys(origin, "simulation", data)  # YAML allows `1: 2`; sorting would fail
        if "simulation" in data:  # the wrapper, alone at the top level
            known_keys("", data, ("simulation",), file=origin)
            body = data["simulation"]
        else:
            body = data
        if not isinstance(body, Mapping):
            raise ConfigError(f"{origin}: 'simulation' must be a mapping", key="simulation", value=body)
        _string_keys(origin, "simulation", body)
        known_keys("simulation", body, _TOP_KEYS, file=origin)
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
                if "bam" in entry:
                    entry = {**entry, "bam": bam_friction.resolve_bam_path(entry["bam"], base)}
                    joints = {**joints, name: entry}
        kwargs = {k: body[k] for k in ("mass_scale", "physics_rate_hz", "integrator") if k in body}
        try:
            if body.get("actuators") is not None:
                kwargs["actuators"] = _actuators_from_block(body["actuators"])
            if body.get("links") is not None:
                kwargs["links"] = parse_links(body["links"])
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
        return cls.from_mapping(data or {}, origin=str(p), base=p.parent)


def _string_keys(origin: str, key: str, mapping: Mapping[str, Any]) -> None:
    try:
        string_keys(key, mapping)
    except ConfigError as error:
        raise ConfigError(f"{origin}: {error}", key=key, value=error.value) from None


def _joint_params(name: str, values: Mapping[str, Any]) -> JointSimParams:
    string_keys(f"joints.{name}", values)
    known_keys(f"joints.{name}", values, JOINT_KEYS, f"joints.{name}.")
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
