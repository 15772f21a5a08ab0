"""Joint friction feedforward: Coulomb (tanh), asymmetric, viscous, Stribeck, offset, BAM.

Model ``"coulomb"`` (per joint i; v = joint velocity [rad/s]):

.. math::

    \\tau_{f,i}(v) = F_{o,i} + F_{v,i}\\,v
        + \\big(F_{c,i}^{\\pm} + F_{s,i}\\,e^{-|v/v_{s,i}|^{\\delta_i}}\\big)
        \\tanh(v/\\varepsilon_i)

- ``F_c^+`` = ``breakaway_positive`` for v > 0, ``F_c^-`` = ``breakaway_negative`` for v < 0
  [N·m, magnitudes ≥ 0]; ``breakaway`` sets both. tanh instead of sign avoids chatter
  (FIELD_NOTES "Friction feedforward in practice"; i2rt PR #37 ``breakaway·tanh(v/eps)``).
- ``F_s`` = ``stribeck_breakaway`` [N·m ≥ 0]: static level *above* the Coulomb level, so the
  breakaway torque at rest is ``F_c + F_s`` and it decays to ``F_c`` with speed; ``v_s`` =
  ``stribeck_velocity`` [rad/s > 0], ``δ`` = ``stribeck_exponent`` [-, > 0] (Stribeck curve as
  in Armstrong-Hélouvry, Dupont, Canudas de Wit, Automatica 30(7), 1994, and Olsson, Åström,
  Canudas de Wit, Gäfvert, Lischinsky, Eur. J. Control 4(3), 1998; same form as BAM's
  ``friction_stribeck``).
- ``F_v`` = ``viscous`` [N·m·s/rad ≥ 0], ``F_o`` = ``offset`` [N·m, any sign], added at every
  velocity including rest, as OpenArm's ``Fo`` (openarm_teleop).
- ``ε`` = ``eps`` [rad/s > 0], scalar or per joint. ``eps_setpoint`` (same form, unset:
  ``eps``) is the ε of a setpoint's velocity (:meth:`FrictionModel.for_setpoint_velocity`):
  a planned velocity is free of the measurement's noise, so it can keep the Coulomb term
  up to a slower approach (a sharper tanh on a measured velocity chatters).

At v = +0.0 and v = −0.0 the velocity-dependent part is exactly +0.0 (no signed zero).
With asymmetric breakaway the term is continuous at 0 but its slope jumps from
``F_c^-/ε`` to ``F_c^+/ε``; with symmetric values it is smooth (slope ``F_c/ε``).

Model ``"bam"``: joints with a BAM parameter file use
:meth:`gravity_friction_comp.friction.bam_solver.BamStack.feedforward` (M1–M6, load dependent), plus their
``offset``; their Coulomb/viscous/Stribeck coefficients must be 0 (no double counting).
Joints without a BAM file use the ``"coulomb"`` terms above.

Load convention for :meth:`FrictionModel.torque`: ``load`` is the torque the motor already
applies to hold the arm (the incoming effort, i.e. the gravity feedforward ``g(q)``). The
torque the load applies to the joint is then BAM's ``tau_e = -load``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.friction.bam import BamParameters
from gravity_friction_comp.friction.bam_solver import BamStack
from gravity_friction_comp.friction.params import (
    FRICTION_KEYWORDS,
    FrictionParams,
    given_keywords,
    joint_count,
    merge_keywords,
    params_from_keywords,
)
from gravity_friction_comp.validation import MAX_PLAUSIBLE_VELOCITY, vector

__all__ = ["FrictionModel"]


class FrictionModel:
    """Per-joint friction feedforward ``torque(velocity, load)`` (module doc for equations).

    Args:
        n_joints_or_joint_names: number of joints n, or the joint names (length n, unique).
        breakaway: Coulomb level both directions [N·m], scalar or (n,), ≥ 0. Default 0.
        breakaway_positive, breakaway_negative: per-direction level [N·m]; override
            ``breakaway`` for their direction.
        eps: tanh velocity scale [rad/s], scalar or (n,), > 0. Default 0.01.
        viscous: [N·m·s/rad], ≥ 0. Default 0.
        stribeck_breakaway: static level above Coulomb [N·m], ≥ 0. Default 0.
        stribeck_velocity: [rad/s], > 0. Default 0.1.
        stribeck_exponent: [-], > 0. Default 2.
        offset: constant torque [N·m], any sign. Default 0.
        eps_setpoint: tanh velocity scale [rad/s] when the velocity is a setpoint's, scalar
            or (n,), > 0; ``None``: ``eps`` (:meth:`for_setpoint_velocity`).
        model: ``"coulomb"`` (default) or ``"bam"``.
        bam: (n,) sequence of :class:`BamParameters` or ``None`` (used when ``model="bam"``).
        bam_files: (n,) sequence of BAM JSON paths, ``None`` or ``""`` for none; exclusive
            with ``bam``. Relative paths are relative to the working directory.
        enabled: master switch. Default ``True``.

    Every argument left at ``None`` takes its default. An empty sequence counts as not given.

    The torque-like coefficients (breakaway levels, viscous, Stribeck breakaway, offset)
    are limited to ±:data:`~gravity_friction_comp.friction.params.MAX_COEFFICIENT` (1e6 N·m or N·m·s/rad): no arm joint has a
    friction of a mega-newton-metre, and beyond it their sum overflows to inf and then NaN.

    Raises:
        ConfigError: negative / non-finite coefficient or one beyond ``MAX_COEFFICIENT``,
            ``eps``, ``eps_setpoint`` or Stribeck velocity/exponent ≤ 0, unknown model (choices listed), non-bool ``enabled``, BAM file problems,
            non-zero tanh coefficients on a BAM joint, an unknown keyword (valid ones listed).
            ``key`` names the parameter.
        DimensionError: a per-joint array whose length is not n.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> FrictionModel:
        # Before __init__ binds its keywords: a typo (``breakway=``) is a ConfigError naming
        # the valid keywords, not a TypeError (__init__'s signature stays the keyword list).
        unknown = sorted(set(kwargs) - set(FRICTION_KEYWORDS) - {"n_joints_or_joint_names"})
        if unknown:
            raise ConfigError(
                f"unknown friction keywords {unknown}; valid keywords: " + ", ".join(FRICTION_KEYWORDS),
                key=unknown[0],
                value=kwargs[unknown[0]],
            )
        return super().__new__(cls)

    def __init__(
        self,
        n_joints_or_joint_names: int | Sequence[str],
        *,
        breakaway: Any = None,
        breakaway_positive: Any = None,
        breakaway_negative: Any = None,
        eps: Any = None,
        viscous: Any = None,
        stribeck_breakaway: Any = None,
        stribeck_velocity: Any = None,
        stribeck_exponent: Any = None,
        offset: Any = None,
        eps_setpoint: Any = None,
        model: str | None = None,
        bam: Sequence[BamParameters | None] | None = None,
        bam_files: Sequence[Any] | None = None,
        enabled: bool | None = None,
    ):
        self._init_from_params(
            params_from_keywords(
                n_joints_or_joint_names,
                breakaway=breakaway,
                breakaway_positive=breakaway_positive,
                breakaway_negative=breakaway_negative,
                eps=eps,
                viscous=viscous,
                stribeck_breakaway=stribeck_breakaway,
                stribeck_velocity=stribeck_velocity,
                stribeck_exponent=stribeck_exponent,
                offset=offset,
                eps_setpoint=eps_setpoint,
                model=model,
                bam=bam,
                bam_files=bam_files,
                enabled=enabled,
            )
        )

    # -- construction helpers -----------------------------------------------------------
    def _init_from_params(self, params: FrictionParams) -> None:
        self._params = params
        bam_idx = [i for i, p in enumerate(params.bam) if p is not None]
        if params.model == "bam" and not bam_idx:
            raise ConfigError(
                "model: bam needs a BAM file for at least one joint (bam_files); "
                "use model: coulomb for the tanh terms alone",
                key="bam_files",
            )
        if params.model != "bam":
            bam_idx = []
        for i in bam_idx:
            for key in ("breakaway_positive", "breakaway_negative", "viscous", "stribeck_breakaway"):
                if getattr(params, key)[i] != 0.0:
                    raise ConfigError(
                        f"{key}: joint {self._joint_label(i)} uses a BAM model, so its "
                        f"{key} must be 0 (BAM already contains Coulomb/viscous/Stribeck "
                        f"terms), got {getattr(params, key)[i]!r}",
                        key=key,
                        value=float(getattr(params, key)[i]),
                    )
        self._bam_idx = slice(None) if len(bam_idx) == params.n_joints else np.array(bam_idx, dtype=int)
        self._bam_eps = params.eps[self._bam_idx]
        stack = [b for b in params.bam if b is not None] if bam_idx else []
        self._bam_stack = BamStack(stack) if stack else None
        p = params
        self._has_coulomb = bool(np.any(p.breakaway_positive) or np.any(p.breakaway_negative))
        self._asymmetric = not np.array_equal(p.breakaway_positive, p.breakaway_negative)
        self._has_stribeck = bool(np.any(p.stribeck_breakaway))
        self._has_viscous = bool(np.any(p.viscous))
        self._has_offset = bool(np.any(p.offset))
        self._zeros = np.zeros(p.n_joints)  # x + zeros: -0.0 → +0.0, cheaper than x + 0.0
        self._zeros.setflags(write=False)
        self._is_zero = not p.enabled or not (
            self._has_coulomb
            or self._has_stribeck
            or self._has_viscous
            or self._has_offset
            or self._bam_stack is not None
        )

    def _joint_label(self, i: int) -> str:
        names = self._params.joint_names
        return f"{i} ({names[i]})" if names else str(i)

    @classmethod
    def from_params(cls, params: FrictionParams) -> FrictionModel:
        """Model from already validated :class:`FrictionParams`."""
        self = cls.__new__(cls)
        self._init_from_params(params)
        return self

    @classmethod
    def from_yaml(
        cls, path: str | os.PathLike, joints_or_n: int | Sequence[str], **overrides: Any
    ) -> FrictionModel:
        """Model from a per-arm YAML; keywords given override the YAML.

        A keyword counts as given unless it is ``None`` or an empty sequence (so ROS array
        parameters left at ``[]`` do not override the YAML).

        The YAML is read with
        :func:`gravity_friction_comp.friction.arm_yaml.friction_params_from_arm_yaml` (i2rt
        ``friction_comp`` block with our extensions, i2rt gripper ``friction_comp_breakaway``,
        or OpenArm ``LeaderArmParam``/``FollowerArmParam``); with joint names, the YAML's
        per-joint lists are mapped by name through its ``joints:`` list when it has one.
        An explicit ``breakaway`` replaces the YAML's per-direction values too (unless those
        are also given); an explicit ``bam`` or ``bam_files`` replaces the YAML's BAM files.

        Args:
            path: YAML file.
            joints_or_n: joint names or count n.
            **overrides: any of :data:`FRICTION_KEYWORDS`.

        Raises:
            ConfigError: unknown override keyword (valid ones listed), YAML problems, or any
                validation error of the constructor. DimensionError for wrong lengths.
        """
        from gravity_friction_comp.friction.arm_yaml import friction_params_from_arm_yaml

        unknown = sorted(set(overrides) - set(FRICTION_KEYWORDS))
        if unknown:
            raise ConfigError(
                f"unknown friction keywords {unknown}; valid keywords: " + ", ".join(FRICTION_KEYWORDS),
                key=unknown[0],
            )
        n, names = joint_count(joints_or_n)
        kwargs = friction_params_from_arm_yaml(path, n_joints=n, joint_names=names)
        given = given_keywords(overrides)
        kwargs = merge_keywords(kwargs, given)
        return cls(joints_or_n, **kwargs)

    def with_updates(self, **kwargs: Any) -> FrictionModel:
        """New validated model with some keywords changed.

        ``None`` and empty sequences mean "keep the current value" (use 0.0 to zero a term,
        ``model="coulomb"`` to stop using BAM files).

        ``breakaway`` sets both directions unless ``breakaway_positive``/``_negative`` are
        also given; ``bam_files`` replaces ``bam``.

        Raises:
            ConfigError: unknown keyword (valid ones listed) or invalid value; ``key`` names it.
            DimensionError: wrong per-joint length.
        """
        unknown = sorted(set(kwargs) - set(FRICTION_KEYWORDS))
        if unknown:
            raise ConfigError(
                f"unknown friction keywords {unknown}; valid keywords: " + ", ".join(FRICTION_KEYWORDS),
                key=unknown[0],
            )
        given = given_keywords(kwargs)
        if not given:
            return self
        current = self._params.as_dict()
        merged = merge_keywords(current, given)
        p = self._params
        target = list(p.joint_names) if p.joint_names is not None else p.n_joints
        return type(self)(target, **merged)

    def for_setpoint_velocity(self) -> FrictionModel:
        """The model to evaluate on a setpoint's velocity: ``eps`` (BAM joints' included)
        replaced by ``eps_setpoint``; the model itself when that is unset or equal.

        Returns:
            A validated model (no new checks: the values are this model's).
        """
        p = self._params
        if p.eps_setpoint is None or np.array_equal(p.eps_setpoint, p.eps):
            return self
        return type(self).from_params(dataclasses.replace(p, eps=p.eps_setpoint))

    # -- properties ---------------------------------------------------------------------
    @property
    def params(self) -> FrictionParams:
        """The validated parameters."""
        return self._params

    @property
    def n_joints(self) -> int:
        return self._params.n_joints

    @property
    def joint_names(self) -> tuple[str, ...] | None:
        return self._params.joint_names

    @property
    def enabled(self) -> bool:
        return self._params.enabled

    @property
    def model(self) -> str:
        return self._params.model

    @property
    def is_zero(self) -> bool:
        """True when :meth:`torque` is exactly zero for every input (disabled or all-zero
        coefficients): a node can then pass its input through bit-identically."""
        return self._is_zero

    @property
    def uses_load(self) -> bool:
        """True when :meth:`torque` depends on ``load`` (a load-dependent BAM joint)."""
        return self._bam_stack is not None and self._bam_stack.load_dependent

    # -- evaluation ---------------------------------------------------------------------
    def torque(self, velocity: Any, load: Any = None, *, checked: bool = True) -> np.ndarray:
        """Friction feedforward torque [N·m], shape (n,).

        Args:
            velocity: (n,) joint velocity [rad/s].
            load: (n,) torque the motor already applies to hold the arm [N·m] (the incoming
                effort, e.g. the gravity feedforward); only load-dependent BAM models use
                it (``tau_e = -load``). ``None`` → 0.
            checked: ``False`` skips the input checks for callers whose arrays are already
                finite float64 of shape (n,) (a parsed setpoint at 1 kHz); anything else is
                then undefined. Same result bit for bit.

        Returns:
            New float64 array (n,); exactly +0.0 entries where the term vanishes.

        Raises:
            InputError: wrong shape (reason ``Reason.SHAPE``), non-finite values
                (``Reason.NOT_FINITE``) or a velocity beyond
                :data:`~gravity_friction_comp.validation.MAX_PLAUSIBLE_VELOCITY` (``Reason.RANGE``).
        """
        p = self._params
        v = vector("velocity", velocity, p.n_joints, bound=MAX_PLAUSIBLE_VELOCITY) if checked else velocity
        if self._is_zero:
            return np.zeros(p.n_joints)
        t = np.tanh(v / p.eps)
        if self._asymmetric:
            level = np.where(v > 0.0, p.breakaway_positive, p.breakaway_negative)
        else:
            level = p.breakaway_positive
        if self._has_stribeck:
            level = level + p.stribeck_breakaway * np.exp(
                -(np.abs(v / p.stribeck_velocity) ** p.stribeck_exponent)
            )
        out = level * t
        if self._has_viscous:
            out = out + p.viscous * v
        if self._has_offset:
            out = out + p.offset
        if self._bam_stack is not None:
            idx = self._bam_idx  # a slice when every joint is a BAM joint
            if load is None or not self._bam_stack.load_dependent:
                tau_e = np.zeros(self._bam_stack.size)
            else:
                tau_e = -(vector("load", load, p.n_joints) if checked else load)[idx]
            out[idx] += self._bam_stack.feedforward_unchecked(v[idx], tau_e, self._bam_eps)
        # x + 0 turns -0.0 into +0.0 and leaves every other value unchanged.
        return out + self._zeros

    def __repr__(self) -> str:
        p = self._params
        return (
            f"FrictionModel(n_joints={p.n_joints}, model={p.model!r}, "
            f"enabled={p.enabled}, is_zero={self._is_zero})"
        )
