"""Entry point of ``gfc_demo`` / ``python -m gravity_friction_comp.tools.demo``: off, then on.

Exit status 0 when the acceptance holds, 1 when not, 2 on a configuration error.
"""

from __future__ import annotations

import os
import pathlib
import sys
import time

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.tools.demo.metrics import acceptance, evaluate
from gravity_friction_comp.tools.demo.options import build_setup, parse_args
from gravity_friction_comp.tools.demo.phase import run_phase
from gravity_friction_comp.tools.demo.report import plot, table, write_summary

__all__ = ["main"]


def main(argv=None) -> int:
    """Entry point of ``gfc_demo`` / ``python -m gravity_friction_comp.tools.demo``."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before rclpy loads
    args = parse_args(argv)
    out = pathlib.Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        setup = build_setup(args, out)
    except ConfigError as error:
        print(f"gfc_demo: {error}", file=sys.stderr)
        return 2
    domain = args.domain_id if args.domain_id is not None else 120 + os.getpid() % 90
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    print(
        f"gfc_demo: {pathlib.Path(setup.urdf).name}, joints {list(setup.joints)} "
        f"(proximal {list(setup.proximal)}), sim {pathlib.Path(setup.sim_config).name}, "
        f"ROS_DOMAIN_ID={domain} (localhost)"
    )
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
    try:
        rec_off = run_phase(setup, False, domain)
        rec_on = run_phase(setup, True, domain)
        off, on = evaluate(setup, rec_off), evaluate(setup, rec_on)
    except ConfigError as error:
        print(f"gfc_demo: invalid configuration: {error}", file=sys.stderr)
        return 2
    print(
        "\ntracking error [mrad] (measured − commanded position), compensation off vs on; sag = static "
        "deflection caused by the payload at the pick pose, hold = static error while holding"
    )
    print(table(setup, off, on))
    ok, lines = acceptance(setup, off, on)
    print("\nacceptance:")
    print("\n".join("  " + line for line in lines))
    png = out / "demo.png"
    plot(setup, rec_off, rec_on, png)
    summary_path = write_summary(out / "summary.json", setup, ok, lines, off, on, time.monotonic() - started)
    print(
        f"\nplot: {png}\nsummary: {summary_path}\n"
        f"{'ACCEPTED' if ok else 'NOT ACCEPTED'} in {time.monotonic() - started:.0f} s"
    )
    return 0 if ok else 1
