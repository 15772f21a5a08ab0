"""Gravity models against one simulated truth: the demo's "on" run with the uncalibrated, calibrated and true URDF.

Issue 16 (point 3): a calibrated URDF is only as good as the tracking it gives on the true
arm. The simulated arm is built from ``--sim-urdf`` (default: the profile's or ``--urdf``,
the uncalibrated model) with the sim config's truth (``simulation.links``, and
``mass_scale``) applied; the gravity node gets, one run each, with compensation on:

1. ``uncalibrated``: the compensator's URDF (``--urdf`` or the profile's);
2. ``calibrated``: ``--calibrated PATH`` (``calibrate_gravity``'s ``calibrated.urdf``);
3. ``true``: the simulated arm's own inertials written as a URDF (:func:`true_urdf`,
   ``<output>/true.urdf``): the route that needs no calibration.

Figures per run [mrad] (:mod:`.metrics`): proximal RMS tracking error
(√Σ RMS² over the non-exempt proximal joints), sag (the payload's deflection) and the static
error while holding (model error included), per joint; accepted (:func:`verdict`) when the
calibrated run's proximal RMS is within :data:`MAX_RELATIVE_GAP` of the true run's and its
sag and holding error are within that fraction plus one position feedback code per joint
(with stiction the arm sticks on whole codes: 0.38 mrad on the palletizer). The gravity node's ``scale`` is 1 on every joint in all runs (a vendor's
``gravity_scale`` is a fudge the calibrated URDF replaces). Outputs in ``--output``:
``true.urdf`` and ``gravity_models.json``. Every other option is the demo's
(``--arm``, ``--sim-config``, ``--move-time``, ...). Exit status as ``gfc_demo``'s
(:mod:`.cli`): 0 accepted, 1 not, 2 bad input, 3 inconclusive (``--realtime`` only: a run
recorded too little to judge, the machine could not keep real time), 4 the lockstep chain
stopped answering (also: a run recorded too little in lockstep).

Run: ``python -m gravity_friction_comp.tools.demo.gravity_models --arm palletizer
--sim-config config/sim_palletizer_calib_truth.yaml --calibrated calib/calibrated.urdf``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import pathlib
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from gravity_friction_comp.errors import ConfigError, LockstepStalled, ModelError, RunIncomplete

__all__ = ["MAX_RELATIVE_GAP", "RUNS", "compare", "figures", "main", "true_urdf", "verdict"]

#: The calibrated run's proximal RMS and sag within this fraction of the true run's (issue 16).
MAX_RELATIVE_GAP = 0.10
RUNS = ("uncalibrated", "calibrated", "true")


def true_urdf(xml: str, sim: Any) -> str:
    """URDF text of the simulated arm's true links: ``xml`` with ``sim.links`` applied
    (:func:`~gravity_friction_comp.sim.link_truth.apply_link_truth`) and every link's mass,
    inertia and point mass × ``sim.mass_scale`` (the simulated arm scales its whole
    rigid-body model by it, :mod:`gravity_friction_comp.sim.arm`).

    Args:
        xml: the simulated arm's URDF text. sim: its
            :class:`~gravity_friction_comp.sim.config.SimConfig`.

    Raises:
        ConfigError: as ``apply_link_truth`` (a link the URDF lacks).
    """
    from gravity_friction_comp.model.urdf_inertial import read_inertials
    from gravity_friction_comp.sim.link_truth import LinkTruth, apply_link_truth

    links = dict(sim.links)
    s = float(sim.mass_scale)
    if s != 1.0:  # one scale on every link's truth: m, I and the point mass × s, COM kept
        links = {name: links.get(name, LinkTruth()) for name in read_inertials(xml)} | links
        links = {
            name: dataclasses.replace(t, mass_scale=t.mass_scale * s, extra_mass=t.extra_mass * s)
            for name, t in links.items()
        }
    return apply_link_truth(xml, links) if links else xml


def figures(setup, metrics: Mapping[str, Any]) -> dict[str, float]:
    """``{"proximal_rms", "sag", "hold"}`` [mrad] of one run's per-joint
    :class:`~.metrics.JointMetrics`: √Σ RMS² over the non-exempt proximal joints, the worst
    sag and the worst static error while holding over the non-exempt joints."""
    proximal = [j for j in setup.proximal if j not in setup.exempt]
    joints = [j for j in setup.joints if j not in setup.exempt]
    return {
        "proximal_rms": math.sqrt(sum(metrics[j].rms ** 2 for j in proximal)),
        "sag": max(metrics[j].sag for j in joints),
        "hold": max(metrics[j].hold_error for j in joints),
    }


def compare(setup, urdfs: Mapping[str, str], sim_urdf: str, domain_id: int, log=print) -> dict[str, dict]:
    """One compensated run per gravity model on the same simulated arm.

    Args:
        setup: the demo's :class:`~.scenario.DemoSetup` (pick-and-place profile).
        urdfs: {label: URDF the gravity node loads}. sim_urdf: the simulated arm's URDF.
        domain_id: ROS_DOMAIN_ID of the runs.

    Returns:
        {label: {"joints": {joint: JointMetrics fields}, **:func:`figures`}}.

    Raises:
        ConfigError, LockstepStalled, RunIncomplete: as :func:`~.phase.run_phase` and
            :func:`~.metrics.evaluate`.
    """
    from gravity_friction_comp.tools.demo.metrics import evaluate
    from gravity_friction_comp.tools.demo.phase import run_phase

    ones = (1.0,) * len(setup.all_joints)
    out = {}
    for label, urdf in urdfs.items():
        run = dataclasses.replace(
            setup,
            urdf=str(urdf),
            sim_urdf=str(sim_urdf),
            gravity_scale=ones,
        )
        log(f"  gravity model {label}: {urdf}")
        metrics = evaluate(run, run_phase(run, True, domain_id, log=log))
        out[label] = {"joints": {j: vars(m) for j, m in metrics.items()}, **figures(run, metrics)}
    return out


def verdict(
    setup, results: Mapping[str, Mapping[str, Any]], label: str = "calibrated"
) -> tuple[bool, list[str]]:
    """Is run ``label`` within :data:`MAX_RELATIVE_GAP` of the ``true`` run? (passed, lines).

    Proximal RMS: ``|a/b − 1| ≤ gap``. Sag and static error while holding, per non-exempt
    joint: ``|a − b| ≤ gap·b + one position code`` (``setup.position_lsb``: the feedback
    cannot resolve less; with stiction the arm sticks on whole codes).
    """
    run, true = results[label], results["true"]
    ratio = run["proximal_rms"] / true["proximal_rms"] if true["proximal_rms"] > 0 else math.inf
    ok = abs(ratio - 1.0) <= MAX_RELATIVE_GAP
    lines = [f"[{'PASS' if ok else 'FAIL'}] proximal RMS {label}/true = {ratio:.3f}"]
    for key, name in (("sag", "sag"), ("hold_error", "static error holding")):
        # excess over the allowed difference, per joint; the worst one is reported
        excess = {
            j: abs(run["joints"][j][key] - true["joints"][j][key])
            - (MAX_RELATIVE_GAP * true["joints"][j][key] + setup.position_lsb.get(j, 0.0))
            for j in setup.joints
            if j not in setup.exempt
        }
        j = max(excess, key=lambda name: excess[name])
        good = excess[j] <= 1e-9
        ok &= good
        lines.append(
            f"[{'PASS' if good else 'FAIL'}] {name}: worst {j} {run['joints'][j][key]:.3f} vs "
            f"{true['joints'][j][key]:.3f} mrad (allowed ±{MAX_RELATIVE_GAP:.0%} + "
            f"{setup.position_lsb.get(j, 0.0):.3f} mrad code)"
        )
    return bool(ok), lines


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gfc_demo_gravity_models",
        description="Demo 'on' runs with the uncalibrated, calibrated and true URDF against one "
        "simulated truth (every other option: gfc_demo's).",
    )
    p.add_argument(
        "--calibrated", required=True, help="calibrated URDF (calibrate_gravity's calibrated.urdf)"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (module docstring); returns the exit status."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before rclpy loads
    from gravity_friction_comp.files import check_regular_file
    from gravity_friction_comp.model.urdf import read_source
    from gravity_friction_comp.sim.config import SimConfig
    from gravity_friction_comp.tools.demo.exits import incomplete_run, stalled
    from gravity_friction_comp.tools.demo.options import (
        build_setup,
        check_same_joints,
        demo_domain_id,
        parse_args,
    )

    own, rest = _parser().parse_known_args(argv)
    args = parse_args(rest)
    out = pathlib.Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    try:
        if args.profile != "pick_place":
            raise ConfigError("--profile must be pick_place (sag is measured there)", key="profile")
        check_regular_file(own.calibrated, "--calibrated")
        setup = build_setup(args, out)
        # before any run: a calibrated URDF that does not load or has other joints
        check_same_joints(own.calibrated, setup.all_joints, "--calibrated")
        sim_urdf = setup.sim_urdf or setup.urdf
        true_path = out / "true.urdf"
        xml, _ = read_source(sim_urdf)
        true_path.write_text(true_urdf(xml, SimConfig.from_yaml(setup.sim_config)))
    except (ConfigError, ModelError) as error:
        print(f"gfc_demo_gravity_models: {error}", file=sys.stderr)
        return 2
    domain = demo_domain_id(args)
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    print(f"simulated arm: {sim_urdf} with the truth of {setup.sim_config}; ROS_DOMAIN_ID={domain}")
    urdfs = {"uncalibrated": setup.urdf, "calibrated": own.calibrated, "true": str(true_path)}
    try:
        results = compare(setup, urdfs, sim_urdf, domain)
    except ConfigError as error:
        print(f"gfc_demo_gravity_models: invalid configuration: {error}", file=sys.stderr)
        return 2
    except LockstepStalled as error:
        return stalled(error, "gfc_demo_gravity_models")
    except RunIncomplete as error:  # a run recorded too little to judge
        return incomplete_run(error, setup.lockstep, "gfc_demo_gravity_models")
    ok, lines = verdict(setup, results)
    print(f"\n{'gravity model':14s} {'proximal RMS':>13s} {'worst sag':>10s} {'worst hold':>11s}  [mrad]")
    for label in RUNS:
        f = results[label]
        print(f"{label:14s} {f['proximal_rms']:13.3f} {f['sag']:10.3f} {f['hold']:11.3f}")
    print("calibrated vs true:\n" + "\n".join("  " + line for line in lines))
    print("ACCEPTED" if ok else "NOT ACCEPTED")
    summary: dict[str, Any] = {"sim_urdf": sim_urdf, "sim_config": setup.sim_config, "urdfs": urdfs}
    summary["runs"] = results
    summary |= {"criteria": lines, "passed": ok, "position_lsb_mrad": dict(setup.position_lsb)}
    (out / "gravity_models.json").write_text(json.dumps(summary, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
