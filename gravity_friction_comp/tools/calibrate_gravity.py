"""``calibrate_gravity``: fit link masses and centres of mass from static poses, write a URDF.

Usage::

    calibrate_gravity plan   --arm palletizer --poses 30 --dither 0.02 --out plan.yaml
    calibrate_gravity record --arm palletizer --plan plan.yaml --out log.csv   # real arm, chain running
    calibrate_gravity fit    --arm palletizer --plan plan.yaml --log log.csv --out-dir calib
    calibrate_gravity payload --urdf calib/calibrated.urdf --plan plan.yaml --log held.csv \\
        --parent tool --out payload.yaml
    calibrate_gravity --sim  --arm palletizer --sim-config truth.yaml --dither 0.02 --out-dir calib

``--urdf`` replaces the arm profile's URDF (the model being calibrated); without ``--arm``,
``plan``/``fit``/``payload`` take its own joints and limits (:func:`_model`). ``fit`` and
``--sim`` write ``<out-dir>/calibrated.urdf``, ``report.yaml``, ``report.txt`` and
``report.png``; ``--sim`` also checks the result against the simulator's truth (gravity
error over 200 random configurations, before/after, both-sides vs one-side approach) and
puts those figures in the report, with a per-joint verdict (``check_acceptance``,
:func:`acceptance`); both write into a staging folder moved into ``--out-dir`` on success,
so a failed run leaves ``--out-dir`` as it was. ``--dither A`` (recommended: A above the joints' stiction
band F_s/kp) dithers each hold so friction averages out (:mod:`gravity_friction_comp.calib.plan`).
Exit codes: 0 success; 1 ``record`` stopped by SIGINT/SIGTERM
(nothing written); 2 bad input or nothing recorded (one line
``calibrate_gravity: error: ...``, no URDF written). Procedure and safety:
docs/gravity_calibration.md; method: :mod:`gravity_friction_comp.calib.fit`.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from collections.abc import Sequence

import numpy as np

from gravity_friction_comp.errors import ConfigError, GravityFrictionCompError

_PROG = "calibrate_gravity"
#: Profile used without ``--arm`` (and, with ``--urdf``, by ``--sim`` and ``record`` only).
_DEFAULT_ARM = "palletizer"


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows every default."""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--arm",
        default=None,
        help=f"arm profile (arms/<name>); {_DEFAULT_ARM} unless --urdf is given (then the URDF's own "
        "joints and limits; --sim and record still need the profile's motor map)",
    )
    p.add_argument("--urdf", default=None, help="URDF to calibrate (None: the profile's)")


