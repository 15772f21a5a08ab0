"""Load a robot description (URDF file, xacro file or URDF text) and read its joints.

Pinocchio's URDF parser gives the kinematic tree and inertias; this module reads what
:mod:`gravity_friction_comp.model.robot_model` needs beyond that, straight from the XML:
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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Union

from gravity_friction_comp.errors import ConfigError, ModelError
from gravity_friction_comp.files import check_regular_file
from gravity_friction_comp.validation import short_repr

__all__ = [
    "MimicTag",
    "UrdfDescription",
    "UrdfJoint",
    "load_description",
    "massless_moving_links",
    "parse_urdf",
    "read_source",
]

#: Joint types of the URDF specification (http://wiki.ros.org/urdf/XML/joint).
URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")

#: Plausibility bounds of what the URDF may describe: nothing a robot arm has comes near
#: them, and beyond them Pinocchio's products (m·c×c, lever × lever) can overflow to NaN.
MAX_LENGTH = 1e3  # [m] any origin offset (a 1 km lever is not an arm)
MAX_MASS = 1e6  # [kg] one link (1000 t)
MAX_INERTIA = 1e9  # [kg·m²] one inertia-tensor entry
MAX_MIMIC = 1e3  # |<mimic> multiplier| [-] and |offset| [rad or m]

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
        inertial_links: Names of the links that have an ``<inertial>``.
    """

    xml: str
    name: str
    joints: Mapping[str, UrdfJoint]
    links: tuple[str, ...]
    origin: str
    inertial_links: frozenset[str] = frozenset()


def massless_moving_links(desc: UrdfDescription) -> tuple[str, ...]:
    """Child links of movable joints whose body has no ``<inertial>`` anywhere: the link and
    the links fixed to it below, which Pinocchio merges into one body. Such a body loads
    with zero mass, silently (a ``tool0`` frame link fixed to a wrist with mass is not one).

    Returns:
        The child links, joint file order (``()`` when every moving body has an inertial).
    """
    below: dict[str, list[UrdfJoint]] = {}
    for joint in desc.joints.values():
        below.setdefault(joint.parent, []).append(joint)
    out = []
    for joint in desc.joints.values():
        if joint.type == "fixed":
            continue
        body, todo = [joint.child], [joint.child]
        while todo:
            fixed = [j.child for j in below.get(todo.pop(), ()) if j.type == "fixed" and j.child not in body]
            body += fixed
            todo += fixed
        if not desc.inertial_links.intersection(body):
            out.append(joint.child)
    return tuple(out)


def read_source(source: UrdfSource, xacro_args: Mapping[str, str] | None = None) -> tuple[str, str]:
    """Return ``(urdf_xml, origin)`` for a URDF path, a ``.xacro`` path or URDF XML text.

    A ``str`` whose first non-blank character is ``<`` is URDF text; anything else is a
    path. ``.xacro`` files are expanded with the ``xacro`` library
    (``xacro.process_file(path, mappings=xacro_args).toxml()``).

    Raises:
        ModelError: Missing/unreadable file, or xacro expansion failed.
        ConfigError: ``xacro_args`` given for a source that is not a ``.xacro`` file, or
            not a mapping (key ``"xacro_args"``).
    """
    if xacro_args is not None and not isinstance(xacro_args, Mapping):
        raise ConfigError(
            f"xacro_args must be a mapping of argument names to values, got "
            f"{type(xacro_args).__name__} {xacro_args!r}",
            key="xacro_args",
            value=xacro_args,
        )
    if isinstance(source, str) and source.lstrip().startswith("<"):
        if xacro_args:
            raise ConfigError(
                "xacro_args only apply to a .xacro file, not to URDF text",
                key="xacro_args",
                value=dict(xacro_args),
            )
        return source, "<URDF text>"
    if not isinstance(source, (str, os.PathLike)):
        raise ModelError(f"robot description must be a path or URDF XML text, got {type(source).__name__}")
    path = pathlib.Path(source).expanduser()
    try:
        exists = path.exists()
    except OSError as exc:  # a name too long (a non-XML robot_description message killed the node)
        raise ModelError(
            f"robot description is neither URDF XML (first character '<') nor a file: "
            f"{short_repr(str(source))}: {exc.strerror}"
        ) from None
    if not exists:
        raise ModelError(f"URDF file not found: {str(path)!r}")
    try:
        # a directory or device is "not a regular file", not missing; <= 16 MiB
        check_regular_file(path, "URDF file")
    except ConfigError as exc:
        raise ModelError(str(exc)) from None
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
    text = None if elem is None else elem.get(attr)
    if text is None:
        return default
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
    if not math.isfinite(mass) or not 0.0 <= mass <= MAX_MASS:
        raise ModelError(f"{where}: <mass value> must be finite, >= 0 and <= {MAX_MASS:g} [kg], got {mass!r}")
    inertia = inertial.find("inertia")
    values = {}
    for attr in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"):
        value = values[attr] = _float_attr(inertia, attr, 0.0, f"{where} <inertia>")
        if not math.isfinite(value) or abs(value) > MAX_INERTIA:
            raise ModelError(
                f"{where}: <inertia {attr}> must be finite and within ±{MAX_INERTIA:g} [kg·m²], got {value!r}"
            )
    for attr in ("ixx", "iyy", "izz"):
        if values[attr] < 0.0:
            raise ModelError(f"{where}: <inertia {attr}> must be >= 0 [kg·m²]")
    _check_inertia_tensor(values, where)
    _check_origin(inertial.find("origin"), f"{where}: inertial origin")


