"""What one demo runs: the :class:`DemoSetup` (files, joints, poses, timing) and its files.

The node parameter files are in ``ros2 param dump`` form; :func:`load_node_parameters`
reads the first node's. Paths default to the source tree's ``config/`` and ``urdf/``, else
the installed share (:func:`share_directory`).
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gravity_friction_comp.param_files import first_node_parameters

__all__ = ["REPO_SHARE", "DemoSetup", "load_node_parameters", "share_directory"]

REPO_SHARE = pathlib.Path(__file__).resolve().parents[3]


def share_directory() -> pathlib.Path:
    """Directory holding config/ and urdf/: the source tree, else the installed share."""
    if (REPO_SHARE / "config" / "gravity_compensation.yaml").is_file():
        return REPO_SHARE
    try:
        from ament_index_python.packages import get_package_share_directory

        return pathlib.Path(get_package_share_directory("gravity_friction_comp"))
    except Exception:  # noqa: BLE001 - any failure: report the missing files below
        return REPO_SHARE


def load_node_parameters(path: str | os.PathLike) -> tuple[str, dict[str, Any]]:
    """The first node's parameters of a ``ros2 param dump`` file, flattened to ROS names
    (:func:`~gravity_friction_comp.param_files.first_node_parameters`).

    Raises:
        ConfigError: unreadable file or not in ``node: ros__parameters: {...}`` form.
    """
    return first_node_parameters(path)


@dataclass(frozen=True)
class DemoSetup:
    """Everything one demo needs (paths, joints, poses, timing).

    Attributes:
        urdf, arm_config, motor_map, sim_config, gravity_params, friction_params: files.
        joints: Bridge (actuated) joints, motor-map order.
        all_joints: Every joint of the model (the setpoint carries all of them).
        home, pick, place: (len(all_joints),) [rad] poses of the cycle.
        proximal, distal: Partition of ``joints`` for the acceptance.
        move_time, dwell_time, start_delay: [s].
        bridge_overrides: Parameter values replacing the motor map's (kp, kd, ...).
        payload_parent: Joint or link the payload hangs from ("" = the gravity file's).
        profile: ``"pick_place"`` (the cycle) or ``"sine"`` (``q = home + A sin(2πt/period)``
            with ``A = min(pick − home, home − place)``, ``cycles`` periods).
        period: [s] of the sine. cycles: sine periods per run (≥ 1).
        friction_config: YAML given to the friction node as ``arm_config`` ("" =
            ``arm_config``).
        position_lsb: {joint: one code of the MIT position feedback at the joint [mrad]}
            (2·P_MAX/(2¹⁶−1)/gear_ratio): differences below it cannot be measured.
        gravity_effort_limit: the gravity node's ``effort_limit`` override, one per URDF
            joint [N·m] (``()``: the URDF's limits).
        lockstep: run on the simulated arm's clock (default) or in real time (``False``).
        delay: modelled transport delay of a command in lockstep [s] (whole physics steps).
        gravity_arm_config: per-arm YAML given to the gravity node as ``arm_config`` (its
            ``actuators:``); "" = none.
        gravity_scale: the gravity node's ``scale``, one per URDF joint (the arm YAML's
            ``gravity_scale``, i2rt's ``gravity_comp_factor``); ``()`` = the parameter
            file's. Given explicitly because a parameter file's ``scale`` outranks the arm
            YAML's in the node.
        exempt: {joint: reason} joints the acceptance reports but does not require
            (a profile's ``demo.exempt``: a physical reason, e.g. no gravity load).
        arm: Name of the arm profile the files came from ("" = explicit files).
        one_bridge: one bridge node in the demo's process serving every bus of a multi-bus
            motor map (``--one-bridge``) instead of one bridge process per bus (the default
            in lockstep; real time always runs one).
        sim_urdf: URDF the simulated arm is built from ("" = ``urdf``, the compensator's);
            ``sim_config``'s ``simulation.links`` truth applies to it. Given, the arm's
            truth is independent of the model the gravity node compensates with (a
            calibrated URDF against the true arm).
    """

    urdf: str
    arm_config: str
    motor_map: str
    sim_config: str
    gravity_params: str
    friction_params: str
    joints: tuple[str, ...]
    all_joints: tuple[str, ...]
    home: tuple[float, ...]
    pick: tuple[float, ...]
    place: tuple[float, ...]
    proximal: tuple[str, ...]
    distal: tuple[str, ...]
    move_time: float = 2.0
    dwell_time: float = 1.5
    start_delay: float = 2.0
    grip_time: float = 0.2
    bridge_overrides: Mapping[str, Any] = field(default_factory=dict)
    payload_parent: str = ""
    profile: str = "pick_place"
    period: float = 8.0
    cycles: int = 1
    friction_config: str = ""
    position_lsb: Mapping[str, float] = field(default_factory=dict)
    gravity_effort_limit: tuple[float, ...] = ()
    lockstep: bool = True
    delay: float = 0.001
    gravity_arm_config: str = ""
    gravity_scale: tuple[float, ...] = ()
    exempt: Mapping[str, str] = field(default_factory=dict)
    arm: str = ""
    sim_urdf: str = ""
    one_bridge: bool = False

    @property
    def cycle_time(self) -> float:
        """Length of the evaluated run [s]: one pick-and-place cycle (three moves, four
        dwells, the gripper closing), or ``cycles`` sine periods."""
        if self.profile == "sine":
            return self.cycles * self.period
        return 3 * self.move_time + 4 * self.dwell_time + self.grip_time

    @property
    def sine_amplitude(self) -> tuple[float, ...]:
        """Sine amplitude per joint of ``all_joints`` [rad]: the pick/place offsets, the
        smaller side (both stay inside the limits)."""
        home, pick, place = (np.asarray(x, dtype=float) for x in (self.home, self.pick, self.place))
        return tuple(float(a) for a in np.maximum(np.minimum(pick - home, home - place), 0.0))

    @property
    def close_time(self) -> float:
        """Cycle time at which the gripper closes at the pick pose [s]."""
        return self.move_time + self.dwell_time + self.grip_time

    @property
    def release_time(self) -> float:
        """Cycle time at which the gripper opens at the place pose [s]."""
        return self.close_time + self.dwell_time + self.move_time
