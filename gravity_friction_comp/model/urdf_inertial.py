"""Link inertials in URDF text: read them, and rewrite chosen attributes in place.

:func:`edit_inertials` changes only the attribute values it is asked to change (``<mass
value>``, ``<inertial><origin xyz>``, the six ``<inertia>`` entries) by editing the text at
those spans, so every other byte of the file (comments, formatting, order) is kept. Comments
are masked before the search, so a commented-out ``<link>`` is never edited.

No rclpy or Pinocchio import.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from gravity_friction_comp.errors import ModelError

__all__ = ["INERTIA_KEYS", "LinkInertial", "edit_inertials", "read_inertials", "rpy_matrix"]

#: ``<inertia>`` attributes, in the order of :attr:`LinkInertial.inertia`.
INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


@dataclass(frozen=True)
class LinkInertial:
    """One link's ``<inertial>`` as written.

    Attributes:
        mass: [kg]. xyz: (3,) [m] centre of mass in the link frame.
        rpy: (3,) [rad] orientation of the inertia frame in the link frame.
        inertia: (3, 3) [kg·m²] about the centre of mass, in the inertia frame.
    """

    mass: float
    xyz: np.ndarray
    rpy: np.ndarray
    inertia: np.ndarray


def rpy_matrix(rpy) -> np.ndarray:
    """Rotation matrix (3, 3) of URDF roll-pitch-yaw [rad]: ``Rz(y)·Ry(p)·Rx(r)``."""
    r, p, y = (float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def _floats(text: str | None, count: int, default: float = 0.0) -> np.ndarray:
    if text is None:
        return np.full(count, default)
    return np.array([float(x) for x in text.split()], dtype=float)


def read_inertials(xml: str) -> dict[str, LinkInertial]:
    """Every link with an ``<inertial>``: name → :class:`LinkInertial`.

    Raises:
        ModelError: text that is not XML.
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ModelError(f"URDF is not valid XML: {exc}") from None
    out = {}
    for link in root.iter("link"):
        inertial = link.find("inertial")
        if inertial is None:
            continue
        origin = inertial.find("origin")
        mass = inertial.find("mass")
        tensor = inertial.find("inertia")
        values = {k: float(tensor.get(k, 0.0)) if tensor is not None else 0.0 for k in INERTIA_KEYS}
        inertia = np.array(
            [
                [values["ixx"], values["ixy"], values["ixz"]],
                [values["ixy"], values["iyy"], values["iyz"]],
                [values["ixz"], values["iyz"], values["izz"]],
            ]
        )
        out[link.get("name", "")] = LinkInertial(
            mass=float(mass.get("value", 0.0)) if mass is not None else 0.0,
            xyz=_floats(origin.get("xyz") if origin is not None else None, 3),
            rpy=_floats(origin.get("rpy") if origin is not None else None, 3),
            inertia=inertia,
        )
    return out


def _mask_comments(xml: str) -> str:
    return re.sub(r"<!--.*?-->", lambda m: " " * len(m.group(0)), xml, flags=re.S)


def _attr_span(masked: str, start: int, end: int, attr: str) -> tuple[int, int] | None:
    """Span of the value of ``attr`` within the tag ``masked[start:end]``, or None."""
    m = re.compile(rf"\s{attr}\s*=\s*([\"'])(.*?)\1", re.S).search(masked, start, end)
    return (m.start(2), m.end(2)) if m else None


def _tag(masked: str, name: str, start: int, end: int) -> tuple[int, int] | None:
    m = re.compile(rf"<{name}\b[^>]*>", re.S).search(masked, start, end)
    return (m.start(), m.end()) if m else None


#: Written values below this magnitude are written as 0: a fit's rounding residue (e.g.
#: -1.98e-32 m), far below any real mass [kg], COM [m] or inertia [kg·m²] (≥ 1e-9 in the arms).
ZERO_BELOW = 1e-12


def _fmt(values) -> str:
    """Space-separated numbers, 9 significant digits (a float's rounding noise dropped),
    magnitudes below :data:`ZERO_BELOW` as ``0``."""
    return " ".join("0" if abs(v) < ZERO_BELOW else f"{v:.9g}" for v in np.atleast_1d(values).astype(float))


def edit_inertials(xml: str, changes: Mapping[str, Mapping[str, object]]) -> str:
    """``xml`` with the given links' inertial values replaced, every other byte unchanged.

    Args:
        xml: URDF text.
        changes: link name → any of ``{"mass": kg, "xyz": (3,) m, "inertia": (3, 3) kg·m²}``.
            An ``<origin>`` without ``xyz`` gets the attribute; an ``<inertial>`` without
            ``<origin>`` gets one (``rpy`` 0) as its first child.

    Raises:
        ModelError: a link that is not in the text or has no ``<inertial>`` / ``<mass>`` /
            ``<inertia>`` to edit (names the link), or an unknown change key.
    """
    masked = _mask_comments(xml)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
    for link, change in changes.items():
        unknown = sorted(set(change) - {"mass", "xyz", "inertia"})
        if unknown:
            raise ModelError(f"link {link!r}: unknown inertial change(s) {unknown}")
        m = re.compile(rf"<link\b[^>]*\sname\s*=\s*([\"']){re.escape(link)}\1[^>]*>", re.S).search(masked)
        if m is None or m.group(0).endswith("/>"):
            raise ModelError(f"link {link!r} with an <inertial> not found in the URDF")
        end_link = masked.find("</link>", m.end())
        inertial = _tag(masked, "inertial", m.end(), end_link)
        if inertial is None:
            raise ModelError(f"link {link!r} has no <inertial> to edit")
        end_inertial = masked.find("</inertial>", inertial[1], end_link)
        if end_inertial < 0:
            raise ModelError(f"link {link!r}: <inertial> is not closed")
        if "mass" in change:
            tag = _tag(masked, "mass", inertial[1], end_inertial)
            span = tag and _attr_span(masked, tag[0], tag[1], "value")
            if not span:
                raise ModelError(f"link {link!r} has no <mass value> to edit")
            edits.append((span[0], span[1], _fmt(change["mass"])))
        if "xyz" in change:
            xyz = _fmt(change["xyz"])
            tag = _tag(masked, "origin", inertial[1], end_inertial)
            if tag is None:
                edits.append((inertial[1], inertial[1], f'<origin xyz="{xyz}" rpy="0 0 0"/>'))
            else:
                span = _attr_span(masked, tag[0], tag[1], "xyz")
                if span is None:
                    at = tag[0] + len("<origin")
                    edits.append((at, at, f' xyz="{xyz}"'))
                else:
                    edits.append((span[0], span[1], xyz))
        if "inertia" in change:
            tensor = np.asarray(change["inertia"], dtype=float).reshape(3, 3)
            tag = _tag(masked, "inertia", inertial[1], end_inertial)
            if tag is None:
                raise ModelError(f"link {link!r} has no <inertia> to edit")
            index = {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2), "izz": (2, 2)}
            for key, ij in index.items():
                span = _attr_span(masked, tag[0], tag[1], key)
                if span is None:
                    raise ModelError(f"link {link!r}: <inertia> has no {key} attribute")
                edits.append((span[0], span[1], _fmt(tensor[ij])))
    out = xml
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    return out
