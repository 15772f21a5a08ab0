"""MIT bridge control loop: period jitter, bus use and the bridge's own CPU per cycle, simulated motors.

Cases, each against an empty rclpy timer at the same rate on the same executor type, measured
in the same run just before it (``baseline``: what rclpy's timer alone achieves on this
machine right now):

* ``7@500``, ``7@1000``: 7 Damiao motors (OpenArm v10 single arm) on a classic 1 Mbit/s bus.
* ``8fd@1000``: 8 motors (OpenArm v10 arm + gripper) on one simulated CAN-FD bus (1 Mbit/s arbitration, 5 Mbit/s data,
  bit-rate switch) at 1 kHz (issue 18 point 5; goal: loop period p99 ≤ 1.2× the empty timer's).
* ``bimanual@1000``: the ``openarm_v10_bimanual`` profile, 14 motors on two simulated FD
  buses (one per arm) driven by one bridge at 1 kHz: loop period p99 and load per bus
  (issue 15 point 7).

The bridge is ``mit_bridge_node`` with ``simulate:=true`` (emulated motors + the simulated
arm at 1 kHz physics in a thread of this process, on private python-can ``virtual``
channels), commanded at 200 Hz by a publisher in the same executor, exactly as the
executable runs it (:func:`make_executor`: rclpy's EventsExecutor where available,
``GRAVITY_FRICTION_COMP_EXECUTOR=single`` for the SingleThreadedExecutor). The simulator
shares the process (python-can's virtual bus is in-process), so CPU is counted per thread
(Linux per-thread CPU clocks): the bridge's frame exchanges on the executor thread (drain,
core, send, publish; on the timer or on a command's arrival) per exchange, and within them
the bus sends (on the ``virtual`` bus python-can deep-copies every frame and puts it in a
locked queue: simulation cost, not a real bus's), and the simulator's thread (physics steps
and the emulated motors' replies). The bridge reads its bus in the exchange itself (no
receive thread since 2026-12).
``--physics replies`` runs the simulator without physics: the emulated motors still answer
every frame (from the arm's start state, which then never moves), only the arm's step is
skipped, so the loop period shows what the bridge gets without the physics in its process.

The bridge's own CPU per exchange (issue 28 point 1; budget for 8 motors: mean <= 200 us,
p99 <= 400 us, ``time.thread_time``) is the exchange's CPU minus its transport's (each bus's
``send`` and ``read``), which is printed beside it, per exchange and per frame. Each case
runs with the bridge's transport (``direct``: the socketcand socket written once per exchange
and read in one pass, :mod:`~gravity_friction_comp.mit.frame_transport`) and with python-can's
``send``/``recv`` per frame on the same bus (``--transports``), one after the other;
``--profile`` prints a cProfile of the exchanges on the thread's CPU clock. The budget case:
``--cases 8@1000 --physics process`` (8 motors, classic CAN, the simulated arm in its own
process over socketcand).

Prints loop period p50 / p99 / max [ms] and their ratio to the baseline (the bridge's timer is
re-armed by each command and fires only when commands stop: its periods are those between
two ticks with no command in between, :mod:`~gravity_friction_comp.mit.timer_plan`), the p99 of
|period − nominal| (jitter), frames per second (commands + replies) against the ceiling of
the bus (classic 1 Mbit/s: 7,407 frames/s with worst-case stuffing, 135 bit/frame; FD: the
frame time of :mod:`~gravity_friction_comp.mit.bus_load`), and per bus its measured load.
The virtual bus has no bit timing, so a rate above the ceiling is only possible in
simulation. Then a line with each goal met / not met, and a last line ``met`` or ``not met``.

Run: ``.venv/bin/python bench/bridge_loop.py [--seconds 4] [--cases 8@1000 8fd@1000 bimanual@1000]
[--physics full|replies|process] [--transports direct python-can] [--profile]``
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io as io_module
import logging
import os
import pathlib
import pstats
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# DDS stays on this machine, in a domain of its own (before rclpy is imported).
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(150 + os.getpid() % 80)

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from processes import process_cpu, start_sim_arm, stop_process  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.mit.bus_load import bus_load_fraction, mit_bus_load  # noqa: E402
from gravity_friction_comp.mit.frame_transport import PythonCanTransport  # noqa: E402
from gravity_friction_comp.model.robot_model import RobotModel  # noqa: E402
from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode  # noqa: E402
from gravity_friction_comp.nodes.runtime import make_executor  # noqa: E402
from gravity_friction_comp.profiles.arm_profiles import load_arm  # noqa: E402
from gravity_friction_comp.tools.demo.scenario import load_node_parameters  # noqa: E402

URDF = ROOT / "test" / "data" / "urdf" / "openarm" / "openarm_v10_single_nohand.urdf"
BITRATE = 1_000_000
DATA_BITRATE = 5_000_000
MOTORS = ["DM8009", "DM8009", "DM4340", "DM4340", "DM4310", "DM4310", "DM4310", "DM4310"]
#: Goal of the 8-motor FD case: loop period p99 / empty timer p99.
P99_GOAL = 1.2


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


class TimedBridge(MitBridgeNode):
    """The bridge with the thread CPU time of each frame exchange recorded (timer or command
    arrival both call ``_exchange``), and within it of the transport: each bus's ``send``
    and ``read`` (python-can's per-frame calls, or the socket written and read directly,
    :mod:`~gravity_friction_comp.mit.frame_transport`). ``profiler``: a cProfile on the
    thread's CPU clock, enabled during exchanges only."""

    exchange_cpu: list[float]
    transport_cpu: list[float]
    frames_moved: list[int]
    profiler: cProfile.Profile | None = None
    _transport_sum = 0.0
    _frames_sum = 0

    def _exchange(self, now: float) -> None:
        self._transport_sum, self._frames_sum = 0.0, 0
        if self.profiler is not None:
            self.profiler.enable()
        t0 = time.thread_time()
        super()._exchange(now)
        t1 = time.thread_time()
        if self.profiler is not None:
            self.profiler.disable()
        self.exchange_cpu.append(t1 - t0)
        self.transport_cpu.append(self._transport_sum)
        self.frames_moved.append(self._frames_sum)

    def time_transport(self, transport: str) -> None:
        """Wrap each bus's ``send`` and ``read`` to add their thread CPU time to the current
        exchange's; ``transport`` ``python-can``: python-can's send/recv per frame on the same
        bus instead of the direct socket (the reference the bridge's transport is judged by)."""
        for io in self._ios.values():  # noqa: SLF001 - bench introspection
            if transport == "python-can":
                io.transport = PythonCanTransport(io.bus, io.fd)
                # its "incomplete message" warning per partial read is not the bench's output
                logging.getLogger("can.interfaces.socketcand.socketcand").setLevel(logging.ERROR)

            def timed_send(frames, _send=io.send):
                t0 = time.thread_time()
                n = _send(frames)
                self._transport_sum += time.thread_time() - t0
                self._frames_sum += len(frames)
                return n

            def timed_read(_read=io.read):
                t0 = time.thread_time()
                frames = _read()
                self._transport_sum += time.thread_time() - t0
                self._frames_sum += len(frames)
                return frames

            io.send, io.read = timed_send, timed_read


