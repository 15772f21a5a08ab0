"""CPU of the simulated arm per physics step and per answered frame, against bare Pinocchio.

The palletizer as ``sim_arm`` serves it (config/mit_bridge.yaml, urdf/palletizer.urdf,
config/sim_palletizer.yaml; 3 emulated Damiao motors, 1 kHz physics), stepped by hand (no
thread, no real-time wait). CPU time (``time.process_time`` / ``time.thread_time``, not wall
time: the machine is shared) per call, median over rounds, of:

* ``run_once(0.001)`` with the motors disabled, the arm resting on its stops (the issue-18
  reproducer's state: one joint presses a stop, the others stick);
* ``run_once(0.001)`` while the motors track a 1.5 Hz sine (the arm moving), each tick's
  MIT commands (one per motor, built beforehand) answered first through
  :meth:`SimulatedMotorBus.answer`, as sim_arm answers the bridge's frames;
* ``answer(frame)`` in those ticks, per frame: the emulated motor decodes the command and
  encodes its quantized reply (the two parts timed apart, the clock's own cost subtracted);
* ``answer(frame)`` of one frame repeated (a held setpoint, decoded once by the motor);
* one 1 kHz tick of sim_arm's work while tracking: run_once + one frame per motor;
* the baseline, measured in the same rounds: ``pin.crba`` + ``pin.nonLinearEffects`` on the
  full (unreduced) Pinocchio model at the arm's configuration, the rigid-body calls one
  physics step cannot do without.

Each figure is printed with its ratio to the baseline. Rounds alternate baseline and subject
so a load change on the machine does not favour one.

Usage: ``nice -n 19 .venv/bin/python bench/sim_physics_cpu.py [--rounds 15] [--steps 1000]``
"""

from __future__ import annotations

import argparse
import itertools
import math
import pathlib
import statistics
import sys
import time

import can
import numpy as np
import pinocchio as pin
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gravity_friction_comp.mit.codec import encode_command  # noqa: E402
from gravity_friction_comp.mit.special_frames import ENABLE_FRAME  # noqa: E402
from gravity_friction_comp.tools.sim_arm import simulated_bus_from_parameters  # noqa: E402

DT = 1e-3


def make_sim():
    values = yaml.safe_load((ROOT / "config" / "mit_bridge.yaml").read_text())["mit_bridge"][
        "ros__parameters"
    ]
    values.update(
        urdf_path=str(ROOT / "urdf" / "palletizer.urdf"),
        sim_config=str(ROOT / "config" / "sim_palletizer.yaml"),
        read_motor_limits=False,
    )
    return simulated_bus_from_parameters(values)


def cpu_us(fn, number: int) -> float:
    """CPU time of one call [µs] over ``number`` calls."""
    start = time.process_time()
    for _ in range(number):
        fn()
    return (time.process_time() - start) / number * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds (median taken)")
    parser.add_argument("--steps", type=int, default=1000, help="calls per round and case")
    args = parser.parse_args()

    resting, sim_tracking = make_sim(), make_sim()
    try:
        for _ in range(200):  # the reproducer's warm-up: the arm falls onto its stops
            resting.run_once(DT)
        motors = [(sm.motor, sm.bus) for sm in sim_tracking.motors]
        for motor, bus in motors:
            sim_tracking.answer(
                can.Message(arbitration_id=motor.can_id, data=ENABLE_FRAME, is_extended_id=False), bus
            )
        # the bridge's frames, built beforehand (their encoding is the bridge's cost): 2 s of
        # a 1.5 Hz sine per motor, replayed in a loop
        commands = [
            [
                (
                    can.Message(
                        arbitration_id=motor.can_id,
                        data=encode_command(
                            0.3 * math.sin(2 * math.pi * 1.5 * k * DT + i), 0.0, 8.0, 0.3, 0.0, motor.limits
                        ),
                        is_extended_id=False,
                    ),
                    bus,
                )
                for i, (motor, bus) in enumerate(motors)
            ]
            for k in range(2000)
        ]
        replay = itertools.cycle(commands)
        clock = time.thread_time

        def empty():
            clock()
            clock()

        def tracking(number: int) -> tuple[float, float]:
            """CPU [µs] of one run_once and of one answered frame, the frames of each tick
            answered first (each part timed on its own; the clock's cost subtracted)."""
            step = frames = 0.0
            for _ in range(number):
                t0 = clock()
                for msg, bus in next(replay):
                    sim_tracking.answer(msg, bus)
                t1 = clock()
                sim_tracking.run_once(DT)
                step += clock() - t1
                frames += t1 - t0
            pair = cpu_us(empty, number)
            return step / number * 1e6 - pair, (frames / number * 1e6 - pair) / len(motors)

        model = resting.arm.model
        full, data = model.full_model, model.full_model.createData()
        g = model.coupling
        qf = model.full_configuration(resting.arm.position)
        vf = g @ np.array([0.1, 0.2, 0.3])

        def baseline():
            pin.crba(full, data, qf)
            pin.nonLinearEffects(full, data, qf, vf)

        # a held setpoint: the same frame every cycle (to the resting arm's disabled motor 1)
        held = resting.motors[0]
        held_frame = can.Message(
            arbitration_id=held.motor.can_id,
            data=encode_command(0.1, 0.0, 8.0, 0.3, 0.0, held.motor.limits),
            is_extended_id=False,
        )
        keys = ("baseline", "resting", "tracking", "answer", "answer_held")
        samples: dict[str, list[float]] = {key: [] for key in keys}
        for _ in range(args.rounds):
            samples["baseline"].append(cpu_us(baseline, args.steps))
            samples["resting"].append(cpu_us(lambda: resting.run_once(DT), args.steps))
            step, frame = tracking(args.steps)
            samples["tracking"].append(step)
            samples["answer"].append(frame)
            samples["answer_held"].append(cpu_us(lambda: resting.answer(held_frame, held.bus), args.steps))
        t = {key: statistics.median(v) for key, v in samples.items()}
        stuck = resting.arm.state().stuck
    finally:
        resting.stop()
        sim_tracking.stop()

    b = t["baseline"]
    tick = t["tracking"] + len(motors) * t["answer"]
    print(
        f"pinocchio {pin.__version__}, numpy {np.__version__}; CPU time, median of {args.rounds} "
        f"rounds x {args.steps} calls; ratio to the baseline of the same rounds"
    )
    rows = [
        ("baseline: pin.crba + pin.nonLinearEffects", b),
        (f"run_once, motors off, resting (stuck {stuck.astype(int).tolist()})", t["resting"]),
        ("run_once, motors tracking a sine (arm moving)", t["tracking"]),
        ("answer, one MIT frame + its reply", t["answer"]),
        ("answer, the same frame again (a held setpoint)", t["answer_held"]),
        (f"1 kHz tick while tracking: run_once + {len(motors)} frames", tick),
    ]
    for label, us in rows:
        print(f"  {label:58s} {us:7.2f} µs  {us / b:6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
