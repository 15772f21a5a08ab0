"""``python -m gravity_friction_comp.tools.observer_check``: the momentum observer's acceptance in
lockstep (issue 29 point 4 and 5), per arm, printed and written as JSON (and a plot).

Every run is an :class:`~gravity_friction_comp.sim.observer_loop.ObserverLoop`: the arm's
chain in lockstep, the codec's quantized feedback (position 16 bit, velocity and torque 12 bit)
into the observer, the simulator's external effort input as the truth. Cases:

- **step**: a 1 N·m step on each proximal joint at :data:`STEP_AT` while that joint ramps at
  0.3 rad/s (sliding: at rest static friction would hold a push below the breakaway unseen,
  docs/observer.md), against the same run without the step. Accepted when, over the window
  from 5/K after the step to :data:`STEP_END`, the mean of (estimate − reference estimate) is
  the step within 10 % (the observer sees the whole step), and the mean of (estimate −
  truth) is within 10 % + the noise floor, the floor being the largest |estimate| of the
  reference run in that window (what the observer reports with nothing touching the arm:
  model error and quantization noise; its standard deviation is reported too).
- **contact**: a 2 N·m contact against the motion of a proximal joint during the
  pick-and-place cycle (:data:`CONTACT_AT`, mid-move), detected within :data:`MAX_LATENCY`
  with the arm's thresholds (:data:`THRESHOLDS`); the reaction ``hold`` is then in force.
- **quiet**: the pick-and-place cycle with payload changes for ``--duration`` (60 s), the
  arm's own sim truth and (palletizer) a BAM friction truth (:func:`bam_truth`): no
  detection with the same thresholds; the largest |estimate|/threshold is reported.
- **payload**: held still at home with the payload held, the observer told it is not: the
  estimate is off by the payload's gravity torque (model with minus model without).

Usage: ``python -m gravity_friction_comp.tools.observer_check [--arms palletizer yam_ultra
openarm_v10] [--duration 60] [--output observer_output] [--plot docs/observer.png]``;
exit 0 when every case is accepted, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.profiles.arm_profiles import load_arm, pick_place_poses, proximal_joints
from gravity_friction_comp.sim.bam_friction import as_bam
from gravity_friction_comp.sim.config import JointSimParams, SimConfig
from gravity_friction_comp.sim.observer_loop import ObserverLoop, ObserverRecord
from gravity_friction_comp.trajectory.hold import HoldProfile
from gravity_friction_comp.trajectory.periodic import RampProfile
from gravity_friction_comp.trajectory.waypoints import WaypointProfile, pick_place_profile

__all__ = [
    "ARMS",
    "GAIN",
    "THRESHOLDS",
    "bam_truth",
    "contact_case",
    "main",
    "payload_case",
    "pick_place",
    "quiet_case",
    "step_case",
    "held_payload",
]

ARMS = ("palletizer", "yam_ultra", "openarm_v10")
#: Observer gain K [1/s] of the acceptance: a 2 N·m contact reaches 1.7 N·m in 20 ms.
GAIN = 100.0
#: The step case: ramp amplitude [rad] and period [s] (0.3 rad/s up for the first second),
#: step time and end of the window [s].
RAMP_AMPLITUDE, RAMP_PERIOD, STEP_AT, STEP_END = 0.3, 4.0, 0.5, 0.95
#: The contact case: contact from this time [s] (mid first move) for CONTACT_FOR [s].
CONTACT_AT, CONTACT_FOR, CONTACT_TORQUE = 1.0, 0.3, 2.0
#: [s] the longest accepted detection delay of a 2 N·m contact.
MAX_LATENCY = 0.020
#: Per arm: contact.threshold, contact.speed_band, contact.rest_band [N·m, N·m·s/rad, N·m]
#: (rest_velocity the default 0.05 rad/s). Chosen above the quiet case's largest |estimate|
#: over 60 s (docs/observer.md has the figures) and low enough that a 2 N·m contact in motion
#: crosses within 20 ms.
THRESHOLDS: dict[str, tuple[float, float, float]] = {
    "palletizer": (0.6, 0.0, 0.5),
    "yam_ultra": (1.0, 0.0, 1.6),
    "openarm_v10": (1.05, 0.0, 0.6),
}


def held_payload(arm: str) -> Payload:
    """The held object of every case: a 0.3 kg cylinder 7 cm below the palletizer's ``tool``
    frame, or the arm's last motor joint."""
    profile = load_arm(arm)
    parent = "tool" if profile.name == "palletizer" else profile.joints[-1]
    return Payload.cylinder(0.3, radius=0.033, length=0.12, com=(0.0, 0.0, -0.07), parent=parent)


