"""Setpoint profiles by name: the factory behind the ``setpoint_player`` node's parameters.

Families: :mod:`~gravity_friction_comp.trajectory.periodic` (sine, ramp),
:mod:`~gravity_friction_comp.trajectory.waypoints` (pick-and-place),
:mod:`~gravity_friction_comp.trajectory.replay` (CSV file, rosbag2 folder),
:mod:`~gravity_friction_comp.trajectory.hold` (one pose for ever); the base class
and argument checks are in :mod:`~gravity_friction_comp.trajectory.base`. No rclpy import.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.trajectory.base import Profile, checked_names, name_list, vector
from gravity_friction_comp.trajectory.hold import HoldProfile
from gravity_friction_comp.trajectory.periodic import RampProfile, SineProfile
from gravity_friction_comp.trajectory.replay import load_csv, load_rosbag
from gravity_friction_comp.trajectory.waypoints import pick_place_profile

__all__ = ["PROFILE_NAMES", "profile_from_options"]

#: Profile names the player accepts (``profile`` parameter).
PROFILE_NAMES = ("sine", "ramp", "pick_place", "bag", "csv", "hold")


def profile_from_options(
    name: str,
    joint_names: Sequence[str],
    *,
    home,
    amplitude=0.0,
    period: float = 4.0,
    pick=None,
    place=None,
    move_time: float = 2.0,
    dwell_time: float = 1.5,
    grip_time: float = 0.2,
    csv_path: str = "",
    bag_path: str = "",
    topic: str = "joint_states",
    loop: bool = True,
) -> Profile:
    """Build a profile by name (what the player's parameters describe).

    Args:
        name: One of :data:`PROFILE_NAMES`.
        joint_names: (n,) list of joint names (strings) of the setpoint (for ``csv``/``bag``:
            joints to keep, or empty for those recorded).
        home: (n,) or scalar [rad] centre of sine/ramp, home pose of pick_place, the pose of
            hold.
        amplitude: (n,) or scalar [rad] for sine/ramp (0 keeps a joint still).
        period: [s] for sine/ramp (≥ :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION`).
        pick, place: (n,) or scalar [rad] poses of pick_place (``None`` or empty: home ±
            amplitude).
        move_time, dwell_time, grip_time: [s] for pick_place.
        csv_path, bag_path, topic: replay sources.
        loop: repeat the cycle.

    Raises:
        ConfigError: unknown name (lists :data:`PROFILE_NAMES`), joint_names not a list of
            strings, or invalid options (``key`` names the option).
    """
    if name not in PROFILE_NAMES:
        raise ConfigError(
            f"unknown profile {name!r}; valid: {', '.join(PROFILE_NAMES)}", key="profile", value=name
        )
    if name == "csv":
        return load_csv(csv_path, loop=loop, joint_names=name_list(joint_names))
    if name == "bag":
        return load_rosbag(bag_path, topic, name_list(joint_names) or None, loop=loop)
    names = checked_names(joint_names)
    home_v = vector("home", home, len(names))
    if name == "hold":
        return HoldProfile(names, home_v)
    amp = vector("amplitude", amplitude, len(names))
    if name == "sine":
        return SineProfile(names, home_v, amp, period, loop=loop)
    if name == "ramp":
        return RampProfile(names, home_v, amp, period, loop=loop)

    def pose(key: str, value, default: np.ndarray) -> np.ndarray:
        empty = value is None or (isinstance(value, (list, tuple, np.ndarray)) and len(value) == 0)
        return default if empty else vector(key, value, len(names))

    with np.errstate(over="ignore", invalid="ignore"):
        pick_v = pose("pick", pick, home_v + amp)
        place_v = pose("place", place, home_v - amp)
    return pick_place_profile(
        names,
        home_v,
        pick_v,
        place_v,
        move_time=move_time,
        dwell_time=dwell_time,
        grip_time=grip_time,
        loop=loop,
    )