def _plan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--poses", type=int, default=30, help="number of poses (2..200)")
    p.add_argument("--margin", type=float, default=0.15, help="[rad] kept from each joint limit")
    p.add_argument("--approach", type=float, default=0.1, help="[rad] approach from each side (0: one side)")
    p.add_argument("--seed", type=int, default=0, help="candidate sampling seed")
    p.add_argument(
        "--dither",
        type=float,
        default=0.0,
        help="[rad] sine dither amplitude in each hold (0: still holds); above the stiction band F_s/kp",
    )
    p.add_argument("--dither-period", type=float, default=1.0, help="[s] dither period")
    p.add_argument("--dither-cycles", type=int, default=2, help="whole dither periods averaged per hold")
    p.add_argument("--move-time", type=float, default=1.2, help="[s] move to each approach point")
    p.add_argument("--approach-time", type=float, default=0.6, help="[s] final approach to each pose")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=_PROG, description="Gravity calibration from static poses.", formatter_class=_Help
    )
    p.add_argument("--sim", action="store_true", help="plan, record and fit on the simulated arm")
    p.add_argument("--sim-config", default=None, help="simulator truth YAML (None: the profile's)")
    p.add_argument("--out-dir", default="gravity_calibration", help="output directory")
    _common(p)
    _plan_options(p)
    sub = p.add_subparsers(dest="command")
    plan = sub.add_parser("plan", formatter_class=_Help, help="write a pose plan YAML")
    _common(plan)
    _plan_options(plan)
    plan.add_argument("--out", default="calibration_plan.yaml", help="plan YAML written")
    rec = sub.add_parser(
        "record", formatter_class=_Help, help="play the plan through the running chain, record joint_states"
    )
    _common(rec)
    rec.add_argument("--plan", required=True, help="plan YAML (calibrate_gravity plan)")
    rec.add_argument(
        "--out", default="calibration_log.csv", help="joint-log .csv, else a rosbag2 folder (MCAP)"
    )
    rec.add_argument("--rate", type=float, default=250.0, help="setpoint rate [Hz]")
    rec.add_argument(
        "--sim-time", action="store_true", help="on /clock (use_sim_time): a lockstep simulated chain"
    )
    fit = sub.add_parser(
        "fit", formatter_class=_Help, help="fit the recording, write the calibrated URDF and report"
    )
    _common(fit)
    fit.add_argument("--plan", required=True, help="plan YAML the recording played")
    fit.add_argument("--log", required=True, help="joint-log CSV or rosbag2 folder")
    fit.add_argument("--out-dir", default="gravity_calibration", help="output directory")
    pay = sub.add_parser(
        "payload",
        formatter_class=_Help,
        help="fit the held payload (arm already calibrated), write payload.* parameters",
    )
    _common(pay)
    pay.add_argument("--plan", required=True, help="plan YAML the recording played")
    pay.add_argument("--log", required=True, help="recording with the payload held")
    pay.add_argument("--parent", required=True, help="link or joint the payload hangs from")
    pay.add_argument("--out", default="payload.yaml", help="payload.* parameters YAML written")
    p.add_argument("--payload-mass", type=float, default=0.0, help="--sim: true payload mass [kg] (0: none)")
    p.add_argument("--payload-com", type=float, nargs=3, default=(0.0, 0.0, 0.0), help="--sim: [m] in parent")
    p.add_argument("--payload-parent", default="", help="--sim: link the payload hangs from")
    p.add_argument(
        "--sim-hold-undriven",
        action="store_true",
        help="--sim: hold the joints the bridge does not drive (gripper fingers) as their motor would",
    )
    return p


def _check_args(args) -> None:
    """Every number option checked once, before anything runs (ConfigError: the one-line error)."""
    from gravity_friction_comp.validation import integer, number

    number("--margin", args.margin, nonneg=True, unit="[rad]")
    number("--approach", args.approach, nonneg=True, unit="[rad]")
    number("--dither", args.dither, nonneg=True, unit="[rad]")
    number("--dither-period", args.dither_period, positive=True, unit="[s]")
    integer("--dither-cycles", args.dither_cycles, low=1)
    number("--move-time", args.move_time, positive=True, unit="[s]")
    number("--approach-time", args.approach_time, positive=True, unit="[s]")
    number("--payload-mass", args.payload_mass, nonneg=True, unit="[kg]")
    for v in args.payload_com:
        number("--payload-com", v, unit="[m]")
    if getattr(args, "rate", None) is not None:
        number("--rate", args.rate, positive=True, unit="[Hz]")


def _model(args, motor_map: bool = False):
    """(bridge joints, arm profile or None, model of ``--urdf`` or the profile's URDF).

    Without ``--arm``, a ``--urdf`` is planned and fitted on its own joints and limits (no
    profile); ``motor_map`` (``--sim``, ``record``) still needs a profile: the default one,
    if its bridge joints are joints of the URDF.

    Raises:
        ConfigError: that profile's joints are not all in the URDF (pass ``--arm``).
    """
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    if args.arm is None and args.urdf is not None:
        model = RobotModel.from_urdf(args.urdf)
        if not motor_map:
            return tuple(model.joint_names), None, model
        arm = load_arm(_DEFAULT_ARM)
        missing = [j for j in arm.joints if j not in model.joint_names]
        if missing:
            raise ConfigError(
                f"joints of profile {_DEFAULT_ARM} {missing} are not in {args.urdf}; pass --arm", key="arm"
            )
        return arm.joints, arm, model
    arm = load_arm(args.arm or _DEFAULT_ARM)
    return arm.joints, arm, RobotModel.from_urdf(args.urdf or arm.urdf)


