"""CPU of the simulated arm per physics step and per answered frame, against bare Pinocchio.

The palletizer as ``sim_arm`` serves it (config/mit_bridge.yaml, urdf/palletizer.urdf,
config/sim_palletizer.yaml; 3 emulated Damiao motors, 1 kHz physics), stepped by hand (no
thread, no real-time wait). CPU time (``time.thread_time``, not wall time: the machine is
shared) per call, median over rounds, of:

* ``run_once(0.001)`` with the motors disabled, the arm resting on its stops (the issue-18
  reproducer's state: one joint presses a stop, the others stick);
* ``run_once(0.001)`` while the motors track a 1.5 Hz sine (the arm moving), each tick's
  MIT commands (one per motor, built beforehand) answered first through
  :meth:`SimulatedMotorBus.answer`, as sim_arm answers the bridge's frames;
* ``answer(frame)`` in those ticks, per frame: the emulated motor decodes the command and
  encodes its quantized reply (the two parts timed apart, the clock's own cost subtracted);
* ``answer(frame)`` of one frame repeated (a held setpoint);
* one 1 kHz tick of sim_arm's work while tracking: run_once + one frame per motor.

Baseline, measured in the same rounds: ``pin.crba`` + ``pin.nonLinearEffects`` on the full
(unreduced) Pinocchio model at the arm's configuration, the rigid-body calls one physics step
cannot do without; each figure is printed with its ratio to it. ``--previous COMMIT`` also
runs the same cases on that commit's package (``git archive`` into a temporary folder, imported
under another name), rounds interleaved with the current code's, and prints previous/current
per case (the before/after of a change, in one process).

Usage: ``nice -n 19 .venv/bin/python bench/sim_physics_cpu.py [--rounds 15] [--steps 1000]
[--previous 8c293fe]``
"""

from __future__ import annotations

import argparse
import importlib
import io
import itertools
import math
import pathlib
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

import can
import numpy as np
import pinocchio as pin

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from gravity_friction_comp.profiles.arm_profiles import load_arm  # noqa: E402

DT = 1e-3
PACKAGE = "gravity_friction_comp"
clock = time.thread_time


def cpu_us(fn, number: int) -> float:
    """CPU time of one call [µs] over ``number`` calls."""
    start = clock()
    for _ in range(number):
        fn()
    return (clock() - start) / number * 1e6


def _empty_pair() -> None:
    clock()
    clock()


class Cases:
    """The measured cases on one copy of the package (``package``: its import name)."""

    def __init__(self, package: str):
        sim_arm = importlib.import_module(f"{package}.tools.sim_arm")
        codec = importlib.import_module(f"{package}.mit.codec")
        enable = importlib.import_module(f"{package}.mit.special_frames").ENABLE_FRAME
        values = load_arm("palletizer").simulated_bridge_values()  # this tree's: plain values
        self.resting = sim_arm.simulated_bus_from_parameters(dict(values), channel=f"{package}/resting")
        self.tracking = sim_arm.simulated_bus_from_parameters(dict(values), channel=f"{package}/tracking")
        for _ in range(200):  # the reproducer's warm-up: the arm falls onto its stops
            self.resting.run_once(DT)
        self.motors = [(sm.motor, sm.bus) for sm in self.tracking.motors]
        for motor, bus in self.motors:
            self.tracking.answer(self._message(motor, enable), bus)
        # the bridge's frames, built beforehand (their encoding is the bridge's cost): 2 s of
        # a 1.5 Hz sine per motor, replayed in a loop
        sine = [
            [
                (
                    self._message(
                        m,
                        codec.encode_command(
                            0.3 * math.sin(3 * math.pi * k * DT + i), 0, 8, 0.3, 0, m.limits
                        ),
                    ),
                    b,
                )
                for i, (m, b) in enumerate(self.motors)
            ]
            for k in range(2000)
        ]
        self.replay = itertools.cycle(sine)
        # a held setpoint: the same frame every cycle (to the resting arm's disabled motor 1)
        self.held = self.resting.motors[0]
        self.held_frame = self._message(
            self.held.motor, codec.encode_command(0.1, 0, 8, 0.3, 0, self.held.motor.limits)
        )

    @staticmethod
    def _message(motor, data: bytes) -> can.Message:
        return can.Message(arbitration_id=motor.can_id, data=data, is_extended_id=False)

    def measure(self, number: int) -> dict[str, float]:
        """CPU [µs] per call of each case, one round of ``number`` calls each."""
        step = frames = 0.0
        for _ in range(number):
            t0 = clock()
            for msg, bus in next(self.replay):
                self.tracking.answer(msg, bus)
            t1 = clock()
            self.tracking.run_once(DT)
            step += clock() - t1
            frames += t1 - t0
        pair = cpu_us(_empty_pair, number)
        return {
            "resting": cpu_us(lambda: self.resting.run_once(DT), number),
            "tracking": step / number * 1e6 - pair,
            "answer": (frames / number * 1e6 - pair) / len(self.motors),
            "answer_held": cpu_us(lambda: self.resting.answer(self.held_frame, self.held.bus), number),
        }

    def stop(self) -> None:
        self.resting.stop()
        self.tracking.stop()


