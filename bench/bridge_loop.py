"""MIT bridge control loop: period jitter and CAN frame rate with 7 simulated motors.

For each loop rate (500 Hz and 1 kHz), in one process:

* ``baseline``: an empty rclpy timer at the same rate on the same executor type — what
  rclpy's timer alone achieves on this machine right now;
* ``bridge``: ``mit_bridge_node`` with ``simulate:=true`` on the 7-DoF OpenArm v10 URDF
  (7 emulated Damiao motors + the simulated arm at 1 kHz physics, in its own thread, on a
  private python-can ``virtual`` bus), commanded at 200 Hz by a publisher in the same
  executor, exactly as the executable runs it (:func:`make_executor`: rclpy's EventsExecutor
  where available, ``GRAVITY_FRICTION_COMP_EXECUTOR=single`` for the SingleThreadedExecutor).

Prints loop period p50 / p99 / max [ms] and their ratio to the baseline, the p99 of
|period − nominal| (jitter), and frames per second (commands + replies) against the
physical ceiling of the configured bitrate (1 Mbit/s: 7,407 frames/s with worst-case bit
stuffing, 135 bit/frame; 9,009 without, 111 bit/frame). The virtual bus has no bit timing,
so a rate above the ceiling is only possible in simulation: on a real bus 7 motors at 1 kHz
(14,000 frames/s) do not fit (FIELD_NOTES "Bandwidth").

Run: ``.venv/bin/python bench/bridge_loop.py [--seconds 4]``
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# DDS stays on this machine, in a domain of its own (before rclpy is imported).
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(150 + os.getpid() % 80)

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.mit.bus_load import CAN_FRAME_BITS_NOMINAL, CAN_FRAME_BITS_WORST_CASE  # noqa: E402
from gravity_friction_comp.model.robot_model import RobotModel  # noqa: E402
from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode  # noqa: E402
from gravity_friction_comp.nodes.stage_node import make_executor  # noqa: E402

URDF = ROOT / "test" / "data" / "urdf" / "openarm" / "openarm_v10_single_nohand.urdf"
BITRATE = 1_000_000
MOTORS = ["DM8009", "DM8009", "DM4340", "DM4340", "DM4310", "DM4310", "DM4310"]


def stats_ms(periods: np.ndarray, nominal: float) -> dict[str, float]:
    return {
        "p50": 1e3 * float(np.percentile(periods, 50)),
        "p99": 1e3 * float(np.percentile(periods, 99)),
        "max": 1e3 * float(periods.max()),
        "jitter_p99": 1e3 * float(np.percentile(np.abs(periods - nominal), 99)),
        "n": int(periods.size),
    }


def baseline(rate: float, seconds: float) -> dict[str, float]:
    ctx = Context()
    rclpy.init(context=ctx, domain_id=int(os.environ["ROS_DOMAIN_ID"]))
    node = rclpy.create_node("bench_baseline_timer", context=ctx)
    stamps: list[float] = []
    node.create_timer(1.0 / rate, lambda: stamps.append(time.monotonic()))
    ex = make_executor(ctx)
    ex.add_node(node)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ex.spin_once(timeout_sec=0.01)
    ex.shutdown()
    node.destroy_node()
    rclpy.try_shutdown(context=ctx)
    return stats_ms(np.diff(stamps[5:]), 1.0 / rate)


def bridge(rate: float, seconds: float) -> dict[str, float]:
    model = RobotModel.from_urdf(str(URDF))
    n = model.n
    ctx = Context()
    rclpy.init(context=ctx, domain_id=int(os.environ["ROS_DOMAIN_ID"]))
    params = {
        "joints": list(model.joint_names),
        "can_id": list(range(1, n + 1)),
        "master_id": list(range(0x11, 0x11 + n)),
        "motor_type": MOTORS[:n],
        "kp": [0.0] * n,
        "kd": [0.5] * n,
        "rate_hz": rate,
        "command_timeout": 0.1,
        "simulate": True,
        "urdf_path": str(URDF),
        "can.bitrate": BITRATE,
    }
    node = MitBridgeNode(context=ctx, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    client = rclpy.create_node("bench_commander", context=ctx)
    pub = client.create_publisher(JointState, "joint_command", 10)
    q = np.zeros(n)

    def command():
        msg = JointState()
        msg.name = list(model.joint_names)
        msg.position = q.tolist()
        msg.effort = model.gravity(q).tolist()
        pub.publish(msg)

    client.create_timer(1.0 / 200.0, command)
    ex = make_executor(ctx)
    ex.add_node(node)
    ex.add_node(client)
    warm = time.monotonic() + 0.5
    while time.monotonic() < warm:
        ex.spin_once(timeout_sec=0.01)
    io = node._io  # noqa: SLF001 - bench introspection
    n_periods0 = len(node.loop_periods())
    t0, frames0 = time.monotonic(), io.sent + io.listener.received
    end = t0 + seconds
    while time.monotonic() < end:
        ex.spin_once(timeout_sec=0.01)
    elapsed = time.monotonic() - t0
    frames = io.sent + io.listener.received - frames0
    periods = node.loop_periods()[n_periods0:] if n_periods0 < 4096 else node.loop_periods()
    sim = node._sim  # noqa: SLF001
    out = stats_ms(periods[-int(rate * seconds) :], 1.0 / rate)
    out.update(
        fps=frames / elapsed,
        expected_fps=2 * n * rate,
        sim_overruns=sim.overruns,
        sim_ticks_per_s=sim.ticks / max(sim.arm.time, 1e-9) if sim.arm.time else 0.0,
        sim_realtime=sim.arm.time,
        missed=sum(s.total_missed_replies for s in node._core.status()),
    )  # noqa: SLF001
    ex.shutdown()
    client.destroy_node()
    node.destroy_node()
    rclpy.try_shutdown(context=ctx)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measurement time per case [s]")
    parser.add_argument("--rates", type=float, nargs="+", default=[500.0, 1000.0])
    args = parser.parse_args()
    if not URDF.is_file():  # a copy of the project's shared data (test/data/README.md)
        print(f"skipped: {URDF} not found (the 7-DoF OpenArm URDF, test/data/urdf/openarm/)")
        return
    ceiling_worst = BITRATE / CAN_FRAME_BITS_WORST_CASE
    ceiling_nominal = BITRATE / CAN_FRAME_BITS_NOMINAL
    print(
        f"7 simulated motors (OpenArm v10), {BITRATE} bit/s; ceiling {ceiling_worst:.0f} frames/s "
        f"(135 bit, stuffing worst case) / {ceiling_nominal:.0f} frames/s (111 bit)"
    )
    print(f"machine load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    for rate in args.rates:
        base = baseline(rate, args.seconds)
        res = bridge(rate, args.seconds)
        print(f"\n== {rate:g} Hz (nominal period {1e3 / rate:.3f} ms) ==")
        print(f"{'':10s} {'p50 ms':>8s} {'p99 ms':>8s} {'max ms':>8s} {'|dT| p99':>9s} {'n':>6s}")
        for label, r in (("baseline", base), ("bridge", res)):
            print(
                f"{label:10s} {r['p50']:8.3f} {r['p99']:8.3f} {r['max']:8.3f} {r['jitter_p99']:9.3f} {r['n']:6d}"
            )
        print(
            f"{'ratio':10s} {res['p50'] / base['p50']:8.2f} {res['p99'] / base['p99']:8.2f} "
            f"{res['max'] / base['max']:8.2f} {res['jitter_p99'] / max(base['jitter_p99'], 1e-6):9.2f}"
        )
        print(
            f"frames/s: {res['fps']:.0f} measured, {res['expected_fps']:.0f} expected (2 x 7 x rate); "
            f"measured / ceiling = {res['fps'] / ceiling_worst:.2f} (worst case), "
            f"{res['fps'] / ceiling_nominal:.2f} (no stuffing); expected / ceiling = "
            f"{res['expected_fps'] / ceiling_worst:.2f}"
        )
        print(
            f"loop achieved {res['n'] / args.seconds:.0f} Hz of {rate:g}; missed replies {res['missed']}; "
            f"simulated arm: {res['sim_ticks_per_s']:.0f} physics steps per simulated s, "
            f"{res['sim_overruns']} overruns (>50 ms behind)"
        )


if __name__ == "__main__":
    main()
