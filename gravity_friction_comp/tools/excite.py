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
    """``python -m gravity_friction_comp.tools.excite``: write an excitation CSV.

    Exit code 0, or 2 with a message on a bad URDF/option (no traceback)."""
    import argparse
    import sys

    from gravity_friction_comp.errors import GravityFrictionCompError

    p = argparse.ArgumentParser(
        prog="python -m gravity_friction_comp.tools.excite",
        description="Write friction-identification sweeps as a setpoint_player CSV.",
    )
    p.add_argument("--urdf", required=True)
    p.add_argument(
        "--start", nargs="+", type=float, required=True, help="start pose [rad], one value per URDF joint"
    )
    p.add_argument("--joints", nargs="+", default=None)
    p.add_argument("--speeds", nargs="+", type=float, default=list(ExcitationConfig.speeds))
    p.add_argument("--amplitude", type=float, default=ExcitationConfig.amplitude)
    p.add_argument("--velocity-scale", type=float, default=ExcitationConfig.velocity_scale)
    p.add_argument("--no-chirp", action="store_true")
    p.add_argument("--rate", type=float, default=ExcitationConfig.rate_hz)
    p.add_argument("--out", default="excitation.csv")
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
        write_setpoint_csv(prof, args.out)
    except (GravityFrictionCompError, ValueError, OSError) as exc:
        print(f"excitation: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {prof.time[-1]:.1f} s, joints {list(cfg.joints or model.joint_names)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