def import_previous(commit: str, folder: pathlib.Path) -> str:
    """``commit``'s package extracted into ``folder`` and importable as ``gfc_previous``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, PACKAGE], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    name = "gfc_previous"
    (folder / PACKAGE).rename(folder / name)
    for path in (folder / name).rglob("*.py"):  # its absolute imports, renamed
        path.write_text(path.read_text().replace(PACKAGE, name))
    sys.path.insert(0, str(folder))
    return name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds (median taken)")
    parser.add_argument("--steps", type=int, default=1000, help="calls per round and case")
    parser.add_argument("--previous", metavar="COMMIT", help="also measure this commit's package")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        trees = {"current": Cases(PACKAGE)}
        if args.previous:
            trees["previous"] = Cases(import_previous(args.previous, pathlib.Path(tmp)))
        try:
            model = trees["current"].resting.arm.model
            full, data = model.full_model, model.full_model.createData()
            qf = model.full_configuration(trees["current"].resting.arm.position)
            vf = model.coupling @ np.array([0.1, 0.2, 0.3])

            def baseline():
                pin.crba(full, data, qf)
                pin.nonLinearEffects(full, data, qf, vf)

            samples: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
            base: list[float] = []
            for _ in range(args.rounds):
                base.append(cpu_us(baseline, args.steps))
                for name, cases in trees.items():
                    samples[name].append(cases.measure(args.steps))
            stuck = trees["current"].resting.arm.state().stuck
        finally:
            for cases in trees.values():
                cases.stop()

    b = statistics.median(base)
    n_motors = len(trees["current"].motors)
    print(
        f"pinocchio {pin.__version__}, numpy {np.__version__}; CPU time, median of {args.rounds} "
        f"rounds x {args.steps} calls; ratio to the baseline of the same rounds"
    )
    print(f"  {'baseline: pin.crba + pin.nonLinearEffects':58s} {b:7.2f} µs  {1.0:6.2f}x")
    labels = {
        "resting": f"run_once, motors off, resting (stuck {stuck.astype(int).tolist()})",
        "tracking": "run_once, motors tracking a sine (arm moving)",
        "answer": "answer, one MIT frame + its reply",
        "answer_held": "answer, the same frame again (a held setpoint)",
        "tick": f"1 kHz tick while tracking: run_once + {n_motors} frames",
    }
    for name, rounds in samples.items():
        for r in rounds:
            r["tick"] = r["tracking"] + n_motors * r["answer"]
        print(f"{name}{f' ({args.previous})' if name == 'previous' else ''}:")
        for key, label in labels.items():
            us = statistics.median(r[key] for r in rounds)
            print(f"  {label:58s} {us:7.2f} µs  {us / b:6.2f}x")
    if "previous" in samples:
        print("previous / current, median of the rounds' ratios (min-max):")
        for key, label in labels.items():
            ratios = [p[key] / c[key] for p, c in zip(samples["previous"], samples["current"])]
            print(f"  {label:58s} {statistics.median(ratios):5.2f}  ({min(ratios):.2f}-{max(ratios):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
