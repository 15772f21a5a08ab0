"""The settings every stage shares: the enable switch and the scale (one or one per joint).

:class:`StageSettings` is validated in one place for YAML, keywords and ``ros2 param set``;
the stages check a per-joint scale's length against their joints (:meth:`StageSettings.scale_for`).
Re-exported by :mod:`gravity_friction_comp.stage.contract`.
"""

from __future__ import annotations

import array
import math
from dataclasses import dataclass

import numpy as np

from gravity_friction_comp.validation import MAX_SCALE

__all__ = ["MAX_SCALE", "StageSettings"]


@dataclass(frozen=True, eq=False)
class StageSettings:
    """Settings every stage shares, validated in one place (YAML, keyword or ``ros2 param set``).

    Attributes:
        enabled: ``False`` makes the stage a pure pass-through (term 0) for comparison runs.
        scale: Multiplier on the term [-]: one number for every joint (stored as a float),
            or one per model joint in model order (a sequence of n numbers, stored as a
            read-only (n,) float array; a one-element sequence counts as one number). Each
            ``|s_i| <=`` :data:`MAX_SCALE`. 1.0 applies the model as is. The length is
            checked against the stage's joints by the stage (:meth:`scale_for`).

    Raises:
        ConfigError: for a non-bool ``enabled``, or a ``scale`` (or an element of it) that is
            not a number, not finite or beyond :data:`MAX_SCALE`, or an empty sequence.
    """

    enabled: bool = True
    scale: float | np.ndarray = 1.0

    def __post_init__(self):
        from gravity_friction_comp.errors import ConfigError

        if not isinstance(self.enabled, (bool, np.bool_)):
            raise ConfigError(
                f"enable must be a bool, got {self.enabled!r}", key="enable", value=self.enabled
            )
        scale = self.scale
        if isinstance(scale, (list, tuple, array.array)) or (
            isinstance(scale, np.ndarray) and scale.ndim == 1
        ):
            if len(scale) == 0:
                raise ConfigError(
                    "scale: an empty list; give one number or one per joint", key="scale", value=[]
                )
            if len(scale) == 1:
                scale = scale[0]  # as effort_limit: a one-element array parameter is every joint
            else:
                object.__setattr__(self, "scale", _per_joint_scale(scale))
                object.__setattr__(self, "enabled", bool(self.enabled))
                return
        object.__setattr__(self, "scale", _scalar_scale(scale, "scale", scale))
        object.__setattr__(self, "enabled", bool(self.enabled))

    @property
    def per_joint(self) -> bool:
        """True when :attr:`scale` is one value per joint (an array)."""
        return isinstance(self.scale, np.ndarray)

    def scale_for(self, n: int) -> float | np.ndarray:
        """:attr:`scale` checked against a stage of ``n`` joints.

        Raises:
            DimensionError: a per-joint scale whose length is not ``n`` (key ``scale``).
        """
        scale = self.scale
        if isinstance(scale, np.ndarray) and len(scale) != n:
            from gravity_friction_comp.errors import DimensionError

            raise DimensionError("scale", n, len(scale))
        return scale

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StageSettings):
            return NotImplemented
        return self.enabled == other.enabled and np.array_equal(self.scale, other.scale)

    def __hash__(self) -> int:
        scale = self.scale
        return hash((self.enabled, tuple(scale.tolist()) if isinstance(scale, np.ndarray) else scale))


def _scalar_scale(value, key: str, given) -> float:
    from gravity_friction_comp.errors import ConfigError

    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigError(f"{key} must be a number, got {value!r}", key="scale", value=given)
    if not math.isfinite(value):
        raise ConfigError(f"{key} must be finite, got {value!r}", key="scale", value=given)
    if abs(float(value)) > MAX_SCALE:
        raise ConfigError(
            f"{key} must be within [-{MAX_SCALE:g}, {MAX_SCALE:g}], got {value!r}",
            key="scale",
            value=given,
        )
    return float(value)


def _per_joint_scale(values) -> np.ndarray:
    """(n,) read-only float array of a per-joint scale, each element checked as a scalar."""
    given = list(values)
    out = np.array([_scalar_scale(x, f"scale[{i}]", given) for i, x in enumerate(given)], dtype=float)
    out.setflags(write=False)
    return out