def _plan(args, regressor, joints):
    from gravity_friction_comp.calib.plan import plan_poses

    model = regressor.model
    fixed = {  # joints the bridge does not drive: held at 0 (or the nearest limit)
        j: float(np.clip(0.0, model.position_lower[i], model.position_upper[i]))
        for i, j in enumerate(model.joint_names)
        if j not in joints
    }
    return plan_poses(
        regressor,
        args.poses,
        margin=args.margin,
        approach=args.approach,
        seed=args.seed,
        fixed=fixed,
        move_time=args.move_time,
        approach_time=args.approach_time,
        dither=args.dither,
        dither_period=args.dither_period,
        dither_cycles=args.dither_cycles,
    )


#: Rate [Hz] of the recordings written to CSV: the hold averages need no more, and a long
#: 500 Hz recording of a 7-joint arm exceeds the joint-log reader's file-size bound.
LOG_RATE_HZ = 100.0


def decimated(log, rate_hz: float = LOG_RATE_HZ):
    """``log`` keeping one sample per 1/rate_hz [s] (first sample of each period)."""
    if log.time.size < 2:
        return log
    keep = np.flatnonzero(np.diff(np.floor(log.time * rate_hz), prepend=-1.0) > 0)
    pick = lambda a: None if a is None else a[keep]  # noqa: E731
    return log._replace(
        time=log.time[keep], position=log.position[keep], velocity=pick(log.velocity), effort=pick(log.effort)
    )


