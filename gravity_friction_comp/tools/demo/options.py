"""The demo's command line: options, and their resolution into a :class:`DemoSetup`.

Defaults are the bundled palletizer; ``--arm NAME`` takes every file from a shipped arm
profile (:mod:`gravity_friction_comp.profiles.arm_profiles`), any explicit file argument overriding
the profile's; another robot needs ``--urdf``, ``--arm-config`` and ``--motor-map`` (a sim
YAML is derived from the arm YAML when ``--sim-config`` is absent).
"""

from __future__ import annotations

import argparse
import math
import pathlib
from collections.abc import Mapping, Sequence

import numpy as np
import yaml

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.files import check_output_dir, check_regular_file
from gravity_friction_comp.profiles.arm_profiles import (
    DEMO_AMPLITUDE,
    DEMO_DISTAL_AMPLITUDE,
    load_arm,
    pick_place_poses,
    profile_payload_parent,
    proximal_joints,
    raised_effort_limits,
)
from gravity_friction_comp.tools.demo.scenario import DemoSetup, load_node_parameters, share_directory
from gravity_friction_comp.trajectory.base import MIN_DURATION

__all__ = [
    "MIN_DWELL_TIME",
    "PRIVATE_DOMAINS",
    "build_setup",
    "check_same_joints",
    "demo_domain_id",
    "parse_args",
]


#: ROS_DOMAIN_ID values the demo accepts: ROS 2's documented maximum is 232 (DDS port
#: arithmetic); the pid-derived default is 120-209.
MAX_DOMAIN_ID = 232


#: The demo's private ROS_DOMAIN_ID when --domain-id is absent: PRIVATE_DOMAINS[0] + pid mod
#: len(PRIVATE_DOMAINS) (120-209), never the shell's: the demo publishes joint commands.
PRIVATE_DOMAINS = range(120, 210)

#: [s] shortest --dwell-time of the pick-and-place cycle: sag and the holding error are
#: averaged over the last 70 % of each stop (tools/demo/metrics.py), which must hold samples
#: (0.14 s: 35 joint_states at 250 Hz); a 0 s stop has none (sag NaN in the table).
MIN_DWELL_TIME = 0.2


def demo_domain_id(args) -> int:
    """``--domain-id``, else the private domain of this process (:data:`PRIVATE_DOMAINS`)."""
    import os

    if args.domain_id is not None:
        return args.domain_id
    return PRIVATE_DOMAINS[os.getpid() % len(PRIVATE_DOMAINS)]


