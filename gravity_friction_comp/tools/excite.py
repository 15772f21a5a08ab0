"""``python -m gravity_friction_comp.tools.excite``: write friction-identification sweeps as a CSV.

Usage::

    python -m gravity_friction_comp.tools.excite --urdf arm.urdf --start 0 0.3 0.2 \\
        --joints shoulder_pitch beam_pitch --speeds 0.05 0.1 0.3 0.8 --out excitation.csv

The profile is :func:`gravity_friction_comp.ident.excitation.excitation_profile`; the CSV is a
joint log the ``setpoint_player`` replays (``profile:=csv csv_path:=excitation.csv``).
"""

from __future__ import annotations

from gravity_friction_comp.ident.excitation import (
    ExcitationConfig,
    JointLimits,
    excitation_profile,
    write_setpoint_csv,
)


def main(argv=None) -> int:
    """``excite`` (``python -m gravity_friction_comp.tools.excite``): write an excitation CSV.

    Exit code 0, or 2 with a message on a bad URDF/option (no traceback)."""
    import argparse
    import sys

    from gravity_friction_comp.errors import GravityFrictionCompError

    d = ExcitationConfig
    p = argparse.ArgumentParser(
        prog="excite",
        description="Write friction-identification sweeps as a setpoint_player CSV "
        "(replay with profile:=csv csv_path:=<out>).",
    )
    p.add_argument("--urdf", required=True, help="URDF/xacro of the arm (joint limits)")
    p.add_argument(
        "--start",
        nargs="+",
        type=float,
        required=True,
        help="start pose [rad], one value per URDF joint (a value outside a joint's limits is "
        "moved inside, with a warning)",
    )
    p.add_argument("--joints", nargs="+", default=None, help="joints to excite, in order (default: all)")
    p.add_argument(
        "--speeds",
        nargs="+",
        type=float,
        default=list(d.speeds),
        help=f"sweep speeds [rad/s], slowest first (default {' '.join(f'{v:g}' for v in d.speeds)})",
    )
    p.add_argument(
        "--amplitude",
        type=float,
        default=d.amplitude,
        help=f"sweep range width [rad] (default {d.amplitude:g})",
    )
    p.add_argument(
        "--velocity-scale",
        type=float,
        default=d.velocity_scale,
        help=f"fraction of the URDF velocity limit never exceeded, (0, 1] (default {d.velocity_scale:g})",
    )
    p.add_argument("--no-chirp", action="store_true", help="no chirp after each joint's sweeps")
    p.add_argument("--rate", type=float, default=d.rate_hz, help=f"sample rate [Hz] (default {d.rate_hz:g})")
    p.add_argument("--out", default="excitation.csv", help="CSV to write (default excitation.csv)")
    args = p.parse_args(argv)
    try:
        from gravity_friction_comp.model.robot_model import RobotModel

        model = RobotModel.from_urdf(args.urdf)
        cfg = ExcitationConfig(
            joints=tuple(args.joints) if args.joints else None,
            speeds=tuple(args.speeds),
            amplitude=args.amplitude,
            velocity_scale=args.velocity_scale,
            chirp=not args.no_chirp,
            rate_hz=args.rate,
        )
        prof = excitation_profile(JointLimits.from_model(model), args.start, cfg)
        if len(args.start) == len(model.joint_names):
            # the profile starts inside the limits (minus margin): say which value moved
            for joint, given, used in zip(model.joint_names, args.start, prof.position[0]):
                if given != used:
                    print(
                        f"excite: warning: --start {joint}: {given:g} rad is outside its limits, "
                        f"used {used:.4g} rad",
                        file=sys.stderr,
                    )
        write_setpoint_csv(prof, args.out)
    except (GravityFrictionCompError, ValueError, OSError) as exc:
        print(f"excite: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {prof.time[-1]:.1f} s, joints {list(cfg.joints or model.joint_names)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
