"""The stages' hot calls, this tree against a baseline tree's, alternated per call in one process.

The baseline's ``stage/contract.py``, ``stage/velocity.py``, ``stage/gravity.py`` and
``stage/friction.py`` are loaded as separate modules beside this tree's (everything else,
e.g. the robot and friction models, is this tree's), on the palletizer (gravity mode,
Coulomb + viscous friction on the setpoint velocity, deadband 0.003 rad/s, the shipped effort
limits). Each pair (baseline, this tree) alternates call by call; ``cold`` sleeps 0.4 ms
before each call (the caches cool as between two setpoints at 1 kHz), ``warm`` does not.

Run: ``python bench/stage_calls.py [--baseline d8184c2] [--calls 2000]``; prints the median
µs per call of each side, cold and warm, and the load average (``uptime``).
"""

from __future__ import annotations

import argparse
import array
import importlib.util
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _load(name: str, path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def pairs(base: pathlib.Path) -> dict:
    import numpy as np

    from gravity_friction_comp.friction.models import FrictionModel
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.stage import contract, friction, gravity, velocity

    stage = base / "gravity_friction_comp" / "stage"
    old = {
        m: _load(f"baseline_{m}", stage / f"{m}.py") for m in ("contract", "velocity", "gravity", "friction")
    }
    new = {"contract": contract, "velocity": velocity, "gravity": gravity, "friction": friction}
    model = RobotModel.from_urdf(ROOT / "urdf" / "palletizer.urdf")
    names = list(model.joint_names)
    joints = tuple(names)
    pos, vel = array.array("d", [0.1, 0.3, 0.2]), array.array("d", [0.3, -0.2, 0.1])
    eff = array.array("d", [0.5, 0.0, 0.0])
    limits = np.array([10.0, 28.0, 10.0])
    term = np.array([0.1, 2.0, -1.0])
    fm = FrictionModel(
        names, breakaway=[0.12, 0.2, 0.1], eps=0.02, eps_setpoint=0.005, viscous=[0.02, 0.04, 0.02]
    )
    clock = [100.0]
    out: dict[str, list] = {}
    for m in (old, new):
        c = m["contract"]
        sp = c.parse_setpoint(names, pos, vel, eff, joints)
        g = m["gravity"].GravityStage(m["gravity"].GravityConfig(model, effort_limit=limits))
        f = m["friction"].FrictionStage(
            m["friction"].FrictionConfig(fm, velocity_deadband=0.003, effort_limit=limits)
        )
        fsp = c.parse_setpoint(names, pos, vel, eff, f.joint_names)
        v = np.frombuffer(vel)

        def friction_update(f=f, fsp=fsp):
            clock[0] += 0.0005
            return f.update(names, pos, vel, eff, clock[0], parsed=fsp)

        calls = {
            "GravityStage.update": lambda g=g: g.update(names, pos, vel, eff, 100.0),
            "GravityStage._term": lambda g=g, sp=sp: g._term(sp),  # noqa: SLF001
            "FrictionStage.update(parsed)": friction_update,
            "parse_setpoint": lambda c=c: c.parse_setpoint(names, pos, vel, eff, joints),
            "apply_stage": lambda c=c, sp=sp: c.apply_stage(sp, term, 1.0, limits),
            "Setpoint.passed_on": lambda sp=sp: sp.passed_on(term, joints),
            "stage_time": lambda c=c: c.stage_time(100.5),
            "apply_deadband": lambda m=m, v=v: m["velocity"].apply_deadband(v, 0.003),
        }
        for name, call in calls.items():
            out.setdefault(name, []).append(call)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--baseline", default="d8184c2", help="git revision or directory of the baseline tree"
    )
    parser.add_argument("--calls", type=int, default=2000, help="cold calls per side (warm: 15x)")
    args = parser.parse_args()
    from stage_chain_cpu import baseline_tree

    table = pairs(baseline_tree(args.baseline))
    print(f"stage calls, median us per call, load average {os.getloadavg()}")
    for mode in ("warm", "cold"):
        for name, (old, new) in table.items():
            times: tuple[list[int], list[int]] = ([], [])
            for i in range(args.calls * (15 if mode == "warm" else 1)):
                for k in (0, 1) if i % 2 else (1, 0):
                    if mode == "cold":
                        time.sleep(0.0004)
                    t0 = time.thread_time_ns()
                    (old, new)[k]()
                    times[k].append(time.thread_time_ns() - t0)
            a, b = (statistics.median(t) / 1e3 for t in times)
            print(f"  {mode} {name:30s} baseline {a:6.2f}  this tree {b:6.2f}")
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
