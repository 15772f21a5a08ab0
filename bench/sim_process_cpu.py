"""CPU of the bridge process per frame exchange: simulated arm in the bridge's process vs in its own.

Two cases on the palletizer (config/mit_bridge.yaml, 3 motors, 500 Hz, holding: no setpoint
source, so the bridge exchanges on its timer at ``rate_hz``):

- ``in-process`` (the baseline, measured in the same run): ``simulate:=true``, the emulated
  motors and the 1 kHz physics thread inside the bridge's process on a python-can
  ``virtual`` bus;
- ``own process``: ``sim_arm`` (tools/sim_arm.py) serves the same arm over socketcand on
  127.0.0.1 and the bridge runs ``simulate:=false can.interface:=socketcand``, as it would
  against a real arm's socketcand daemon.

For each, after a warm-up, the bridge process's CPU time (utime + stime of ``/proc/<pid>/stat``)
over ``--seconds`` is divided by the ``joint_states`` messages received in that span (one per
exchange). The sim_arm process's CPU is reported too (what the arm costs elsewhere). Cases
alternate ``--rounds`` times; medians are printed, and the ratio own-process / in-process.

Usage: ``ROS_DOMAIN_ID=<id> nice -n 19 .venv/bin/python bench/sim_process_cpu.py [--seconds 4 --rounds 2]``
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

import rclpy  # noqa: E402
from processes import process_cpu, start_sim_arm, stop_process  # noqa: E402
from rclpy.context import Context  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.nodes.runtime import make_executor  # noqa: E402
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS  # noqa: E402
from gravity_friction_comp.profiles.arm_profiles import load_arm  # noqa: E402


def _start(args: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def run_case(case: str, seconds: float, tmp: pathlib.Path) -> dict[str, float]:
    values = load_arm("palletizer").simulated_bridge_values()
    procs = []
    sim = None
    try:
        if case == "own process":
            sim, port = start_sim_arm(values, tmp / "sim_arm.yaml")
            procs.append(sim)
            values.update(
                {"simulate": False, "can.interface": "socketcand", "can.host": "127.0.0.1", "can.port": port}
            )
        else:
            values["simulate"] = True
        path = tmp / f"bridge_{case.replace(' ', '_')}.yaml"
        path.write_text(yaml.safe_dump({"mit_bridge": {"ros__parameters": values}}))
        bridge = _start(
            ["-m", "gravity_friction_comp.nodes.mit_bridge_node", "--ros-args", "--params-file", str(path)]
        )
        procs.append(bridge)

        ctx = Context()
        rclpy.init(context=ctx, domain_id=int(os.environ["ROS_DOMAIN_ID"]))
        node = rclpy.create_node("bench_sim_process_cpu", context=ctx)
        count = [0]
        node.create_subscription(
            JointState, "/joint_states", lambda _m: count.__setitem__(0, count[0] + 1), SETPOINT_QOS
        )
        ex = make_executor(ctx)
        ex.add_node(node)
        try:

            def spin(duration: float) -> None:
                end = time.monotonic() + duration
                while time.monotonic() < end:
                    ex.spin_once(timeout_sec=0.01)

            deadline = time.monotonic() + 30.0
            while count[0] < 200:  # up and running (discovery done, exchanges flowing)
                if time.monotonic() > deadline or bridge.poll() is not None:
                    raise RuntimeError(
                        f"bridge gave no joint_states: {bridge.stdout.read() if bridge.poll() is not None else ''}"
                    )
                spin(0.05)
            spin(1.0)
            n0, t0, c0 = count[0], time.monotonic(), process_cpu(bridge.pid)
            s0 = process_cpu(sim.pid) if sim else 0.0
            spin(seconds)
            n1, t1, c1 = count[0], time.monotonic(), process_cpu(bridge.pid)
            s1 = process_cpu(sim.pid) if sim else 0.0
        finally:
            ex.shutdown()
            node.destroy_node()
            rclpy.try_shutdown(context=ctx)
    finally:
        for proc in reversed(procs):
            stop_process(proc)
    exchanges = n1 - n0
    return {
        "exchanges_per_s": exchanges / (t1 - t0),
        "bridge_cpu_ms_per_exchange": 1e3 * (c1 - c0) / exchanges,
        "bridge_cpu_fraction": (c1 - c0) / (t1 - t0),
        "sim_cpu_fraction": (s1 - s0) / (t1 - t0),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=4.0, help="measured span per round [s]")
    p.add_argument("--rounds", type=int, default=2, help="alternations of the two cases")
    args = p.parse_args()
    if "ROS_DOMAIN_ID" not in os.environ:
        p.error("set ROS_DOMAIN_ID (and keep ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST)")
    cases = ("in-process", "own process")
    results: dict[str, list[dict[str, float]]] = {c: [] for c in cases}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for case in cases:
                results[case].append(run_case(case, args.seconds, pathlib.Path(tmp)))
    import numpy as np

    med = {c: {k: float(np.median([r[k] for r in rs])) for k in rs[0]} for c, rs in results.items()}
    print(
        f"palletizer, 3 motors @ 500 Hz, {args.rounds} x {args.seconds:g} s per case, load {os.getloadavg()[0]:.2f}"
    )
    for case in cases:
        m = med[case]
        print(
            f"  {case:12s}: bridge {m['bridge_cpu_ms_per_exchange']:.3f} ms CPU / exchange "
            f"({100 * m['bridge_cpu_fraction']:.0f} % of a core, {m['exchanges_per_s']:.0f} exchanges/s)"
            + (
                f"; sim_arm process {100 * m['sim_cpu_fraction']:.0f} % of a core"
                if case == "own process"
                else ""
            )
        )
    ratio = med["own process"]["bridge_cpu_ms_per_exchange"] / med["in-process"]["bridge_cpu_ms_per_exchange"]
    print(f"  ratio own process / in-process (bridge CPU per exchange): {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
