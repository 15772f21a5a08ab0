"""Per-arm YAML: the friction part (i2rt ``friction_comp`` block, OpenArm friction tables).

Readers return plain keyword dicts for :class:`gravity_friction_comp.friction.models.FrictionModel`;
values are checked for shape and type here and for range by the model. Every key of the
file, at every level, must be known (:func:`check_arm_yaml_keys`, run by
:func:`load_arm_yaml`): a mistyped ``friction_cmp:`` is an error naming the file, the key and
the valid keys, not a silent "no friction". Top-level keys read: :data:`ARM_YAML_KEYS`
(``actuators`` by :func:`actuator_model_from_arm_yaml`);
keys accepted and not read: :data:`ARM_YAML_IGNORED_KEYS` (the sections of i2rt's per-arm and
gripper files, which are read unchanged, and ``identification``, the report
:func:`~gravity_friction_comp.ident.report.write_results` adds); their contents are not
checked. The one non-friction reader here, :func:`gravity_scale_from_arm_yaml`,
reads the per-joint ``gravity_scale`` (i2rt's ``gravity_comp_factor``) of the same files, by
the file's ``joints:`` list, for the gravity node's ``scale``.

``friction_comp`` block (i2rt PR #37 form, accepted unchanged, plus our extensions)::

    friction_comp:
      enabled: true              # or `enable:` (i2rt); bool; a block without it is off
      model: coulomb             # coulomb | bam
      breakaway: [1.2, 1.8, ...] # Coulomb level both directions [N·m], scalar or per joint
      breakaway_positive: [...]  # level for v > 0 [N·m] (overrides breakaway)
      breakaway_negative: [...]  # level magnitude for v < 0 [N·m] (overrides breakaway)
      eps: 0.005                 # tanh velocity scale [rad/s], scalar or per joint, > 0
      eps_setpoint: 0.005        # eps for a setpoint's velocity [rad/s] (unset: eps)
      viscous: [...]             # [N·m·s/rad]
      stribeck_breakaway: [...]  # static level above the Coulomb level [N·m]
      stribeck_velocity: 0.1     # [rad/s], > 0
      stribeck_exponent: 2.0     # [-], > 0
      offset: [...]              # constant torque [N·m], any sign (OpenArm Fo)
      bam_files: [m4.json, null, ...]  # per joint BAM JSON (relative to this YAML) or null

No block (or ``friction_comp:`` empty) gives no keywords, i.e. no friction term. A block
without ``enabled``/``enable`` is off (``enabled: False``), as the seed design ("off by
default, so existing users see no behavior change") and i2rt PR #37's reader
(``fc_raw.get("enable", False)``); an explicit keyword or node parameter still overrides it.
i2rt gripper files carry a top-level ``friction_comp_breakaway: <N·m>`` instead; it is read
as ``breakaway``. A file with ``LeaderArmParam``/``FollowerArmParam`` is read with
:func:`friction_params_from_openarm_yaml`.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError, DimensionError
from gravity_friction_comp.files import read_yaml
from gravity_friction_comp.friction.params import FRICTION_KEYWORDS
from gravity_friction_comp.model.actuator import ACTUATOR_BLOCK_KEYS, ActuatorModel
from gravity_friction_comp.validation import MAX_SCALE, known_keys, number, string_keys
from gravity_friction_comp.validation import joint_names as validated_names

__all__ = [
    "ARM_YAML_IGNORED_KEYS",
    "ARM_YAML_KEYS",
    "FRICTION_BLOCK_KEYS",
    "SHAPER_BLOCK_KEYS",
    "actuator_model_from_arm_yaml",
    "check_arm_yaml_keys",
    "gravity_scale_from_arm_yaml",
    "friction_params_from_arm_yaml",
    "friction_block_enable",
    "friction_params_from_openarm_yaml",
    "load_arm_yaml",
]

#: Keys valid inside the ``friction_comp`` block: the model's keywords (BAM parameter objects
#: excepted: YAML names files) plus i2rt's ``enable`` spelling.
FRICTION_BLOCK_KEYS = (
    "enabled",
    "enable",
    *(k for k in FRICTION_KEYWORDS if k not in ("enabled", "bam")),
)
_NUMERIC_KEYS = tuple(k for k in FRICTION_BLOCK_KEYS if k not in ("enabled", "enable", "model", "bam_files"))
#: Keys of the ``setpoint_shaper`` block (read by
#: :func:`~gravity_friction_comp.stage.shaper.shaper_limits_from_arm_yaml`): listed here so
#: that this module checks every section's keys in one place.
SHAPER_BLOCK_KEYS = ("max_velocity", "max_acceleration", "max_jerk")
_OPENARM_SECTIONS = {"leader": "LeaderArmParam", "follower": "FollowerArmParam"}
_OPENARM_KEYS = ("Fc", "k", "Fv", "Fo")
_OPENARM_IGNORED_KEYS = ("Kp", "Kd")  # OpenArm's gains: the bridge's kp/kd, not friction
#: Top-level keys of the per-arm YAML that the package reads.
ARM_YAML_KEYS = (
    "joints",
    "gravity_scale",
    "friction_comp",
    "friction_comp_breakaway",
    "actuators",
    "setpoint_shaper",
    *_OPENARM_SECTIONS.values(),
)
#: Top-level keys accepted and not read: i2rt v1.2.4 / PR #37 per-arm (``motor_list`` ...
#: ``grav_comp_kd``) and gripper (``last_joint_mount`` ... ``limiter``) sections, and the
#: identification report of :func:`~gravity_friction_comp.ident.report.write_results`.
ARM_YAML_IGNORED_KEYS = (
    "motor_list",
    "directions",
    "kp",
    "kd",
    "gravity_comp_factor",
    "coulomb_friction",
    "grav_comp_kd",
    "last_joint_mount",
    "motor_type",
    "motor_kp",
    "motor_kd",
    "motor_direction",
    "gripper_limits",
    "needs_calibration",
    "limiter",
    "identification",
)
#: OpenArm multiplies k by 0.1 inside tanh (openarm_teleop code): tanh(0.1·k·v) = tanh(v/eps).
_OPENARM_K_SCALE = 0.1


def load_arm_yaml(path: str | os.PathLike) -> dict[str, Any]:
    """Read a per-arm YAML file with ``yaml.safe_load``.

    Returns:
        The top-level mapping (``{}`` for an empty file).

    Raises:
        ConfigError: missing/unreadable/non-UTF-8 file, YAML syntax error, top level not
            a mapping (``key="arm_config"``, ``value`` = path), or an unknown key at any
            level (:func:`check_arm_yaml_keys`).
    """
    path = pathlib.Path(path)
    data = read_yaml(path, "arm_config")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"arm_config {path}: expected a mapping at the top level, got {type(data).__name__}",
            key="arm_config",
            value=str(path),
        )
    check_arm_yaml_keys(data, path)
    return data


def actuator_model_from_arm_yaml(
    data_or_path: Mapping[str, Any] | str | os.PathLike, robot: Any = None
) -> ActuatorModel:
    """:meth:`~gravity_friction_comp.model.actuator.ActuatorModel.from_arm_yaml` of a per-arm
    YAML file (read by :func:`load_arm_yaml`, every section's keys checked) or of its parsed
    mapping; ``robot``: the :class:`~gravity_friction_comp.model.robot_model.RobotModel` it
    belongs to, as there.

    Raises:
        ConfigError: the file's (:func:`load_arm_yaml`) or the block's errors.
        DimensionError: wrong list lengths in the block.
    """
    data = data_or_path if isinstance(data_or_path, Mapping) else load_arm_yaml(data_or_path)
    return ActuatorModel.from_arm_yaml(data, robot)


def check_arm_yaml_keys(data: Mapping[str, Any], file: str | os.PathLike | None = None) -> None:
    """Refuse an unknown key at any level of a per-arm YAML (module docstring).

    Args:
        data: The file's top-level mapping.
        file: Its path, named in the message.

    Raises:
        ConfigError: a non-string key, or an unknown key at the top level or in
            ``friction_comp``, ``actuators``, ``setpoint_shaper``, ``LeaderArmParam``/``FollowerArmParam``
            (message: file, key, closest valid key, valid keys; ``key`` = dotted path).
    """
    string_keys("arm_config", data)
    known_keys("", data, ARM_YAML_KEYS, file=file, ignored=ARM_YAML_IGNORED_KEYS)
    sections: list[tuple[str, Sequence[str], Sequence[str]]] = [
        ("friction_comp", FRICTION_BLOCK_KEYS, ()),
        ("actuators", ACTUATOR_BLOCK_KEYS, ()),
        ("setpoint_shaper", SHAPER_BLOCK_KEYS, ()),
    ]
    sections += [(s, _OPENARM_KEYS, _OPENARM_IGNORED_KEYS) for s in _OPENARM_SECTIONS.values()]
    for section, valid, ignored in sections:
        block = data.get(section)
        if isinstance(block, Mapping):  # anything else is the section reader's error
            string_keys(section, block)
            known_keys(section, block, valid, f"{section}.", file=file, ignored=ignored)


def friction_params_from_arm_yaml(
    data_or_path: Mapping[str, Any] | str | os.PathLike,
    n_joints: int | None = None,
    *,
    base_dir: str | os.PathLike | None = None,
    joint_names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Friction keywords for :class:`~gravity_friction_comp.friction.models.FrictionModel`.

    The file's top-level ``joints:`` list, when present, names the entries of the
    ``friction_comp`` block's per-joint lists (one per listed joint); with ``joint_names``
    those lists are returned in ``joint_names`` order (by name, never by position; the file
    may list more joints, e.g. both arms of a bimanual). Without ``joints:`` the lists are
    taken in the caller's joint order.

    Args:
        data_or_path: parsed YAML mapping or a path to the YAML file.
        n_joints: when given, per-joint lists must have this length (the length of
            ``joints:`` instead when the file has one and ``joint_names`` is given).
        base_dir: directory relative ``bam_files`` are resolved against (default: the
            YAML's directory for a path, else left relative).
        joint_names: the model's joints, in model order; every one must be in ``joints:``.

    Returns:
        Dict with only the keys present (``enable`` renamed ``enabled``, ``enabled: False``
        for a block without either; ``bam_files`` resolved to absolute path strings or
        ``None``). ``{}`` when there is no block.

    Raises:
        ConfigError: block not a mapping, unknown key in the block (valid keys listed),
            ``enable`` and ``enabled`` both given, non-bool ``enabled``, non-numeric values,
            non-string ``model``, bad ``bam_files`` entries, both the block and
            ``friction_comp_breakaway``, or both OpenArm sections; ``joints:`` not a list of
            unique non-empty names, or a name of ``joint_names`` it lacks (key ``joints``).
        DimensionError: a list whose length is not ``n_joints`` (key ``friction_comp.<key>``).
    """
    if isinstance(data_or_path, Mapping):
        data = data_or_path
    else:
        data = load_arm_yaml(data_or_path)
        if base_dir is None:
            base_dir = pathlib.Path(data_or_path).resolve().parent
    if "friction_comp" not in data:
        if "friction_comp_breakaway" in data:  # i2rt gripper files: one joint
            return {
                "breakaway": _numeric("friction_comp_breakaway", data["friction_comp_breakaway"], n_joints)
            }
        present = [s for s in _OPENARM_SECTIONS.values() if s in data]
        if present:
            return friction_params_from_openarm_yaml(data, n_joints=n_joints)
        return {}
    if "friction_comp_breakaway" in data:
        raise ConfigError(
            "give either the friction_comp block or friction_comp_breakaway, not both",
            key="friction_comp_breakaway",
            value=data["friction_comp_breakaway"],
        )
    block = data["friction_comp"]
    if block is None:
        return {}
    string_keys("friction_comp", block)
    order: list[int] | None = None  # block list index of each of joint_names
    if data.get("joints") is not None:
        listed = validated_names("joints", data["joints"])
        if joint_names is not None:
            wanted = validated_names("joint_names", joint_names)
            missing = [j for j in wanted if j not in listed]
            if missing:
                raise ConfigError(
                    f"joints: {missing} not in the file's joints {list(listed)}",
                    key="joints",
                    value=list(listed),
                )
            order = [listed.index(j) for j in wanted]
            n_joints = len(listed)
    known_keys("friction_comp", block, FRICTION_BLOCK_KEYS, "friction_comp.")
    out: dict[str, Any] = {}
    if "enable" in block and "enabled" in block:
        raise ConfigError(
            "friction_comp: give either enabled or enable (synonyms), not both",
            key="friction_comp.enabled",
            value=block["enabled"],
        )
    for key in ("enabled", "enable"):
        if key in block:
            value = block[key]
            if not isinstance(value, bool):
                raise ConfigError(
                    f"friction_comp.{key}: expected true or false, got {value!r}",
                    key=f"friction_comp.{key}",
                    value=value,
                )
            out["enabled"] = value
    out.setdefault("enabled", False)  # a block that does not say so is off (module docstring)
    if "model" in block:
        if not isinstance(block["model"], str):
            raise ConfigError(
                f"friction_comp.model: expected a string, got {block['model']!r}",
                key="friction_comp.model",
                value=block["model"],
            )
        out["model"] = block["model"]
    for key in _NUMERIC_KEYS:
        if key in block and block[key] is not None:
            out[key] = _numeric(f"friction_comp.{key}", block[key], n_joints)
    if block.get("bam_files") is not None:
        out["bam_files"] = _bam_paths(block["bam_files"], n_joints, base_dir)
    if order is not None:  # the file's joint order -> the model's
        out = {k: [v[i] for i in order] if isinstance(v, list) and v else v for k, v in out.items()}
    return out


def friction_block_enable(data_or_path: Mapping[str, Any] | str | os.PathLike) -> bool | None:
    """The ``enabled``/``enable`` value of a per-arm YAML's ``friction_comp`` block as written.

    Returns:
        The bool given, or ``None`` when there is no block (or an empty one) or the block does
        not say (then :func:`friction_params_from_arm_yaml` reads it as off); for logging why.

    Raises:
        ConfigError: as :func:`load_arm_yaml` for a path.
    """
    data = data_or_path if isinstance(data_or_path, Mapping) else load_arm_yaml(data_or_path)
    block = data.get("friction_comp")
    if not isinstance(block, Mapping):
        return None
    for key in ("enabled", "enable"):
        if isinstance(block.get(key), bool):
            return block[key]
    return None


def friction_params_from_openarm_yaml(
    data_or_path: Mapping[str, Any] | str | os.PathLike,
    role: str | None = None,
    *,
    n_joints: int | None = None,
) -> dict[str, Any]:
    """Import OpenArm teleop friction (``leader.yaml`` / ``follower.yaml``), meaning preserved.

    OpenArm's code (enactic/openarm_teleop) computes per joint
    ``Fo + Fv·v + Fc·tanh(0.1·k·v)`` (the YAML comment's ``tanh(k·ω)`` omits the 0.1), which
    is our coulomb model with ``breakaway = Fc``, ``eps = 1/(0.1·k)`` [rad/s] per joint,
    ``viscous = Fv``, ``offset = Fo``. ``k = 0`` (tanh of 0) maps to ``breakaway = 0``.
    ``Kp``/``Kd`` are ignored; any other key is an error.

    Args:
        data_or_path: parsed YAML mapping or path.
        role: ``"leader"`` (``LeaderArmParam``), ``"follower"`` (``FollowerArmParam``) or
            ``None`` to use the only section present.
        n_joints: when given, the lists must have this length.

    Returns:
        ``{"enabled": True, "model": "coulomb", "breakaway", "eps", "viscous", "offset"}``.

    Raises:
        ConfigError: unknown role (choices listed), section missing or ambiguous, missing
            ``Fc``/``k``/``Fv``/``Fo``, non-numeric values, ``k < 0``, unequal lengths.
        DimensionError: lengths differ from ``n_joints``.
    """
    data = data_or_path if isinstance(data_or_path, Mapping) else load_arm_yaml(data_or_path)
    if role is None:
        present = [s for s in _OPENARM_SECTIONS.values() if s in data]
        if len(present) != 1:
            raise ConfigError(
                "OpenArm friction: expected exactly one of LeaderArmParam / FollowerArmParam"
                f" (found {present or 'none'}); pass role='leader' or 'follower'",
                key="role",
                value=present,
            )
        section = present[0]
    else:
        if role not in _OPENARM_SECTIONS:
            raise ConfigError(
                f"role: unknown OpenArm role {role!r}; valid choices: " + ", ".join(_OPENARM_SECTIONS),
                key="role",
                value=role,
            )
        section = _OPENARM_SECTIONS[role]
        if section not in data:
            raise ConfigError(f"OpenArm friction: section {section} not found", key=section)
    table = string_keys(section, data[section])
    known_keys(section, table, _OPENARM_KEYS, f"{section}.", ignored=_OPENARM_IGNORED_KEYS)
    lists = {}
    for key in ("Fc", "k", "Fv", "Fo"):
        if key not in table:
            raise ConfigError(f"{section}: missing {key}", key=f"{section}.{key}")
        value = table[key]
        if not isinstance(value, list) or not value:
            raise ConfigError(
                f"{section}.{key}: expected a list of numbers, got {value!r}",
                key=f"{section}.{key}",
                value=value,
            )
        # finite: NaN would pass every comparison below and switch the joint's friction off
        values = [number(f"{section}.{key}", x, text=True) for x in value]
        lists[key] = values
    n = len(lists["Fc"])
    for key, value in lists.items():
        if len(value) != n:
            raise DimensionError(f"{section}.{key}", n, len(value))
        if n_joints is not None and len(value) != n_joints:
            raise DimensionError(f"{section}.{key}", n_joints, len(value))
    if any(k < 0.0 for k in lists["k"]):
        raise ConfigError(
            f"{section}.k: tanh steepness must be >= 0, got {lists['k']}",
            key=f"{section}.k",
            value=lists["k"],
        )
    breakaway = [fc if k > 0.0 else 0.0 for fc, k in zip(lists["Fc"], lists["k"])]
    eps = [1.0 / (_OPENARM_K_SCALE * k) if k > 0.0 else 0.01 for k in lists["k"]]
    return {
        "enabled": True,
        "model": "coulomb",
        "breakaway": breakaway,
        "eps": eps,
        "viscous": lists["Fv"],
        "offset": lists["Fo"],
    }


def gravity_scale_from_arm_yaml(
    data_or_path: Mapping[str, Any] | str | os.PathLike, joint_names: Sequence[str]
) -> np.ndarray | None:
    """The per-joint gravity scale of a per-arm YAML, in ``joint_names`` order.

    ``gravity_scale:`` is one number (every joint) or a list. With a top-level ``joints:``
    list the entries pair with its names (same length) and model joints the file does not
    list keep 1.0; without one the list is in ``joint_names`` order and has one entry each.

    Args:
        data_or_path: parsed YAML mapping or a path to the YAML file.
        joint_names: (n,) the model's joint names, model order.

    Returns:
        (n,) float array [-], or ``None`` when the file has no ``gravity_scale`` (or null).

    Raises:
        ConfigError: ``joints:`` not a list of distinct strings, a joint of the file that
            ``joint_names`` lacks (valid names listed), an entry that is not a finite number
            or beyond :data:`~gravity_friction_comp.validation.MAX_SCALE` in magnitude.
        DimensionError: ``gravity_scale`` whose length is not that of ``joints:`` (or n).
    """
    data = data_or_path if isinstance(data_or_path, Mapping) else load_arm_yaml(data_or_path)
    value = data.get("gravity_scale")
    if value is None:
        return None
    names = list(joint_names)
    listed = data.get("joints")
    if listed is None:
        listed = names
    elif not isinstance(listed, list) or not all(isinstance(x, str) for x in listed):
        raise ConfigError(
            f"joints: expected a list of joint names, got {listed!r}", key="joints", value=listed
        )
    elif len(set(listed)) != len(listed):
        raise ConfigError(f"joints: a name repeats in {listed}", key="joints", value=listed)
    unknown = [x for x in listed if x not in names]
    if unknown:
        raise ConfigError(
            f"gravity_scale: joints {unknown} are not in the model; valid names: " + ", ".join(names),
            key="gravity_scale",
            value=unknown,
        )
    factors = _numeric("gravity_scale", value, len(listed))
    if not isinstance(factors, list):
        factors = [factors] * len(listed)
    elif len(factors) != len(listed):  # _numeric lets an empty list through
        raise DimensionError("gravity_scale", len(listed), len(factors))
    beyond = [x for x in factors if abs(x) > MAX_SCALE]
    if beyond:
        raise ConfigError(
            f"gravity_scale: values must be within [-{MAX_SCALE:g}, {MAX_SCALE:g}], got {beyond}",
            key="gravity_scale",
            value=beyond,
        )
    out = np.ones(len(names))
    for name, factor in zip(listed, factors):
        out[names.index(name)] = factor
    return out


def _numeric(key: str, value: Any, n_joints: int | None) -> float | list[float]:
    """A number or a list of numbers (length ``n_joints`` when given) as float(s)."""
    if isinstance(value, list):
        if value and n_joints is not None and len(value) != n_joints:
            raise DimensionError(key, n_joints, len(value))
        return [number(key, x, text=True) for x in value]
    return number(key, value, text=True)


def _bam_paths(value: Any, n_joints: int | None, base_dir: str | os.PathLike | None) -> list[str | None]:
    key = "friction_comp.bam_files"
    if not isinstance(value, list):
        raise ConfigError(
            f"{key}: expected a list with one path (or null) per joint, got {value!r}", key=key, value=value
        )
    if n_joints is not None and len(value) != n_joints:
        raise DimensionError(key, n_joints, len(value))
    out: list[str | None] = []
    for item in value:
        if item is None or item == "":
            out.append(None)
        elif isinstance(item, str):
            p = pathlib.Path(item)
            if base_dir is not None and not p.is_absolute():
                p = pathlib.Path(base_dir) / p
            out.append(str(p))
        else:
            raise ConfigError(f"{key}: expected paths or null, got {item!r}", key=key, value=item)
    return out
