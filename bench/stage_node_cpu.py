"""CPU per message of the separate stage nodes (gravity, friction) against a bare relay.

The processes, as ``arm.launch.py`` starts them (the parameters of
:func:`end_to_end_latency.chain_parameters`: palletizer URDF and arm YAML):

- ``gravity_compensation_node``: ``joint_setpoint`` → ``joint_command`` (the friction node's
  input);
- ``friction_feedforward_node``: that → ``joint_command``, and ``joint_states`` at the same
  rate (the bridge publishes one per cycle; here this process does);
- baselines on the same executor (:func:`~gravity_friction_comp.nodes.runtime.spin_node`):
  ``relay`` (subscribe → publish the same ``JointState``), and ``relay+states`` (the same,
  plus a ``joint_states`` subscription whose callback keeps the message: the friction
  node's inputs with no work).

This process publishes setpoints (3 joints, position + velocity, stamped) and
``joint_states`` (position, velocity, effort) at ``--rate`` Hz for ``--duration`` s and
reads each process's CPU (utime + stime, ``/proc/<pid>/stat``) at the start and end. Each
node's output has exactly one listener (the next node or this process), and nobody listens
to ``~/effort``, as in a plain launch. CPU per message = CPU time / setpoints published.

Run::

    nice -n 19 .venv/bin/python bench/stage_node_cpu.py --duration 10

Prints µs of CPU per setpoint and the share of one core per process, the ratio of each
stage to its relay, and the setpoints that did not reach the end of each chain.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

import yaml
from pipeline_latency import relay_main

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]


def count_main(topics: list[str]) -> None:
    """Count the messages stamped ``frame_id == "m"`` on each topic; print the counts (one
    JSON line) at SIGINT. Its own process, so the publishing process's GIL does not make it
    miss messages."""
    import json
    import signal

    import rclpy
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.nodes.runtime import spin_node
    from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

    stop: list = []
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = rclpy.create_node(f"count_{os.getpid()}")
    counts = dict.fromkeys(topics, 0)

    def counter(topic):
        def cb(msg) -> None:
            if msg.header.frame_id == "m":
                counts[topic] += 1

        return cb

    for topic in topics:
        node.create_subscription(JointState, topic, counter(topic), SETPOINT_QOS)
    print("ready", flush=True)
    spin_node(node, stop=lambda: bool(stop))
    print(json.dumps(counts), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()


def _processes(tmp: pathlib.Path, env: dict, trees: dict[str, pathlib.Path]) -> dict[str, subprocess.Popen]:
    """The stage chains (one gravity → friction pair per tree, ``trees`` maps a label to a
    checkout) and the two relays, keyed ``gravity``/``friction`` (+ ``@label``), ``relay``,
    ``relay+states``."""
    from end_to_end_latency import chain_parameters

    params = chain_parameters(1000.0)
    py = sys.executable
    procs = {}
    for label, tree in trees.items():
        tag = f"@{label}" if label else ""
        ns = f"cpu{label}"
        tree_env = dict(env, PYTHONPATH=f"{tree}{os.pathsep}{env.get('PYTHONPATH', '')}")
        for key, name, remaps in (
            (
                "gravity",
                "gravity_compensation",
                (f"joint_setpoint:={ns}/setpoint", f"joint_command:={ns}/gravity"),
            ),
            (
                "friction",
                "friction_feedforward",
                (
                    f"joint_setpoint:={ns}/gravity",
                    f"joint_command:={ns}/command",
                    "joint_states:=cpu/joint_states",
                ),
            ),
        ):
            path = tmp / f"{key}{label}.yaml"
            path.write_text(yaml.safe_dump({name: {"ros__parameters": params[name]}}))
            cmd = [
                py,
                "-m",
                f"gravity_friction_comp.nodes.{name}_node",
                "--ros-args",
                "--params-file",
                str(path),
            ]
            for rule in remaps:
                cmd += ["-r", rule]
            procs[key + tag] = subprocess.Popen(
                cmd, env=tree_env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
    for key, topic, states in (("relay", "relay", "-"), ("relay+states", "relay_states", "cpu/joint_states")):
        cmd = [py, __file__, "--relay", f"cpu/{topic}_in", f"cpu/{topic}_out", states]
        procs[key] = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
    return procs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured")
    parser.add_argument("--rate", type=float, default=1000.0, help="setpoint and joint_states rate [Hz]")
    parser.add_argument(
        "--baseline",
        type=pathlib.Path,
        metavar="TREE",
        help="also run the two stage nodes of another checkout (e.g. a `git worktree` of the commit "
        "before a change) in the same run, labelled @base",
    )
    parser.add_argument("--relay", nargs=3, metavar=("IN", "OUT", "STATES"), help=argparse.SUPPRESS)
    parser.add_argument("--count", nargs="+", metavar="TOPIC", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.relay:
        relay_main(*args.relay)
        return 0
    if args.count:
        count_main(args.count)
        return 0
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))
    sys.path.insert(0, str(ROOT / "bench"))
    from processes import process_cpu, stop_process

    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    trees = {"": ROOT} | ({"base": args.baseline.resolve()} if args.baseline else {})
    procs = _processes(pathlib.Path(tempfile.mkdtemp(prefix="gfc_stagecpu_")), env, trees)
    try:
        return _measure(args, procs, process_cpu, stop_process, env)
    finally:
        for proc in procs.values():
            stop_process(proc)


def _measure(args, procs, process_cpu, stop_process, env) -> int:
    import json

    import rclpy
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.nodes.runtime import executor_choice, spin_node
    from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

    rclpy.init()
    node = rclpy.create_node("stage_node_cpu_bench")
    chains = ["chain"] + (["chain@base"] if "gravity@base" in procs else [])
    inputs = {k: f"cpu{k[6:]}/setpoint" for k in chains} | {
        "relay": "cpu/relay_in",
        "relay+states": "cpu/relay_states_in",
    }
    outputs = {k: f"cpu{k[6:]}/command" for k in chains} | {
        "relay": "cpu/relay_out",
        "relay+states": "cpu/relay_states_out",
    }
    pubs = {k: node.create_publisher(JointState, t, SETPOINT_QOS) for k, t in inputs.items()}
    states_pub = node.create_publisher(JointState, "cpu/joint_states", SETPOINT_QOS)
    received = dict.fromkeys(outputs, 0)

    def seen(key):
        def cb(msg) -> None:
            received[key] += 1

        return cb

    # discovery check here; the counting of the measured messages in a process of its own
    subs = [node.create_subscription(JointState, t, seen(k), SETPOINT_QOS) for k, t in outputs.items()]
    done = threading.Event()
    spinner = threading.Thread(target=spin_node, args=(node, done.is_set), daemon=True)
    spinner.start()

    setpoint = JointState()
    setpoint.name = JOINTS
    states = JointState()
    states.name = JOINTS

    def publish(t: float) -> None:
        ns = time.time_ns()
        w = 2 * math.pi / 4.0
        setpoint.header.stamp.sec, setpoint.header.stamp.nanosec = divmod(ns, 1_000_000_000)
        setpoint.position = [0.3 * math.sin(w * t), 0.3 + 0.15 * math.sin(w * t), 0.2]
        setpoint.velocity = [0.3 * w * math.cos(w * t), 0.15 * w * math.cos(w * t), 0.0]
        states.header.stamp = setpoint.header.stamp
        states.position = setpoint.position
        states.velocity = setpoint.velocity
        states.effort = [0.0, 1.0, 0.5]
        for pub in pubs.values():
            pub.publish(setpoint)
        states_pub.publish(states)

    deadline = time.monotonic() + 60  # discovery end to end on every chain
    while time.monotonic() < deadline and not all(received.values()):
        for key, proc in procs.items():
            if proc.poll() is not None:
                print(f"{key} exited: {proc.stderr.read()}", file=sys.stderr)
                return 1
        publish(0.0)
        time.sleep(0.05)
    if not all(received.values()):
        print(f"no data through every chain after 60 s: {received}", file=sys.stderr)
        return 1
    for sub in subs:
        node.destroy_subscription(sub)
    cmd = [sys.executable, __file__, "--count", *outputs.values()]
    counter = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    assert counter.stdout is not None
    counter.stdout.readline()  # "ready"
    time.sleep(2.0)  # its discovery
    gc.disable()  # this process must not stall the chains (spin_node froze what exists)
    setpoint.header.frame_id = "m"
    period = 1.0 / args.rate
    count = 0
    cpu0 = {k: process_cpu(p.pid) for k, p in procs.items()}
    start = next_t = time.perf_counter()
    end = start + args.duration
    while next_t < end:
        now = time.perf_counter()
        if next_t > now:
            time.sleep(next_t - now)
        publish(count * period)
        count += 1
        # a late tick is skipped, not caught up: a burst would overflow the keep-last queues
        next_t = max(next_t + period, time.perf_counter())
    elapsed = time.perf_counter() - start
    cpu = {k: process_cpu(p.pid) - cpu0[k] for k, p in procs.items()}
    time.sleep(0.3)  # the tail
    stop_process(counter)
    counts = json.loads(counter.stdout.read().strip().splitlines()[-1])
    received = {k: counts[t] for k, t in outputs.items()}
    gc.enable()
    done.set()
    spinner.join(timeout=2.0)
    node.destroy_node()
    rclpy.try_shutdown()

    print(
        f"stage_node_cpu: {count} setpoints + {count} joint_states at {count / elapsed:.0f} Hz "
        f"over {elapsed:.1f} s, ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, executor: {executor_choice()}"
    )
    per = {k: 1e6 * c / count for k, c in cpu.items()}
    print(f"{'process':14s} {'CPU µs/setpoint':>16s} {'core %':>7s}")
    for key in procs:
        print(f"{key:14s} {per[key]:16.1f} {100 * cpu[key] / elapsed:7.1f}")
    for tag in ("", "@base") if "gravity@base" in procs else ("",):
        print(
            f"ratio gravity{tag} / relay: {per['gravity' + tag] / per['relay']:.2f}x, "
            f"friction{tag} / relay+states: {per['friction' + tag] / per['relay+states']:.2f}x"
        )
    lost = ", ".join(f"{k} {count - n}" for k, n in received.items())
    print(f"setpoints not at a chain's end: {lost}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
