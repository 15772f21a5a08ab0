"""CPU per setpoint of the two feedforward stages of the one-process chain, this tree vs a baseline.

The composed chain (:class:`~gravity_friction_comp.nodes.composed_chain.ComposedChain`, the
parameters of :func:`end_to_end_latency.chain_parameters`: palletizer URDF and arm YAML,
gravity mode, Coulomb + viscous friction on the setpoint velocity) with the friction stage's
hand-off to the bridge replaced by a sink that maps the output as the bridge does
(``out.setpoint_for(joints)`` and the three model-order arrays) and nothing else: what is
left of ``ComposedChain._on_setpoint`` is the stages' share (gravity node and stage, the
hand-off, friction node and stage). No executor spins, no DDS message is published (nobody
listens). Each round a child process per tree calls the chain's entry for ``--setpoints``
setpoints (3 joints, position + velocity + effort, stamped, cycled from 1000 random ones)
and prints the main thread's CPU per setpoint; trees alternate, ``--rounds`` rounds.

Run::

    nice -n 10 python bench/stage_chain_cpu.py [--baseline main] [--rounds 7] [--setpoints 20000]

``--baseline`` is a git revision (exported with ``git archive`` to a temporary directory)
or a directory holding another tree. Prints min and median µs per setpoint per tree and the
ratio new / baseline, with the load average (``uptime``) before and after.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def child(setpoints: int, rate: float, profile: bool) -> None:
    import gc
    import time

    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))
    import numpy as np
    import rclpy
    from end_to_end_latency import JOINTS, chain_parameters
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.nodes.stage_node import HandOff

    ctx, chain = composed_chain(chain_parameters(1000.0))
    names = tuple(JOINTS)
    seen = [0]

    def sink(out) -> None:  # what the bridge reads of the friction stage's output
        sp = out.setpoint_for(names)
        sp.model_position(), sp.model_velocity(), sp.model_effort()
        seen[0] += 1

    chain.friction.hand_off = HandOff(lambda msg: None, sink)
    rng = np.random.default_rng(1)
    msgs = []
    for i in range(1000):
        msg = JointState()
        msg.name = list(JOINTS)
        msg.position = rng.uniform(-1.5, 1.5, 3).tolist()
        msg.velocity = rng.uniform(-2.0, 2.0, 3).tolist()
        msg.effort = rng.uniform(-0.5, 0.5, 3).tolist()
        msg.header.stamp.sec, msg.header.stamp.nanosec = 1000 + i // 1000, (i % 1000) * 1_000_000
        msgs.append(msg)
    entry = chain._on_setpoint  # noqa: SLF001 - the gravity stage's joint_setpoint callback
    for msg in msgs:  # warm
        entry(msg)
    gc.collect()
    gc.freeze()
    # stamps move on with each pass (the friction filters see time advance)
    batches = [msgs] * (setpoints // len(msgs))
    if profile:
        import cProfile
        import pstats

        pr = cProfile.Profile()
        pr.enable()
    period = 0 if rate <= 0 else int(1e9 / rate)
    cpu = 0
    next_ns = time.monotonic_ns()
    for batch in batches:
        for msg in batch:
            if period:  # paced as in the chain: the caches cool between setpoints
                next_ns += period
                pause = next_ns - time.monotonic_ns()
                if pause > 0:
                    time.sleep(pause * 1e-9)
            c0 = time.thread_time_ns()
            entry(msg)
            cpu += time.thread_time_ns() - c0
    if profile:
        pr.disable()
        stats = pstats.Stats(pr)
        stats.sort_stats("tottime").print_stats(80)
        print("calls per setpoint", stats.total_calls / (len(batches) * len(msgs)))
    n = len(batches) * len(msgs)
    assert seen[0] == n + len(msgs) and chain.errors == 0, (seen[0], chain.errors, chain.last_error)
    print(f"US_PER_SETPOINT {cpu / n / 1e3:.3f}")
    chain.destroy()
    rclpy.try_shutdown(context=ctx)


def composed_chain(params: dict):
    """``(context, ComposedChain)`` of each node's parameters (a new rclpy context)."""
    import rclpy
    from end_to_end_latency import _launch_module
    from rclpy.context import Context

    from gravity_friction_comp.nodes.composed_chain import ComposedChain

    path = _launch_module().composed_parameters_file(
        params["gravity_compensation"], params["friction_feedforward"], params["mit_bridge"]
    )
    ctx = Context()
    rclpy.init(
        context=ctx, args=["--ros-args", "--params-file", path], domain_id=int(os.environ["ROS_DOMAIN_ID"])
    )
    return ctx, ComposedChain(context=ctx)


def baseline_tree(revision: str) -> pathlib.Path:
    """A temporary copy of the baseline: a directory's files, or a git revision exported."""
    out = pathlib.Path(tempfile.mkdtemp(prefix="stage_chain_base_"))
    if pathlib.Path(revision).is_dir():  # copied: the benches add their scripts to it
        import shutil

        ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", "build", "install", "log")
        shutil.copytree(revision, out, ignore=ignore, dirs_exist_ok=True)
        return out
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out


def run_tree(tree: pathlib.Path, setpoints: int, rate: float) -> float:
    script = tree / "bench" / "stage_chain_cpu.py"
    if not script.exists():  # a baseline from before this script: run this one in its tree
        script = tree / "bench" / "_stage_chain_cpu.py"
        script.write_text(pathlib.Path(__file__).read_text())
    out = subprocess.run(
        [sys.executable, str(script), "--child", "--setpoints", str(setpoints), "--rate", str(rate)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(next(line.split()[1] for line in out.splitlines() if line.startswith("US_PER_SETPOINT")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git revision or directory of the baseline tree")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--setpoints", type=int, default=20000)
    parser.add_argument("--rate", type=float, default=1000.0, help="setpoints per second (0: back to back)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help="child: cProfile this tree only")
    args = parser.parse_args()
    if args.child or args.profile:
        child(args.setpoints, args.rate, args.profile)
        return
    import statistics

    base = baseline_tree(args.baseline)
    print(f"stages of the composed chain, CPU per setpoint; load average {os.getloadavg()}")
    times: dict[str, list[float]] = {"baseline": [], "this tree": []}
    for _ in range(args.rounds):
        times["baseline"].append(run_tree(base, args.setpoints, args.rate))
        times["this tree"].append(run_tree(ROOT, args.setpoints, args.rate))
    for name, values in times.items():
        print(f"  {name:10s} min {min(values):6.1f}  median {statistics.median(values):6.1f} us/setpoint")
    ratio = statistics.median(times["this tree"]) / statistics.median(times["baseline"])
    print(f"  this tree / baseline (medians) {ratio:.2f}; load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
