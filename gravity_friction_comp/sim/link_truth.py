"""Per-link ground truth of the simulated arm: mass scale, centre-of-mass offset, extra point mass.

The sim YAML's ``simulation.links`` block (:class:`LinkTruth` per URDF link) makes the true
arm differ from its URDF link by link, so a gravity calibration can be checked against a
known truth::

    simulation:
      links:
        upper_arm: {mass_scale: 1.2, com_offset: [0.01, 0.0, -0.015]}   # [-], [m] link frame
        tool: {extra_mass: {mass: 0.05, position: [0.0, 0.0, -0.03]}}    # [kg], [m] point mass

Applied in this order to the link's URDF inertial (mass m, COM c in the link frame, inertia
I_c about c in the inertia frame R): ``m ← s·m, I_c ← s·I_c`` (densities × s);
``c ← c + Δc`` (rotational inertia about the COM kept); then a point mass ``m_p`` at ``p``
is added: ``m' = m + m_p``, ``c' = (m c + m_p p)/m'`` and the inertia about ``c'`` by the
parallel-axis theorem, ``I' = I_c + m (|d|²1 − d dᵀ) + m_p (|e|²1 − e eᵀ)`` with
``d = c − c'``, ``e = p − c'`` (rotated into R). The true model is the URDF text with those
values (:func:`apply_link_truth`), loaded like any URDF, so Pinocchio's fixed-joint merging
and the mimic reduction apply unchanged.

No rclpy import; Pinocchio only inside :func:`true_model`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.model.urdf_inertial import edit_inertials, read_inertials, rpy_matrix
from gravity_friction_comp.validation import known_keys, number, string_keys

if TYPE_CHECKING:
    from gravity_friction_comp.model.robot_model import RobotModel

__all__ = ["LINK_KEYS", "LinkTruth", "apply_link_truth", "parse_links", "true_model"]

#: Keys of one ``simulation.links.<link>`` entry.
LINK_KEYS = ("mass_scale", "com_offset", "extra_mass")
_EXTRA_KEYS = ("mass", "position")


def _vec3(key: str, value: Any) -> tuple[float, float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ConfigError(f"{key} must be 3 numbers [m], got {value!r}", key=key, value=value)
    x, y, z = (number(f"{key}[{i}]", v, text=True) for i, v in enumerate(value))
    return (x, y, z)


@dataclass(frozen=True)
class LinkTruth:
    """How one link of the true arm differs from its URDF (module docstring).

    Attributes:
        mass_scale: s [-] (> 0): mass and rotational inertia × s.
        com_offset: Δc (3,) [m], link frame, added to the COM.
        extra_mass: point mass [kg] (≥ 0) added at ``extra_position`` (3,) [m], link frame.

    Raises:
        ConfigError: a non-positive scale, negative mass or a vector that is not 3 numbers.
    """

    mass_scale: float = 1.0
    com_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    extra_mass: float = 0.0
    extra_position: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "mass_scale", number("mass_scale", self.mass_scale, positive=True, text=True)
        )
        object.__setattr__(self, "com_offset", _vec3("com_offset", list(self.com_offset)))
        object.__setattr__(
            self, "extra_mass", number("extra_mass.mass", self.extra_mass, nonneg=True, text=True)
        )
        object.__setattr__(self, "extra_position", _vec3("extra_mass.position", list(self.extra_position)))


def parse_links(block: Any) -> dict[str, LinkTruth]:
    """The ``simulation.links`` mapping → {link: :class:`LinkTruth`}.

    Raises:
        ConfigError: not a mapping, unknown keys (valid ones listed), bad values (key
            ``links.<link>.<field>``).
    """
    if block is None:
        return {}
    if not isinstance(block, Mapping):
        raise ConfigError("links must be a mapping link → truth", key="links", value=block)
    string_keys("links", block)
    out = {}
    for link, entry in block.items():
        if isinstance(entry, LinkTruth):
            out[link] = entry
            continue
        if not isinstance(entry, Mapping):
            raise ConfigError(f"links.{link} must be a mapping", key=f"links.{link}", value=entry)
        known_keys(f"links.{link}", entry, LINK_KEYS, f"links.{link}.")
        kwargs: dict[str, Any] = {k: entry[k] for k in ("mass_scale", "com_offset") if k in entry}
        extra = entry.get("extra_mass")
        if extra is not None:
            if isinstance(extra, Mapping):
                known_keys(f"links.{link}.extra_mass", extra, _EXTRA_KEYS, f"links.{link}.extra_mass.")
            if not isinstance(extra, Mapping) or set(extra) != set(_EXTRA_KEYS):
                raise ConfigError(
                    f"links.{link}.extra_mass must be {{mass: kg, position: [x, y, z]}}, got {extra!r}",
                    key=f"links.{link}.extra_mass",
                    value=extra,
                )
            kwargs["extra_mass"], kwargs["extra_position"] = extra["mass"], extra["position"]
        try:
            out[link] = LinkTruth(**kwargs)
        except ConfigError as error:
            raise ConfigError(
                f"links.{link}.{error.key}: {error}", key=f"links.{link}.{error.key}", value=error.value
            ) from None
    return out


def _point_inertia(mass: float, r: np.ndarray) -> np.ndarray:
    return mass * (float(r @ r) * np.eye(3) - np.outer(r, r))


def apply_link_truth(xml: str, links: Mapping[str, LinkTruth]) -> str:
    """URDF text of the true arm: ``xml`` with each listed link changed (module docstring).

    Raises:
        ConfigError: a link that is not in the URDF or has no ``<inertial>`` (valid links
            listed), or a result with zero mass (key ``links.<link>``).
    """
    inertials = read_inertials(xml)
    changes: dict[str, dict[str, object]] = {}
    for link, truth in links.items():
        if link not in inertials:
            raise ConfigError(
                f"links.{link}: no link with an <inertial> of that name; links: {', '.join(sorted(inertials))}",
                key=f"links.{link}",
                value=link,
            )
        base = inertials[link]
        rot = rpy_matrix(base.rpy)  # inertia frame in the link frame
        mass = truth.mass_scale * base.mass
        com = base.xyz + np.array(truth.com_offset)
        inertia_link = rot @ (truth.mass_scale * base.inertia) @ rot.T
        total = mass + truth.extra_mass
        if total <= 0.0:
            raise ConfigError(f"links.{link}: the true link would have no mass", key=f"links.{link}")
        if truth.extra_mass > 0.0:
            p = np.array(truth.extra_position)
            new_com = (mass * com + truth.extra_mass * p) / total
            inertia_link = (
                inertia_link
                + _point_inertia(mass, com - new_com)
                + _point_inertia(truth.extra_mass, p - new_com)
            )
            com = new_com
        changes[link] = {"mass": total, "xyz": com, "inertia": rot.T @ inertia_link @ rot}
    return edit_inertials(xml, changes)


def true_model(model: RobotModel, links: Mapping[str, LinkTruth]) -> RobotModel:
    """``model`` rebuilt from its URDF with ``links`` applied (gravity vector and actuator
    model kept; payload dropped: the simulated arm attaches its own). ``links`` empty:
    ``model`` itself.

    Raises:
        ConfigError: as :func:`apply_link_truth`.
    """
    if not links:
        return model
    from gravity_friction_comp.model.robot_model import RobotModel

    xml = apply_link_truth(model.description.xml, links)
    truth = RobotModel.from_urdf(xml, gravity=tuple(model.gravity_vector))
    return truth.with_actuators(model.actuators)
