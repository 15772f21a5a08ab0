"""Friction parameters: the keywords of the friction model, their defaults and validation.

One keyword per coefficient (:data:`FRICTION_KEYWORDS`, the names of the per-arm YAML's
``friction_comp`` block and of the friction node's parameters), each a scalar or a per-joint
list; :func:`params_from_keywords` validates them into read-only arrays
(:class:`FrictionParams`) that :class:`~gravity_friction_comp.friction.models.FrictionModel`
evaluates.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError, DimensionError
from gravity_friction_comp.friction.bam import BamParameters
from gravity_friction_comp.validation import joint_names, per_joint

__all__ = [
    "DEFAULT_EPS",
    "COEFFICIENT_KEYWORDS",
    "SYMMETRIC_KEYWORDS",
    "FRICTION_KEYWORDS",
    "FRICTION_MODELS",
    "MAX_COEFFICIENT",
    "FrictionParams",
    "merge_keywords",
    "params_from_keywords",
]

#: Valid values of ``model``.
FRICTION_MODELS = ("coulomb", "bam")

#: The per-joint coefficient arrays of :class:`FrictionParams`, (n,) each, in keyword order.
COEFFICIENT_KEYWORDS = (
    "breakaway_positive",
    "breakaway_negative",
    "eps",
    "viscous",
    "stribeck_breakaway",
    "stribeck_velocity",
    "stribeck_exponent",
    "offset",
)

#: A direction-symmetric entry (one ``breakaway`` for both signs): what identification writes.
SYMMETRIC_KEYWORDS = ("breakaway", *COEFFICIENT_KEYWORDS[2:])

#: Keyword names accepted by :class:`FrictionModel`, :meth:`FrictionModel.with_updates` and
#: :meth:`FrictionModel.from_yaml` (the node can declare one ROS parameter per name).
#: ``eps_setpoint`` is no coefficient array: unset, ``eps`` serves (and follows its changes).
FRICTION_KEYWORDS = (
    "enabled",
    "model",
    "breakaway",
    *COEFFICIENT_KEYWORDS,
    "eps_setpoint",
    "bam",
    "bam_files",
)

DEFAULT_EPS = 0.01  # [rad/s], i2rt PR #37 default
#: Plausibility limit of every torque-like friction coefficient [N·m or N·m·s/rad].
MAX_COEFFICIENT = 1e6
DEFAULT_STRIBECK_VELOCITY = 0.1  # [rad/s]
DEFAULT_STRIBECK_EXPONENT = 2.0  # [-], Gaussian Stribeck curve (Armstrong-Hélouvry 1994)


@dataclasses.dataclass(frozen=True, eq=False)
class FrictionParams:
    """Validated friction parameters, one read-only float array (n,) per coefficient.

    Attributes:
        n_joints: number of joints n.
        joint_names: names the arrays refer to, or ``None`` when built from a count.
        enabled: master switch; ``False`` → zero term.
        model: ``"coulomb"`` or ``"bam"``.
        breakaway_positive: Coulomb level for v > 0 [N·m], (n,), ≥ 0.
        breakaway_negative: Coulomb level magnitude for v < 0 [N·m], (n,), ≥ 0.
        eps: tanh velocity scale [rad/s], (n,), > 0.
        viscous: [N·m·s/rad], (n,), ≥ 0.
        stribeck_breakaway: static level above Coulomb [N·m], (n,), ≥ 0.
        stribeck_velocity: [rad/s], (n,), > 0.
        stribeck_exponent: [-], (n,), > 0.
        offset: constant torque [N·m], (n,), any sign.
        bam: per-joint :class:`BamParameters` or ``None``, length n.
        eps_setpoint: tanh velocity scale for a setpoint's velocity [rad/s], (n,), > 0, or
            ``None`` (unset: ``eps``); see
            :meth:`~gravity_friction_comp.friction.models.FrictionModel.for_setpoint_velocity`.
    """

    n_joints: int
    joint_names: tuple[str, ...] | None
    enabled: bool
    model: str
    breakaway_positive: np.ndarray
    breakaway_negative: np.ndarray
    eps: np.ndarray
    viscous: np.ndarray
    stribeck_breakaway: np.ndarray
    stribeck_velocity: np.ndarray
    stribeck_exponent: np.ndarray
    offset: np.ndarray
    bam: tuple[BamParameters | None, ...]
    eps_setpoint: np.ndarray | None = None

    @property
    def bam_files(self) -> tuple[str | None, ...]:
        """Source path of each joint's BAM parameters (``None`` where absent or not a file)."""
        return tuple(p.source if p is not None else None for p in self.bam)

    def as_dict(self) -> dict[str, Any]:
        """Keyword dict that rebuilds these parameters (arrays as lists of float)."""
        out: dict[str, Any] = {"enabled": self.enabled, "model": self.model}
        for key in COEFFICIENT_KEYWORDS:
            out[key] = getattr(self, key).tolist()
        if self.eps_setpoint is not None:  # unset stays unset: it follows eps
            out["eps_setpoint"] = self.eps_setpoint.tolist()
        out["bam"] = list(self.bam)
        return out