def bam_truth(arm: str, bam_dir: pathlib.Path) -> SimConfig:
    """The palletizer's sim truth with BAM friction (Rhoban/bam, ``bam_dir``: the test data's
    ``bam/``): MX-64 M4 on the base (load-dependent, Stribeck), M2 (Stribeck, no load term:
    the simulator cannot give the load of a joint that drives a parallelogram's mimic joints)
    of the MX-106 on the shoulder and the MX-64 on the beam. The compensator's Coulomb/viscous
    model is wrong by design."""
    profile = load_arm(arm)
    base = SimConfig.from_yaml(profile.sim_config)
    files = {"base_yaw": "mx64/m4.json", "shoulder_pitch": "mx106/m2.json", "beam_pitch": "mx64/m2.json"}
    joints = {
        name: JointSimParams(
            initial_position=base.joint(name).initial_position, bam=as_bam(bam_dir / files[name])
        )
        for name in profile.joints
    }
    return SimConfig(
        joints=joints,
        physics_rate_hz=base.physics_rate_hz,
        mass_scale=base.mass_scale,
        actuators=base.actuators,
        integrator=base.integrator,
        links=base.links,
    )


def _loop(arm: str, **kwargs: Any) -> ObserverLoop:
    a, b, s = THRESHOLDS.get(arm, (1.0, 0.0, 1.0))
    kwargs.setdefault("threshold", a)
    kwargs.setdefault("speed_band", b)
    kwargs.setdefault("rest_band", s)
    return ObserverLoop(arm, gain=kwargs.pop("gain", GAIN), **kwargs)


def pick_place(loop: ObserverLoop) -> WaypointProfile:
    """The demo's pick-and-place cycle of the loop's arm (:func:`pick_place_poses`: proximal
    joints ±0.3 rad, distal ±0.1 rad about the sim's initial pose), model joint order."""
    names = loop.model.joint_names
    proximal = proximal_joints(loop.profile, loop.profile.joints)
    pick, place = pick_place_poses(
        names, loop.profile.joints, proximal, loop.home, loop.model.position_lower, loop.model.position_upper
    )
    return pick_place_profile(names, loop.home, pick, place)


def _ramp(loop: ObserverLoop, joint: str) -> RampProfile:
    names = loop.model.joint_names
    amplitude = [RAMP_AMPLITUDE if n == joint else 0.0 for n in names]
    return RampProfile(names, loop.home, amplitude, RAMP_PERIOD)


def step_case(arm: str, joint: str, *, end: float = STEP_END, gain: float = GAIN) -> dict[str, Any]:
    """The step case of one joint (module docstring); returns its figures and records."""
    runs = []
    for push in (True, False):
        loop = _loop(arm, gain=gain, threshold=1e6, rest_band=0.0)
        try:
            if push:
                loop.push(STEP_AT, [joint], [1.0])
            runs.append(loop.run(_ramp(loop, joint), end + 0.05))
        finally:
            loop.close()
    pushed, reference = runs
    c = pushed.column(joint)
    window = (pushed.t >= STEP_AT + 5.0 / gain) & (pushed.t <= end)
    r, ref, truth = pushed.estimate[window, c], reference.estimate[window, c], pushed.truth[window, c]
    floor = float(np.abs(ref).max())
    seen = float(np.mean(r - ref))
    error = float(np.mean(r - truth))
    return {
        "arm": arm,
        "joint": joint,
        "step_seen": seen,
        "mean_error": error,
        "max_error": float(np.abs(r - truth).max()),
        "noise_floor": floor,
        "noise_std": float(ref.std()),
        "bias": float(ref.mean()),
        "accepted": bool(abs(seen - 1.0) <= 0.1 and abs(error) <= 0.1 + floor),
        "records": (pushed, reference),
    }


