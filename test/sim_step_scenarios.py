"""Short deterministic runs of the simulator whose every step is recorded (test helper).

:func:`record` runs each scenario and returns its per-step arrays; ``test/reference/
sim_step_reference.npz`` holds what the simulator produced before its step was made cheaper
(test/reference/README.md), and test/test_sim_step_reference.py compares the two. The
scenarios cover every branch of the sticking step (all joints sliding, some stuck, all stuck,
a joint released from sticking), hard stops, mimic joints, payload on/off, an external hand,
both integrators, BAM M1/M6 budgets, and the emulated motors' frame path (enable, MIT
commands, disable, the quantized replies).

Run as a script to rewrite the reference file (only from code known to be right):
``nice -n 19 .venv/bin/python test/sim_step_scenarios.py``.
"""

from __future__ import annotations

import math
import pathlib
import sys

import can
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "test" / "reference" / "sim_step_reference.npz"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gravity_friction_comp.friction.bam import BamParameters  # noqa: E402
from gravity_friction_comp.mit.codec import encode_command  # noqa: E402
from gravity_friction_comp.mit.special_frames import DISABLE_FRAME, ENABLE_FRAME  # noqa: E402
from gravity_friction_comp.model.payload import Payload  # noqa: E402
from gravity_friction_comp.model.robot_model import RobotModel  # noqa: E402
from gravity_friction_comp.profiles.arm_profiles import load_arm  # noqa: E402
from gravity_friction_comp.sim.arm import SimulatedArm  # noqa: E402
from gravity_friction_comp.sim.config import JointSimParams, SimConfig  # noqa: E402
from gravity_friction_comp.tools.sim_arm import simulated_bus_from_parameters  # noqa: E402

STEPS = 800


def _states(arm: SimulatedArm, out: dict[str, list]) -> None:
    s = arm.state()
    for key in ("position", "velocity", "friction", "stuck"):
        out[key].append(getattr(s, key))


def _arrays(out: dict[str, list]) -> dict[str, np.ndarray]:
    return {k: np.array(v) for k, v in out.items()}


def bus_palletizer() -> dict[str, np.ndarray]:
    """The palletizer as sim_arm serves it: MIT frames answered, then one 1 ms step each.

    Phases of 200 steps: enabled, tracking a sine (sliding); enabled with gains 0 and a small
    feedforward (friction holds some joints); disabled (the arm falls onto its stops);
    enabled, holding where it is (stuck)."""
    values = load_arm("palletizer").simulated_bridge_values()
    sim = simulated_bus_from_parameters(values, channel=f"sim_step_scenarios/{id(values):x}")
    out: dict[str, list] = {"position": [], "velocity": [], "friction": [], "stuck": [], "replies": []}
    try:
        motors = [sm.motor for sm in sim.motors]
        buses = [sm.bus for sm in sim.motors]
        hold = [0.0] * len(motors)
        for k in range(STEPS):
            phase = k // 200
            replies = b""
            for i, (motor, bus) in enumerate(zip(motors, buses)):
                if k in (0, 600):
                    data = ENABLE_FRAME
                    hold[i] = motor.position
                elif k == 400:
                    data = DISABLE_FRAME
                elif phase == 0:
                    target = 0.4 * math.sin(2 * math.pi * 1.5 * k * 1e-3 + i)
                    data = encode_command(target, 0.0, 8.0, 0.3, 0.0, motor.limits)
                elif phase == 1:
                    data = encode_command(0.0, 0.0, 0.0, 0.0, 0.05 * (i - 1), motor.limits)
                elif phase == 2:
                    data = encode_command(0.0, 0.0, 5.0, 0.1, 0.0, motor.limits)  # ignored: disabled
                else:
                    data = encode_command(hold[i], 0.0, 20.0, 2.0, 0.0, motor.limits)
                msg = can.Message(arbitration_id=motor.can_id, data=data, is_extended_id=False)
                for reply in sim.answer(msg, bus):
                    replies += bytes(reply.data)
            sim.run_once(0.001)
            _states(sim.arm, out)
            out["replies"].append(np.frombuffer(replies, dtype=np.uint8))
    finally:
        sim.stop()
    return _arrays(out)


