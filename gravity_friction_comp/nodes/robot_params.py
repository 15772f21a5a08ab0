"""Robot-description and payload parameters, shared by every node that builds a RobotModel.

Declared once (:data:`ROBOT_PARAMETERS`); turned into models by :func:`build_robot_models`.
No rclpy import at module level.

The gravity node and the bridge's simulated arm read the robot the same way, so a launch
file passes the same parameters to both (one place for each fact: masses come from the URDF).

Parameters:
    robot_description (string): URDF XML. Takes precedence over ``urdf_path``.
    urdf_path (string): URDF or ``.xacro`` file.
    xacro_args (string[]): ``name:=value`` mappings for a ``.xacro`` ``urdf_path``.
    gravity (double[3]): gravity vector in the base frame [m/s²] (tilted mounts).
    payload.mass (double): [kg], 0 for none.
    payload.shape (string): cylinder | box | sphere | point.
    payload.radius, payload.length (double): [m] cylinder/sphere dimensions.
    payload.size (double[3]): [m] box edge lengths.
    payload.com (double[3]): [m] centre of mass in the parent frame.
    payload.rpy (double[3]): [rad] orientation of the shape in the parent frame.
    payload.parent (string): joint (mimic joints too) or link the payload hangs from.
    payload.attached (bool): initial holding state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError, ModelError
from gravity_friction_comp.model.payload import PAYLOAD_SHAPES, Payload, check_payload_vectors
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.nodes.parameters import Param, declare

__all__ = [
    "MAX_GRAVITY",
    "ROBOT_PARAMETERS",
    "RobotModels",
    "build_robot_models",
    "declare_robot_parameters",
    "log_model_warnings",
    "payload_from_values",
    "robot_parameters",
]

#: Largest accepted |gravity| [m/s²]: 10 g. Earth's is 9.81 and no arm runs at 10 g; beyond
#: it a typo (``[0, 0, -981]``, ``1e308``) saturates or drops every output instead of failing.
MAX_GRAVITY = 100.0

DESCRIPTION_KEYS = ("robot_description", "urdf_path", "xacro_args", "gravity")

_ROBOT_PARAMS = (
    Param("robot_description", "", "URDF XML (takes precedence over urdf_path)"),
    Param("urdf_path", "", "URDF or .xacro file path"),
    # [""] not []: rclpy cannot infer a type from an empty list; empty entries are skipped.
    Param("xacro_args", [""], "xacro mappings name:=value (for a .xacro urdf_path)"),
    Param(
        "gravity",
        [0.0, 0.0, -9.81],
        f"gravity vector in the base frame, |g| <= {MAX_GRAVITY:g}",
        unit="m/s^2",
        low=-MAX_GRAVITY,
        high=MAX_GRAVITY,
    ),
    Param("payload.mass", 0.0, "payload mass, 0 for none", unit="kg", low=0.0),
    Param("payload.shape", "point", "payload shape: cylinder | box | sphere | point"),
    Param("payload.radius", 0.0, "cylinder/sphere radius", unit="m", low=0.0),
    Param("payload.length", 0.0, "cylinder length", unit="m", low=0.0),
    Param("payload.size", [0.0, 0.0, 0.0], "box edge lengths", unit="m"),
    Param("payload.com", [0.0, 0.0, 0.0], "payload centre of mass in the parent frame", unit="m"),
    Param("payload.rpy", [0.0, 0.0, 0.0], "payload orientation in the parent frame", unit="rad"),
    Param("payload.parent", "", "joint or link the payload is attached to"),
    Param("payload.attached", False, "initial holding state"),
)

#: name → :class:`~gravity_friction_comp.nodes.parameters.Param`, in declaration order
#: (``list(ROBOT_PARAMETERS)`` gives the names; validation is :func:`build_robot_models`'s).
ROBOT_PARAMETERS: dict[str, Param] = {p.name: p for p in _ROBOT_PARAMS}


def robot_parameters(read_only: bool = False) -> tuple[Param, ...]:
    """:data:`ROBOT_PARAMETERS` as a tuple; ``read_only=True`` for a node that reads them only
    at start-up (the bridge's simulated arm), so ``ros2 param set`` says they cannot change
    instead of accepting a value that is never used."""
    params = tuple(ROBOT_PARAMETERS.values())
    return tuple(dataclasses.replace(p, read_only=True) for p in params) if read_only else params


def declare_robot_parameters(node, read_only: bool = False) -> None:
    """Declare :data:`ROBOT_PARAMETERS` on ``node`` (an ``rclpy.node.Node``), read-only
    after start-up when ``read_only`` (see :func:`robot_parameters`)."""
    declare(node, robot_parameters(read_only))


def payload_from_values(values: Mapping[str, Any]) -> Payload | None:
    """The payload the ``payload.*`` parameters describe, or ``None`` for mass 0.

    Raises:
        ConfigError: invalid mass, shape, dimensions or missing parent (key named).
    """
    fields = {
        k[len("payload.") :]: v
        for k, v in values.items()
        if k.startswith("payload.") and k != "payload.attached"
    }
    check_payload_vectors(fields)  # whatever the mass: a bad com fails now, not later
    mass = fields.get("mass", 0.0)
    if isinstance(mass, (int, float)) and not isinstance(mass, bool) and mass == 0.0:
        # no payload; still refuse an unknown shape now rather than on the next mass change
        if fields.get("shape", "point") not in PAYLOAD_SHAPES:
            raise ConfigError(
                f"payload.shape {fields['shape']!r} unknown; valid choices: " + ", ".join(PAYLOAD_SHAPES),
                key="payload.shape",
                value=fields["shape"],
            )
        return None
    return Payload.from_params(fields)


@dataclass(frozen=True)
class RobotModels:
    """The models a node switches between without rebuilding.

    Attributes:
        bare: Robot without payload.
        loaded: Robot with the payload (``bare`` itself when there is no payload).
        source_key: The description values ``bare`` was built from (to skip rebuilds).
    """

    bare: RobotModel
    loaded: RobotModel
    source_key: tuple

    def select(self, holding: bool) -> RobotModel:
        """The model for the gripper's holding state."""
        return self.loaded if holding else self.bare


def _description_key(values: Mapping[str, Any]) -> tuple:
    return tuple(
        (k, tuple(v) if isinstance(v, (list, tuple)) else v)
        for k, v in ((k, values.get(k)) for k in DESCRIPTION_KEYS)
    )


def _xacro_mappings(raw) -> dict[str, str]:
    mappings = {}
    for item in raw or []:
        if not item:
            continue
        if ":=" not in item:
            raise ConfigError(f"xacro_args entry {item!r} is not name:=value", key="xacro_args", value=item)
        name, value = item.split(":=", 1)
        if not name.strip():  # ':=x' maps no argument: a typo, not a mapping
            raise ConfigError(
                f"xacro_args entry {item!r} has no name before :=", key="xacro_args", value=item
            )
        mappings[name.strip()] = value
    return mappings


def build_robot_models(
    values: Mapping[str, Any], previous: RobotModels | None = None, description: str | None = None
) -> RobotModels | None:
    """Build (or reuse) the bare and payload models from parameter values.

    Args:
        values: Parameter values (see the module docstring).
        previous: Models in force; the URDF is re-parsed only if its parameters changed.
        description: URDF XML received on the ``robot_description`` topic, used when neither
            parameter is set.

    Returns:
        :class:`RobotModels`, or ``None`` when no description is available yet.

    Raises:
        ConfigError: invalid gravity/payload values or a URDF that cannot be loaded (the
            reason names the problem; the node keeps its last good model).
    """
    key = _description_key(values) + (("topic", description),)
    gravity = values.get("gravity", (0.0, 0.0, -9.81))
    if len(gravity) != 3 or not all(
        isinstance(g, float) and g == g and abs(g) != float("inf") for g in gravity
    ):
        raise ConfigError(
            f"gravity must be 3 finite values [m/s^2], got {list(gravity)}",
            key="gravity",
            value=list(gravity),
        )
    if float(np.linalg.norm(np.asarray(gravity, dtype=float))) > MAX_GRAVITY:
        raise ConfigError(
            f"gravity must be within {MAX_GRAVITY:g} m/s^2 in magnitude (10 g), got {list(gravity)}",
            key="gravity",
            value=list(gravity),
        )
    if previous is not None and previous.source_key == key:
        bare = previous.bare
    else:
        source = values.get("robot_description") or values.get("urdf_path") or description
        if not source:
            return None
        try:
            bare = RobotModel.from_urdf(
                source, gravity=tuple(gravity), xacro_args=_xacro_mappings(values.get("xacro_args"))
            )
        except ModelError as error:
            raise ConfigError(
                f"cannot load the robot description: {error}", key="robot_description"
            ) from error
    payload = payload_from_values(values)
    loaded = bare.with_payload(payload) if payload is not None else bare
    if payload is not None:
        # A finite but absurd payload (com 1e300 m) makes every torque NaN: refuse it here
        # rather than drop every setpoint while holding.
        try:
            finite = bool(np.isfinite(loaded.gravity(np.zeros(loaded.n))).all())
        except InputError:
            finite = False
        if not finite:
            raise ConfigError(
                f"payload {payload} gives non-finite gravity torques",
                key="payload.com",
                value=list(payload.com),
            )
    return RobotModels(bare, loaded, key)


def log_model_warnings(logger: Any, models: RobotModels) -> None:
    """Log each of the model's load warnings (:attr:`RobotModel.warnings`: massless moving
    links, ~0 total mass) once, at WARN, on a node's ``logger``."""
    for text in models.bare.warnings:
        logger.warning(text)
