"""Bridge parameters → a validated BridgeConfig (same errors from YAML, launch or ``ros2 param set``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from gravity_friction_comp.errors import ConfigError

__all__ = [
    "PER_JOINT_DEFAULTS",
    "REQUIRED_PER_JOINT",
    "bridge_config_from_values",
    "fill_position_limits_from_urdf",
    "split_by_bus",
]

from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig, check_behavior, default_of
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import OVERRIDE_KEYS, UNSETTLED_RANGES, MotorLimits, motor_limits
from gravity_friction_comp.validation import integer, number

# --- parameters → BridgeConfig ------------------------------------------------------------------

#: Per-joint array parameters that must be given (no default).
REQUIRED_PER_JOINT = ("can_id", "master_id", "motor_type")

#: Per-joint array parameters of the bridge and their defaults when left empty, read from
#: the field defaults of :class:`JointMotorMap` and :class:`MotorConfig` (``None``: required,
#: or for ``damp_kd`` "use kd").
PER_JOINT_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        **dict.fromkeys(REQUIRED_PER_JOINT),
        **{k: default_of(JointMotorMap, k) for k in ("direction", "offset", "gear_ratio")},
        **{
            k: default_of(MotorConfig, k)
            for k in ("kp", "kd", "effort_limit", "damp_kd", "position_lower", "position_upper", "bus")
        },
    }
)


def _per_joint(key: str, values: Mapping[str, Any], n: int) -> list[Any]:
    raw = values.get(key)
    if raw is None or (isinstance(raw, (list, tuple)) and len(raw) == 0):
        default = PER_JOINT_DEFAULTS[key]
        if key in REQUIRED_PER_JOINT:
            raise ConfigError(f"{key} is required: one value per joint ({n})", key=key, value=raw)
        return [default] * n
    if isinstance(raw, (str, bytes)) or not isinstance(raw, (list, tuple)):
        raw = [raw]
    raw = list(raw)
    if len(raw) != n:
        raise ConfigError(f"{key} has {len(raw)} values for {n} joints", key=key, value=raw)
    return raw


def _as_float(key: str, value: Any) -> float:
    # ±inf is a value here ("no limit": effort_limit, position_lower/upper); NaN is not
    return number(key, value, finite=False)


def bridge_config_from_values(
    values: Mapping[str, Any], limits_override: Mapping[str, MotorLimits] | None = None
) -> BridgeConfig:
    """Validated :class:`BridgeConfig` from the node's parameter values.

    Args:
        values: ``joints`` (names), per-joint arrays ``can_id``, ``master_id``,
            ``motor_type`` (required), ``direction`` (±1), ``offset`` [rad], ``gear_ratio``,
            ``kp`` [N·m/rad], ``kd`` [N·m·s/rad], ``effort_limit`` [N·m], ``damp_kd``
            [N·m·s/rad], ``position_lower``/``position_upper`` [rad] (empty = defaults in
            :data:`PER_JOINT_DEFAULTS`), and ``rate_hz`` [Hz], ``command_timeout`` [s],
            ``timeout_behavior``, ``fault_behavior`` (:data:`BEHAVIORS`), ``stale_cycles``,
            ``can.bitrate`` [bit/s], ``can.fd`` (bool), ``can.data_bitrate`` [bit/s] (0 = nominal),
            and ``bus`` (per joint: the channel of the joint's bus, ``""`` = ``can.channel``;
            CAN ids need only be unique per bus), and the MIT ranges ``p_max`` [rad],
            ``v_max`` [rad/s], ``t_max`` [N·m], ``kp_max``, ``kd_max`` (per joint; empty or 0 =
            the motor table's; all five required for the types of
            :data:`~gravity_friction_comp.mit.motor_table.UNSETTLED_RANGES`).
        limits_override: Joint name → limits replacing the table's (e.g. read from the
            motor's registers).

    Raises:
        ConfigError: missing/inconsistent values; the key names the parameter. Among them:
            an unknown ``motor_type`` (names the joint and lists the valid types), a Robstride
            RS02/RS03/RS04 without its five ranges (names the joint, the conflict and both
            sources; key ``motor_type``), a CAN id
            used twice on one bus (names both joints and the bus), an FD data bitrate below
            the nominal one (key ``can.data_bitrate``).
    """
    joints = values.get("joints")
    if (
        not joints
        or not isinstance(joints, (list, tuple))
        or not all(isinstance(j, str) and j for j in joints)
    ):
        raise ConfigError(
            f"joints must be a non-empty list of joint names, got {joints!r}", key="joints", value=joints
        )
    n = len(joints)
    cols = {k: _per_joint(k, values, n) for k in PER_JOINT_DEFAULTS}
    # explicit MIT ranges per joint; empty, or 0 for a joint, = the motor table's
    ranges = {k: [None] * n if not values.get(k) else _per_joint(k, values, n) for k in OVERRIDE_KEYS}
    override = dict(limits_override or {})
    motors = []
    for i, name in enumerate(joints):
        mtype = cols["motor_type"][i]
        if not isinstance(mtype, str):
            raise ConfigError(
                f"motor_type entries must be strings, got {mtype!r}", key="motor_type", value=mtype
            )
        given: dict[str, Any] = {k: ranges[k][i] for k in OVERRIDE_KEYS if ranges[k][i] not in (None, 0, 0.0)}
        try:
            limits = override.get(name) or motor_limits(mtype, given)
        except ConfigError as error:
            raise ConfigError(f"joint {name}: {error}", key=error.key or "motor_type", value=mtype) from None
        unsettled = UNSETTLED_RANGES.get(mtype.strip().upper())
        missing = [k for k in OVERRIDE_KEYS if k not in given]
        if unsettled and missing:
            raise ConfigError(
                f"joint {name}: motor_type {mtype} has two sets of MIT-mode ranges in its vendor's "
                f"documentation: {unsettled}. Until a bench check settles it, give this joint's "
                f"ranges explicitly (missing: {', '.join(missing)}; docs/can_buses.md)",
                key="motor_type",
                value=mtype,
            )
        bus = cols["bus"][i]
        if not isinstance(bus, str):
            raise ConfigError(
                f"joint {name}: bus entries must be channel names (strings), got {bus!r}",
                key="bus",
                value=bus,
            )
        mapping = JointMotorMap(
            direction=integer("direction", cols["direction"][i]),
            offset=_as_float("offset", cols["offset"][i]),
            gear_ratio=_as_float("gear_ratio", cols["gear_ratio"][i]),
        )
        damp = cols["damp_kd"][i]
        lim = _as_float("effort_limit", cols["effort_limit"][i])
        motors.append(
            MotorConfig(
                name=name,
                can_id=integer("can_id", cols["can_id"][i]),
                master_id=integer("master_id", cols["master_id"][i]),
                limits=limits,
                mapping=mapping,
                kp=_as_float("kp", cols["kp"][i]),
                kd=_as_float("kd", cols["kd"][i]),
                effort_limit=lim,
                position_lower=_as_float("position_lower", cols["position_lower"][i]),
                position_upper=_as_float("position_upper", cols["position_upper"][i]),
                damp_kd=None
                if damp is None or (isinstance(damp, float) and math.isnan(damp))
                else _as_float("damp_kd", damp),
                bus=bus,
            )
        )
    kwargs: dict[str, Any] = {}
    for key, cast in (("rate_hz", _as_float), ("command_timeout", _as_float), ("stale_cycles", integer)):
        if values.get(key) is not None:
            kwargs[key] = cast(key, values[key])
    for key in ("timeout_behavior", "fault_behavior"):
        if values.get(key) is not None:
            kwargs[key] = check_behavior(key, values[key])
    if values.get("can.bitrate") is not None:
        kwargs["bitrate"] = integer("can.bitrate", values["can.bitrate"])
    if values.get("can.fd") is not None:
        kwargs["fd"] = values["can.fd"]  # type checked by BridgeConfig (check_fd)
    if values.get("can.data_bitrate") is not None:
        kwargs["data_bitrate"] = integer("can.data_bitrate", values["can.data_bitrate"])
    return BridgeConfig(motors=tuple(motors), **kwargs)


def split_by_bus(config: BridgeConfig) -> dict[str, BridgeConfig]:
    """One :class:`BridgeConfig` per bus of ``config`` (same rate, timeouts, CAN settings).

    For running one bridge per bus (e.g. two bridges in namespaces for a bimanual arm): each
    part holds the motors of one bus in joint order.

    Returns:
        Bus name (``""`` = ``can.channel``) → config, in order of first use.
    """
    return {bus: dataclasses.replace(config, motors=config.motors_on(bus)) for bus in config.buses}


def fill_position_limits_from_urdf(values: dict[str, Any], urdf_joints: Mapping[str, Any]) -> dict[str, str]:
    """Empty ``position_lower``/``position_upper`` in ``values`` → the URDF ``<limit>`` of each
    bridge joint (in place), for :func:`bridge_config_from_values`.

    Args:
        values: The node's parameter values (``joints``, ``position_lower``, ``position_upper``).
        urdf_joints: Joint name → :class:`~gravity_friction_comp.model.urdf.UrdfJoint`
            (``RobotModel.urdf_joints``); ``lower``/``upper`` [rad or m], ``∓inf`` for none.

    Returns:
        Joint name → why it stays unbounded (not in the URDF, or inverted URDF limits: a
        malformed file), for the caller to warn about; empty when nothing was filled.
    """
    joints = values.get("joints") or []
    if not isinstance(joints, (list, tuple)):
        return {}
    unbounded = {}
    for j in joints:
        if j not in urdf_joints:
            unbounded[j] = "not in the URDF"
        elif not urdf_joints[j].lower <= urdf_joints[j].upper:
            unbounded[j] = (
                f"URDF limits inverted: lower {urdf_joints[j].lower:g} > upper {urdf_joints[j].upper:g}"
            )
    filled = False
    for key, attribute, none in (
        ("position_lower", "lower", -math.inf),
        ("position_upper", "upper", math.inf),
    ):
        if not values.get(key):
            filled = True
            values[key] = [none if j in unbounded else getattr(urdf_joints[j], attribute) for j in joints]
    return unbounded if filled else {}
