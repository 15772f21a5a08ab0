"""What ``arm.launch.py mode:=free_drive`` changes: parameter overrides of the bridge, the friction
stage and the free_drive node (pure functions, no rclpy, no launch import; tested directly).

Free drive reuses the follow chain unchanged: the ``free_drive`` node publishes
``joint_setpoint`` from the measured ``joint_states`` (the player, if any, is remapped to
``follow_setpoint`` for the runtime switch), the friction stage takes its velocity from
``joint_states`` (``velocity_source: measured``) with a deadband of at least
:data:`MIN_FREE_DRIVE_DEADBAND` and the arm profile's stiction dither
(``free_drive.dither``, off without one) and friction ``scale`` (``free_drive.friction_scale``:
below the true kinetic friction, so a pushed joint stops), and the bridge runs kp = 0 with
``kd_scale`` × its file's kd. The profile gives dither and scale per bridge joint (motor-map
order); the friction node reads its lists in its own ``joints`` order, so they are handed
over by joint name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from gravity_friction_comp.errors import ConfigError, DimensionError
from gravity_friction_comp.validation import per_joint

__all__ = ["FREE_DRIVE_STALE_PERIODS", "MIN_FREE_DRIVE_DEADBAND", "free_drive_overrides"]

#: Bridge periods of age after which free drive takes a measurement as stale (the free_drive
#: node's ``stale_timeout`` = this / the bridge's ``rate_hz``: 0.05 s at the default 500 Hz,
#: 0.025 s at 1 kHz), so the limit follows how often the bridge measures.
FREE_DRIVE_STALE_PERIODS = 25

#: [rad/s] smallest friction deadband in free drive: above the velocity quantum of every
#: motor table entry's feedback at rest (a 12-bit field of ±45 rad/s: 0.022 rad/s per code,
#: so a resting joint may read ±0.011) would otherwise feed friction back at rest.
MIN_FREE_DRIVE_DEADBAND = 0.02


def free_drive_overrides(
    bridge_values: Mapping[str, Any],
    model_joints: Sequence[str],
    fixed_positions: Mapping[str, float],
    *,
    kd_scale: float,
    friction_deadband: float,
    rate_hz: float,
    dither: Sequence[float] = (),
    friction_scale: Sequence[float] = (),
    friction_joints: Sequence[str] = (),
) -> tuple[dict, dict, dict]:
    """``(bridge, friction, free_drive)`` parameter overrides for free drive.

    Args:
        bridge_values: The motor map's parameters (``joints``, ``kp``, ``kd``, optional
            ``rate_hz`` [Hz]: the free_drive node's ``stale_timeout`` is
            :data:`FREE_DRIVE_STALE_PERIODS` of its periods; default the bridge's default rate).
        model_joints: Every joint of the gravity model (the setpoint must carry them all).
        fixed_positions: Position [rad] of each model joint the bridge does not measure.
        kd_scale: Free-drive kd = kd_scale × the motor map's kd (> 0, ≤ 1).
        friction_deadband: The friction file's deadband [rad/s]; raised to
            :data:`MIN_FREE_DRIVE_DEADBAND`.
        rate_hz: The free_drive node's ``rate_hz`` (0: on each input; lockstep: the tick rate).
        dither: Stiction dither per bridge joint (the profile's ``free_drive.dither``);
            empty: the friction file's ``dither`` is left as it is (default off).
        friction_scale: The friction stage's ``scale`` per bridge joint (the profile's
            ``free_drive.friction_scale``); empty: the friction file's ``scale``.
        friction_joints: The friction node's ``joints`` (the order its ``dither`` and
            ``scale`` lists are read in); empty: the bridge's. ``dither``/``scale`` are
            passed by joint name in this order; a friction joint the bridge does not
            drive gets dither 0 (off) and scale 1.

    Raises:
        ConfigError: kd_scale out of range (key ``free_drive_kd_scale``); the bridge's
            ``rate_hz`` not a number > 0.
        DimensionError: dither or friction_scale not one value per bridge joint.
    """
    if not (math.isfinite(kd_scale) and 0.0 < kd_scale <= 1.0):
        raise ConfigError(
            f"free_drive_kd_scale must be in (0, 1], got {kd_scale!r}",
            key="free_drive_kd_scale",
            value=kd_scale,
        )
    joints = [j for j in bridge_values["joints"] if j]
    # one number = every joint, as the bridge takes it (nodes.parameters.fill_from_scalar)
    kp, kd = (per_joint(key, bridge_values[key], len(joints)).tolist() for key in ("kp", "kd"))
    free_kd = [kd_scale * k for k in kd]
    fixed = [j for j in model_joints if j not in joints]
    bridge = {"kp": [0.0] * len(joints), "kd": free_kd}
    friction = {
        "velocity_source": "measured",
        "velocity_deadband": max(float(friction_deadband), MIN_FREE_DRIVE_DEADBAND),
    }
    order = [j for j in friction_joints if j] or joints
    for key, values, other in (("dither", dither, 0.0), ("scale", friction_scale, 1.0)):
        if len(values):
            if len(values) != len(joints):
                raise DimensionError(f"free_drive {key}", len(joints), len(values))
            by_name = dict(zip(joints, (float(v) for v in values)))
            friction[key] = [by_name.get(j, other) for j in order]
    free_drive = {
        "mode": "free_drive",
        "joints": joints,
        "fixed_joints": fixed or [""],
        # ROS cannot type an empty list: [0.0] with no fixed joint (the node ignores it)
        "fixed_positions": [float(fixed_positions.get(j, 0.0)) for j in fixed] or [0.0],
        "rate_hz": float(rate_hz),
        "stale_timeout": FREE_DRIVE_STALE_PERIODS / _bridge_rate(bridge_values),
        "free_drive_kd": free_kd,
        "follow_kp": kp,
        "follow_kd": kd,
    }
    return bridge, friction, free_drive


def _bridge_rate(bridge_values: Mapping[str, Any]) -> float:
    """The bridge's ``rate_hz`` [Hz] (its default when the motor map has none).

    Raises:
        ConfigError: not a finite number > 0 (key ``rate_hz``).
    """
    from gravity_friction_comp.mit.bridge_config import BridgeConfig, default_of
    from gravity_friction_comp.validation import number

    return number("rate_hz", bridge_values.get("rate_hz", default_of(BridgeConfig, "rate_hz")), positive=True)


def free_drive_launch_parts(
    bridge_values: Mapping[str, Any],
    urdf: str,
    friction_values: Mapping[str, Any],
    kd_scale: float,
    rate_hz: float,
    dither: Sequence[float] = (),
    friction_scale: Sequence[float] = (),
) -> tuple[dict, dict, dict]:
    """:func:`free_drive_overrides` for the launch file: model joints from ``urdf`` (unmeasured
    ones at 0 clipped to their limits), the deadband and ``joints`` (the order of the friction
    node's lists) from the friction node's values.

    Raises:
        ConfigError: as :func:`free_drive_overrides`; a URDF that cannot be loaded.
    """
    from gravity_friction_comp.model.robot_model import RobotModel

    model = RobotModel.from_urdf(urdf)
    fixed = {
        name: min(max(0.0, lo), hi)
        for name, lo, hi in zip(model.joint_names, model.position_lower, model.position_upper)
    }
    return free_drive_overrides(
        bridge_values,
        model.joint_names,
        fixed,
        kd_scale=kd_scale,
        friction_deadband=float(friction_values.get("velocity_deadband", 0.0) or 0.0),
        rate_hz=rate_hz,
        dither=dither,
        friction_scale=friction_scale,
        friction_joints=friction_values.get("joints") or (),
    )