def _check_inertia_tensor(v: Mapping[str, float], where: str) -> None:
    """A rotational inertia must be positive semi-definite: otherwise the mass matrix can be
    indefinite and a positive torque accelerates the joint backwards (Featherstone 2008,
    §2.13). The triangle inequality of the principal moments is not enforced: real CAD
    exports (OpenArm's fingers) break it without harm to the dynamics."""
    import numpy as np

    tensor = np.array(
        [[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]]
    )
    eig = np.linalg.eigvalsh(tensor)
    if eig[0] < -1e-9 * max(abs(eig[-1]), abs(eig[0])):  # relative: rounding of CAD values
        raise ModelError(
            f"{where}: <inertia> is not positive semi-definite (principal moments "
            f"{[float(f'{e:.6g}') for e in eig]} kg·m²); check the signs of "
            "ixy/ixz/iyz"
        )


def _vector_attr(elem: ET.Element, attr: str, where: str) -> list[float] | None:
    text = elem.get(attr)
    if text is None:
        return None
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        raise ModelError(f"{where} {attr}={text!r} is not numbers") from None
    if len(values) != 3 or not all(math.isfinite(x) for x in values):
        raise ModelError(f"{where} {attr}={text!r} must be three finite numbers")
    return values


def _check_origin(origin: ET.Element | None, where: str) -> None:
    """``<origin>``: finite xyz within :data:`MAX_LENGTH` and finite rpy."""
    if origin is None:
        return
    xyz = _vector_attr(origin, "xyz", where)
    if xyz is not None and max(abs(x) for x in xyz) > MAX_LENGTH:
        raise ModelError(f"{where} xyz={origin.get('xyz')!r} is beyond {MAX_LENGTH:g} m")
    _vector_attr(origin, "rpy", where)


def parse_urdf(xml: str, origin: str = "<URDF text>") -> UrdfDescription:
    """Parse expanded URDF XML into a :class:`UrdfDescription`.

    Only direct ``<robot>/<joint>`` and ``<robot>/<link>`` children are read (a Gazebo
    ``<plugin>``'s ``<mimicJoint>`` is not a URDF mimic tag).

    Raises:
        ModelError: Not well-formed XML, root is not ``<robot>``, a joint without name/type/
            parent/child, an unknown joint type, duplicate joint names, a non-numeric
            limit/dynamics/mimic attribute, a mimic multiplier or offset beyond
            :data:`MAX_MIMIC`, a joint origin that is not finite or beyond
            :data:`MAX_LENGTH`, a zero/non-finite joint axis, or a link whose ``<inertial>``
            has a NaN/inf/negative mass or one above :data:`MAX_MASS`, a non-finite inertia,
            an entry above :data:`MAX_INERTIA`, an inertia tensor that is not positive
            semi-definite, or an origin that is not finite or beyond :data:`MAX_LENGTH`.
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
                f"{origin}: joint {name!r} has unknown type {jtype!r}; valid: {', '.join(URDF_JOINT_TYPES)}",
                joints=(name,),
            )
        if name in joints:
            raise ModelError(f"{origin}: duplicate joint name {name!r}", joints=(name,))
        where = f"{origin}: joint {name!r}"
        _check_origin(elem.find("origin"), f"{where}: origin")
        axis = elem.find("axis")
        if axis is not None and jtype in ("revolute", "continuous", "prismatic"):
            xyz = _vector_attr(axis, "xyz", f"{where}: axis")
            # Pinocchio normalises the axis; a zero (or overflowing) norm leaves a joint
            # that moves nothing
            if xyz is not None and not 1e-9 < math.hypot(*xyz) < MAX_LENGTH:
                raise ModelError(
                    f"{where}: axis xyz={axis.get('xyz')!r} must be a non-zero "
                    "direction (URDF: a unit vector)",
                    joints=(name,),
                )
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
            # a 1000:1 coupling is already no linkage; beyond it M = GᵀMG overflows
            if abs(mimic.multiplier) > MAX_MIMIC or abs(mimic.offset) > MAX_MIMIC:
                raise ModelError(
                    f"{where}: <mimic> multiplier/offset beyond ±{MAX_MIMIC:g} "
                    f"({mimic.multiplier:g}, {mimic.offset:g})",
                    joints=(name,),
                )
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
    inertial = frozenset(e.get("name", "") for e in root.findall("link") if e.find("inertial") is not None)
    return UrdfDescription(
        xml=xml, name=root.get("name", ""), joints=joints, links=links, origin=origin, inertial_links=inertial
    )


def load_description(source: UrdfSource, xacro_args: Mapping[str, str] | None = None) -> UrdfDescription:
    """:func:`read_source` then :func:`parse_urdf`. Raises as both do."""
    xml, origin = read_source(source, xacro_args)
    return parse_urdf(xml, origin)
