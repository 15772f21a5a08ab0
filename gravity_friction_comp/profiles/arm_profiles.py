"""Arm profiles shipped with the package: find, list and load ``arms/<name>/profile.yaml``.

A profile names the files one arm needs (URDF, bridge motor map, per-arm YAML, simulation
config; optionally gravity/friction node parameter files) and a demo cycle. The data live in
``arms/`` at the repository root, installed to ``share/gravity_friction_comp/arms``
(:func:`arms_directory` finds either). Loading checks what can be checked without Pinocchio
or python-can: the files exist, the motor map passes
:func:`~gravity_friction_comp.mit.bridge_params.bridge_config_from_values` (motor types
known, CAN ids unique per bus, FD bitrates), its joints are joints of the URDF, the demo's
proximal joints are bridge joints.

``profile.yaml``::

    arm_profile:
      version: 1
      description: i2rt YAM Ultra, ...
      source: i2rt-robotics/i2rt v1.2.4 (MIT)
      urdf: yam_ultra.urdf            # paths relative to profile.yaml
      motor_map: mit_bridge.yaml      # ros2 param dump file of mit_bridge
      arm_config: arm.yaml
      sim_config: sim.yaml
      gravity_params: ...             # optional node parameter files
      friction_params: ...
      demo:                           # optional
        proximal: [joint, ...]        # the other bridge joints are distal
        exempt: {joint: reason}       # joints the acceptance reports but does not require
      free_drive:                     # optional (mode:=free_drive)
        dither: {joint: fraction}     # stiction dither per bridge joint (others 0), or one number
        friction_scale: {joint: s}    # friction scale in free drive (others 1), or one number

What the lockstep demo (``--arm``) and ``launch/arm.launch.py`` (``arm:=``) both derive from a
profile is computed here once: the payload parent of a profile without a gravity file, the
friction stage's motor-map joints and limits, raised gravity effort limits, proximal joints,
the pick/place poses and one bridge per bus (:func:`bus_bridges`).

No rclpy, Pinocchio or python-can import.
"""

from __future__ import annotations

import math
import os
import pathlib
import stat
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.files import path_stat, read_yaml
from gravity_friction_comp.mit.bridge_config import BridgeConfig
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values
from gravity_friction_comp.param_files import first_node_parameters
from gravity_friction_comp.validation import known_keys, string_keys

__all__ = [
    "PROFILE_FILE",
    "ArmProfile",
    "ProfileCan",
    "arms_directory",
    "list_arms",
    "load_arm",
    "motor_map_stage_values",
    "pick_place_poses",
    "profile_payload_parent",
    "proximal_joints",
    "raised_effort_limits",
]

#: File that makes a directory an arm profile.
PROFILE_FILE = "profile.yaml"
_PACKAGE = "gravity_friction_comp"
_SOURCE_ARMS = pathlib.Path(__file__).resolve().parents[2] / "arms"
_FILE_KEYS = ("urdf", "motor_map", "arm_config", "sim_config")
_OPTIONAL_FILE_KEYS = ("gravity_params", "friction_params")
_KEYS = ("version", "description", "source", *_FILE_KEYS, *_OPTIONAL_FILE_KEYS, "demo", "free_drive")
_DEMO_KEYS = ("proximal", "exempt")
_FREE_DRIVE_KEYS = ("dither", "friction_scale")
#: Pick/place offsets from home [rad] of proximal and distal motor joints (``gfc_demo``
#: ``--amplitude`` / ``--distal-amplitude`` defaults, ``arm.launch.py arm:=NAME``).
DEMO_AMPLITUDE = 0.3
DEMO_DISTAL_AMPLITUDE = 0.1
#: Pick/place poses stay this far inside the joint limits [rad].
POSE_MARGIN = 0.05


@dataclass(frozen=True)
class ProfileCan:
    """The motor map's CAN settings (field names as :class:`~gravity_friction_comp.mit.bus.CanSettings`,
    so ``CanSettings(**dataclasses.asdict(profile.can))`` opens the default bus).

    Attributes:
        interface, channel: python-can interface and the default channel (``can.channel``).
        bitrate: Nominal bitrate [bit/s]. fd: CAN-FD with bit-rate switch.
        data_bitrate: FD data bitrate [bit/s] (0 = nominal).
    """

    interface: str
    channel: str
    bitrate: int
    fd: bool
    data_bitrate: int


