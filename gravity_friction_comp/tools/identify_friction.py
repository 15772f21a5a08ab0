"""``identify_friction``: fit joint friction from a log and write the per-arm YAML.

Usage::

    identify_friction --bag rosbag2_folder --urdf arm.urdf --out-dir friction_out
    identify_friction --csv log.csv --urdf arm.urdf --joints shoulder_pitch beam_pitch \\
        --payload-attached payload.yaml --validation-fraction 0.25 --out-dir friction_out

Writes ``friction_out/friction_identified.yaml`` (``friction_comp`` block, loadable by
``friction_feedforward_node`` / :meth:`FrictionModel.from_yaml`), BAM JSON files and one PNG
per joint, and prints a per-joint table (validation RMS [N·m], parameter count, selection).
Exit codes: 0 success; 2 bad input (missing, unreadable or malformed file, missing
topic/joint, too little motion, NaN data, time not increasing or steps below 1 µs, friction
pushing along the motion -- a reversed effort or velocity sign convention --, bad options)
with a one-line ``identify_friction: error: ...`` on stderr, never a traceback.
Warnings (exit 0, ``identify_friction: warning: ...`` on stderr and in the YAML's
``identification`` section): no friction resolved above the noise for a joint, or identified
friction above the joint's URDF effort limit (the log's effort is probably in other units or
scaled; URDF limits are often placeholders, so this does not refuse); gaps in the log longer
than a few sample periods; velocities far beyond the excitation's; joints left out (without
``--joints``, a joint with too little motion is left out rather than refused). The YAML lists
the identified joints only (set the friction node's ``joints`` to them); a joint left out gets
no entry, never zeros.
See :mod:`gravity_friction_comp.ident.identify` for the method.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from gravity_friction_comp.errors import ConfigError, GravityFrictionCompError
from gravity_friction_comp.files import check_output_dir


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="identify_friction",
        description="Identify joint friction (Coulomb, viscous, Stribeck, BAM) from a "
        "joint_states log and write a per-arm friction YAML.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--bag", help="rosbag2 folder (sqlite3 or MCAP) with sensor_msgs/JointState")
    src.add_argument("--csv", help="CSV log: time, <joint>/position, <joint>/velocity, <joint>/effort, ...")
    p.add_argument(
        "--topic", default="/joint_states", help="JointState topic in the bag (default /joint_states)"
    )
    p.add_argument("--urdf", required=True, help="URDF or .xacro of the arm")
    p.add_argument("--joints", nargs="+", default=None, help="joints to identify (default: all URDF joints)")
    p.add_argument(
        "--payload-attached",
        metavar="PAYLOAD_YAML",
        default=None,
        help="the payload was held during the record: YAML with a 'payload:' "
        "mapping (mass, shape, parent, ...; as in gravity_compensation.yaml)",
    )
    p.add_argument("--out-dir", default="friction_identified", help="output directory")
    p.add_argument(
        "--others-from",
        metavar="ARM_YAML",
        default=None,
        help="arm YAML whose friction the joints not identified keep, so the written YAML "
        "lists all its joints (e.g. the arm's config/<arm>_arm.yaml; default: the identified joints only)",
    )
    p.add_argument(
        "--validation-fraction",
        type=float,
        default=0.25,
        help="share of 1 s blocks held out for validation (0, 0.5], default 0.25",
    )
    p.add_argument("--block-duration", type=float, default=1.0, help="hold-out block length [s], default 1")
    p.add_argument(
        "--min-velocity", type=float, default=0.01, help="slowest sample used [rad/s], default 0.01"
    )
    p.add_argument(
        "--max-acceleration",
        type=float,
        default=2.0,
        help="largest |acceleration| of a sample used [rad/s^2], default 2",
    )
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    return p


def _payload(path: str):
    """The :class:`~gravity_friction_comp.model.payload.Payload` of the first ``payload:`` mapping
    in the YAML file ``path`` (searched depth-first; ``attached`` is dropped).

    Raises:
        ConfigError: missing/unreadable/non-UTF-8/invalid YAML file, no ``payload:``
            mapping, a non-string key in it (``payload: {1: 2}``), or a bad payload value.
    """
    from gravity_friction_comp.files import read_yaml
    from gravity_friction_comp.model.payload import Payload
    from gravity_friction_comp.validation import string_keys

    data = read_yaml(path, "payload YAML")

    def find(d):
        if isinstance(d, dict):
            if isinstance(d.get("payload"), dict):
                return d["payload"]
            for v in d.values():
                found = find(v)
                if found is not None:
                    return found
        return None

    params = find(data)
    if params is None:
        raise ConfigError(f"payload YAML {path}: no 'payload:' mapping", key="payload", value=path)
    params = {k: v for k, v in string_keys("payload", params).items() if k != "attached"}
    return Payload.from_params(params)


def text_progress(total: int, stream=None) -> Callable[[str], None]:
    """A textual progress bar on ``stream`` (stderr): returns a callback for :func:`~gravity_friction_comp.ident.identify.identify`
    that advances one of ``total`` steps per call."""
    stream = sys.stderr if stream is None else stream
    count = [0]

    def step(label: str) -> None:
        count[0] = min(count[0] + 1, total)
        width = 30
        filled = int(width * count[0] / total)
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {count[0]}/{total} {label[:40]:<40}")
        if count[0] == total:
            stream.write("\n")
        stream.flush()

    return step


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad input)."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except (GravityFrictionCompError, ValueError, OSError) as exc:
        text = " ".join(str(exc).split())  # one line, whatever the message holds
        print(f"identify_friction: error: {text}", file=sys.stderr)
        return 2


def _run(args) -> int:
    from gravity_friction_comp.ident.identify import IdentificationConfig, identify
    from gravity_friction_comp.ident.joint_log import load_csv, load_rosbag
    from gravity_friction_comp.ident.report import write_outputs
    from gravity_friction_comp.model.robot_model import RobotModel

    check_output_dir(args.out_dir, "--out-dir")  # up front, not after the identification

    config = IdentificationConfig(
        validation_fraction=args.validation_fraction,
        block_duration=args.block_duration,
        min_velocity=args.min_velocity,
        max_acceleration=args.max_acceleration,
    )
    model = RobotModel.from_urdf(args.urdf)
    if args.payload_attached:
        model = model.with_payload(_payload(args.payload_attached))
    log = load_rosbag(args.bag, args.topic) if args.bag else load_csv(args.csv)
    steps = 1 + 4 * len(args.joints or model.joint_names)
    try:
        result = identify(log, model, args.joints, config, progress=text_progress(steps))
    except GravityFrictionCompError:
        print(file=sys.stderr)  # end the progress bar's line before the error
        raise
    # before writing: write_outputs may still refuse
    for text in (*result.warnings, *(t for jf in result.fits for t in jf.warnings)):
        print(f"identify_friction: warning: {text}", file=sys.stderr)
    # the identified joints only (a joint left out gets no entry rather than zero friction),
    # or with --others-from every joint of that file, the others keeping its friction
    all_joints, others = None, None
    if args.others_from:
        from gravity_friction_comp.friction.arm_yaml import load_arm_yaml
        from gravity_friction_comp.friction.models import FrictionModel

        listed = load_arm_yaml(args.others_from).get("joints") or list(model.joint_names)
        all_joints = [*listed, *(j for j in result.joints if j not in listed)]
        others = FrictionModel.from_yaml(args.others_from, [str(j) for j in listed]).params
    paths = write_outputs(result, args.out_dir, plots=not args.no_plots, all_joints=all_joints, others=others)
    kept = [j for j in all_joints or () if j not in result.joints]
    if kept:
        print(f"identify_friction: kept from {args.others_from}: {', '.join(kept)}", file=sys.stderr)
    print(f"{'joint':<20} {'model':<16} {'val RMS [N·m]':>14} {'params':>6}")
    for jf in result.fits:
        for name, m in jf.fits.items():
            mark = "  <- selected" if name == jf.selected else ""
            print(f"{jf.joint:<20} {name:<16} {m.validation_rms:>14.5f} {m.n_params:>6}{mark}")
        for name, why in jf.skipped.items():
            print(f"{jf.joint:<20} {name:<16} {'skipped':>14}        ({why})")
    print(f"wrote {paths['yaml']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
