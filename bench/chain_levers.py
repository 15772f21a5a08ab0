"""The one-process chain's CPU per setpoint, lever by lever, alternated in one process.

``end_to_end_latency.py`` measures the chain against a bare relay with DDS in between; on a
shared 2-core machine its CPU per setpoint moves with the load (setpoints lost or bunched
leave keep-alive ticks and diagnostics to fewer setpoints). This bench isolates the levers
on the executor's thread: the composed chain (:class:`ComposedChain`, the launch file's
parameters, the simulated arm in its own process over socketcand as in the e2e bench), each
setpoint handed to the chain's entry (the gravity stage's ``joint_setpoint`` callback) by a
timer at the setpoint rate on the same executor (that wake stands for the subscription's;
no DDS), variants alternated in rounds of ``--seconds``:

- ``rearmed``: the tree as it is (the bridge's loop timer re-armed after each decision,
  :mod:`~gravity_friction_comp.mit.timer_plan`);
- ``fixed_timer``: the loop timer at every period whatever the commands (before);
- ``future``: as ``rearmed``, the executor driven by ``spin_until_future_complete`` (every
  event of a 0.2 s wake in one call) instead of ``spin_once`` per event;
- ``empty``: the setpoint timer calling nothing, the bridge's timer fixed at every period
  (what the wakes alone cost: rclpy's timer dispatch twice per period);
- the floors, the bridge's loop timer cancelled: ``wake`` (the setpoint timer calling
  nothing: one executor wake per setpoint) and ``transport`` (the setpoint timer sending the
  bridge's last exchange's frames again and reading the replies, on the bridge's own
  transport: the wake and the bus I/O that no Python speed-up removes).

Prints per variant the median over rounds of the main thread's CPU per setpoint
(``time.thread_time``) and the bridge's timer ticks, exchanges and waiting commands per
second. ``--breakdown`` runs ``rearmed`` only, each function of the chain's path wrapped to
add up its own thread CPU (inclusive, per setpoint; the wrappers add ~0.3 µs per call): where
the time goes, per function. Run: ``python bench/chain_levers.py [--rates 500,1000]
[--seconds 3] [--rounds 5] [--breakdown]``
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))

import numpy as np  # noqa: E402
from end_to_end_latency import JOINTS, _launch_module, chain_parameters  # noqa: E402
from processes import start_sim_arm, stop_process  # noqa: E402

VARIANTS = ("rearmed", "fixed_timer", "future", "empty", "wake", "transport")
#: The chain's path for ``--breakdown``: (module, Class.method), outermost first.
BREAKDOWN = (
    ("gravity_friction_comp.nodes.composed_chain", "ComposedChain._on_setpoint"),
    ("gravity_friction_comp.stage.gravity", "GravityStage.update"),
    ("gravity_friction_comp.stage.friction", "FrictionStage.update"),
    ("gravity_friction_comp.nodes.mit_bridge_node", "MitBridgeNode._accept"),
    ("gravity_friction_comp.mit.bridge_core", "MitBridgeCore.set_command"),
    ("gravity_friction_comp.mit.send_schedule", "SendSchedule.command"),
    ("gravity_friction_comp.mit.timer_plan", "TimerPlan.command"),
    ("gravity_friction_comp.nodes.mit_bridge_node", "MitBridgeNode._exchange"),
    ("gravity_friction_comp.nodes.mit_bridge_node", "MitBridgeNode._ingest_waiting"),
    ("gravity_friction_comp.mit.bus", "SocketcandCanIO.read"),
    ("gravity_friction_comp.mit.bridge_core", "MitBridgeCore.ingest_replies"),
    ("gravity_friction_comp.mit.bridge_core", "MitBridgeCore.step"),
    ("gravity_friction_comp.mit.bus", "SocketcandCanIO.send"),
    ("gravity_friction_comp.nodes.mit_bridge_node", "MitBridgeNode._publish_state"),
    ("gravity_friction_comp.nodes.mit_bridge_node", "MitBridgeNode._loop"),
    ("gravity_friction_comp.nodes.mit_bridge_node", "MitBridgeNode._publish_diagnostics"),
)


def wrap_breakdown() -> dict[str, list[int]]:
    """Wrap each :data:`BREAKDOWN` function to add up its thread CPU [ns] and calls."""
    import functools
    import importlib

    totals: dict[str, list[int]] = {}
    for module, qualname in BREAKDOWN:
        cls_name, name = qualname.split(".")
        cls = getattr(importlib.import_module(module), cls_name)
        inner = getattr(cls, name)
        acc = totals.setdefault(qualname, [0, 0])

        @functools.wraps(inner)  # rclpy reads a timer callback's signature
        def timed(*args, _inner=inner, _acc=acc, **kwargs):
            t0 = time.thread_time_ns()
            try:
                return _inner(*args, **kwargs)
            finally:
                _acc[0] += time.thread_time_ns() - t0
                _acc[1] += 1

        setattr(cls, name, timed)
    return totals


def measure(rate: float, seconds: float, rounds: int, variants=VARIANTS) -> dict[str, list[dict]]:
    import gc

    import rclpy
    from rclpy.context import Context
    from rclpy.task import Future
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.nodes.composed_chain import ComposedChain
    from gravity_friction_comp.nodes.runtime import make_executor

    params = chain_parameters(rate)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="chain_levers_"))
    sim_proc, port = start_sim_arm(params["mit_bridge"], tmp / "sim.yaml")
    params["mit_bridge"] |= {"simulate": False, "can.interface": "socketcand"}
    params["mit_bridge"] |= {"can.host": "127.0.0.1", "can.port": port}
    path = _launch_module().composed_parameters_file(
        params["gravity_compensation"], params["friction_feedforward"], params["mit_bridge"]
    )
    ctx = Context()
    rclpy.init(
        context=ctx, args=["--ros-args", "--params-file", path], domain_id=int(os.environ["ROS_DOMAIN_ID"])
    )
    chain = ComposedChain(context=ctx)
    bridge = chain.bridge
    plan, timer, schedule = bridge._timer_plan, bridge._loop_timer, bridge.send_schedule  # noqa: SLF001
    period_ns = timer.timer_period_ns
    commander = rclpy.create_node("bench_commander", context=ctx)
    msg = JointState()
    msg.name = list(JOINTS)
    msg.position, msg.velocity, msg.effort = [0.0, 0.3, 0.2], [0.0] * 3, [0.5, 0.0, 0.0]
    target = [chain._on_setpoint]  # noqa: SLF001 - the gravity stage's joint_setpoint callback
    count = [0]

    def setpoint() -> None:
        stamp = time.time_ns()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        count[0] += 1
        target[0](msg)

    commander.create_timer(1.0 / rate, setpoint)
    executor = make_executor(ctx)
    for node in (*chain.nodes, commander):
        executor.add_node(node)

    def spin(duration: float, future: bool) -> None:
        end = time.monotonic() + duration
        while (left := end - time.monotonic()) > 0:
            if future:
                executor.spin_until_future_complete(Future(), timeout_sec=min(left, 0.2))
            else:
                executor.spin_once(timeout_sec=min(left, 0.2))

    (io,) = bridge._ios.values()  # noqa: SLF001 - one bus
    last_frames: list = []
    send = io.send

    def recording_send(frames):
        last_frames[:] = frames
        return send(frames)

    io.send = recording_send

    def resend(m) -> None:  # the transport floor: the last exchange's frames, the replies read
        send(last_frames)
        io.read()

    def use(variant: str) -> None:
        for name in ("command", "tick"):
            plan.__dict__.pop(name, None)
        target[0] = chain._on_setpoint  # noqa: SLF001
        if timer.is_canceled():
            timer.reset()  # reset re-enables a cancelled rclpy timer
        if variant in ("fixed_timer", "empty", "wake", "transport"):
            plan.command = plan.tick = lambda now: None
            timer.timer_period_ns = period_ns
            plan._armed_ns = period_ns  # noqa: SLF001 - back in step when re-armed again
            timer.reset()
        if variant in ("empty", "wake"):
            target[0] = lambda m: None
        if variant == "transport":
            target[0] = resend
        if variant in ("wake", "transport"):
            timer.cancel()

    results: dict[str, list[dict]] = {v: [] for v in variants}
    try:
        spin(1.0, False)  # warm: start-up holds, the first setpoints
        gc.collect()
        gc.freeze()
        for _ in range(rounds):
            for variant in variants:
                use(variant)
                spin(0.3, variant == "future")  # settle into the variant
                c0, n0 = time.thread_time(), count[0]
                s0 = (schedule.ticks, schedule.on_arrival + schedule.on_tick + schedule.keepalive)
                w0, t0 = schedule.deferred, time.monotonic()
                spin(seconds, variant == "future")
                span = time.monotonic() - t0
                n = max(count[0] - n0, 1)
                results[variant].append(
                    {
                        "cpu_us": 1e6 * (time.thread_time() - c0) / n,
                        "setpoints/s": n / span,
                        "ticks/s": (schedule.ticks - s0[0]) / span,
                        "exchanges/s": (schedule.on_arrival + schedule.on_tick + schedule.keepalive - s0[1])
                        / span,
                        "waited/s": (schedule.deferred - w0) / span,
                    }
                )
    finally:
        executor.shutdown()
        chain.destroy()
        commander.destroy_node()
        rclpy.try_shutdown(context=ctx)
        stop_process(sim_proc)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="500,1000", help="comma-separated setpoint rates = rate_hz [Hz]")
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds per variant and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--breakdown", action="store_true", help="rearmed only, per-function CPU")
    args = parser.parse_args()
    print(
        f"chain levers, main-thread CPU per setpoint, {args.rounds} rounds x {args.seconds:g} s per variant, "
        f"load average (uptime) {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for rate in (float(r) for r in args.rates.split(",")):
        if args.breakdown:
            breakdown(rate, args.seconds, args.rounds)
            continue
        res = measure(rate, args.seconds, args.rounds)
        base = float(np.median([r["cpu_us"] for r in res["rearmed"]]))
        print(f"\n== {rate:g} Hz ==")
        for variant, rows in res.items():
            med = {k: float(np.median([r[k] for r in rows])) for k in rows[0]}
            spread = [r["cpu_us"] for r in rows]
            print(
                f"  {variant:12s} CPU {med['cpu_us']:6.1f} us/setpoint (rounds {min(spread):.0f}-{max(spread):.0f};"
                f" {med['cpu_us'] - base:+.1f} vs rearmed) | setpoints {med['setpoints/s']:.0f}/s | timer"
                f" {med['ticks/s']:.0f} ticks/s | exchanges {med['exchanges/s']:.0f}/s | waited {med['waited/s']:.0f}/s"
            )
    print(f"\nload average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def breakdown(rate: float, seconds: float, rounds: int) -> None:
    """``--breakdown``: the chain's path per function, over the whole run (warm-up included)."""
    totals = wrap_breakdown()
    res = measure(rate, seconds, rounds, variants=("rearmed",))
    n = max(totals["ComposedChain._on_setpoint"][1], 1)
    cpu = float(np.median([r["cpu_us"] for r in res["rearmed"]]))
    print(
        f"\n== {rate:g} Hz: main-thread CPU {cpu:.1f} us/setpoint (measured rounds), per function (whole run):"
    )
    for qualname, (ns, calls) in totals.items():
        print(f"  {qualname:40s} {ns / n / 1e3:7.1f} us/setpoint  {calls / n:5.2f} calls/setpoint")


if __name__ == "__main__":
    main()