def thread_cpu(thread: threading.Thread) -> float:
    """CPU time [s] a running thread has used (its Linux per-thread clock)."""
    assert thread.ident is not None
    return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))


def case_parameters(case: str) -> tuple[pathlib.Path, dict, float]:
    """(URDF, bridge parameters, rate) of a case name ``<motors>@<rate>``."""
    kind, rate_text = case.split("@")
    rate = float(rate_text)
    if kind == "bimanual":
        profile = load_arm("openarm_v10_bimanual")
        _, values = load_node_parameters(profile.motor_map)
        values = {k: v for k, v in values.items() if not k.startswith("can.") or k in ("can.bitrate",)}
        values.update({"can.fd": True, "can.data_bitrate": DATA_BITRATE, "kp": [0.0] * 14, "kd": [0.5] * 14})
        return profile.urdf, dict(values, rate_hz=rate), rate
    fd = kind.endswith("fd")
    n = int(kind.removesuffix("fd"))
    # 7: the single arm; 8: the arm with its gripper motor (openarm_v10 profile URDF, 8 joints)
    urdf = URDF if n == 7 else load_arm("openarm_v10").urdf
    model = RobotModel.from_urdf(str(urdf))
    joints = list(model.joint_names)[:n]
    params = {
        "joints": joints,
        "can_id": list(range(1, n + 1)),
        "master_id": list(range(0x11, 0x11 + n)),
        "motor_type": MOTORS[:n],
        "kp": [0.0] * n,
        "kd": [0.5] * n,
        "rate_hz": rate,
        "can.bitrate": BITRATE,
        "can.fd": fd,
        "can.data_bitrate": DATA_BITRATE if fd else 0,
    }
    return urdf, params, rate