def params_from_keywords(
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
) -> FrictionParams:
    """Validated :class:`FrictionParams` from the keywords of
    :class:`~gravity_friction_comp.friction.models.FrictionModel` (its docstring lists them,
    their units, defaults and the errors raised)."""
    n, names = joint_count(n_joints_or_joint_names)
    if enabled is None:
        enabled = True
    if not isinstance(enabled, (bool, np.bool_)):
        raise ConfigError(f"enabled: expected true or false, got {enabled!r}", key="enabled", value=enabled)
    if model is None:
        model = "coulomb"
    if not isinstance(model, str) or model not in FRICTION_MODELS:
        raise ConfigError(
            f"model: unknown friction model {model!r}; valid choices: " + ", ".join(FRICTION_MODELS),
            key="model",
            value=model,
        )
    both = _per_joint("breakaway", breakaway, n, 0.0, bound=MAX_COEFFICIENT)
    pos = _per_joint("breakaway_positive", breakaway_positive, n, both, bound=MAX_COEFFICIENT)
    neg = _per_joint("breakaway_negative", breakaway_negative, n, both, bound=MAX_COEFFICIENT)
    return FrictionParams(
        n_joints=n,
        joint_names=names,
        enabled=bool(enabled),
        model=model,
        breakaway_positive=pos,
        breakaway_negative=neg,
        eps=_per_joint("eps", eps, n, DEFAULT_EPS, positive=True),
        viscous=_per_joint("viscous", viscous, n, 0.0, bound=MAX_COEFFICIENT),
        stribeck_breakaway=_per_joint(
            "stribeck_breakaway", stribeck_breakaway, n, 0.0, bound=MAX_COEFFICIENT
        ),
        stribeck_velocity=_per_joint(
            "stribeck_velocity", stribeck_velocity, n, DEFAULT_STRIBECK_VELOCITY, positive=True
        ),
        stribeck_exponent=_per_joint(
            "stribeck_exponent", stribeck_exponent, n, DEFAULT_STRIBECK_EXPONENT, positive=True
        ),
        offset=_per_joint("offset", offset, n, 0.0, signed=True, bound=MAX_COEFFICIENT),
        bam=_bam_list(bam, bam_files, n),
        eps_setpoint=None
        if eps_setpoint is None or _is_empty_sequence(eps_setpoint)
        else _per_joint("eps_setpoint", eps_setpoint, n, DEFAULT_EPS, positive=True),
    )