def gravity_errors(calibrated, truth, seed: int = 1, count: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """(Per-joint RMS [N·m] of ``calibrated.gravity − truth.gravity`` over ``count`` seeded
    random configurations within the limits, the configurations (count, n) [rad])."""
    model = calibrated
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    qs = rng.uniform(lower, upper, size=(count, model.n))
    err = np.array([model.gravity(q) - truth.gravity(q) for q in qs])
    return np.sqrt(np.mean(err**2, axis=0)), qs


#: Issue 16's acceptance per joint (calibrated vs true gravity over 200 configurations):
#: at most RATIO of the uncalibrated error and at most BOUND [N·m] ...
ACCEPT_RATIO, ACCEPT_BOUND = 0.1, 0.02
#: ... the ratio only where the uncalibrated error is at least FLOOR [N·m]: below it the
#: ratio asks for less than the recording resolves (with stiction on, a joint's calibrated
#: error is ~0.002 N·m whatever its uncalibrated error: docs/gravity_calibration.md).
ACCEPT_FLOOR = 0.02


def acceptance(joints, measured, before, after) -> dict[str, str]:
    """Verdict per joint: ``pass``/``FAIL`` and on which rule; a joint without recorded
    effort (not on the bridge) is reported but not judged: the holds never measure it."""
    out = {}
    for j, b, a in zip(joints, before, after):
        if j not in measured:
            out[j] = f"not judged: no effort recorded ({a:.4f} after, {b:.4f} before)"
        elif b < ACCEPT_FLOOR:
            ok = a <= ACCEPT_BOUND
            ratio = f"; ratio {a / b:.3f}" if b > 1e-6 else ""  # not of rounding noise
            out[j] = (
                f"{'pass' if ok else 'FAIL'} absolute only ({a:.4f} N·m; uncalibrated {b:.4f} "
                f"< floor {ACCEPT_FLOOR}{ratio})"
            )
        else:
            ok = a <= ACCEPT_RATIO * b and a <= ACCEPT_BOUND
            out[j] = f"{'pass' if ok else 'FAIL'} ratio {a / b:.3f} and bound ({a:.4f} N·m)"
    return out


def run_sim(args) -> dict:
    """``--sim``: plan, record in lockstep, fit, compare with the simulator's truth."""
    from gravity_friction_comp.calib.regressor import StaticRegressor
    from gravity_friction_comp.calib.report import staged_outputs
    from gravity_friction_comp.files import check_output_dir
    from gravity_friction_comp.sim.config import SimConfig

    check_output_dir(args.out_dir, "--out-dir")
    joints, arm, model = _model(args, motor_map=True)
    regressor = StaticRegressor(model)
    if args.payload_mass > 0.0:  # refuse before the (long) recording, not after it
        from gravity_friction_comp.calib.payload_fit import check_parent

        check_parent(regressor, args.payload_parent)
    sim_config = SimConfig.from_yaml(args.sim_config or arm.sim_config)
    plan = _plan(args, regressor, joints)
    with staged_outputs(args.out_dir) as out:  # a failed run leaves --out-dir as it was
        return _sim_run(args, arm, model, regressor, sim_config, plan, out)


def _sim_run(args, arm, model, regressor, sim_config, plan, out: pathlib.Path) -> dict:
    """The ``--sim`` run proper, writing into ``out`` (a staging folder)."""
    from gravity_friction_comp.calib.fit import fit_gravity, hold_averages
    from gravity_friction_comp.calib.plan import write_plan
    from gravity_friction_comp.calib.report import calibrated_urdf, write_outputs
    from gravity_friction_comp.calib.sim_record import record_in_simulation
    from gravity_friction_comp.ident.joint_log import write_csv
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.sim.arm import SimulatedArm

    write_plan(out / "plan.yaml", plan)
    log = record_in_simulation(
        plan, model, sim_config, arm.bridge_values(), hold_undriven=args.sim_hold_undriven
    )
    write_csv(out / "recording.csv", decimated(log))
    holds = hold_averages(log, plan, model.joint_names)
    fit = fit_gravity(regressor, holds)
    truth = SimulatedArm(model, sim_config)  # its gravity: the true links and mass_scale
    before, _ = gravity_errors(model, truth)
    after, _ = gravity_errors(RobotModel.from_urdf(calibrated_urdf(regressor, fit)), truth)
    extra = {
        "check_gravity_rms_uncalibrated": [round(float(x), 5) for x in before],
        "check_gravity_rms_calibrated": [round(float(x), 5) for x in after],
        "check_poses": int(len(plan.poses)),
        "check_acceptance": acceptance(model.joint_names, fit.joints, before, after),
    }
    if plan.approach > 0.0:
        one = fit_gravity(regressor, holds, use_sides=(-1,))
        one_side, _ = gravity_errors(RobotModel.from_urdf(calibrated_urdf(regressor, one)), truth)
        extra["check_gravity_rms_one_side"] = [round(float(x), 5) for x in one_side]
    if args.payload_mass > 0.0:
        calibrated = RobotModel.from_urdf(calibrated_urdf(regressor, fit))
        extra.update(_sim_payload(args, plan, model, calibrated, sim_config, arm, out))
    return write_outputs(out, regressor, fit, extra)


def _sim_payload(args, plan, model, calibrated, sim_config, arm, out: pathlib.Path) -> dict:
    """Record again holding the true payload, fit it on the calibrated arm, write payload.yaml."""
    from gravity_friction_comp.calib.fit import hold_averages
    from gravity_friction_comp.calib.payload_fit import fit_payload, write_payload_params
    from gravity_friction_comp.calib.regressor import StaticRegressor
    from gravity_friction_comp.calib.sim_record import record_in_simulation
    from gravity_friction_comp.model.payload import Payload

    true_payload = Payload.point(args.payload_mass, com=args.payload_com, parent=args.payload_parent)
    log = record_in_simulation(
        plan,
        model,
        sim_config,
        arm.bridge_values(),
        payload=true_payload,
        holding=True,
        hold_undriven=args.sim_hold_undriven,  # as the arm's own recording
    )
    fit = fit_payload(
        StaticRegressor(calibrated), hold_averages(log, plan, model.joint_names), args.payload_parent
    )
    write_payload_params(out / "payload.yaml", fit)
    return {
        # [fitted, true]: the simulator scales the payload by mass_scale too (sim/config.py)
        "check_payload_mass": [round(fit.mass, 5), round(args.payload_mass * sim_config.mass_scale, 6)],
        "check_payload_com": [[round(float(v), 5) for v in fit.com], list(args.payload_com)],
        "check_payload_identifiable": list(fit.identifiable),  # the rest keeps the prior (0)
    }


def run_fit(args) -> dict:
    from gravity_friction_comp.calib.fit import fit_gravity, hold_averages
    from gravity_friction_comp.calib.plan import load_plan
    from gravity_friction_comp.calib.regressor import StaticRegressor
    from gravity_friction_comp.calib.report import staged_outputs, write_outputs
    from gravity_friction_comp.files import check_output_dir
    from gravity_friction_comp.ident.joint_log import load_log

    check_output_dir(args.out_dir, "--out-dir")
    *_, model = _model(args)
    plan = load_plan(args.plan)
    if plan.joints != model.joint_names:
        raise ConfigError(
            f"plan joints {list(plan.joints)} differ from the model's {list(model.joint_names)}", key="plan"
        )
    regressor = StaticRegressor(model)
    fit = fit_gravity(regressor, hold_averages(load_log(args.log), plan, model.joint_names))
    with staged_outputs(args.out_dir) as out:
        return write_outputs(out, regressor, fit)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 success, 2 bad input)."""
    args = _parser().parse_args(argv)
    try:
        _check_args(args)
        if args.sim:
            report = run_sim(args)
        elif args.command == "plan":
            from gravity_friction_comp.calib.plan import write_plan
            from gravity_friction_comp.calib.regressor import StaticRegressor

            joints, _, model = _model(args)
            plan = _plan(args, StaticRegressor(model), joints)
            write_plan(args.out, plan)
            if (plan.move_time, plan.approach_time) != (args.move_time, args.approach_time):
                print(
                    f"move/approach time lengthened to {plan.move_time:.2f}/{plan.approach_time:.2f} s "
                    "to stay within the joints' velocity limits"
                )
            print(f"{len(plan.poses)} poses, condition number {plan.condition:.1f}: {args.out}")
            return 0
        elif args.command == "record":
            from gravity_friction_comp.calib.plan import load_plan, within_velocity_limits
            from gravity_friction_comp.ident.joint_log import check_new_output, write_csv
            from gravity_friction_comp.nodes.calibration_recorder import record_on_chain

            check_new_output(args.out)  # before the recording, not after it
            _, arm, model = _model(args, motor_map=True)
            plan = load_plan(args.plan)
            fast = within_velocity_limits(
                plan, model.position_lower, model.position_upper, model.velocity_limits
            )
            if (fast.move_time, fast.approach_time) != (plan.move_time, plan.approach_time):
                raise ConfigError(
                    f"{args.plan}: moves exceed the joints' velocity limits; need move_time >= "
                    f"{fast.move_time:.2f} s and approach_time >= {fast.approach_time:.2f} s",
                    key="move_time",
                )
            profile = plan.profile(model.position_lower, model.position_upper)
            bag = None if args.out.endswith(".csv") else args.out  # a bag folder, written as it records
            log, stopped = record_on_chain(
                profile,
                arm.joints,
                args.rate,
                bag=bag,
                use_sim_time=args.sim_time,
                on_ready=lambda: print(
                    f"{_PROG}: recording {profile.period:.0f} s of the plan (Ctrl-C stops; nothing is written then)",
                    file=sys.stderr,
                    flush=True,
                ),
            )
            if stopped:
                print(
                    f"{_PROG}: stopped by signal after {log.time.size} samples; nothing written",
                    file=sys.stderr,
                )
                return 1
            if log.time.size == 0:
                raise ConfigError(
                    f"no joint_states with {', '.join(arm.joints)} arrived in {profile.period:.0f} s "
                    "(is the chain running?); nothing written",
                    key="joint_states",
                )
            if bag is None:
                write_csv(args.out, decimated(log))
            print(f"recorded {profile.period:.0f} s: {args.out}")
            return 0
        elif args.command == "fit":
            report = run_fit(args)
        elif args.command == "payload":
            from gravity_friction_comp.calib.fit import hold_averages
            from gravity_friction_comp.calib.payload_fit import fit_payload, write_payload_params
            from gravity_friction_comp.calib.plan import load_plan
            from gravity_friction_comp.calib.regressor import StaticRegressor
            from gravity_friction_comp.ident.joint_log import load_log

            *_, model = _model(args)
            plan = load_plan(args.plan)
            holds = hold_averages(load_log(args.log), plan, model.joint_names)
            pfit = fit_payload(StaticRegressor(model), holds, args.parent)
            write_payload_params(args.out, pfit)
            com = ", ".join(f"{v:.4f}" for v in pfit.com)
            print(f"payload {pfit.mass:.4f} kg, com [{com}] m in {args.parent}: {args.out}")
            return 0
        else:
            _parser().print_usage(sys.stderr)
            print(f"{_PROG}: error: give a command (plan, record, fit, payload) or --sim", file=sys.stderr)
            return 2
    except (GravityFrictionCompError, OSError) as error:
        print(f"{_PROG}: error: {error}", file=sys.stderr)
        return 2
    from gravity_friction_comp.calib.report import report_text

    sys.stdout.write(report_text(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
