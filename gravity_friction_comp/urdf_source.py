"""Load a robot description (URDF file, xacro file or URDF text) and read its joints.

Pinocchio's URDF parser gives the kinematic tree and inertias; this module reads what
:mod:`gravity_friction_comp.robot_model` needs beyond that, straight from the XML:
``<mimic>`` tags (Pinocchio's own mimic reduction refuses many real files, FIELD_NOTES),
``<limit>`` and ``<dynamics>`` of every joint, including mimic joints, whose values
Pinocchio drops with ``mimic=True``.

No rclpy import: usable from a plain SDK loop.
"""

from __future__ import annotations

import math
import os
import pathlib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Mapping, Union

from .exceptions import ConfigError, ModelError

__all__ = [
    "MimicTag",
    "UrdfDescription",
    "UrdfJoint",
    "load_description",
    "parse_urdf",
    "read_source",
]

#: Joint types of the URDF specification (http://wiki.ros.org/urdf/XML/joint).
URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")

UrdfSource = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class MimicTag:
    """A URDF ``<mimic joint= multiplier= offset=>`` tag.

    The mimicking joint's position is ``multiplier * q[joint] + offset`` (URDF spec; defaults
    multiplier 1, offset 0). Units follow the joints: [rad] or [m].
    """

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class UrdfJoint:
    """One ``<joint>`` of a URDF, as written (URDF spec, http://wiki.ros.org/urdf/XML/joint).

    Attributes:
        name: Joint name.
        type: One of :data:`URDF_JOINT_TYPES`.
        parent: Parent link name.
        child: Child link name.
        lower: ``<limit lower>`` [rad] or [m]; ``-inf`` when absent or for continuous joints.
        upper: ``<limit upper>`` [rad] or [m]; ``+inf`` when absent or for continuous joints.
        effort: ``<limit effort>`` [N·m] or [N]; ``inf`` when absent or 0 (the spec requires
            it for revolute/prismatic joints; 0 would forbid any torque, which no real file
            means, so it is read as "no limit").
        velocity: ``<limit velocity>`` [rad/s] or [m/s]; ``inf`` when absent or 0.
        damping: ``<dynamics damping>`` [N·m·s/rad] or [N·s/m]; 0 when absent.
        friction: ``<dynamics friction>`` (Coulomb) [N·m] or [N]; 0 when absent.
        mimic: The ``<mimic>`` tag, or ``None``.
    """

    name: str
    type: str
    parent: str
    child: str
    lower: float = -math.inf
    upper: float = math.inf
    effort: float = math.inf
    velocity: float = math.inf
    damping: float = 0.0
    friction: float = 0.0
    mimic: MimicTag | None = None


@dataclass(frozen=True)
class UrdfDescription:
    """A parsed robot description.

    Attributes:
        xml: Expanded URDF XML text (xacro already processed).
        name: ``<robot name>``.
        joints: Every ``<joint>`` by name, in file order.
        links: Every ``<link>`` name, in file order.
        origin: Where the text came from (file path or ``"<URDF text>"``), for messages.
    """

    xml: str
    name: str
    joints: Mapping[str, UrdfJoint]
    links: tuple[str, ...]
    origin: str


def read_source(
    source: UrdfSource, xacro_args: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """Return ``(urdf_xml, origin)`` for a URDF path, a ``.xacro`` path or URDF XML text.

    A ``str`` whose first non-blank character is ``<`` is URDF text; anything else is a
    path. ``.xacro`` files are expanded with the ``xacro`` library
    (``xacro.process_file(path, mappings=xacro_args).toxml()``).

    Raises:
        ModelError: Missing/unreadable file, or xacro expansion failed.
        ConfigError: ``xacro_args`` given for a source that is not a ``.xacro`` file
            (key ``"xacro_args"``).
    """
    if isinstance(source, str) and source.lstrip().startswith("<"):
        if xacro_args:
            raise ConfigError(
                "xacro_args only apply to a .xacro file, not to URDF text",
                key="xacro_args",
                value=dict(xacro_args),
            )
        return source, "<URDF text>"
    if not isinstance(source, (str, os.PathLike)):
        raise ModelError(
            f"robot description must be a path or URDF XML text, got {type(source).__name__}"
        )
    path = pathlib.Path(source).expanduser()
    if not path.is_file():
        raise ModelError(f"URDF file not found: {str(path)!r}")
    if path.name.endswith(".xacro"):
        return _expand_xacro(path, xacro_args), str(path)
    if xacro_args:
        raise ConfigError(
            f"xacro_args only apply to a .xacro file, not to {str(path)!r}",
            key="xacro_args",
            value=dict(xacro_args),
        )
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"cannot read URDF file {str(path)!r}: {exc}") from exc


def _expand_xacro(path: pathlib.Path, xacro_args: Mapping[str, str] | None) -> str:
    import xacro  # imported lazily: only xacro sources need it

    mappings = {str(k): str(v) for k, v in (xacro_args or {}).items()}
    try:
        doc = xacro.process_file(str(path), mappings=mappings)
    except Exception as exc:  # xacro raises XacroException, XML errors, NameError, ...
        raise ModelError(f"xacro expansion of {str(path)!r} failed: {exc}") from exc
    return doc.toxml()


def _float_attr(elem: ET.Element | None, attr: str, default: float, where: str) -> float:
    if elem is None or elem.get(attr) is None:
        return default
    text = elem.get(attr)
    try:
        value = float(text)
    except ValueError:
        raise ModelError(f"{where}: attribute {attr}={text!r} is not a number") from None
    if math.isnan(value):
        raise ModelError(f"{where}: attribute {attr} is NaN")
    return value


