"""``--profile loaded_sine``: load-dependent BAM friction in closed loop, three feedforwards compared.

The simulated arm is the Big YAM profile (``arms/big_yam``) whose joint ``joint2`` (the
shoulder, gravity load −0.9 … −7.9 N·m over the motion) carries the eRob80:100 BAM model
``--bam-model`` (m4 or m6, Rhoban/bam ``bam/params/erob80_100``, shipped as
``arms/big_yam/erob80_100_m<k>.json``) as its true friction
(:mod:`gravity_friction_comp.sim.bam_friction`); the other joints keep their ``sim.yaml``
truth. The sim YAML is derived from the profile's ``sim.yaml`` into ``--output``
(``sim_loaded.yaml``). Only ``joint2`` moves: ``q = home + A sin(2πt/period)`` (``--amplitude``,
``--period``, ``--cycles``), gravity compensation on in every run; the friction node gets:

1. ``none``: friction stage off;
2. ``coulomb``: Coulomb tanh + viscous on ``joint2`` with the same actuator's
   load-independent BAM fit M1 (breakaway = ``friction_base``, viscous = ``friction_viscous``);
3. ``bam``: the matching BAM model (the truth's own JSON, load = the gravity feedforward).

The other joints get their sim truth (Coulomb/Stribeck/viscous) in runs 2 and 3. The figure
is ``joint2``'s RMS tracking error [mrad]; the profile is accepted when the BAM
feedforward's is at least :data:`MIN_BAM_GAIN` lower than the Coulomb one's. In lockstep
(default) the figures repeat on any machine. Outputs in ``--output``: ``loaded_sine.json``
(per run, per joint RMS/max) and the friction YAMLs used.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import yaml

from gravity_friction_comp.errors import ConfigError, LockstepStalled, ModelError

__all__ = [
    "ARM",
    "BAM_MODEL_CHOICES",
    "JOINT",
    "MIN_BAM_GAIN",
    "LoadedSine",
    "friction_yamls",
    "loaded_setup",
    "loaded_sim_yaml",
    "main",
    "run_loaded_sine",
    "run_one",
]

ARM = "big_yam"
JOINT = "joint2"
BAM_MODEL_CHOICES = ("m4", "m6")
#: BAM feedforward's RMS at most (1 − this) × the Coulomb feedforward's (issue 17).
MIN_BAM_GAIN = 0.20
RUNS = ("none", "coulomb", "bam")


def bam_file(arm_dir: pathlib.Path, model: str) -> pathlib.Path:
    """The shipped eRob80:100 BAM JSON of ``model`` (m1, m4, m6) in the profile's folder."""
    return arm_dir / f"erob80_100_{model}.json"


def loaded_sim_yaml(
    sim_yaml: str | os.PathLike, joint: str, bam_json: pathlib.Path, out: pathlib.Path
) -> str:
    """``sim_yaml`` with ``joint``'s friction replaced by ``bam: <bam_json>`` (its initial
    position kept), written to ``out/sim_loaded.yaml``; returns the path."""
    from gravity_friction_comp.files import read_yaml

    data = read_yaml(pathlib.Path(sim_yaml), "sim_config") or {}
    body = data.get("simulation", data)
    entry = dict((body.get("joints") or {}).get(joint) or {})
    kept = {k: v for k, v in entry.items() if k in ("initial_position", "initial_velocity", "armature")}
    body.setdefault("joints", {})[joint] = {**kept, "bam": str(bam_json.resolve())}
    body["mass_scale"] = 1.0  # the gravity model exact: friction is the only model error
    path = out / "sim_loaded.yaml"
    path.write_text(yaml.safe_dump({"simulation": body}, sort_keys=False))
    return str(path)


