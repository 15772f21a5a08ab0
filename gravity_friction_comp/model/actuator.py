"""Actuator model: rotor inertia through a gear ratio, and joint friction, per joint.

Per joint (URDF joint name, mimic joints allowed):

* ``rotor_inertia`` J [kg·m²], motor side, ≥ 0 (datasheet "rotor inertia");
* ``gear_ratio`` n = θ_motor/θ_joint [-], ≠ 0 (negative: motor turns the other way);
* ``viscous`` b [N·m·s/rad] (prismatic: [N·s/m]), joint side, ≥ 0 (URDF ``<dynamics damping>``);
* ``coulomb`` c [N·m] (prismatic: [N]), joint side, ≥ 0 (URDF ``<dynamics friction>``).

The joint-side torque the actuator adds to the rigid-body inverse dynamics is

.. math::

    \\tau_{act} = n^2 J\\,\\ddot q + b\\,\\dot q + c\\,\\mathrm{sign}(\\dot q),
    \\qquad \\mathrm{sign}(\\pm 0) = 0

(reflected inertia: kinetic energy ½·J·(n q̇)² = ½·(n²J)·q̇², e.g. Spong, Hutchinson &
Vidyasagar, *Robot Modeling and Control*, §6.3 / §7.1; the gyroscopic coupling between rotor
and link is neglected as usual for geared drives, so n²J adds to the mass matrix diagonal only).

Mimic joints (``θ_i = k_i·q_master + offset``) carry their own drive or drag; with the constant
coupling matrix G (``v_full = G·v``) the full-model diagonal terms project exactly to the
independent joints (same route as the rigid body, FIELD_NOTES "URDF, mimic joints"):

.. math::

    A = G^T \\mathrm{diag}(n^2 J)_{full} G,\\quad B = G^T \\mathrm{diag}(b)_{full} G,\\quad
    c_j = \\sum_i |G_{ij}|\\, c_i

G has one non-zero entry per row, so A and B stay diagonal: a mimic joint with multiplier k
adds k²·n²J and k²·b to its master, and |k|·c (since k·c·sign(k·q̇) = |k|·c·sign(q̇)).
A default-constructed model is all zeros (gear ratio 1) and changes no number.

Per-arm YAML ``actuators`` block (read by :meth:`ActuatorModel.from_arm_yaml`; a file by
:func:`gravity_friction_comp.friction.arm_yaml.actuator_model_from_arm_yaml`)::

    actuators:
      joints: [base_yaw, shoulder_pitch, beam_pitch]  # optional; names the lists below.
                                 # Default: the file's top-level `joints:`, else the robot's
                                 # independent joints. Mimic joints may be listed.
      rotor_inertia: [1.2e-5, 4.1e-5, 4.1e-5]  # [kg·m²] motor side, scalar or per joint,
                                               # 0 .. 100
      gear_ratio: [9, 36, -36]   # θ_motor/θ_joint, scalar or per joint, 1e-3 <= |n| <= 1e4
      viscous: 0.0               # [N·m·s/rad] joint side, scalar or per joint, 0 .. 1e6
      coulomb: 0.0               # [N·m] joint side, scalar or per joint, 0 .. 1e6
      urdf_dynamics: false       # true: start from URDF <dynamics damping/friction> of every
                                 # movable joint (mimic included); the keys above override
                                 # them for the listed joints

Every key is optional; omitted values are 0 (gear ratio 1). Joints not listed get zeros.
The ranges are generous plausibility limits (:data:`ACTUATOR_LIMITS`): a gear ratio of 1e200
used to give an infinite reflected inertia and NaN dynamics.

Friction here is the *rigid-body model's* joint friction (URDF ``<dynamics>`` meaning). The
feedforward pipeline leaves friction to the friction stage
(:mod:`gravity_friction_comp.friction.models`), so
:class:`~gravity_friction_comp.stage.inverse_dynamics.InverseDynamicsFeedforward` uses only the
reflected inertia, never these friction terms.

No rclpy import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, DimensionError
from gravity_friction_comp.validation import joint_names, known_keys, string_keys
from gravity_friction_comp.validation import per_joint as _per_joint

__all__ = ["ACTUATOR_BLOCK_KEYS", "ACTUATOR_KEYWORDS", "ACTUATOR_LIMITS", "ActuatorModel", "ActuatorTerms"]

#: Per-joint keywords of :class:`ActuatorModel` (and keys of the YAML block).
ACTUATOR_KEYWORDS = ("rotor_inertia", "gear_ratio", "viscous", "coulomb")
#: Keys valid inside the per-arm YAML ``actuators`` block.
ACTUATOR_BLOCK_KEYS = ("joints",) + ACTUATOR_KEYWORDS + ("urdf_dynamics",)
_DEFAULTS = {"rotor_inertia": 0.0, "gear_ratio": 1.0, "viscous": 0.0, "coulomb": 0.0}
#: Plausibility range of each keyword's magnitude: ``key -> (low, high, unit, reason)``;
#: ``low`` applies to non-zero values only (a zero gear ratio is refused separately).
#: Generous on purpose: real drives are 1–~300:1 with rotors of 1e-7–1e-2 kg·m².
ACTUATOR_LIMITS: dict[str, tuple[float, float, str, str]] = {
    "rotor_inertia": (
        0.0,
        100.0,
        " kg·m²",
        "a rotor above 100 kg·m², a 200 kg disc of 1 m radius, is not a robot drive",
    ),
    "gear_ratio": (
        1e-3,
        1e4,
        "",
        "|n| outside 1e-3..1e4 is not a gearbox; harmonic drives reach "
        "a few hundred:1, multi-stage worm gears a few thousand",
    ),
    "viscous": (0.0, 1e6, " N·m·s/rad", "1 MN·m at 1 rad/s is above any robot joint"),
    "coulomb": (0.0, 1e6, " N·m", "1 MN·m of friction is above any robot joint"),
}


class ActuatorTerms(NamedTuple):
    """Actuator terms folded onto the independent joints of a model (read-only (n,) arrays).

    Attributes:
        reflected_inertia: Diagonal added to M(q) [kg·m² or kg] (n²·J, mimic joints folded).
        viscous: Joint viscous coefficient [N·m·s/rad or N·s/m].
        coulomb: Joint Coulomb level [N·m or N].
    """

    reflected_inertia: np.ndarray
    viscous: np.ndarray
    coulomb: np.ndarray

    def friction(self, velocity: np.ndarray) -> np.ndarray:
        """Joint friction B·v + c·sign(v) (n,) [N·m]; sign(±0.0) = 0, result +0.0 there.

        Args:
            velocity: (n,) [rad/s], finite (not checked here).
        """
        # np.sign(±0.0) is +0.0, and -0.0 (b·(-0.0)) + (+0.0) is +0.0
        return self.viscous * velocity + self.coulomb * np.sign(velocity)

    def torque(
        self, velocity: np.ndarray, acceleration: np.ndarray, include_friction: bool = True
    ) -> np.ndarray:
        """Actuator torque A·a (+ B·v + c·sign(v)) (n,) [N·m].

        Args:
            velocity: (n,) [rad/s], finite. acceleration: (n,) [rad/s²], finite.
            include_friction: add the viscous and Coulomb terms.
        """
        tau = self.reflected_inertia * acceleration
        if include_friction:
            tau = tau + self.friction(velocity)
        return tau


class ActuatorModel:
    """Per-joint rotor inertia, gear ratio and joint friction (see the module docstring).

    Args:
        joints: Joint count n (the lists are in a robot's independent-joint order) or joint
            names (URDF names, mimic joints allowed; order of the lists).
        rotor_inertia: J [kg·m²] motor side, scalar or (n,), ≥ 0. Default 0.
        gear_ratio: n = θ_motor/θ_joint [-], scalar or (n,), ≠ 0. Default 1.
        viscous: [N·m·s/rad] joint side, scalar or (n,), ≥ 0. Default 0.
        coulomb: [N·m] joint side, scalar or (n,), ≥ 0. Default 0.

    Raises:
        ConfigError: non-numeric or non-finite values, negative rotor inertia / viscous /
            coulomb, zero gear ratio, a value outside :data:`ACTUATOR_LIMITS` (|gear ratio|
            in [1e-3, 1e4], rotor inertia <= 100 kg·m², viscous and coulomb <= 1e6; ``key``
            names the keyword), bad joint list.
        DimensionError: a list whose length is not the number of joints.
    """

    def __init__(
        self,
        joints: int | Sequence[str],
        *,
        rotor_inertia: Any = 0.0,
        gear_ratio: Any = 1.0,
        viscous: Any = 0.0,
        coulomb: Any = 0.0,
    ):
        self._n, self._names = _joints(joints)
        self.rotor_inertia = _per_joint("rotor_inertia", rotor_inertia, self._n, nonneg=True)
        self.gear_ratio = _per_joint("gear_ratio", gear_ratio, self._n, nonzero=True)
        self.viscous = _per_joint("viscous", viscous, self._n, nonneg=True)
        self.coulomb = _per_joint("coulomb", coulomb, self._n, nonneg=True)
        for key in ACTUATOR_KEYWORDS:
            low, high, unit, why = ACTUATOR_LIMITS[key]
            arr = getattr(self, key)
            mag = np.abs(arr)
            bad = (mag > high) | ((mag < low) & (mag != 0.0))
            if np.any(bad):
                raise ConfigError(
                    f"{key}: {arr[bad].tolist()} outside the plausible range "
                    f"{_range_text(low, high)}{unit} ({why})",
                    key=key,
                    value=arr.tolist(),
                )
        # finite by the limits: n²·J <= 1e8 · 100 kg·m²
        refl = self.gear_ratio * self.gear_ratio * self.rotor_inertia
        refl.setflags(write=False)
        self.reflected_inertia = refl  # (n,) [kg·m²] joint side, n²·J

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def from_urdf_dynamics(cls, robot: Any, **overrides: Any) -> ActuatorModel:
        """Viscous = ``<dynamics damping>``, Coulomb = ``<dynamics friction>`` of every movable joint.

        Mimic joints are included (Pinocchio drops their ``<dynamics>``; folding keeps them).

        Args:
            robot: a :class:`~gravity_friction_comp.model.robot_model.RobotModel` (uses its
                ``full_joint_names`` and ``urdf_joints``).
            **overrides: per-joint keywords over ``full_joint_names`` (e.g. ``rotor_inertia``).

        Raises:
            ConfigError: negative URDF damping/friction (URDF spec requires ≥ 0), unknown
                keyword (valid ones listed), or any constructor error.
        """
        _check_keywords(overrides)
        names = tuple(robot.full_joint_names)
        joints = robot.urdf_joints
        for name in names:
            for attr in ("damping", "friction"):
                value = getattr(joints[name], attr)
                if not (math.isfinite(value) and value >= 0.0):
                    raise ConfigError(
                        f"URDF joint {name!r}: <dynamics {attr}> must be finite and >= 0, got {value}",
                        key=f"{name}.{attr}",
                        value=value,
                    )
        kwargs = {
            "viscous": [joints[n].damping for n in names],
            "coulomb": [joints[n].friction for n in names],
        }
        kwargs.update(overrides)
        return cls(names, **kwargs)

    @classmethod
    def from_arm_yaml(cls, data: Mapping[str, Any], robot: Any = None) -> ActuatorModel:
        """Actuator model from the per-arm YAML ``actuators`` block (schema in the module doc).

        Args:
            data: the parsed file (a file is read, every section's keys checked, by
                :func:`gravity_friction_comp.friction.arm_yaml.actuator_model_from_arm_yaml`:
                the file's schema lives with the per-arm YAML reader, a layer above).
            robot: the :class:`~gravity_friction_comp.model.robot_model.RobotModel` the file
                belongs to; needed when neither the block nor the file lists ``joints`` and
                for ``urdf_dynamics: true``.

        Returns:
            The model; all zeros (over ``robot.joint_names`` or the file's ``joints``) when
            the block is absent or empty.

        Raises:
            ConfigError: ``data`` not a mapping (a path: the message names the reader), block
                not a mapping, a non-string key, unknown key (valid keys listed), non-bool
                ``urdf_dynamics``, no joint list available, a joint unknown to ``robot``
                (valid names listed), or any constructor error (``key`` is
                ``actuators.<key>``). DimensionError for wrong list lengths.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"ActuatorModel.from_arm_yaml takes the parsed per-arm YAML, got {data!r}; read a "
                "file with gravity_friction_comp.friction.arm_yaml.actuator_model_from_arm_yaml",
                key="arm_config",
                value=str(data),
            )
        block = data.get("actuators")
        if block is None:
            block = {}
        if not isinstance(block, Mapping):
            raise ConfigError(f"actuators: expected a mapping, got {block!r}", key="actuators", value=block)
        string_keys("actuators", block)  # YAML allows `1: 2` (was a KeyError below)
        known_keys("actuators", block, ACTUATOR_BLOCK_KEYS, "actuators.")
        use_urdf = block.get("urdf_dynamics", False)
        if not isinstance(use_urdf, bool):
            raise ConfigError(
                f"actuators.urdf_dynamics: expected true or false, got {use_urdf!r}",
                key="actuators.urdf_dynamics",
                value=use_urdf,
            )
        names = block.get("joints", data.get("joints"))
        if names is None:
            if robot is None:
                raise ConfigError(
                    "actuators: no joint list (give actuators.joints, a top-level "
                    "joints list, or the robot model)",
                    key="actuators.joints",
                )
            names = tuple(robot.joint_names)
        names = joint_names("actuators.joints", names)  # a count is not enough here
        if robot is not None:
            valid = tuple(robot.full_joint_names)
            bad = [s for s in names if s not in valid]
            if bad:
                raise ConfigError(
                    f"actuators.joints: {bad} not movable joints of the robot; "
                    "valid names: " + ", ".join(valid),
                    key="actuators.joints",
                    value=bad,
                )
        given = {k: block[k] for k in ACTUATOR_KEYWORDS if block.get(k) is not None}
        try:
            listed = cls(names, **given)
        except DimensionError as exc:
            raise DimensionError(f"actuators.{exc.key}", exc.expected, exc.actual) from None
        except ConfigError as exc:
            raise ConfigError(f"actuators.{exc}", key=f"actuators.{exc.key}", value=exc.value) from None
        if not use_urdf:
            return listed
        if robot is None:
            raise ConfigError(
                "actuators.urdf_dynamics: true needs the robot model",
                key="actuators.urdf_dynamics",
                value=True,
            )
        base = cls.from_urdf_dynamics(robot)
        base_names = tuple(robot.full_joint_names)  # the joints from_urdf_dynamics names
        merged = {k: np.array(getattr(base, k)) for k in ACTUATOR_KEYWORDS}
        index = {s: i for i, s in enumerate(base_names)}
        for k in given:
            for j, s in enumerate(names):
                merged[k][index[s]] = getattr(listed, k)[j]
        return cls(base_names, **merged)

    # ---- description -------------------------------------------------------------------
    @property
    def n_joints(self) -> int:
        """Number of joints described."""
        return self._n

    @property
    def joint_names(self) -> tuple[str, ...] | None:
        """Joint names, or ``None`` for a count-only model (robot's independent-joint order)."""
        return self._names

    @property
    def is_zero(self) -> bool:
        """True when the model adds nothing (no reflected inertia, no friction)."""
        return not (np.any(self.reflected_inertia) or np.any(self.viscous) or np.any(self.coulomb))

    def as_dict(self) -> dict[str, Any]:
        """Plain keywords (lists) that rebuild this model with ``ActuatorModel(joints, **d)``."""
        return {k: getattr(self, k).tolist() for k in ACTUATOR_KEYWORDS}

    def __repr__(self) -> str:
        joints = self._n if self._names is None else list(self._names)
        parts = ", ".join(f"{k}={getattr(self, k).tolist()}" for k in ACTUATOR_KEYWORDS)
        return f"ActuatorModel({joints}, {parts})"

    # ---- folding onto a model's independent joints -------------------------------------
    def fold(
        self, full_joint_names: Sequence[str], joint_names: Sequence[str], coupling: np.ndarray
    ) -> ActuatorTerms:
        """Project the per-joint terms onto the independent joints through G.

        Args:
            full_joint_names: (nv_full,) movable joints, row order of ``coupling``.
            joint_names: (n,) independent joints, column order of ``coupling``.
            coupling: G (nv_full, n), ``v_full = G·v``.

        Returns:
            :class:`ActuatorTerms`: ``A = diag(Gᵀ diag(n²J) G)``, ``B`` likewise,
            ``c = |G|ᵀ c_full`` (module docstring).

        Raises:
            DimensionError: a count-only model whose count is not len(joint_names).
            ConfigError: a name that is not a movable joint (valid names listed), or a
                folded term that is not finite (a huge mimic multiplier).
        """
        full = list(full_joint_names)
        if self._names is None:
            if self._n != len(joint_names):
                raise DimensionError("actuators", len(joint_names), self._n)
            rows = [full.index(s) for s in joint_names]
        else:
            bad = [s for s in self._names if s not in full]
            if bad:
                raise ConfigError(
                    f"actuators: {bad} not movable joints of the robot; valid names: " + ", ".join(full),
                    key="actuators.joints",
                    value=bad,
                )
            rows = [full.index(s) for s in self._names]
        g = np.asarray(coupling, dtype=float)
        per_full = []
        for values in (self.reflected_inertia, self.viscous, self.coulomb):
            x = np.zeros(len(full))
            x[rows] = values
            per_full.append(x)
        with np.errstate(over="ignore", invalid="ignore"):  # reported just below
            g2 = g * g
            out = (g2.T @ per_full[0], g2.T @ per_full[1], np.abs(g).T @ per_full[2])
        for key, arr in zip(("rotor_inertia", "viscous", "coulomb"), out):
            if not np.all(np.isfinite(arr)):  # a huge mimic multiplier squared
                raise ConfigError(
                    f"actuators.{key}: folded through the mimic coupling it is not finite ({arr.tolist()})",
                    key=f"actuators.{key}",
                    value=arr.tolist(),
                )
            arr.setflags(write=False)
        return ActuatorTerms(*out)


def _range_text(low: float, high: float) -> str:
    return f"[0, {high:g}]" if low == 0.0 else f"{low:g} <= |value| <= {high:g}"


def _check_keywords(kwargs: Mapping[str, Any]) -> None:
    unknown = sorted(set(kwargs) - set(ACTUATOR_KEYWORDS))
    if unknown:
        raise ConfigError(
            f"unknown actuator keywords {unknown}; valid keywords: " + ", ".join(ACTUATOR_KEYWORDS),
            key=unknown[0],
        )


def _joints(joints: Any, key: str = "joints") -> tuple[int, tuple[str, ...] | None]:
    if isinstance(joints, (bool, np.bool_)):
        raise ConfigError(f"{key}: expected a joint count or joint names, got a bool", key=key, value=joints)
    if isinstance(joints, (int, np.integer)):
        if joints < 1:
            raise ConfigError(f"{key}: expected at least 1 joint, got {joints}", key=key, value=joints)
        return int(joints), None
    if isinstance(joints, str) or not isinstance(joints, Sequence) or not joints:
        raise ConfigError(
            f"{key}: expected a joint count or a non-empty list of joint names, got {joints!r}",
            key=key,
            value=joints,
        )
    names = joint_names(key, tuple(joints))
    return len(names), names
