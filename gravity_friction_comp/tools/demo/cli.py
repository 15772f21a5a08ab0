"""Entry point of ``gfc_demo`` / ``python -m gravity_friction_comp.tools.demo``: off, then on.

Exit status: 0 accepted, 1 not accepted, 2 configuration error, 3 inconclusive (``--realtime``
only: the machine could not keep real time, also when it recorded too little to judge),
4 the lockstep chain stopped answering (also: too little recorded in lockstep).
"""

from __future__ import annotations

import os
import pathlib
import sys
import time

from gravity_friction_comp.errors import ConfigError, LockstepStalled, ModelError, RunIncomplete
from gravity_friction_comp.tools.demo.exits import EXIT_INCONCLUSIVE, incomplete_run, stalled
from gravity_friction_comp.tools.demo.metrics import acceptance, evaluate, timing_problems
from gravity_friction_comp.tools.demo.options import build_setup, demo_domain_id, parse_args
from gravity_friction_comp.tools.demo.phase import SETPOINT_RATE_HZ, run_phase
from gravity_friction_comp.tools.demo.report import headline, plot, table, write_recordings, write_summary

__all__ = ["list_profiles", "main"]


def list_profiles() -> int:
    """Print each arm profile (``--arm`` names) with its description; exit status 0 (2 when
    a profile does not load)."""
    from gravity_friction_comp.profiles.arm_profiles import arms_directory, list_arms, load_arm

    status = 0
    print(f"arm profiles in {arms_directory()}:")
    for name in list_arms():
        try:
            p = load_arm(name)
        except ConfigError as error:
            print(f"  {name:22s} (does not load: {error})")
            status = 2
            continue
        buses = ", ".join(f"{b}: {len(p.joints_on(b))} motors" for b in p.buses)
        print(f"  {name:22s} {p.description} [{buses}]")
    return status


def main(argv=None) -> int:
    """Entry point of ``gfc_demo`` / ``python -m gravity_friction_comp.tools.demo``."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before rclpy loads
    args = parse_args(argv)
    if args.list_arms:
        return list_profiles()
    if args.teleop:  # a leader drives a follower, force feedback (issue 31)
        from gravity_friction_comp.tools.demo.teleop import main as teleop

        return teleop(args)
    if args.profile == "loaded_sine":  # three feedforwards on a BAM joint (issue 17)
        from gravity_friction_comp.tools.demo.loaded_sine import main as loaded_sine

        try:
            return loaded_sine(args)
        except RunIncomplete as error:
            return incomplete_run(error, not args.realtime)
    out = pathlib.Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        setup = build_setup(args, out)
    except (ConfigError, ModelError) as error:
        print(f"gfc_demo: {error}", file=sys.stderr)
        return 2
    domain = demo_domain_id(args)
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    print(
        f"gfc_demo: {pathlib.Path(setup.urdf).name}, joints {list(setup.joints)} "
        f"(proximal {list(setup.proximal)}), sim {pathlib.Path(setup.sim_config).name}, "
        f"ROS_DOMAIN_ID={domain} (localhost)"
    )
    if setup.sim_urdf:
        print(f"  simulated arm: {setup.sim_urdf} (the sim config's links truth applied to it)")
    if setup.profile == "sine":
        print(
            f"  sines about home: amplitude {[round(a, 3) for a in setup.sine_amplitude]} rad, period "
            f"{setup.period:g} s, {setup.cycles} cycle(s), {setup.cycle_time:g} s"
        )
    else:
        print(
            f"  cycle: home → pick (wait {setup.dwell_time:g} s, gripper closes, hold {setup.dwell_time:g} s) → "
            f"place (opens) → home, {setup.move_time:g} s moves, {setup.cycle_time:g} s"
        )
    if setup.friction_config:
        print(f"  friction model: {setup.friction_config}")
    print(
        f"  lockstep on the simulated arm's /clock, command delay {1e3 * setup.delay:g} ms"
        if setup.lockstep
        else "  real time (--realtime): the chain on the wall clock"
    )
    try:
        rec_off = run_phase(setup, False, domain)
        rec_on = run_phase(setup, True, domain)
        off, on = evaluate(setup, rec_off), evaluate(setup, rec_on)
    except ConfigError as error:
        print(f"gfc_demo: invalid configuration: {error}", file=sys.stderr)
        return 2
    except LockstepStalled as error:
        return stalled(error)
    except RunIncomplete as error:
        return incomplete_run(error, setup.lockstep)
    sim_s = rec_off.timing["sim_s"] + rec_on.timing["sim_s"]
    wall_s = rec_off.timing["wall_s"] + rec_on.timing["wall_s"]
    print(
        f"  {sim_s:.1f} s simulated in {wall_s:.1f} s wall: {sim_s / wall_s:.2f}x real time"
        f"{' (lockstep)' if setup.lockstep else ''}"
    )
    print(
        "\ntracking error [mrad] (measured − commanded position), compensation off vs on; sag = static "
        "deflection caused by the payload at the pick pose, hold = static error while holding"
    )
    print(table(setup, off, on))
    ok, lines = acceptance(setup, off, on)
    print("\nacceptance:")
    print("\n".join("  " + line for line in lines))
    problems, figures = [], {}
    for name, rec in (("off", rec_off), ("on", rec_on)):
        found, fig = timing_problems(rec, SETPOINT_RATE_HZ)
        problems += [f"{name}: {p}" for p in found]
        figures.update({f"{name}.{k}": v for k, v in fig.items()})
    if problems:
        verdict = "inconclusive: the machine could not keep real time (" + "; ".join(problems) + ")"
    else:
        verdict = "ACCEPTED" if ok else "NOT ACCEPTED"
    png = out / "demo.png"
    plot(setup, rec_off, rec_on, png, title=f"{verdict.split(':')[0]}: {headline(setup, off, on)}")
    write_recordings(out, setup, rec_off, rec_on)
    summary_path = write_summary(
        out / "summary.json",
        setup,
        ok,
        lines,
        off,
        on,
        time.monotonic() - started,
        verdict=verdict,
        timing={"sim_s": sim_s, "wall_s": wall_s, "lockstep": setup.lockstep, **figures},
    )
    print(f"\nplot: {png}\nsummary: {summary_path}\n{verdict} in {time.monotonic() - started:.0f} s")
    if problems:
        return EXIT_INCONCLUSIVE
    return 0 if ok else 1