def contact_case(arm: str, joint: str | None = None, *, duration: float = 1.6) -> dict[str, Any]:
    """The contact case (module docstring): the first proximal joint (or ``joint``)."""
    loop = _loop(arm, reaction="hold", payload=held_payload(arm))
    try:
        joint = joint or proximal_joints(loop.profile, loop.profile.joints)[0]
        profile = pick_place(loop)
        i = profile.joint_names.index(joint)
        direction = -float(np.sign(profile.sample(CONTACT_AT).velocity[i]) or 1.0)
        loop.push(CONTACT_AT, [joint], [CONTACT_TORQUE * direction])
        loop.push(CONTACT_AT + CONTACT_FOR, [joint], [0.0])
        rec = loop.run(profile, duration)
    finally:
        loop.close()
    first = rec.contacts[0] if rec.contacts else None
    latency = None if first is None else first.time - CONTACT_AT
    reacting = bool(rec.reacting[rec.t > CONTACT_AT + MAX_LATENCY + 0.01].all()) if first else False
    return {
        "arm": arm,
        "joint": joint,
        "detected_on": None if first is None else first.joint,
        "latency": latency,
        "estimate": None if first is None else first.estimate,
        "threshold": None if first is None else first.threshold,
        "reaction_held": reacting,
        "early": bool(first is not None and first.time < CONTACT_AT),
        "accepted": bool(
            latency is not None
            and first is not None
            and first.joint == joint
            and 0.0 <= latency <= MAX_LATENCY
        )
        and reacting,
        "record": rec,
    }


def quiet_case(arm: str, duration: float, sim: SimConfig | None = None, label: str = "") -> dict[str, Any]:
    """The quiet case (module docstring): detections and the largest |estimate|/threshold."""
    loop = _loop(arm, payload=held_payload(arm), sim=sim, react=False)
    try:
        rec = loop.run(pick_place(loop), duration)
        detector = loop.guard.detector
        columns = [loop.model.joint_names.index(n) for n in rec.joints]
        limits = np.array(
            [detector.thresholds(_full(v, columns, loop.model.n))[columns] for v in rec.velocity]
        )
    finally:
        loop.close()
    settled = rec.t > 5.0 / GAIN
    ratio = np.abs(rec.estimate[settled]) / limits[settled]
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    moving = np.abs(rec.velocity[settled]) > detector.rest_velocity
    still_max = np.where(~moving, np.abs(rec.estimate[settled]), 0.0).max(axis=0)
    moving_max = np.where(moving, np.abs(rec.estimate[settled]), 0.0).max(axis=0)
    return {
        "arm": arm,
        "truth": label or "sim.yaml",
        "duration": duration,
        "detections": len(rec.contacts),
        "first": rec.contacts[0].describe() if rec.contacts else "",
        "worst_ratio": float(ratio[worst]),
        "worst_joint": rec.joints[int(worst[1])],
        "max_moving": dict(zip(rec.joints, np.round(moving_max, 3).tolist())),
        "max_still": dict(zip(rec.joints, np.round(still_max, 3).tolist())),
        "holding_changes": int(np.count_nonzero(np.diff(rec.holding.astype(int)))),
        "accepted": len(rec.contacts) == 0,
    }