def friction_yamls(
    sim: Any,
    names: Sequence[str],
    joint: str,
    coulomb: Mapping[str, float],
    bam_json: pathlib.Path,
    out: pathlib.Path,
) -> dict[str, str]:
    """The friction node's YAMLs of runs ``coulomb`` and ``bam`` (module docstring).

    Args:
        sim: :class:`~gravity_friction_comp.sim.config.SimConfig` (the other joints' truth).
        names: every joint of the model, model order.
        joint: the BAM joint. coulomb: ``{"breakaway", "viscous"}`` for it [N·m], [N·m·s/rad].
        bam_json: its BAM file. out: folder written to.
    """
    p = [sim.joint(j) for j in names]
    i = list(names).index(joint)

    def block(values: list[float], own: float) -> list[float]:
        values = [float(x) for x in values]
        values[i] = float(own)
        return values

    base = {
        "enabled": True,
        "stribeck_velocity": [x.stribeck_velocity for x in p],
        "stribeck_exponent": [x.stribeck_exponent for x in p],
    }
    coulomb_block = {
        **base,
        "model": "coulomb",
        "breakaway": block([x.coulomb for x in p], coulomb["breakaway"]),
        "stribeck_breakaway": block([x.stribeck_breakaway for x in p], 0.0),
        "viscous": block([x.viscous for x in p], coulomb["viscous"]),
    }
    bam_block = {
        **base,
        "model": "bam",
        "breakaway": block([x.coulomb for x in p], 0.0),
        "stribeck_breakaway": block([x.stribeck_breakaway for x in p], 0.0),
        "viscous": block([x.viscous for x in p], 0.0),
        "bam_files": [str(bam_json.resolve()) if k == i else None for k in range(len(names))],
    }
    paths = {}
    for label, fc in (("coulomb", coulomb_block), ("bam", bam_block)):
        path = out / f"friction_{label}.yaml"
        path.write_text(yaml.safe_dump({"joints": list(names), "friction_comp": fc}, sort_keys=False))
        paths[label] = str(path)
    return paths


@dataclasses.dataclass(frozen=True)
class LoadedSine:
    """What the profile runs: the demo setup, the derived sim YAML, the friction YAMLs
    (``coulomb``, ``bam``), the true BAM JSON, and the DDS domain."""

    setup: Any
    sim_yaml: str
    friction_yamls: Mapping[str, str]
    truth_json: pathlib.Path
    domain: int


def loaded_setup(args, out: pathlib.Path) -> LoadedSine:
    """Resolve the options into a :class:`LoadedSine` (module docstring); writes the sim and
    friction YAMLs into ``out``. Raises ConfigError (another ``--arm``, bad files)."""
    from gravity_friction_comp.friction.bam import BamParameters
    from gravity_friction_comp.profiles.arm_profiles import load_arm
    from gravity_friction_comp.sim.config import SimConfig
    from gravity_friction_comp.tools.demo.options import build_setup, demo_domain_id

    if args.arm not in (None, ARM):
        raise ConfigError(
            f"--profile loaded_sine runs on --arm {ARM}, got {args.arm!r}", key="arm", value=args.arm
        )
    profile = load_arm(ARM)
    arm_dir = pathlib.Path(profile.sim_config).parent
    truth_json = bam_file(arm_dir, args.bam_model)
    m1 = BamParameters.from_json(bam_file(arm_dir, "m1"))
    sim_yaml = loaded_sim_yaml(profile.sim_config, JOINT, truth_json, out)
    args = argparse.Namespace(**vars(args))  # the caller's options stay as given
    args.arm, args.sim_config, args.arm_gravity_scale = ARM, sim_yaml, False
    setup = build_setup(args, out)
    sim = SimConfig.from_yaml(sim_yaml)
    names = setup.all_joints
    home = np.asarray(setup.home)
    offset = np.where(np.asarray(names) == JOINT, args.amplitude, 0.0)
    setup = dataclasses.replace(
        setup,
        profile="sine",
        pick=tuple(home + offset),
        place=tuple(home - offset),
        proximal=(JOINT,),
        distal=tuple(j for j in setup.joints if j != JOINT),
    )
    yamls = friction_yamls(
        sim, names, JOINT, {"breakaway": m1.friction_base, "viscous": m1.friction_viscous}, truth_json, out
    )
    domain = demo_domain_id(args)
    return LoadedSine(setup, sim_yaml, yamls, truth_json, domain)


