"""Payload (held object) as a rigid body attached to a joint or link of the robot.

A :class:`Payload` is the mass, centre of mass and rotational inertia of what the arm holds,
expressed in the frame of its parent (a joint's frame, including a mimic joint's, or a
link/frame of the URDF). :meth:`gravity_friction_comp.model.robot_model.RobotModel.with_payload`
adds it to the parent body. Shape constructors use textbook solid-body inertias.

Plausibility limits (generous, so no gripper payload is refused; they keep the gravity torque
``m·g·|com|`` far from float overflow): mass ≤ :data:`PAYLOAD_MAX_MASS` (100 t), dimensions
and ``|com|`` ≤ :data:`PAYLOAD_MAX_LENGTH` (100 m), principal moments ≤
:data:`PAYLOAD_MAX_INERTIA` (= max mass × max length²).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pinocchio as pin

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.validation import number, string_keys

__all__ = [
    "PAYLOAD_MAX_INERTIA",
    "PAYLOAD_MAX_LENGTH",
    "PAYLOAD_MAX_MASS",
    "PAYLOAD_SHAPES",
    "Payload",
    "check_payload_vectors",
]

#: Shapes accepted by :meth:`Payload.from_params` (``payload.shape`` parameter).
PAYLOAD_SHAPES = ("cylinder", "box", "sphere", "point")

#: Keys accepted by :meth:`Payload.from_params`.
PAYLOAD_PARAM_KEYS = ("mass", "shape", "radius", "length", "size", "com", "rpy", "parent")

#: Largest accepted payload mass [kg]: 100 t is not held by a gripper.
PAYLOAD_MAX_MASS = 1e5
#: Largest accepted payload dimension (radius, length, box side) and ``|com|`` [m]: a 100 m
#: offset is not a gripper payload.
PAYLOAD_MAX_LENGTH = 100.0
#: Largest accepted principal moment of inertia [kg·m²] (max mass × max length²).
PAYLOAD_MAX_INERTIA = PAYLOAD_MAX_MASS * PAYLOAD_MAX_LENGTH**2

_INERTIA_TOL = 1e-12  # [kg·m²] slack for symmetry / positivity / triangle checks


def _vector3(value: Any, key: str) -> np.ndarray:
    try:
        arr = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float
        raise ConfigError(f"{key} must be 3 numbers, got {value!r}", key=key, value=value) from None
    if arr.shape != (3,):
        raise ConfigError(f"{key} must be 3 numbers, got {arr.size}", key=key, value=value)
    if not np.all(np.isfinite(arr)):
        raise ConfigError(f"{key} must be finite, got {value!r}", key=key, value=value)
    return arr


def _com(value: Any, key: str) -> np.ndarray:
    com = _vector3(value, key)
    if math.hypot(*com) > PAYLOAD_MAX_LENGTH:  # hypot: no overflow for huge entries
        raise ConfigError(
            f"{key} must be within {PAYLOAD_MAX_LENGTH:g} m of the parent frame "
            f"(not a gripper payload), got {value!r}",
            key=key,
            value=value,
        )
    return com


def check_payload_vectors(params: Mapping[str, Any], prefix: str = "payload.") -> None:
    """Check the vector parameters ``com``, ``rpy`` and ``size`` (those present) whatever the
    mass, so ``payload.com [0.0, 0.0]`` fails when it is set, not on a later mass change.

    Args:
        params: ``{"com": [...], ...}`` (the prefix stripped), other keys ignored.
        prefix: Prepended to the key in error messages.

    Raises:
        ConfigError: not 3 finite numbers, ``|com|`` beyond :data:`PAYLOAD_MAX_LENGTH`, or a
            ``size`` edge negative or beyond it (0 is allowed here: the unused default);
            ``key`` = ``prefix + key``.
    """
    if "com" in params:
        _com(params["com"], prefix + "com")
    if "rpy" in params:
        _vector3(params["rpy"], prefix + "rpy")
    if "size" in params:
        size = _vector3(params["size"], prefix + "size")
        if np.any(size < 0.0) or np.any(size > PAYLOAD_MAX_LENGTH):
            raise ConfigError(
                f"{prefix}size edges must be within [0, {PAYLOAD_MAX_LENGTH:g}] m, got {size.tolist()}",
                key=prefix + "size",
                value=params["size"],
            )


def _positive(value: Any, key: str) -> float:
    x = number(key, value, positive=True, unit="[m]", text=True)
    if x > PAYLOAD_MAX_LENGTH:
        raise ConfigError(
            f"{key} must be <= {PAYLOAD_MAX_LENGTH:g} [m] (not a gripper payload), got {value!r}",
            key=key,
            value=value,
        )
    return x


def _mass(value: Any, key: str) -> float:
    m = number(key, value, nonneg=True, unit="[kg]", text=True)
    if m > PAYLOAD_MAX_MASS:
        raise ConfigError(
            f"{key} must be <= {PAYLOAD_MAX_MASS:g} [kg] (not a gripper payload), got {value!r}",
            key=key,
            value=value,
        )
    return m


def _parent(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"{key} must be a non-empty joint or link name, got {value!r}", key=key, value=value
        )
    return value.strip()


def _rotate(inertia_principal: np.ndarray, rpy: Any, key: str) -> np.ndarray:
    rot = pin.rpy.rpyToMatrix(_vector3(rpy, key))  # URDF convention: R = Rz(y) Ry(p) Rx(r)
    return rot @ inertia_principal @ rot.T


@dataclass(frozen=True, eq=False)
class Payload:
    """A rigid payload attached to a joint or link.

    Attributes:
        mass: Mass [kg], finite, in [0, :data:`PAYLOAD_MAX_MASS`].
        com: Centre of mass (3,) [m] in the parent frame (read-only array), ``|com|`` ≤
            :data:`PAYLOAD_MAX_LENGTH`.
        inertia: Rotational inertia (3, 3) [kg·m²] about the centre of mass, axes of the parent
            frame (read-only array); symmetric, positive semi-definite, principal moments
            satisfying the triangle inequality (physical consistency) and ≤
            :data:`PAYLOAD_MAX_INERTIA`.
        parent: Name of a joint (mimic joints included) or link/frame of the robot; the parent
            frame is that joint's frame (= its child link frame) or that link/frame.
        shape: ``"cylinder"``, ``"box"``, ``"sphere"``, ``"point"`` or ``"custom"``; for
            messages only.

    Raises:
        ConfigError: On construction with a non-finite, negative or implausible mass, a com
            that is not 3 finite numbers or lies beyond the plausibility limit, a non-physical
            or implausible inertia, or an empty parent (``key`` names the field).
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    parent: str
    shape: str = field(default="custom")

    def __post_init__(self) -> None:
        mass = _mass(self.mass, "mass")
        com = _com(self.com, "com")
        try:
            inertia = np.array(self.inertia, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(
                f"inertia must be a 3x3 matrix [kg·m²], got {self.inertia!r}",
                key="inertia",
                value=self.inertia,
            ) from None
        if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
            raise ConfigError(
                "inertia must be a finite 3x3 matrix [kg·m²]", key="inertia", value=self.inertia
            )
        if not np.allclose(inertia, inertia.T, rtol=0.0, atol=_INERTIA_TOL):
            raise ConfigError("inertia must be symmetric", key="inertia", value=self.inertia)
        inertia = 0.5 * (inertia + inertia.T)
        moments = np.linalg.eigvalsh(inertia)
        if moments[0] < -_INERTIA_TOL or moments[2] > moments[0] + moments[1] + _INERTIA_TOL:
            raise ConfigError(
                f"inertia is not physical: principal moments {moments.tolist()} must be >= 0 "
                "and satisfy the triangle inequality",
                key="inertia",
                value=self.inertia,
            )
        if moments[2] > PAYLOAD_MAX_INERTIA:
            raise ConfigError(
                f"inertia: principal moment {moments[2]:g} kg·m² exceeds "
                f"{PAYLOAD_MAX_INERTIA:g} (not a gripper payload)",
                key="inertia",
                value=self.inertia,
            )
        com.setflags(write=False)
        inertia.setflags(write=False)
        object.__setattr__(self, "mass", mass)
        object.__setattr__(self, "com", com)
        object.__setattr__(self, "inertia", inertia)
        object.__setattr__(self, "parent", _parent(self.parent, "parent"))
        object.__setattr__(self, "shape", str(self.shape))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Payload):
            return NotImplemented
        return (
            self.mass == other.mass
            and self.parent == other.parent
            and self.shape == other.shape
            and np.array_equal(self.com, other.com)
            and np.array_equal(self.inertia, other.inertia)
        )

    def __hash__(self) -> int:
        return hash((self.mass, self.parent, self.shape, self.com.tobytes(), self.inertia.tobytes()))

    def __repr__(self) -> str:
        return (
            f"Payload(mass={self.mass!r}, com={self.com.tolist()!r}, "
            f"inertia={self.inertia.tolist()!r}, parent={self.parent!r}, shape={self.shape!r})"
        )

    def spatial_inertia(self) -> pin.Inertia:
        """The payload as a ``pin.Inertia`` in the parent frame (mass, com, inertia at com)."""
        return pin.Inertia(self.mass, np.array(self.com), np.array(self.inertia))

    # ---- shapes -----------------------------------------------------------------------
    @classmethod
    def cylinder(
        cls,
        mass: float,
        radius: float,
        length: float,
        *,
        com: Sequence[float] = (0.0, 0.0, 0.0),
        parent: str,
        rpy: Sequence[float] = (0.0, 0.0, 0.0),
    ) -> Payload:
        """Solid cylinder, axis along its local z, rotated into the parent frame by ``rpy``.

        Args:
            mass: [kg] in [0, 1e5]. radius, length: [m] in (0, 100]. com: (3,) [m] in the
                parent frame, ``|com|`` ≤ 100.
            parent: joint or link name. rpy: (3,) [rad] roll-pitch-yaw (URDF convention) of
                the cylinder's axes in the parent frame.

        Inertia about the com: Ixx = Iyy = m(3r² + L²)/12, Izz = m r²/2 (textbook solid
        cylinder).

        Raises:
            ConfigError: Invalid value (key names the argument).
        """
        m = _mass(mass, "mass")
        r = _positive(radius, "radius")
        h = _positive(length, "length")
        ixx = m * (3.0 * r * r + h * h) / 12.0
        principal = np.diag([ixx, ixx, 0.5 * m * r * r])
        return cls(m, _vector3(com, "com"), _rotate(principal, rpy, "rpy"), parent, "cylinder")

    @classmethod
    def box(
        cls,
        mass: float,
        size: Sequence[float],
        *,
        com: Sequence[float] = (0.0, 0.0, 0.0),
        parent: str,
        rpy: Sequence[float] = (0.0, 0.0, 0.0),
    ) -> Payload:
        """Solid box of edge lengths ``size`` = (x, y, z) [m] in (0, 100], rotated by ``rpy``
        [rad]; mass [kg] in [0, 1e5], ``|com|`` ≤ 100 m.

        Inertia about the com: Ixx = m(y² + z²)/12 and permutations (textbook solid cuboid).

        Raises:
            ConfigError: Invalid value (key names the argument).
        """
        m = _mass(mass, "mass")
        sx, sy, sz = _vector3(size, "size")
        for edge in (sx, sy, sz):
            _positive(float(edge), "size")
        principal = np.diag(
            [m * (sy * sy + sz * sz) / 12.0, m * (sx * sx + sz * sz) / 12.0, m * (sx * sx + sy * sy) / 12.0]
        )
        return cls(m, _vector3(com, "com"), _rotate(principal, rpy, "rpy"), parent, "box")

    @classmethod
    def sphere(
        cls,
        mass: float,
        radius: float,
        *,
        com: Sequence[float] = (0.0, 0.0, 0.0),
        parent: str,
        rpy: Sequence[float] = (0.0, 0.0, 0.0),
    ) -> Payload:
        """Solid sphere; inertia 2/5·m·r² on every axis (``rpy`` accepted, has no effect).

        Mass [kg] in [0, 1e5], radius [m] in (0, 100], ``|com|`` ≤ 100 m.

        Raises:
            ConfigError: Invalid value (key names the argument).
        """
        m = _mass(mass, "mass")
        r = _positive(radius, "radius")
        _vector3(rpy, "rpy")
        return cls(m, _vector3(com, "com"), np.eye(3) * 0.4 * m * r * r, parent, "sphere")

    @classmethod
    def point(
        cls,
        mass: float,
        *,
        com: Sequence[float] = (0.0, 0.0, 0.0),
        parent: str,
    ) -> Payload:
        """Point mass (zero rotational inertia) at ``com`` [m] in the parent frame
        (mass [kg] in [0, 1e5], ``|com|`` ≤ 100 m).

        Raises:
            ConfigError: Invalid value (key names the argument).
        """
        return cls(_mass(mass, "mass"), _vector3(com, "com"), np.zeros((3, 3)), parent, "point")

    @classmethod
    def from_params(cls, params: Mapping[str, Any], *, prefix: str = "payload.") -> Payload:
        """Build from ROS-style parameters (``payload.<key>`` with the prefix stripped).

        Keys: ``mass`` [kg] and ``parent`` (required); ``shape`` in :data:`PAYLOAD_SHAPES`
        (default ``"point"``); ``radius`` [m] (cylinder, sphere), ``length`` [m] (cylinder),
        ``size`` (3,) [m] (box); ``com`` (3,) [m] (default origin); ``rpy`` (3,) [rad] (default
        0). Dimensions that the shape does not use are ignored, so a node may declare all of
        them with defaults.

        Values obey the plausibility limits of the module (mass ≤ 1e5 kg, dimensions and
        ``|com|`` ≤ 100 m).

        Args:
            params: Mapping from the keys above (strings) to values (numbers, sequences, str).
            prefix: Prepended to the key in error messages (``"payload.mass"``).

        Raises:
            ConfigError: ``params`` not a mapping or with a non-string key (``key`` is the
                prefix without its dot, e.g. ``"payload"``), unknown key (lists the valid
                keys), missing required key, unknown shape (lists the valid shapes) or invalid
                value; ``key`` is ``prefix + key``.
        """
        string_keys(prefix.rstrip(".") or "payload", params)
        unknown = sorted(set(params) - set(PAYLOAD_PARAM_KEYS))
        if unknown:
            raise ConfigError(
                f"unknown payload parameter(s) {', '.join(prefix + k for k in unknown)}; "
                f"valid: {', '.join(prefix + k for k in PAYLOAD_PARAM_KEYS)}",
                key=prefix + unknown[0],
                value=params[unknown[0]],
            )

        def need(key: str) -> Any:
            if key not in params or params[key] is None:
                raise ConfigError(f"missing parameter {prefix + key}", key=prefix + key)
            return params[key]

        shape = params.get("shape", "point")
        if shape not in PAYLOAD_SHAPES:
            raise ConfigError(
                f"{prefix}shape must be one of {', '.join(PAYLOAD_SHAPES)}, got {shape!r}",
                key=prefix + "shape",
                value=shape,
            )
        com = params.get("com", (0.0, 0.0, 0.0))
        rpy = params.get("rpy", (0.0, 0.0, 0.0))
        try:
            if shape == "cylinder":
                return cls.cylinder(
                    need("mass"), need("radius"), need("length"), com=com, parent=need("parent"), rpy=rpy
                )
            if shape == "box":
                return cls.box(need("mass"), need("size"), com=com, parent=need("parent"), rpy=rpy)
            if shape == "sphere":
                return cls.sphere(need("mass"), need("radius"), com=com, parent=need("parent"), rpy=rpy)
            _vector3(rpy, "rpy")
            return cls.point(need("mass"), com=com, parent=need("parent"))
        except ConfigError as exc:
            if exc.key is not None and not exc.key.startswith(prefix):
                raise ConfigError(
                    str(exc).replace(exc.key, prefix + exc.key, 1), key=prefix + exc.key, value=exc.value
                ) from None
            raise