@dataclass(frozen=True)
class ArmProfile:
    """One loaded arm profile.

    Attributes:
        name: Profile name (its directory's name).
        directory: The profile's directory.
        description, source: Text from ``profile.yaml`` (source: vendor project and license).
        urdf, motor_map, arm_config, sim_config: Absolute paths of the profile's files.
        gravity_params, friction_params: Node parameter files, ``None`` when the profile has
            none (the package's defaults apply).
        joints: Bridge joints, motor-map order.
        bus_of: Joint → channel of its bus (the motor map's ``bus``, ``""`` resolved to
            ``can.channel``).
        can: :class:`ProfileCan` of the motor map.
        rate_hz: The motor map's control rate [Hz].
        urdf_joints: Names of the URDF's movable joints, file order.
        demo_proximal: The demo acceptance's proximal joints (the other bridge joints are
            distal); ``()`` when the profile leaves it to the demo's default. The demo's home
            pose is the sim config's ``initial_position`` of each joint.
        demo_exempt: {bridge joint: reason} (``demo.exempt``): joints the demo's acceptance
            reports but does not require, for a physical reason stated there.
        free_drive_dither: Stiction dither [-] per bridge joint, motor-map order
            (``free_drive.dither``; :mod:`gravity_friction_comp.stage.dither`); ``()`` when
            the profile sets none (off).
        free_drive_friction_scale: Friction stage ``scale`` [-] in free drive per bridge joint,
            motor-map order (``free_drive.friction_scale``, each in [0, 1]: below the true
            kinetic friction, so a pushed joint stops; docs/free_drive.md); ``()`` when the
            profile sets none (the friction file's scale).
    """

    name: str
    directory: pathlib.Path
    description: str
    source: str
    urdf: pathlib.Path
    motor_map: pathlib.Path
    arm_config: pathlib.Path
    sim_config: pathlib.Path
    gravity_params: pathlib.Path | None
    friction_params: pathlib.Path | None
    joints: tuple[str, ...]
    bus_of: Mapping[str, str]
    can: ProfileCan
    rate_hz: float
    urdf_joints: tuple[str, ...]
    demo_proximal: tuple[str, ...]
    demo_exempt: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    free_drive_dither: tuple[float, ...] = ()
    free_drive_friction_scale: tuple[float, ...] = ()

    @property
    def demo_distal(self) -> tuple[str, ...]:
        """Bridge joints not in :attr:`demo_proximal` (``()`` when that is empty)."""
        return tuple(j for j in self.joints if j not in self.demo_proximal) if self.demo_proximal else ()

    @property
    def buses(self) -> tuple[str, ...]:
        """Channels of the profile's buses, in order of first use (``("can1", "can0")`` bimanual)."""
        return tuple(dict.fromkeys(self.bus_of.values()))

    def joints_on(self, bus: str) -> tuple[str, ...]:
        """Bridge joints on channel ``bus``, motor-map order."""
        return tuple(j for j in self.joints if self.bus_of[j] == bus)

    def bridge_values(self) -> dict[str, Any]:
        """The motor map's parameters, flattened to ROS names (``can.bitrate``, ...)."""
        return first_node_parameters(self.motor_map)[1]

    def simulated_bridge_values(self) -> dict[str, Any]:
        """:meth:`bridge_values` of a bridge simulating this arm (``sim_arm``'s input): with
        ``urdf_path`` and ``sim_config`` set to the profile's files and the motor limits from
        the table (``read_motor_limits`` false: no registers to read)."""
        return self.bridge_values() | {
            "urdf_path": str(self.urdf),
            "sim_config": str(self.sim_config),
            "read_motor_limits": False,
        }

    def bridge_config(self) -> BridgeConfig:
        """The motor map as a validated :class:`~gravity_friction_comp.mit.bridge_config.BridgeConfig`."""
        return bridge_config_from_values(self.bridge_values())

    def effort_limits(self) -> dict[str, float]:
        """{bridge joint: the bridge's |τ_ff| bound [N·m]}: ``min(effort_limit, gear_ratio ·
        T_MAX)`` of each motor (:attr:`~gravity_friction_comp.mit.bridge_config.MotorConfig.tau_limit`), so a motor map without
        ``effort_limit`` gives the motor table's torque, never ``inf``."""
        return {m.name: m.tau_limit for m in self.bridge_config().motors}