def joint_count(n_or_names: Any) -> tuple[int, tuple[str, ...] | None]:
    if isinstance(n_or_names, (bool, np.bool_)):
        raise ConfigError(
            "joints: expected a joint count or joint names, got a bool", key="joints", value=n_or_names
        )
    if isinstance(n_or_names, (int, np.integer)):
        n = int(n_or_names)
        if n < 1:
            raise ConfigError(f"joints: expected at least 1 joint, got {n}", key="joints", value=n)
        return n, None
    if isinstance(n_or_names, str) or not isinstance(n_or_names, Sequence):
        raise ConfigError(
            f"joints: expected a joint count or a list of joint names, got {n_or_names!r}",
            key="joints",
            value=n_or_names,
        )
    names = joint_names("joints", tuple(n_or_names))
    return len(names), names


def _per_joint(
    key: str,
    value: Any,
    n: int,
    default: float | np.ndarray,
    *,
    positive: bool = False,
    signed: bool = False,
    bound: float | None = None,
) -> np.ndarray:
    """Scalar or (n,) → read-only float array (n,); ``None``/empty → ``default`` (an array
    default is returned as is: it is already validated)."""
    if value is None or _is_empty_sequence(value):
        if isinstance(default, np.ndarray):
            return default
        value = default
    return per_joint(key, value, n, positive=positive, nonneg=not signed, bound=bound)


def _bam_list(bam: Any, bam_files: Any, n: int) -> tuple[BamParameters | None, ...]:
    if bam_files is not None and (
        isinstance(bam_files, (str, bytes, Mapping)) or not hasattr(bam_files, "__len__")
    ):
        raise ConfigError(
            f"bam_files: expected a list with one path (or null) per joint, got {bam_files!r}",
            key="bam_files",
            value=bam_files,
        )
    has_bam = bam is not None and not _is_empty_sequence(bam)
    has_files = bam_files is not None and not _is_empty_sequence(bam_files)
    if has_bam and has_files:
        raise ConfigError(
            "give either bam (parameters) or bam_files (paths), not both", key="bam_files", value=bam_files
        )
    if has_files:
        files = list(bam_files)  # type: ignore[arg-type]  # has_files: not None
        if len(files) != n:
            raise DimensionError("bam_files", n, len(files))
        out: list[BamParameters | None] = []
        for f in files:
            if f is None or f == "":
                out.append(None)
            elif isinstance(f, (str, os.PathLike)):
                out.append(BamParameters.from_json(pathlib.Path(f)))
            else:
                raise ConfigError(f"bam_files: expected paths or null, got {f!r}", key="bam_files", value=f)
        return tuple(out)
    if has_bam:
        if isinstance(bam, (str, bytes, BamParameters, Mapping)) or not hasattr(bam, "__len__"):
            raise ConfigError(
                "bam: expected a list with one BamParameters (or None) per joint", key="bam", value=bam
            )
        items = list(bam)
        if len(items) != n:
            raise DimensionError("bam", n, len(items))
        for item in items:
            if item is not None and not isinstance(item, BamParameters):
                raise ConfigError(f"bam: expected BamParameters or None, got {item!r}", key="bam", value=item)
        return tuple(items)
    return (None,) * n


def given_keywords(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Keywords actually given: not ``None`` and not an empty sequence (ROS array default)."""
    return {k: v for k, v in kwargs.items() if v is not None and not _is_empty_sequence(v)}


def _is_empty_sequence(value: Any) -> bool:
    """Empty list/tuple/ndarray/array.array (rclpy gives array.array for double arrays)."""
    return not isinstance(value, (str, bytes, Mapping)) and hasattr(value, "__len__") and len(value) == 0


def merge_keywords(base: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated by ``given``; a given ``breakaway`` drops base's per-direction
    values, and ``bam``/``bam_files`` replace each other."""
    out = dict(base)
    if "breakaway" in given:
        for key in ("breakaway_positive", "breakaway_negative"):
            if key not in given:
                out.pop(key, None)
    if "bam" in given or "bam_files" in given:
        out.pop("bam", None)
        out.pop("bam_files", None)
    out.update(given)
    return out