def _driven(arm: SimulatedArm, seed: int, events) -> dict[str, np.ndarray]:
    """``arm`` under gravity-scaled torques plus seeded noise; ``events[k](arm)`` before step k."""
    rng = np.random.default_rng(seed)
    out: dict[str, list] = {"position": [], "velocity": [], "friction": [], "stuck": []}
    tau = np.zeros(arm.n)
    for k in range(STEPS):
        if k in events:
            events[k](arm)
        if k % 50 == 0:  # piecewise-constant: long enough to stick or slide
            wide = k % 100 == 0  # alternately far from and near the holding torque
            scale = rng.uniform(0.6, 1.4, arm.n) if wide else rng.uniform(0.98, 1.02, arm.n)
            noise = rng.normal(0.0, 0.3 if wide else 0.02, arm.n)
            if (k // 50) % 4 == 3:  # exactly the holding torque: friction stops every joint
                scale, noise = np.ones(arm.n), np.zeros(arm.n)
        tau = scale * arm.gravity(arm.position) + noise
        arm.step(tau)
        _states(arm, out)
    return _arrays(out)


def arm_mimic_payload() -> dict[str, np.ndarray]:
    """The 4-bar palletizer (mimic joints), s = 0.9, BAM integrator, payload on and off, a hand."""
    model = RobotModel.from_urdf(
        str(ROOT / "test" / "data" / "urdf" / "synthetic" / "palletizer_parallelogram_mimic.urdf")
    )
    friction = dict(coulomb=1.5, stribeck_breakaway=0.5, stribeck_velocity=0.05, viscous=0.2)
    joints = {n: JointSimParams(**friction, armature=0.01) for n in model.joint_names}
    first = model.joint_names[0]
    joints[first] = JointSimParams(**friction, armature=0.01, initial_position=0.2)
    cfg = SimConfig(joints=joints, mass_scale=0.9, physics_rate_hz=1000.0, integrator="bam")
    payload = Payload.point(0.5, com=(0.05, 0.0, 0.0), parent=model.full_joint_names[-1])
    arm = SimulatedArm(model, cfg, payload=payload)
    events = {
        250: lambda a: a.set_holding(True),
        450: lambda a: a.set_external_effort(np.full(a.n, 0.4)),
        600: lambda a: (a.set_holding(False), a.set_external_effort(np.zeros(a.n))),
        700: lambda a: a.reset(a.position, np.full(a.n, 0.5)),
    }
    return _driven(arm, 1, events)


def arm_bam() -> dict[str, np.ndarray]:
    """The palletizer URDF with BAM budgets (MX-106 M6 on base_yaw, M1 on the others)."""
    model = RobotModel.from_urdf(str(ROOT / "urdf" / "palletizer.urdf"))
    bam = ROOT / "test" / "data" / "bam" / "mx106"
    m6 = BamParameters.from_json(bam / "m6.json")
    m1 = BamParameters.from_json(bam / "m1.json")
    joints = {n: JointSimParams(bam=m1, initial_position=0.3) for n in model.joint_names}
    joints[model.joint_names[0]] = JointSimParams(bam=m6)
    cfg = SimConfig(joints=joints, mass_scale=1.05, physics_rate_hz=1000.0)
    return _driven(SimulatedArm(model, cfg), 2, {400: lambda a: a.reset(a.position)})


SCENARIOS = {"bus_palletizer": bus_palletizer, "arm_mimic_payload": arm_mimic_payload, "arm_bam": arm_bam}


def record() -> dict[str, np.ndarray]:
    """Every scenario's arrays, keyed ``<scenario>/<array>``."""
    return {f"{name}/{key}": arr for name, run in SCENARIOS.items() for key, arr in run().items()}


if __name__ == "__main__":
    arrays = record()
    REFERENCE.parent.mkdir(exist_ok=True)
    np.savez_compressed(REFERENCE, **arrays)
    for name in SCENARIOS:
        stuck = arrays[f"{name}/stuck"]
        print(
            name,
            "steps",
            len(stuck),
            "all stuck",
            int(stuck.all(1).sum()),
            "some",
            int((stuck.any(1) & ~stuck.all(1)).sum()),
            "none",
            int((~stuck.any(1)).sum()),
        )
    print("wrote", REFERENCE, REFERENCE.stat().st_size, "bytes")