def _full(values: np.ndarray, columns: Sequence[int], n: int) -> np.ndarray:
    out = np.zeros(n)
    out[list(columns)] = values
    return out


def payload_case(arm: str) -> dict[str, Any]:
    """The payload case (module docstring): held at home, the observer's holding model without it."""
    payload = held_payload(arm)
    loop = _loop(arm, payload=payload, observer_payload=None, threshold=1e6, rest_band=0.0)
    try:
        loop.arm.set_holding(True)  # holding from the start; the observer never knows
        rec = loop.run(HoldProfile(loop.model.joint_names, loop.home), 1.0)
        q = loop.home
        expected_full = loop.model.with_payload(payload).gravity(q) - loop.model.gravity(q)
    finally:
        loop.close()
    columns = [loop.model.joint_names.index(n) for n in rec.joints]
    expected = -expected_full[columns]  # the payload's weight on the arm, as an external torque
    settled = rec.t > 0.5
    estimate = rec.estimate[settled].mean(axis=0)
    # static friction holds part of the sag-free load: compare only where it is large
    big = np.abs(expected) > 0.05
    return {
        "arm": arm,
        "expected": dict(zip(rec.joints, np.round(expected, 4).tolist())),
        "estimate": dict(zip(rec.joints, np.round(estimate, 4).tolist())),
        "accepted": bool(np.all(np.abs(estimate[big] - expected[big]) <= 0.1 * np.abs(expected[big]) + 0.05)),
    }


def _figures(steps: list[dict], contacts: list[dict]) -> dict[str, Any]:
    return {
        "step": [{k: v for k, v in s.items() if k != "records"} for s in steps],
        "contact": [{k: v for k, v in c.items() if k != "record"} for c in contacts],
    }