def arms_directory() -> pathlib.Path:
    """Directory holding the profiles: the source tree's ``arms/``, else the installed share.

    Order: ``<repo>/arms`` (a checkout), ``ament_index`` share of the package (a colcon
    install), ``<sys.prefix>/share/gravity_friction_comp/arms`` (a pip install).
    """
    if (_SOURCE_ARMS / "README.md").is_file():
        return _SOURCE_ARMS
    try:
        from ament_index_python.packages import get_package_share_directory

        return pathlib.Path(get_package_share_directory(_PACKAGE)) / "arms"
    except Exception:  # noqa: BLE001 - not a ROS install (or not found): try the pip layout
        return pathlib.Path(sys.prefix) / "share" / _PACKAGE / "arms"


def list_arms(root: str | os.PathLike | None = None) -> tuple[str, ...]:
    """Names of the profiles under ``root`` (default :func:`arms_directory`), sorted."""
    base = pathlib.Path(root) if root is not None else arms_directory()
    if not base.is_dir():
        return ()
    return tuple(sorted(p.name for p in base.iterdir() if (p / PROFILE_FILE).is_file()))


def load_arm(name: str | os.PathLike, root: str | os.PathLike | None = None) -> ArmProfile:
    """Load profile ``name`` (a name from :func:`list_arms`, or a directory with ``profile.yaml``).

    Args:
        name: Profile name (``"yam_ultra"``) or path to a profile directory (a user's own).
        root: Where named profiles live (default :func:`arms_directory`).

    Returns:
        The :class:`ArmProfile`.

    Raises:
        ConfigError: unknown name (``key="arm"``; the message lists the valid names), a bad
            ``profile.yaml`` (unknown key, wrong version, missing file), a motor map that
            :func:`bridge_config_from_values` refuses (message prefixed with the profile),
            motor-map joints missing from the URDF, demo proximal joints that are not
            bridge joints (or all of them: nothing would be distal), a ``demo.exempt``
            that is not {bridge joint: non-empty reason}, or a ``free_drive`` block other
            than ``dither:`` (one number or {bridge joint: number}, each in [0, 0.95]).
    """
    directory = _resolve(name, root)
    label = directory.name
    path = directory / PROFILE_FILE
    data = read_yaml(path, "arm")
    body = data.get("arm_profile") if isinstance(data, Mapping) else None
    if not isinstance(body, Mapping):
        raise _fail(label, f"{path} must hold an 'arm_profile:' mapping", "arm_profile", data)
    _known_keys(label, path, "", data, ("arm_profile",))
    string_keys("arm_profile", body)
    _known_keys(label, path, "arm_profile", body, _KEYS)
    for section, valid in (("demo", _DEMO_KEYS), ("free_drive", _FREE_DRIVE_KEYS)):
        if isinstance(body.get(section), Mapping):  # anything else: the section's reader says
            string_keys(section, body[section])
            _known_keys(label, path, f"arm_profile.{section}", body[section], valid)
    version = body.get("version")
    if isinstance(version, bool) or version != 1:
        raise _fail(label, f"version must be 1, got {version!r}", "version", version)
    files = {k: _file(label, directory, k, body.get(k)) for k in _FILE_KEYS}
    optional = {k: _file(label, directory, k, body[k]) if body.get(k) else None for k in _OPTIONAL_FILE_KEYS}
    values = first_node_parameters(files["motor_map"])[1]
    try:
        config = bridge_config_from_values(values)
    except ConfigError as error:
        raise _fail(label, f"motor map {files['motor_map']}: {error}", error.key, error.value) from None
    channel = values.get("can.channel") or "can0"
    can = ProfileCan(
        interface=str(values.get("can.interface") or "socketcan"),
        channel=str(channel),
        bitrate=config.bitrate,
        fd=config.fd,
        data_bitrate=config.data_bitrate,
    )
    joints = tuple(m.name for m in config.motors)
    urdf_joints = _urdf_joints(label, files["urdf"])
    missing = [j for j in joints if j not in urdf_joints]
    if missing:
        raise _fail(
            label, f"motor-map joints {missing} are not movable joints of {files['urdf']}", "joints", missing
        )
    proximal = _demo_proximal(label, body.get("demo"), joints)
    return ArmProfile(
        name=label,
        directory=directory,
        description=str(body.get("description") or ""),
        source=str(body.get("source") or ""),
        gravity_params=optional["gravity_params"],
        friction_params=optional["friction_params"],
        joints=joints,
        bus_of=MappingProxyType({m.name: m.bus or can.channel for m in config.motors}),
        can=can,
        rate_hz=config.rate_hz,
        urdf_joints=urdf_joints,
        demo_proximal=proximal,
        demo_exempt=MappingProxyType(_demo_exempt(label, body.get("demo"), joints)),
        free_drive_dither=_free_drive_dither(label, body.get("free_drive"), joints),
        free_drive_friction_scale=_free_drive_friction_scale(label, body.get("free_drive"), joints),
        **files,
    )