def _profile_text(profiler: cProfile.Profile, top: int = 25) -> str:
    out = io_module.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def bridge(
    case: str, seconds: float, physics: str = "full", transport: str = "direct", profile: bool = False
) -> dict:
    urdf, params, rate = case_parameters(case)
    model = RobotModel.from_urdf(str(urdf))
    joints = list(params["joints"])
    index = [model.joint_names.index(j) for j in joints]
    ctx = Context()
    rclpy.init(context=ctx, domain_id=int(os.environ["ROS_DOMAIN_ID"]))
    params = dict(params, command_timeout=0.1, simulate=True, urdf_path=str(urdf))
    sim_proc = None
    if physics == "process":
        if params.get("can.fd"):
            raise SystemExit(f"{case}: socketcand carries classic CAN only; use a classic case (7@500)")
        sim_file = pathlib.Path(tempfile.mkdtemp(prefix="bridge_loop_sim_")) / "mit_bridge.yaml"
        sim_proc, port = start_sim_arm(params, sim_file)
        params.update(
            {"simulate": False, "read_motor_limits": False, "can.interface": "socketcand"}
            | {"can.host": "127.0.0.1", "can.port": port}
        )
    node = TimedBridge(context=ctx, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    node.exchange_cpu, node.transport_cpu, node.frames_moved = [], [], []
    node.time_transport(transport)
    sim = node._sim  # noqa: SLF001 - bench introspection
    physics_cpu: list[float] = []
    if sim is not None:
        # "replies": the emulated motors answer, the arm is not stepped (no physics)
        run_once = sim.run_once if physics == "full" else (lambda dt=None: sim.answer_frames())

        def timed_run_once(dt=None):
            t0 = time.thread_time()
            run_once(dt)
            physics_cpu.append(time.thread_time() - t0)

        sim.run_once = timed_run_once  # the simulator thread looks it up on each tick
    client = rclpy.create_node("bench_commander", context=ctx)
    pub = client.create_publisher(JointState, "joint_command", 10)
    q = np.zeros(model.n)

    def command():
        msg = JointState()
        msg.name = joints
        msg.position = [0.0] * len(joints)
        msg.effort = model.gravity(q)[index].tolist()
        pub.publish(msg)

    client.create_timer(1.0 / 200.0, command)
    ex = make_executor(ctx)
    ex.add_node(node)
    ex.add_node(client)
    warm = time.monotonic() + 0.5
    while time.monotonic() < warm:
        ex.spin_once(timeout_sec=0.01)
    gc.collect()
    gc.freeze()  # as the executable's spin (nodes/runtime.spin_node): start-up objects out of the collector's walk
    ios = node._ios  # noqa: SLF001
    n_periods0 = len(node.loop_periods())
    node.exchange_cpu.clear()
    node.transport_cpu.clear()
    node.frames_moved.clear()
    if profile:
        node.profiler = cProfile.Profile(time.thread_time)
    physics_cpu.clear()
    frames0 = {b: io.sent + io.listener.received for b, io in ios.items()}
    threads = {"simulator": [sim._thread] if sim is not None else []}  # noqa: SLF001
    cpu0 = {k: [thread_cpu(t) for t in ts] for k, ts in threads.items()}
    main0, process0 = time.thread_time(), time.process_time()
    sim0 = process_cpu(sim_proc.pid) if sim_proc is not None else 0.0
    t0 = time.monotonic()
    end = t0 + seconds
    while time.monotonic() < end:
        ex.spin_once(timeout_sec=0.01)
    elapsed = time.monotonic() - t0
    share = {k: sum(thread_cpu(t) - c for t, c in zip(ts, cpu0[k])) / elapsed for k, ts in threads.items()}
    if sim_proc is not None:  # the simulator's own process (physics, motors, socketcand server)
        share["simulator"] = (process_cpu(sim_proc.pid) - sim0) / elapsed
    share["executor"] = (time.thread_time() - main0) / elapsed
    share["process"] = (time.process_time() - process0) / elapsed
    fps = {b: (io.sent + io.listener.received - frames0[b]) / elapsed for b, io in ios.items()}
    periods = node.loop_periods()[n_periods0:] if n_periods0 < 4096 else node.loop_periods()
    own = np.array(node.exchange_cpu) - np.array(node.transport_cpu)  # the bridge's own work
    cfg, settings = node.config, node.settings
    out: dict = stats_ms(periods[-int(rate * seconds) :], 1.0 / rate)
    data_bitrate = settings.effective_data_bitrate
    out.update(
        n_motors=len(joints),
        fd=settings.fd,
        buses={
            ("" if b is None else b): {
                "motors": len(cfg.motors) if b is None else len(cfg.motors_on(b)),
                "fps": fps[b],
                "load": bus_load_fraction(
                    fps[b], settings.bitrate, fd=settings.fd, data_bitrate=data_bitrate
                ),
                "expected": mit_bus_load(
                    len(cfg.motors) if b is None else len(cfg.motors_on(b)),
                    rate,
                    settings.bitrate,
                    fd=settings.fd,
                    data_bitrate=data_bitrate,
                ),
            }
            for b in ios
        },
        exchange_cpu_us=(
            1e6 * float(np.mean(node.exchange_cpu)),
            1e6 * float(np.percentile(node.exchange_cpu, 99)),
        ),
        own_cpu_us=(1e6 * float(np.mean(own)), 1e6 * float(np.percentile(own, 99))),
        transport_cpu_us=1e6 * float(np.mean(node.transport_cpu)),
        transport_per_frame_us=1e6
        * float(np.sum(node.transport_cpu))
        / max(int(np.sum(node.frames_moved)), 1),
        transport=transport,
        profile=_profile_text(node.profiler) if node.profiler is not None else "",
        exchanges_per_s=len(node.exchange_cpu) / elapsed,
        bridge_cpu_share=float(np.sum(node.exchange_cpu)) / elapsed,
        thread_share=share,
        physics=physics,
        physics_cpu_us=(
            (1e6 * float(np.mean(physics_cpu)), 1e6 * float(np.percentile(physics_cpu, 99)))
            if physics_cpu
            else (float("nan"), float("nan"))
        ),
        sim_overruns=sim.overruns if sim is not None else 0,
        missed=sum(s.total_missed_replies for s in node._core.status()),  # noqa: SLF001
    )
    ex.shutdown()
    client.destroy_node()
    node.destroy_node()
    rclpy.try_shutdown(context=ctx)
    if sim_proc is not None:
        stop_process(sim_proc)
        sim_file.unlink()
        sim_file.parent.rmdir()
    return out


def report(case: str, rate: float, seconds: float, base: dict, res: dict) -> float:
    """Print one case; returns its p99 ratio to the baseline."""
    kind = "CAN-FD 1/5 Mbit/s" if res["fd"] else f"classic {BITRATE} bit/s"
    print(
        f"\n== {case}: {res['n_motors']} motors, {kind}, {rate:g} Hz (nominal period {1e3 / rate:.3f} ms) =="
    )
    print(f"{'':10s} {'p50 ms':>8s} {'p99 ms':>8s} {'max ms':>8s} {'|dT| p99':>9s} {'n':>6s}")
    for label, r in (("baseline", base), ("bridge", res)):
        print(
            f"{label:10s} {r['p50']:8.3f} {r['p99']:8.3f} {r['max']:8.3f} {r['jitter_p99']:9.3f} {r['n']:6d}"
        )
    ratio = res["p99"] / base["p99"]
    print(
        f"{'ratio':10s} {res['p50'] / base['p50']:8.2f} {ratio:8.2f} "
        f"{res['max'] / base['max']:8.2f} {res['jitter_p99'] / max(base['jitter_p99'], 1e-6):9.2f}"
    )
    for bus, b in res["buses"].items():
        print(
            f"bus {bus or 'can0'}: {b['motors']} motors, {b['fps']:.0f} frames/s measured, "
            f"{2 * b['motors'] * rate:.0f} expected; load {b['load']:.1%} measured, {b['expected']:.1%} expected (worst case)"
        )
    mean, p99 = res["exchange_cpu_us"]
    own_mean, own_p99 = res["own_cpu_us"]
    pmean, pp99 = res["physics_cpu_us"]
    tick = (
        f"mean {pmean:.0f} us, p99 {pp99:.0f} us"
        if not np.isnan(pmean)
        else "not timed here (no physics ticks in this process)"
    )
    sh = res["thread_share"]
    bus_kind = {"process": "socketcand on 127.0.0.1"}.get(res["physics"], "python-can virtual (in-process)")
    how = {
        "direct": "the bridge's transport (socketcand: one write per exchange and the replies parsed "
        "from the socket; virtual: python-can per frame)",
        "python-can": "python-can's send/recv per frame",
    }[res["transport"]]
    print(
        f"bridge exchange CPU (thread_time; drain, core, send, publish): mean {mean:.0f} us, p99 {p99:.0f} us, "
        f"{res['exchanges_per_s']:.0f} exchanges/s ({res['bridge_cpu_share']:.0%} of a core)"
    )
    print(
        f"  the bridge's own work (decode, core step, encode, publish joint_states, bookkeeping): "
        f"mean {own_mean:.0f} us, p99 {own_p99:.0f} us per exchange"
    )
    print(
        f"  transport beside it, {bus_kind}, {how}: {res['transport_cpu_us']:.0f} us per exchange, "
        f"{res['transport_per_frame_us']:.1f} us per frame sent or read"
    )
    label = {
        "full": "physics + motor replies, a thread of this process",
        "replies": "motor replies only, physics off",
        "process": "physics + motor replies + socketcand server, its own process",
    }[res["physics"]]
    print(
        f"CPU share of a core per thread: executor (bridge + commander) {sh['executor']:.0%}, "
        f"simulator ({label}) {sh['simulator']:.0%}, "
        f"whole process {sh['process']:.0%}; simulator tick: {tick}"
    )
    print(
        f"periodic timer ticks {res['n'] / seconds:.0f}/s of {rate:g} (the keep-alive timer's between "
        f"commands, whose periods are above); missed replies {res['missed']}; "
        f"simulator overruns (>50 ms behind) {res['sim_overruns']}"
    )
    return ratio


#: Issue 28 point 1: the bridge's own CPU per exchange for 8 motors [us] (thread_time).
OWN_MEAN_BUDGET_US, OWN_P99_BUDGET_US = 200.0, 400.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measurement time per case [s]")
    parser.add_argument(
        "--cases", nargs="+", default=["7@500", "7@1000", "8fd@1000", "bimanual@1000"], help="cases to run"
    )
    parser.add_argument(
        "--physics",
        choices=("full", "replies", "process"),
        default="full",
        help="simulator thread: physics at 1 kHz and motor replies, or the replies only (arm not "
        "stepped); process: the simulator in its own process, reached over socketcand on 127.0.0.1 "
        "(classic CAN cases only: the bridge's process then carries what a real arm's would)",
    )
    parser.add_argument(
        "--transports",
        nargs="+",
        choices=("direct", "python-can"),
        default=["direct", "python-can"],
        help="run each case with the bridge's transport (direct: the socketcand socket written once "
        "per exchange and read in one pass) and/or python-can's send/recv per frame, one after the other",
    )
    parser.add_argument(
        "--profile", action="store_true", help="print a cProfile (thread CPU clock) of the exchanges per case"
    )
    args = parser.parse_args()
    if not URDF.is_file():  # a copy of the project's shared data (test/data/README.md)
        print(f"skipped: {URDF} not found (the 7-DoF OpenArm URDF, test/data/urdf/openarm/)")
        return
    print(
        f"machine load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
        f"(uptime: {' '.join(str(x) for x in os.getloadavg())}); simulator physics: {args.physics}"
    )
    goals = []
    for case in args.cases:
        rate = float(case.split("@")[1])
        per_transport = {}
        for transport in args.transports:
            base = baseline(rate, args.seconds)
            res = per_transport[transport] = bridge(case, args.seconds, args.physics, transport, args.profile)
            print(f"\n-- transport: {transport}")
            ratio = report(case, rate, args.seconds, base, res)
            if res["profile"]:
                print(res["profile"])
            if transport != args.transports[0]:
                continue
            if case.startswith("8fd") or (case == "7@500" and args.physics == "process"):
                where = ", simulator in its own process" if args.physics == "process" else ""
                goals.append(
                    (f"{case} loop p99 <= {P99_GOAL}x empty timer ({ratio:.2f}x{where})", ratio <= P99_GOAL)
                )
            if case.startswith("bimanual"):
                worst = max(b["load"] for b in res["buses"].values())
                goals.append((f"{case} every bus fits (worst measured load {worst:.0%})", worst <= 1.0))
        if "direct" in per_transport and case.split("@")[0] in ("8", "8fd"):
            own_mean, own_p99 = per_transport["direct"]["own_cpu_us"]
            beside = ""
            if "python-can" in per_transport:
                d, pc = per_transport["direct"], per_transport["python-can"]
                beside = (
                    f"; transport {d['transport_per_frame_us']:.1f} us/frame direct vs "
                    f"{pc['transport_per_frame_us']:.1f} us/frame python-can "
                    f"({d['transport_cpu_us']:.0f} vs {pc['transport_cpu_us']:.0f} us per exchange)"
                )
            print(
                f"\n{case}: the bridge's own CPU per exchange mean {own_mean:.0f} us (budget "
                f"{OWN_MEAN_BUDGET_US:g}), p99 {own_p99:.0f} us (budget {OWN_P99_BUDGET_US:g}){beside}"
            )
            goals.append(
                (
                    f"{case} own CPU mean {own_mean:.0f} <= {OWN_MEAN_BUDGET_US:g} us",
                    own_mean <= OWN_MEAN_BUDGET_US,
                )
            )
            goals.append(
                (
                    f"{case} own CPU p99 {own_p99:.0f} <= {OWN_P99_BUDGET_US:g} us",
                    own_p99 <= OWN_P99_BUDGET_US,
                )
            )
    print("\ngoals: " + "; ".join(f"{text}: {'met' if ok else 'not met'}" for text, ok in goals))
    print("met" if all(ok for _, ok in goals) else "not met")


if __name__ == "__main__":
    main()
