"""BAM friction as the simulated arm's truth: per-joint budgets M1–M6 loaded by the joint's own torques.

A joint of the sim YAML may carry a BAM model (``joints.<name>.bam``: a BAM JSON file, or its
content inline) instead of the Coulomb/Stribeck/viscous keys. Its friction budget is BAM's
(:meth:`~gravity_friction_comp.friction.bam.BamParameters.budget`, the one definition of
BAM's ``Model.compute_frictions`` in this package), evaluated each physics step at the step's
start, as Rhoban BAM's reference simulator does (``bam/simulate.py``, ``Simulator.step``,
Rhoban/bam commit 1b5a1ce):

.. math::

    \\tau_{fm,i} = \\tau_{fm}(\\dot q_i,\\ \\tau_{m,i},\\ \\tau_{e,i}),\\qquad
    \\tau_{e} = -s\\,b(q, \\dot q)

- ``τ_m,i`` [N·m]: the torque joint i's motor applies (the arm's ``tau_motor``), BAM's
  ``motor_torque``;
- ``τ_e,i`` [N·m]: the torque gravity and the velocity terms apply to joint i (``−s·b``, b
  from RNEA with zero acceleration), BAM's ``bias_torque`` (its test bench's gravity). The
  inertial coupling from the other joints' accelerations is not part of the load (it is not
  known before the step is solved; a 1-DoF arm, BAM's case, has none).

The budget then bounds the stopping torque exactly as for the other joints
(:mod:`gravity_friction_comp.sim.arm`: BAM's ``−sign(τ_stop)·min(|τ_stop|, τ_fm)``). Joints
without a BAM model keep the Coulomb/Stribeck/viscous budget (BAM M2's form). BAM's motor
keys (``kt``, ``R``, ``armature``, ``q_offset``) are not used: the rotor inertia comes from
the sim YAML's ``actuators:`` block, as for every joint.

Integrators (:data:`INTEGRATORS`, sim YAML ``integrator:``), after the velocity update
``q̇⁺ = q̇ + dt·q̈`` (stuck joints: ``q̇⁺ = 0`` exactly):

- ``semi_implicit_euler`` (default, the package's rule): ``q⁺ = q + dt·q̇⁺``;
- ``bam`` (BAM's ``Simulator.step``): ``q⁺ = q + dt·q̇⁺ + ½·dt²·q̈``.

BAM also clips ``q̇`` to ±100 rad/s; the arm does not (:data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_VELOCITY`
is the same figure, and no arm joint reaches it).

Loads the simulator cannot provide are refused when the arm is built
(:func:`check_bam_joints`): a BAM model on a prismatic joint (BAM's budgets and loads are
torques of a rotary gearbox), and a load-dependent model (M3–M6) on a joint that drives mimic
joints (its reduced torque sums its own gearbox's and the followers' through the linkage, so
the load on its own gearbox is not known).

No rclpy import.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.friction.bam import BamParameters
from gravity_friction_comp.friction.bam_solver import BamStack

__all__ = [
    "DEFAULT_INTEGRATOR",
    "INTEGRATORS",
    "SimFriction",
    "as_bam",
    "check_bam_joints",
    "check_integrator",
    "integrate_position",
    "resolve_bam_path",
]

_X = TypeVar("_X", float, np.ndarray)

#: Position-update rules of the simulated arm (module docstring).
INTEGRATORS = ("semi_implicit_euler", "bam")
DEFAULT_INTEGRATOR = "semi_implicit_euler"
#: Sim YAML keys a BAM joint must leave at 0 (the BAM model is its whole friction).
_PLAIN_FRICTION_KEYS = ("coulomb", "stribeck_breakaway", "viscous")


def check_integrator(value: Any) -> str:
    """``value`` if it names one of :data:`INTEGRATORS`, else ConfigError listing them."""
    if not isinstance(value, str) or value not in INTEGRATORS:
        raise ConfigError(
            f"integrator: unknown {value!r}; valid choices: {', '.join(INTEGRATORS)}",
            key="integrator",
            value=value,
        )
    return value


def as_bam(value: Any) -> BamParameters | None:
    """A sim YAML ``bam`` entry as :class:`BamParameters`: ``None``, a BamParameters, a BAM
    JSON path (str or PathLike; relative to the working directory, see
    :func:`resolve_bam_path`), or the JSON's content as a mapping.

    Raises:
        ConfigError: another type, or what :meth:`BamParameters.from_json` /
            :meth:`BamParameters.from_dict` refuse (missing file, bad JSON, bad values).
    """
    if value is None or isinstance(value, BamParameters):
        return value
    if isinstance(value, (str, os.PathLike)):
        return BamParameters.from_json(pathlib.Path(value))
    if isinstance(value, Mapping):
        return BamParameters.from_dict(value, source="inline bam entry")
    raise ConfigError(
        f"bam: expected a BAM JSON path or its content (mapping), got {type(value).__name__}",
        key="bam",
        value=value,
    )


def check_plain_friction_zero(values: Mapping[str, float]) -> None:
    """Refuse Coulomb/Stribeck/viscous keys beside a BAM model (friction counted twice)."""
    extra = {k: values[k] for k in _PLAIN_FRICTION_KEYS if values.get(k, 0.0) != 0.0}
    if extra:
        raise ConfigError(
            f"bam: the BAM model is the joint's whole friction; leave {sorted(extra)} at 0 "
            f"(got {extra}), else friction is counted twice",
            key="bam",
            value=extra,
        )


def resolve_bam_path(entry: Any, base: pathlib.Path | None) -> Any:
    """A relative BAM JSON path of a sim YAML made relative to the YAML's folder ``base``
    (other entries unchanged)."""
    if base is not None and isinstance(entry, str) and not pathlib.Path(entry).is_absolute():
        return str(base / entry)
    return entry


def check_bam_joints(model: Any, bam: Mapping[str, BamParameters]) -> None:
    """Refuse BAM models whose load the simulator cannot provide (module docstring).

    Args:
        model: :class:`~gravity_friction_comp.model.robot_model.RobotModel` of the arm.
        bam: joint name → BAM parameters (joints of ``model``).

    Raises:
        ConfigError: key ``joints.<name>.bam``, the reason in the message.
    """
    masters: dict[str, list[str]] = {}
    for coupling in model.mimic_joints.values():
        masters.setdefault(coupling.master, []).append(coupling.joint)
    for name, params in bam.items():
        joint = model.urdf_joints.get(name)
        if joint is not None and joint.type == "prismatic":
            raise ConfigError(
                f"joints.{name}.bam: {name} is prismatic; a BAM model describes a rotary "
                "gearbox (budget and load torques in N·m), the simulator can only give this "
                "joint a force [N] as load",
                key=f"joints.{name}.bam",
                value=params.source,
            )
        if params.load_dependent and name in masters:
            raise ConfigError(
                f"joints.{name}.bam: model {params.model} needs the motor and external torque on "
                f"{name}'s own gearbox, but {name} drives mimic joint(s) {masters[name]}: the "
                "simulator's reduced torque sums the whole linkage, so that load is not known; "
                "use m1/m2 (no load term) on this joint",
                key=f"joints.{name}.bam",
                value=params.source,
            )


class SimFriction:
    """Per-joint friction budget ``τ_fm(q̇, τ_m, τ_e)`` of the simulated arm (module docstring).

    Args:
        coulomb, stribeck_breakaway, stribeck_velocity, stribeck_exponent, viscous: (n,)
            Coulomb/Stribeck/viscous truth ([N·m], [N·m], [rad/s], [-], [N·m·s/rad]) of the
            joints without a BAM model.
        bam: (n,) BAM parameters per joint, ``None`` where the joint has none.
    """

    def __init__(
        self,
        coulomb: np.ndarray,
        stribeck_breakaway: np.ndarray,
        stribeck_velocity: np.ndarray,
        stribeck_exponent: np.ndarray,
        viscous: np.ndarray,
        bam: Sequence[BamParameters | None],
    ):
        self.coulomb, self.viscous = coulomb, viscous
        self.stribeck_breakaway = stribeck_breakaway
        self.stribeck_velocity, self.stribeck_exponent = stribeck_velocity, stribeck_exponent
        self.bam = tuple(bam)
        self._bam_index = np.array([i for i, p in enumerate(self.bam) if p is not None], dtype=int)
        self._stack = BamStack([p for p in self.bam if p is not None]) if self._bam_index.size else None

    @property
    def load_dependent(self) -> bool:
        """True when some joint's budget depends on the torques (a BAM M3–M6 joint)."""
        return self._stack is not None and self._stack.load_dependent

    def budget(self, velocity: np.ndarray, tau_motor: np.ndarray, tau_external: np.ndarray) -> np.ndarray:
        """τ_fm (n,) [N·m] at q̇ (n,) [rad/s], motor torque τ_m (n,) and load τ_e (n,) [N·m]."""
        v = np.abs(velocity)
        stribeck = np.exp(-np.power(v / self.stribeck_velocity, self.stribeck_exponent))
        out = self.coulomb + self.viscous * v + self.stribeck_breakaway * stribeck
        if self._stack is not None:
            i = self._bam_index
            out[i] = self._stack.budget(velocity[i], tau_motor[i], tau_external[i])
        return out


def integrate_position(q: _X, v_new: _X, accel: _X, dt: float, integrator: str) -> _X:
    """Position after one step (module docstring): ``q + dt·q̇⁺`` (``semi_implicit_euler``)
    or ``q + dt·q̇⁺ + ½·dt²·q̈`` (``bam``); one joint's floats or (n,) arrays, [rad],
    [rad/s], [rad/s²], [s]."""
    if integrator == "bam":
        return q + v_new * dt + 0.5 * accel * dt**2
    return q + dt * v_new