def profile_payload_parent(profile: ArmProfile | None, joints: Sequence[str], generic: bool) -> str:
    """The payload's parent for a robot whose gravity file is not its own: its last motor
    joint (the generic file's ``tool`` frame is the palletizer's); ``""`` (the file's own
    ``payload.parent``) otherwise.

    Args:
        profile: The arm profile, ``None`` without one.
        joints: Motor-map joints, motor-map order.
        generic: Without a profile: True when the gravity file is the package's generic one
            but the URDF is not the palletizer's.
    """
    own_file = profile.gravity_params is not None if profile is not None else not generic
    return "" if own_file or not joints else str(joints[-1])


def bus_bridges(values: Mapping[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """One bridge per bus of a motor map: ``[(namespace, channel, parameters)]``.

    A motor map on one bus gives ``[("", channel, values)]`` (unchanged). With a ``bus`` per
    joint naming several channels (bimanual OpenArm: ``can1`` left arm, ``can0`` right), each
    bus gets its own bridge: the per-joint arrays cut to that bus's joints (motor-map order),
    ``can.channel`` set to the bus, ``bus`` dropped; its namespace is ``left``/``right`` when
    every joint name on it says so, else the channel name.

    Raises:
        ValueError: the motor map has no ``joints``.
    """
    joints = list(values.get("joints") or [])
    if not joints:
        raise ValueError("bridge parameters have no joints")
    default = str(values.get("can.channel") or "can0")
    buses = [str(b) or default for b in (values.get("bus") or [""] * len(joints))]
    order = list(dict.fromkeys(buses))
    if len(order) == 1:
        return [("", order[0], dict(values))]
    per_joint = [k for k, v in values.items() if isinstance(v, (list, tuple)) and len(v) == len(joints)]
    out = []
    for bus in order:
        keep = [i for i, b in enumerate(buses) if b == bus]
        part = {k: v for k, v in values.items() if k != "bus"}
        part.update({k: [values[k][i] for i in keep] for k in per_joint if k != "bus"})
        part["can.channel"] = bus
        names = [joints[i] for i in keep]
        side = next((s for s in ("left", "right") if all(s in n.split("_") for n in names)), bus)
        out.append((side, bus, part))
    return out


def motor_map_stage_values(bridge_values: Mapping[str, Any]) -> dict[str, Any]:
    """The friction stage's ``joints`` and ``effort_limit`` [N·m] from a motor map: the stage
    clamps to the motor map's limits, its joints in its order (``effort_limit`` only when
    it has one value per joint)."""
    joints = [str(j) for j in bridge_values.get("joints") or ()]
    out: dict[str, Any] = {"joints": joints}
    effort = bridge_values.get("effort_limit") or []
    if isinstance(effort, (list, tuple)) and len(effort) == len(joints):
        out["effort_limit"] = [float(x) for x in effort]
    return out


def raised_effort_limits(
    model_joints: Sequence[str], urdf_limits: Sequence[float], motor_limits: Mapping[str, float]
) -> tuple[tuple[float, ...], tuple[str, ...]]:
    """The gravity node's ``effort_limit`` (one per model joint) [N·m]: the URDF's, raised to
    the motor map's ``effort_limit`` where the URDF is lower.

    Some published URDFs carry placeholder effort limits (i2rt YAM: ``effort="1"`` on every
    joint) that would clamp the gravity term far below what the motors deliver; the motor
    map states the real bound, and the node's ``effort_limit`` parameter overrides the URDF.

    Returns:
        ``(limits, raised)``: ``limits`` ``()`` when nothing is raised or a limit is not
        finite; ``raised`` one ``"joint old→new"`` text per raised joint.
    """
    out, raised = [], []
    for name, urdf_limit in zip(model_joints, urdf_limits):
        motor = float(motor_limits.get(name, math.nan))
        if math.isfinite(motor) and urdf_limit < motor:
            raised.append(f"{name} {urdf_limit:g}→{motor:g}")
            urdf_limit = motor
        out.append(float(urdf_limit))
    if not raised or not all(math.isfinite(x) for x in out):
        return (), tuple(raised)
    return tuple(out), tuple(raised)


def proximal_joints(profile: ArmProfile | None, joints: Sequence[str]) -> tuple[str, ...]:
    """The demo's proximal joints: the profile's ``demo.proximal`` when they are motor joints,
    else the first half (rounded up) of ``joints``."""
    if profile is not None and profile.demo_proximal and set(profile.demo_proximal) <= set(joints):
        return profile.demo_proximal
    return tuple(joints[: math.ceil(len(joints) / 2)])


def pick_place_poses(
    all_joints: Sequence[str],
    joints: Sequence[str],
    proximal: Sequence[str],
    home: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    amplitude: float = DEMO_AMPLITUDE,
    distal_amplitude: float = DEMO_DISTAL_AMPLITUDE,
) -> tuple[np.ndarray, np.ndarray]:
    """The demo cycle's pick and place poses: ``home ± amplitude`` (proximal motor joints) or
    ``± distal_amplitude`` (other motor joints), clipped :data:`POSE_MARGIN` inside the
    limits (infinite limits read as ±π); joints without a motor stay at home.

    Args:
        all_joints: Model joints (the order of ``home``, ``lower``, ``upper``), shape (n,).
        joints: Motor joints. proximal: Motor joints moved by ``amplitude``.
        home, lower, upper: Pose and position limits [rad], shape (n,).

    Returns:
        ``(pick, place)`` [rad], each shape (n,).
    """
    home_a = np.asarray(home, dtype=float)
    lo_a, hi_a = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    lo = np.where(np.isfinite(lo_a), lo_a, -math.pi) + POSE_MARGIN
    hi = np.where(np.isfinite(hi_a), hi_a, math.pi) - POSE_MARGIN
    offset = np.array(
        [(amplitude if j in proximal else distal_amplitude) if j in joints else 0.0 for j in all_joints]
    )
    moved = np.isin(list(all_joints), list(joints))
    pick = np.where(moved, np.clip(home_a + offset, lo, hi), home_a)
    place = np.where(moved, np.clip(home_a - offset, lo, hi), home_a)
    return pick, place


def _known_keys(
    label: str, path: pathlib.Path, where: str, value: Mapping[str, Any], valid: Sequence[str]
) -> None:
    """:func:`~gravity_friction_comp.validation.known_keys` for ``profile.yaml``, the message
    prefixed with the profile (as every profile error)."""
    try:
        known_keys(where, value, valid, f"{where}." if where else "", file=path)
    except ConfigError as error:
        raise _fail(label, str(error), error.key, error.value) from None


def _fail(label: str, message: str, key: Any, value: Any) -> ConfigError:
    return ConfigError(
        f"arm profile {label!r}: {message}", key=None if key is None else str(key), value=value
    )


def _is_file(path: pathlib.Path) -> bool:
    info = path_stat(path)  # pathlib's is_file raised OSError on a name too long
    return info is not None and stat.S_ISREG(info.st_mode)


def _resolve(name: str | os.PathLike, root: str | os.PathLike | None) -> pathlib.Path:
    if not isinstance(name, (str, os.PathLike)) or not str(name):
        raise ConfigError(f"arm must be a profile name or directory, got {name!r}", key="arm", value=name)
    text = os.fspath(name)
    as_path = pathlib.Path(text)
    if _is_file(as_path / PROFILE_FILE) and (os.sep in text or as_path.is_absolute() or text.startswith(".")):
        return as_path.resolve()
    base = pathlib.Path(root) if root is not None else arms_directory()
    if os.sep not in text and _is_file(base / text / PROFILE_FILE):
        return (base / text).resolve()
    valid = list_arms(base)
    raise ConfigError(
        f"unknown arm {text!r}; valid arms: {', '.join(valid) if valid else f'none found in {base}'}"
        " (or give a directory holding a profile.yaml)",
        key="arm",
        value=text,
    )


def _file(label: str, directory: pathlib.Path, key: str, value: Any) -> pathlib.Path:
    if not isinstance(value, str) or not value:
        raise _fail(label, f"{key} must name a file (relative to {directory}), got {value!r}", key, value)
    path = (directory / value).resolve()
    if not _is_file(path):
        raise _fail(label, f"{key} file {path} does not exist", key, value)
    return path


def _urdf_joints(label: str, path: pathlib.Path) -> tuple[str, ...]:
    try:
        root = ElementTree.parse(path).getroot()
    except (ElementTree.ParseError, OSError) as error:
        raise _fail(label, f"cannot read URDF {path}: {error}", "urdf", str(path)) from None
    return tuple(j.get("name", "") for j in root.iter("joint") if j.get("type") not in ("fixed", None))


def _demo_proximal(label: str, block: Any, joints: tuple[str, ...]) -> tuple[str, ...]:
    if block is None:
        return ()
    if not isinstance(block, Mapping):
        raise _fail(label, f"demo must be a mapping, got {block!r}", "demo", block)
    names = block.get("proximal") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _fail(
            label, f"demo.proximal must be a list of joint names, got {names!r}", "demo.proximal", names
        )
    bad = [n for n in names if n not in joints]
    if bad or len(set(names)) != len(names) or len(names) == len(joints):
        raise _fail(
            label,
            f"demo.proximal must name some (not all) bridge joints {list(joints)} once each, got {names}",
            "demo.proximal",
            names,
        )
    return tuple(names)


def _demo_exempt(label: str, block: Any, joints: tuple[str, ...]) -> dict[str, str]:
    exempt = block.get("exempt") if isinstance(block, Mapping) else None
    if exempt is None:
        return {}
    if not isinstance(exempt, Mapping) or not all(
        isinstance(j, str) and j in joints and isinstance(r, str) and r.strip() for j, r in exempt.items()
    ):
        raise _fail(
            label,
            f"demo.exempt must map bridge joints {list(joints)} to a reason (text), got {exempt!r}",
            "demo.exempt",
            exempt,
        )
    return {str(j): str(r).strip() for j, r in exempt.items()}


def _by_bridge_joint(label: str, key: str, value: Any, joints: tuple[str, ...], default: float) -> Any:
    """A ``free_drive.<key>`` mapping {bridge joint: value} as a list in ``joints`` order
    (unnamed joints get ``default``); any other value unchanged."""
    if not isinstance(value, Mapping):
        return value
    unknown = [j for j in value if j not in joints]
    if unknown:
        raise _fail(
            label,
            f"free_drive.{key} names {unknown}, not bridge joints {list(joints)}",
            f"free_drive.{key}",
            value,
        )
    return [value.get(j, default) for j in joints]


def _free_drive_dither(label: str, block: Any, joints: tuple[str, ...]) -> tuple[float, ...]:
    from gravity_friction_comp.stage.dither import validate_dither

    if block is None:
        return ()
    if not isinstance(block, Mapping):
        raise _fail(label, f"free_drive takes dither, friction_scale; got {block!r}", "free_drive", block)
    dither = block.get("dither")
    if "dither" not in block and block:  # a block with friction_scale only ({} is named below)
        return ()
    # YAML null (a key without value) would reach the check as NaN: "must be finite, got nan"
    values = (
        dither.values() if isinstance(dither, Mapping) else dither if isinstance(dither, list) else [dither]
    )
    if any(v is None for v in values):
        raise _fail(
            label,
            f"free_drive.dither needs a value (one number, or {{bridge joint: number}}), got {dither!r}",
            "free_drive.dither",
            dither,
        )
    dither = _by_bridge_joint(label, "dither", dither, joints, 0.0)
    try:
        return tuple(validate_dither(dither, len(joints)).tolist())
    except ConfigError as error:
        raise _fail(label, f"free_drive.{error}", "free_drive.dither", dither) from None


def _free_drive_friction_scale(label: str, block: Any, joints: tuple[str, ...]) -> tuple[float, ...]:
    scale = block.get("friction_scale") if isinstance(block, Mapping) else None
    if scale is None:
        return ()
    scale = _by_bridge_joint(label, "friction_scale", scale, joints, 1.0)
    values = [scale] * len(joints) if isinstance(scale, (int, float)) else scale
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        out = ()
    if len(out) != len(joints) or not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in out):
        raise _fail(
            label,
            f"free_drive.friction_scale must be one number or one per bridge joint, each in [0, 1]; got {scale!r}",
            "free_drive.friction_scale",
            scale,
        )
    return out