def plot(path: pathlib.Path, steps: list[dict], contacts: list[dict]) -> None:
    """Estimate vs truth: one step run per arm (first proximal joint) and one contact run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    firsts = [next(s for s in steps if s["arm"] == arm) for arm in dict.fromkeys(s["arm"] for s in steps)]
    fig, axes = plt.subplots(len(firsts) + 1, 1, figsize=(8, 2.2 * (len(firsts) + 1)), sharex=False)
    for ax, case in zip(axes, firsts):
        pushed, reference = case["records"]
        c = pushed.column(case["joint"])
        ax.plot(pushed.t, pushed.truth[:, c], "k--", label="truth τ_ext")
        ax.plot(pushed.t, pushed.estimate[:, c], label="estimate r")
        ax.plot(reference.t, reference.estimate[:, c], alpha=0.6, label="r, no push")
        ax.set_ylabel("N·m")
        ax.set_title(f"{case['arm']} {case['joint']}: 1 N·m step while ramping 0.3 rad/s", fontsize=9)
        ax.set_xlim(STEP_AT - 0.3, STEP_END)
        ax.legend(fontsize=7, loc="upper left")
    if contacts:
        case = contacts[0]
        rec: ObserverRecord = case["record"]
        c = rec.column(case["joint"])
        ax = axes[-1]
        ax.plot(rec.t, rec.truth[:, c], "k--", label="truth τ_ext")
        ax.plot(rec.t, rec.estimate[:, c], label="estimate r")
        if case["threshold"] is not None:
            ax.axhline(case["threshold"], color="r", lw=0.8, label="± threshold")
            ax.axhline(-case["threshold"], color="r", lw=0.8)
        if case["latency"] is not None:
            ax.axvline(
                CONTACT_AT + case["latency"],
                color="r",
                ls=":",
                label=f"detected +{1e3 * case['latency']:.0f} ms",
            )
        ax.set_xlim(CONTACT_AT - 0.2, CONTACT_AT + CONTACT_FOR + 0.2)
        ax.set_title(f"{case['arm']} {case['joint']}: 2 N·m contact during pick-and-place", fontsize=9)
        ax.set_xlabel("simulated time [s]")
        ax.set_ylabel("N·m")
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)


#: The BAM parameter files of the repository's tests (a source checkout; absent in a wheel).
BAM_DIR = pathlib.Path(__file__).resolve().parents[2] / "test" / "data" / "bam"


def _positive(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value <= 0.0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the cases (module docstring); exit status 0 when all are accepted."""
    parser = argparse.ArgumentParser(
        prog="observer_check",
        description="The momentum observer's acceptance in lockstep per arm: step, contact, quiet run, payload.",
    )
    parser.add_argument(
        "--arms",
        nargs="+",
        default=list(ARMS),
        choices=list(THRESHOLDS),
        help="arms (thresholds known for these)",
    )
    parser.add_argument("--duration", type=_positive, default=60.0, help="quiet case length [s] (> 0)")
    parser.add_argument(
        "--output",
        type=pathlib.Path,
        default=pathlib.Path("observer_output"),
        help="folder of observer_check.json",
    )
    parser.add_argument("--plot", type=pathlib.Path, default=None, help="PNG of estimate vs truth")
    parser.add_argument(
        "--bam-dir",
        type=pathlib.Path,
        default=BAM_DIR,
        help="Rhoban/bam params folder: the palletizer's quiet run also with BAM friction truth (skipped if absent)",
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # URDF mesh/inertia warnings of the shipped models
    steps, contacts, quiet, payloads = [], [], [], []
    for arm in args.arms:
        profile = load_arm(arm)
        for joint in proximal_joints(profile, profile.joints):
            steps.append(step_case(arm, joint))
            s = steps[-1]
            print(
                f"step    {arm:12s} {joint:16s} seen {s['step_seen']:.3f} N·m, mean error {s['mean_error']:+.3f}, "
                f"floor {s['noise_floor']:.3f} (std {s['noise_std']:.3f}, bias {s['bias']:+.3f}) "
                f"{'ok' if s['accepted'] else 'FAIL'}"
            )
        contacts.append(contact_case(arm))
        c = contacts[-1]
        latency = "none" if c["latency"] is None else f"{1e3 * c['latency']:.1f} ms"
        print(
            f"contact {arm:12s} {c['joint']:16s} detected on {c['detected_on']} after {latency} {'ok' if c['accepted'] else 'FAIL'}"
        )
        truths: list[tuple[SimConfig | None, str]] = [(None, "sim.yaml")]
        if arm == "palletizer" and args.bam_dir.is_dir():
            truths.append((bam_truth(arm, args.bam_dir), "BAM"))
        elif arm == "palletizer":
            print(f"quiet   {arm:12s} BAM truth skipped: no folder {args.bam_dir}")
        for sim, label in truths:
            quiet.append(quiet_case(arm, args.duration, sim, label))
            q = quiet[-1]
            print(
                f"quiet   {arm:12s} {label:8s} {q['duration']:.0f} s: {q['detections']} detections, worst "
                f"|r|/threshold {q['worst_ratio']:.2f} ({q['worst_joint']}), {q['holding_changes']} payload changes "
                f"{'ok' if q['accepted'] else 'FAIL'}"
            )
        payloads.append(payload_case(arm))
        p = payloads[-1]
        print(
            f"payload {arm:12s} expected {p['expected']} estimate {p['estimate']} {'ok' if p['accepted'] else 'FAIL'}"
        )
    out = _figures(steps, contacts) | {
        "quiet": quiet,
        "payload": payloads,
        "gain": GAIN,
        "thresholds": THRESHOLDS,
    }
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "observer_check.json").write_text(json.dumps(out, indent=1, default=str))
    if args.plot is not None:
        plot(args.plot, steps, contacts)
    accepted = all(x["accepted"] for x in [*steps, *contacts, *quiet, *payloads])
    print("accepted" if accepted else "NOT accepted")
    return 0 if accepted else 1


if __name__ == "__main__":
    sys.exit(main())