def _duration(low: float, inclusive: bool):
    """An argparse type: a finite float ≥ ``low`` (> ``low`` when not ``inclusive``) [s]."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not (math.isfinite(value) and (value >= low if inclusive else value > low)):
            raise argparse.ArgumentTypeError(
                f"must be finite and {'≥' if inclusive else '>'} {low:g} [s], got {text}"
            )
        return value

    return parse


def _domain_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value <= MAX_DOMAIN_ID:
        raise argparse.ArgumentTypeError(f"must be in 0-{MAX_DOMAIN_ID}, got {value}")
    return value


def _output_dir(text: str) -> str:
    try:
        check_output_dir(text, "--output")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _floats(text: str | None, n: int, key: str) -> list[float] | None:
    if not text:
        return None
    try:
        values = [float(x) for x in text.replace(",", " ").split()]
    except ValueError:  # was a traceback
        raise ConfigError(f"--{key} needs numbers, got {text!r}", key=key, value=text) from None
    if len(values) == 1:
        values *= n
    if len(values) != n:
        raise ConfigError(f"--{key} needs {n} values, got {len(values)}", key=key, value=text)
    return values


def _derived_sim_config(
    joints: Sequence[str],
    motor_types: Sequence[str],
    home: Sequence[float],
    arm_config: str,
    out: pathlib.Path,
) -> str:
    """A sim YAML for a robot that has none, written to ``out/sim_derived.yaml``.

    The "true" friction is taken near the arm YAML's tuning, deliberately not equal to it
    (as a real arm differs from its tuning): Coulomb = 0.9·breakaway, Stribeck level
    0.2·breakaway above it (v_s 0.05 rad/s), viscous = the YAML's viscous + 0.01; masses
    × 1.05; armature (reflected rotor inertia) as in config/sim_palletizer.yaml per motor
    type (DM4340 0.012 kg·m², others 0.002 kg·m²). A YAML without a friction block gives a
    frictionless simulated arm. Initial positions: mid-range (the demo's default home).
    """
    from gravity_friction_comp.friction.arm_yaml import friction_params_from_arm_yaml

    params = friction_params_from_arm_yaml(arm_config, len(joints))

    def per_joint(key: str) -> np.ndarray:
        return np.broadcast_to(np.asarray(params.get(key, 0.0), dtype=float), (len(joints),))

    breakaway, viscous = per_joint("breakaway"), per_joint("viscous")
    armature = [0.012 if str(t).upper() == "DM4340" else 0.002 for t in motor_types]
    body = {
        "simulation": {
            "version": 1,
            "physics_rate_hz": 1000.0,
            "mass_scale": 1.05,
            "joints": {
                j: {
                    "coulomb": float(0.9 * b),
                    "stribeck_breakaway": float(0.2 * b),
                    "stribeck_velocity": 0.05,
                    "viscous": float(v + 0.01),
                    "armature": a,
                    "initial_position": float(q0),
                }
                for j, b, v, a, q0 in zip(joints, np.abs(breakaway), np.abs(viscous), armature, home)
            },
        }
    }
    path = out / "sim_derived.yaml"
    path.write_text(yaml.safe_dump(body))
    return str(path)


def _gravity_effort_limits(model, limits: Mapping[str, float], log=print) -> tuple[float, ...]:
    """The gravity node's ``effort_limit`` (:func:`~gravity_friction_comp.profiles.arm_profiles.raised_effort_limits`),
    logging the raised joints; ``()`` when nothing is raised."""
    out, raised = raised_effort_limits(model.joint_names, model.effort_limits, limits)
    if not out:
        return ()
    log(
        f"  URDF effort limits below the motor map's effort_limit raised to it [N·m] "
        f"(gravity node effort_limit): {', '.join(raised)}"
    )
    return out


def _arm_gravity_scale(arm_config: str, joint_names: Sequence[str], log=print) -> tuple[float, ...]:
    """The arm YAML's ``gravity_scale`` per model joint (``()`` when it has none)."""
    from gravity_friction_comp.friction.arm_yaml import gravity_scale_from_arm_yaml

    scale = gravity_scale_from_arm_yaml(arm_config, joint_names)
    if scale is None:
        return ()
    values = tuple(float(x) for x in np.broadcast_to(scale, (len(joint_names),)))
    log(f"  gravity scale from {pathlib.Path(arm_config).name} (gravity_scale): {list(values)}")
    return values


def check_same_joints(urdf: str, joints: Sequence[str], option: str) -> None:
    """Check that URDF ``urdf`` (given as ``option``) loads and has exactly ``joints``, in order.

    Raises:
        ConfigError: other joints (key ``option`` without dashes). ModelError: a URDF that
            does not load.
    """
    from gravity_friction_comp.model.robot_model import RobotModel

    own = tuple(RobotModel.from_urdf(urdf).joint_names)
    if own != tuple(joints):
        raise ConfigError(
            f"{option} joints {list(own)} differ from the URDF's {list(joints)}",
            key=option.lstrip("-").replace("-", "_"),
            value=urdf,
        )


def build_setup(args, out: pathlib.Path) -> DemoSetup:
    """Resolve the command line into a :class:`DemoSetup` (defaults: the bundled palletizer)."""
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.sim.config import SimConfig

    share = share_directory()
    profile = None
    if args.arm:
        profile = load_arm(args.arm)  # ConfigError lists the valid names
    own = (
        (lambda key: str(getattr(profile, key)) if getattr(profile, key) else None)
        if profile
        else (lambda key: None)
    )
    urdf = args.urdf or own("urdf") or str(share / "urdf" / "palletizer.urdf")
    arm_config = args.arm_config or own("arm_config") or str(share / "config" / "palletizer_arm.yaml")
    motor_map = args.motor_map or own("motor_map") or str(share / "config" / "mit_bridge.yaml")
    gravity_params = (
        args.gravity_params or own("gravity_params") or str(share / "config" / "gravity_compensation.yaml")
    )
    friction_params = (
        args.friction_params or own("friction_params") or str(share / "config" / "friction_feedforward.yaml")
    )
    # The vendor's gravity_scale (arm YAML) goes to the gravity node by default with --arm.
    use_arm_scale = args.arm_gravity_scale if args.arm_gravity_scale is not None else profile is not None
    friction_config = args.friction_config or ""
    if not (args.period > 0 and math.isfinite(args.period)):
        raise ConfigError(f"--period must be > 0, got {args.period}", key="period", value=args.period)
    if not (args.delay >= 0 and math.isfinite(args.delay)):
        raise ConfigError(f"--delay must be ≥ 0, got {args.delay}", key="delay", value=args.delay)
    if args.profile == "pick_place" and args.dwell_time < MIN_DWELL_TIME:
        raise ConfigError(
            f"--dwell-time must be ≥ {MIN_DWELL_TIME:g} s with the pick_place profile (sag is "
            f"averaged over each stop), got {args.dwell_time:g}",
            key="dwell_time",
            value=args.dwell_time,
        )
    if args.cycles < 1:
        raise ConfigError(f"--cycles must be ≥ 1, got {args.cycles}", key="cycles", value=args.cycles)
    for key, path in (
        ("urdf", urdf),
        ("arm-config", arm_config),
        ("motor-map", motor_map),
        ("gravity-params", gravity_params),
        ("friction-params", friction_params),
        ("friction-config", friction_config or arm_config),
        *((("sim-urdf", args.sim_urdf),) if args.sim_urdf else ()),
    ):
        check_regular_file(path, f"--{key}")
    _, bridge = load_node_parameters(motor_map)
    joints = tuple(bridge.get("joints") or ())
    if not joints:
        raise ConfigError(f"motor map {motor_map!r} has no joints", key="joints")
    model = RobotModel.from_urdf(urdf)
    effort = bridge.get("effort_limit") or []
    gravity_effort_limit: tuple[float, ...] = ()
    if isinstance(effort, (list, tuple)) and len(effort) == len(joints):
        gravity_effort_limit = _gravity_effort_limits(model, dict(zip(joints, map(float, effort))))
    missing = [j for j in joints if j not in model.joint_names]
    if missing:
        raise ConfigError(
            f"motor map joints {missing} not in the URDF; URDF joints: {list(model.joint_names)}",
            key="joints",
            value=missing,
        )
    all_joints = model.joint_names
    if args.sim_urdf:  # the simulated arm: same joints, its own inertials
        check_same_joints(args.sim_urdf, all_joints, "--sim-urdf")
    n = len(all_joints)
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -math.pi)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, math.pi)
    home_arg = _floats(args.home, n, "home")
    if args.sim_config:
        sim_config = args.sim_config
    elif profile is not None:
        sim_config = str(profile.sim_config)
    elif not args.urdf:
        sim_config = str(share / "config" / "sim_palletizer.yaml")
    else:
        mid = home_arg or [
            0.5 * (lo + hi) if j in joints else 0.0 for j, lo, hi in zip(all_joints, lower, upper)
        ]
        types = bridge.get("motor_type") or [""] * len(joints)
        sim_config = _derived_sim_config(
            joints, types, [mid[all_joints.index(j)] for j in joints], arm_config, out
        )
    sim = SimConfig.from_yaml(sim_config)
    home = np.array(home_arg or [sim.joint(j).initial_position for j in all_joints])
    k = len(joints)
    proximal = tuple(args.proximal.split(",")) if args.proximal else proximal_joints(profile, joints)
    unknown = [j for j in proximal if j not in joints]
    if unknown:
        raise ConfigError(
            f"--proximal names {unknown}, not bridge joints {list(joints)}", key="proximal", value=unknown
        )
    distal = tuple(j for j in joints if j not in proximal)
    pick, place = pick_place_poses(
        all_joints, joints, proximal, home, lower, upper, args.amplitude, args.distal_amplitude
    )
    overrides = {}
    for key in ("kp", "kd"):
        values = _floats(getattr(args, key), k, key)
        if values is not None:
            overrides[key] = values
    types = bridge.get("motor_type") or []
    ratios = bridge.get("gear_ratio") or [1.0] * len(joints)
    position_lsb = {}
    if len(types) == len(joints) and len(ratios) == len(joints):
        from gravity_friction_comp.mit.codec import position_step
        from gravity_friction_comp.mit.motor_table import motor_limits

        position_lsb = {
            j: 1e3 * position_step(motor_limits(t)) / abs(float(r)) for j, t, r in zip(joints, types, ratios)
        }
    return DemoSetup(
        urdf=urdf,
        arm_config=arm_config,
        motor_map=motor_map,
        sim_config=sim_config,
        gravity_params=gravity_params,
        friction_params=friction_params,
        joints=joints,
        all_joints=tuple(all_joints),
        home=tuple(home),
        pick=tuple(pick),
        place=tuple(place),
        proximal=proximal,
        distal=distal,
        move_time=args.move_time,
        dwell_time=args.dwell_time,
        start_delay=args.start_delay,
        bridge_overrides=overrides,
        # a robot whose gravity file is not its own: the payload hangs from the last motor joint
        payload_parent=args.payload_parent or profile_payload_parent(profile, joints, bool(args.urdf)),
        profile=args.profile,
        period=args.period,
        cycles=args.cycles,
        friction_config=friction_config,
        position_lsb=position_lsb,
        gravity_effort_limit=gravity_effort_limit,
        lockstep=not args.realtime,
        delay=args.delay,
        gravity_arm_config=arm_config if use_arm_scale else "",
        gravity_scale=_arm_gravity_scale(arm_config, model.joint_names) if use_arm_scale else (),
        exempt={j: r for j, r in (profile.demo_exempt.items() if profile else ()) if j in joints},
        arm=profile.name if profile else "",
        sim_urdf=args.sim_urdf or "",
        one_bridge=bool(getattr(args, "one_bridge", False)),
    )


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="gfc_demo", description="Gravity + friction feedforward on the simulated arm: off vs on."
    )
    parser.add_argument(
        "--arm",
        help="arm profile (arms/<name>, or a directory with a profile.yaml): its URDF, motor map, "
        "arm YAML, sim config, proximal joints; explicit file arguments override them",
    )
    parser.add_argument("--list-arms", action="store_true", help="list the arm profiles and exit")
    parser.add_argument(
        "--teleop",
        action="store_true",
        help="teleoperation: two simulated arms of --arm (default palletizer), leader drives "
        "follower, force feedback; writes summary.json (teleop.*) and teleop.png (tools/demo/teleop.py)",
    )
    parser.add_argument(
        "--arm-gravity-scale",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="give the arm YAML to the gravity node, so its gravity_scale (i2rt's "
        "gravity_comp_factor) applies (default: on with --arm, off otherwise)",
    )
    parser.add_argument("--urdf", help="URDF/xacro of another robot (default: bundled palletizer)")
    parser.add_argument("--arm-config", help="per-arm YAML with the friction_comp block")
    parser.add_argument("--motor-map", help="mit_bridge parameter file (joints, CAN ids, motors, kp/kd)")
    parser.add_argument(
        "--sim-config",
        help="simulated arm's true values (default: config/sim_palletizer.yaml "
        "for the palletizer; derived from --arm-config for another robot)",
    )
    parser.add_argument(
        "--sim-urdf",
        help="URDF the simulated arm is built from, the sim config's simulation.links truth "
        "applied to it (default: --urdf, the compensator's); e.g. the profile's URDF with "
        "--urdf calib/calibrated.urdf",
    )
    parser.add_argument("--gravity-params", help="gravity node parameter file (payload)")
    parser.add_argument("--friction-params", help="friction node parameter file")
    parser.add_argument(
        "--friction-config",
        help="friction YAML (friction_comp block) for the friction node, "
        "e.g. identify_friction's friction_identified.yaml (default: --arm-config)",
    )
    parser.add_argument(
        "--profile",
        choices=("pick_place", "sine", "loaded_sine"),
        default="pick_place",
        help="pick_place cycle with the payload (default), or slow sines about home "
        "(amplitudes --amplitude/--distal-amplitude) where friction dominates",
    )
    parser.add_argument(
        "--bam-model",
        choices=("m4", "m6"),
        default="m4",
        help="--profile loaded_sine: eRob80:100 BAM model of the simulated Big YAM joint2 (tools/demo/loaded_sine.py)",
    )
    parser.add_argument("--period", type=float, default=8.0, help="[s] sine period (--profile sine)")
    parser.add_argument("--cycles", type=int, default=1, help="sine periods per run (--profile sine)")
    parser.add_argument(
        "--payload-parent",
        help="joint or link holding the payload (default: the gravity "
        "file's for the palletizer, the last motor-map joint for another robot)",
    )
    parser.add_argument("--proximal", help="comma-separated proximal joints (default: first half)")
    parser.add_argument("--home", help="home pose, one value per URDF joint [rad]")
    parser.add_argument(
        "--amplitude", type=float, default=DEMO_AMPLITUDE, help="proximal pick/place offset [rad]"
    )
    parser.add_argument(
        "--distal-amplitude", type=float, default=DEMO_DISTAL_AMPLITUDE, help="distal pick/place offset [rad]"
    )
    parser.add_argument("--kp", help="bridge kp per joint (overrides the motor map) [N·m/rad]")
    parser.add_argument("--kd", help="bridge kd per joint [N·m·s/rad]")
    parser.add_argument("--move-time", type=_duration(MIN_DURATION, True), default=2.0, help="[s] per move")
    parser.add_argument("--dwell-time", type=_duration(0.0, True), default=1.5, help="[s] per stop")
    parser.add_argument(
        "--start-delay", type=_duration(0.0, True), default=2.0, help="[s] settling at home first"
    )
    parser.add_argument("--output", type=_output_dir, default="demo_output", help="output directory")
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="run the chain on the wall clock (shows its real latency; the verdict is "
        "'inconclusive', exit 3, when the machine could not keep real time) instead of "
        "lockstep on the simulated arm's /clock (default: reproducible on any machine)",
    )
    parser.add_argument(
        "--one-bridge",
        action="store_true",
        help="lockstep, a motor map on several buses: one bridge node in the demo's process "
        "serving every bus, instead of one bridge process per bus (the default)",
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=0.001,
        help="[s] lockstep: modelled transport delay of a command, whole physics steps",
    )
    parser.add_argument(
        "--domain-id",
        type=_domain_id,
        help=f"ROS_DOMAIN_ID, 0-{MAX_DOMAIN_ID} (default: a private one from the pid, "
        f"{PRIVATE_DOMAINS[0]}-{PRIVATE_DOMAINS[-1]}, "
        "never the shell's: the demo publishes joint commands)",
    )
    return parser.parse_args(argv)