def run_one(loaded: LoadedSine, friction_yaml: str) -> dict[str, Any]:
    """One lockstep run, gravity on, friction from ``friction_yaml`` ("" = friction stage
    off); per-joint metrics (:func:`~gravity_friction_comp.tools.demo.metrics.evaluate`)."""
    from gravity_friction_comp.tools.demo.metrics import evaluate
    from gravity_friction_comp.tools.demo.phase import run_phase

    s = dataclasses.replace(loaded.setup, friction_config=friction_yaml)
    rec = run_phase(s, True, loaded.domain, gravity=True, friction=bool(friction_yaml), log=lambda *a: None)
    return evaluate(s, rec)


def run_loaded_sine(args, out: pathlib.Path, log=print) -> dict[str, Any]:
    """Build the setup, run the three configurations and return the summary dict
    (``rms_mrad``: run → joint → RMS [mrad], ``gain``: 1 − bam/coulomb on :data:`JOINT`,
    ``accepted``). Raises ConfigError, LockstepStalled."""
    loaded = loaded_setup(args, out)
    setup, yamls, truth_json = loaded.setup, loaded.friction_yamls, loaded.truth_json
    home = setup.home[setup.all_joints.index(JOINT)]
    log(
        f"loaded_sine: {ARM} {JOINT} true friction eRob80:100 {args.bam_model} ({truth_json.name}), "
        f"sine ±{args.amplitude:g} rad about {home:g} rad, period {setup.period:g} s, "
        f"{'lockstep' if setup.lockstep else 'real time'}"
    )
    rms: dict[str, dict[str, float]] = {}
    worst: dict[str, dict[str, float]] = {}
    for label in RUNS:
        metrics = run_one(loaded, yamls.get(label, ""))
        rms[label] = {j: metrics[j].rms for j in setup.joints}
        worst[label] = {j: metrics[j].max for j in setup.joints}
        log(f"  {label:8s} {JOINT} RMS {rms[label][JOINT]:8.3f} mrad, max {worst[label][JOINT]:8.3f} mrad")
    gain = 1.0 - rms["bam"][JOINT] / rms["coulomb"][JOINT]
    accepted = gain >= MIN_BAM_GAIN
    log(
        f"  BAM feedforward {100 * gain:.1f} % below Coulomb on {JOINT} "
        f"(required ≥ {100 * MIN_BAM_GAIN:.0f} %): {'ACCEPTED' if accepted else 'NOT ACCEPTED'}"
    )
    summary = {
        "arm": ARM,
        "joint": JOINT,
        "bam_model": args.bam_model,
        "amplitude": args.amplitude,
        "period": setup.period,
        "cycles": setup.cycles,
        "lockstep": setup.lockstep,
        "rms_mrad": rms,
        "max_mrad": worst,
        "gain": gain,
        "min_gain": MIN_BAM_GAIN,
        "accepted": accepted,
        "sim_config": loaded.sim_yaml,
        "friction_configs": yamls,
    }
    (out / "loaded_sine.json").write_text(json.dumps(summary, indent=2))
    return summary


def main(args) -> int:
    """``gfc_demo --profile loaded_sine``: exit 0 accepted, 1 not, 2 configuration error,
    4 the lockstep chain stopped answering."""
    out = pathlib.Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    try:
        summary = run_loaded_sine(args, out)
    except (ConfigError, ModelError) as error:
        print(f"gfc_demo: {error}", file=sys.stderr)
        return 2
    except LockstepStalled as error:
        from gravity_friction_comp.tools.demo.exits import stalled

        return stalled(error)
    print(f"summary: {out / 'loaded_sine.json'}")
    return 0 if summary["accepted"] else 1