def _check_inertial(link: ET.Element, where: str) -> None:
    """Reject what urdfdom would silently drop or accept: a NaN/inf/negative ``<mass>`` (the
    parser drops a NaN inertial, leaving a massless link) or non-finite inertia/origin."""
    inertial = link.find("inertial")
    if inertial is None:
        return
    mass = _float_attr(inertial.find("mass"), "value", 0.0, f"{where} <mass>")
    if not math.isfinite(mass) or mass < 0.0:
        raise ModelError(f"{where}: <mass value> must be finite and >= 0 [kg], got {mass!r}")
    inertia = inertial.find("inertia")
    for attr in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"):
        value = _float_attr(inertia, attr, 0.0, f"{where} <inertia>")
        if not math.isfinite(value):
            raise ModelError(f"{where}: <inertia {attr}> must be finite, got {value!r}")
    for attr in ("ixx", "iyy", "izz"):
        if _float_attr(inertia, attr, 0.0, where) < 0.0:
            raise ModelError(f"{where}: <inertia {attr}> must be >= 0 [kg·m²]")
    origin = inertial.find("origin")
    if origin is not None:
        for attr in ("xyz", "rpy"):
            text = origin.get(attr)
            if text is None:
                continue
            try:
                values = [float(x) for x in text.split()]
            except ValueError:
                raise ModelError(f"{where}: inertial origin {attr}={text!r} is not numbers") \
                    from None
            if not all(math.isfinite(x) for x in values):
                raise ModelError(f"{where}: inertial origin {attr}={text!r} is not finite")


def parse_urdf(xml: str, origin: str = "<URDF text>") -> UrdfDescription:
    """Parse expanded URDF XML into a :class:`UrdfDescription`.

    Only direct ``<robot>/<joint>`` and ``<robot>/<link>`` children are read (a Gazebo
    ``<plugin>``'s ``<mimicJoint>`` is not a URDF mimic tag).

    Raises:
        ModelError: Not well-formed XML, root is not ``<robot>``, a joint without name/type/
            parent/child, an unknown joint type, duplicate joint names, a non-numeric
            limit/dynamics/mimic attribute, or a link whose ``<inertial>`` has a NaN/inf/
            negative mass, non-finite inertia or a negative principal moment.
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ModelError(f"malformed URDF XML in {origin}: {exc}") from exc
    if root.tag != "robot":
        raise ModelError(f"{origin}: root element is <{root.tag}>, expected <robot>")
    joints: dict[str, UrdfJoint] = {}
    for elem in root.findall("joint"):
        name = elem.get("name")
        jtype = elem.get("type")
        parent = elem.find("parent")
        child = elem.find("child")
        if not name or not jtype or parent is None or child is None:
            raise ModelError(
                f"{origin}: joint {name!r} lacks a name, type, <parent> or <child>",
                joints=(name,) if name else (),
            )
        if jtype not in URDF_JOINT_TYPES:
            raise ModelError(
                f"{origin}: joint {name!r} has unknown type {jtype!r}; "
                f"valid: {', '.join(URDF_JOINT_TYPES)}",
                joints=(name,),
            )
        if name in joints:
            raise ModelError(f"{origin}: duplicate joint name {name!r}", joints=(name,))
        where = f"{origin}: joint {name!r}"
        limit = elem.find("limit")
        dyn = elem.find("dynamics")
        mimic_elem = elem.find("mimic")
        mimic = None
        if mimic_elem is not None:
            master = mimic_elem.get("joint")
            if not master:
                raise ModelError(f"{where}: <mimic> without a joint attribute", joints=(name,))
            mimic = MimicTag(
                joint=master,
                multiplier=_float_attr(mimic_elem, "multiplier", 1.0, where),
                offset=_float_attr(mimic_elem, "offset", 0.0, where),
            )
            if not (math.isfinite(mimic.multiplier) and math.isfinite(mimic.offset)):
                raise ModelError(f"{where}: <mimic> multiplier/offset not finite", joints=(name,))
        lower = _float_attr(limit, "lower", -math.inf, where)
        upper = _float_attr(limit, "upper", math.inf, where)
        if jtype == "continuous":
            lower, upper = -math.inf, math.inf
        effort = abs(_float_attr(limit, "effort", math.inf, where))
        velocity = abs(_float_attr(limit, "velocity", math.inf, where))
        joints[name] = UrdfJoint(
            name=name,
            type=jtype,
            parent=parent.get("link", ""),
            child=child.get("link", ""),
            lower=lower,
            upper=upper,
            effort=effort if effort > 0.0 else math.inf,
            velocity=velocity if velocity > 0.0 else math.inf,
            damping=_float_attr(dyn, "damping", 0.0, where),
            friction=_float_attr(dyn, "friction", 0.0, where),
            mimic=mimic,
        )
    for elem in root.findall("link"):
        _check_inertial(elem, f"{origin}: link {elem.get('name', '')!r}")
    links = tuple(e.get("name", "") for e in root.findall("link"))
    return UrdfDescription(
        xml=xml, name=root.get("name", ""), joints=joints, links=links, origin=origin
    )


def load_description(
    source: UrdfSource, xacro_args: Mapping[str, str] | None = None
) -> UrdfDescription:
    """:func:`read_source` then :func:`parse_urdf`. Raises as both do."""
    xml, origin = read_source(source, xacro_args)
    return parse_urdf(xml, origin)
