"""End-to-end latency: setpoint published → CAN frame leaving the bridge, three chains, one run.

Setpoints (``joint_setpoint``, 1 kHz, stamped, at rest) carry a sequence number in
``base_yaw``'s effort (``0.5 + (seq mod 1000)·9 mN·m``: distinct MIT torque codes, never the
0 of a hold/damp frame; the stages add nothing on that vertical axis at rest); a tap on the
python-can ``virtual`` bus the bridge writes to decodes each frame to motor 1 back to that
number, and the latency is the frame's send time (python-can stamps it in ``send``) minus the
setpoint's publish time (``time.time()`` on both sides). Chains:

- ``baseline``: a bare rclpy relay (one subscription) into a bare python-can sender;
- ``separate``: gravity_compensation_node and friction_feedforward_node as processes (the
  executables, the launch file's parameters and remappings) into a mit_bridge_node process;
- ``composed``: the one-process chain (:mod:`gravity_friction_comp.nodes.composed_chain`).

The bridge runs at ``rate_hz`` = the setpoint rate. Where the simulated arm runs
(``--sim-arm``; ``--frozen`` stops its physics in either place, the emulated motors still
answer and the setpoints are at rest either way):

- ``process`` (default): in its own process (:mod:`gravity_friction_comp.tools.sim_arm`'s
  builder, :class:`~gravity_friction_comp.sim.socketcand_server.SocketcandServer`), and the
  bridge reaches it with ``can.interface:=socketcand`` on 127.0.0.1, as it would a real
  arm: the bridge's process carries only the chain. The tap is the server: a frame's time is
  the kernel's receive stamp of its bytes on the server's socket (``SO_TIMESTAMPNS``: set in
  the bridge's own ``send`` call, as loopback delivers at once), so when the simulated arm's
  process gets a core and its GIL to read the frame is not in the figure.
- ``in-process``: in the bridge's process on a python-can ``virtual`` bus
  (``simulate:=true``); the tap is a second bus on that channel, in the bridge's process (a
  virtual bus is visible only there), and a frame's time is python-can's stamp in ``send``.

The simulated arm's process CPU (share of one core) is printed beside the bridge's: on a
2-core machine it competes with the chain for the same cores.

A setpoint is
*dropped* when no frame ever carried it: lost before the bridge (``never reached the
bridge``: DDS keep-last queue overwritten while the executor fell behind) or superseded
inside it (a newer command arrived while it waited for the send budget of
:mod:`~gravity_friction_comp.mit.send_schedule`). RSS of every chain process (not the
simulated arm's) is read at the start and the end of the measurement. Under each bridge
chain the bench prints what the bridge process did in the measured span
(:mod:`bridge_probe`): CPU per thread (the Python threads share one GIL: the executor, the
simulated arm's physics when in-process), the timer's rate and periods, exchanges by cause
and their cost, waiting/superseded commands, and each setpoint's latency split where it
enters the chain's process (:class:`bridge_probe.Arrivals`).

Goals (issue 28), as ratios to the bare relay in the same run, at each rate of ``--rates``
(default 500 and 1000 Hz): the composed chain's p50 <= 2x the relay's, its drops <= the
relay's + 0.1 % of the setpoints, its main thread's CPU per setpoint (``time.thread_time``
between the parent's start and end signals, over the setpoints that entered the chain: take,
gravity, friction, exchange) <= 1.5x the relay's per message (same executor); RSS growth of
a chain process <= 1 MB over the run (the 10-minute soak: ``--soak-seconds 600``). Last line:
``met`` or ``not met``.

Usage::

    python bench/end_to_end_latency.py --duration 20
    python bench/end_to_end_latency.py --soak-seconds 600 --rates 1000
    python bench/end_to_end_latency.py --duration 20 --chains baseline,separate,composed
    python bench/end_to_end_latency.py --duration 20 --sim-arm in-process --frozen
    python bench/end_to_end_latency.py --duration 10 --fifo 10   # every process under SCHED_FIFO 10
    python bench/end_to_end_latency.py --duration 10 --chains baseline,composed,composed:fixed_timer

A chain ``<chain>:<lever>`` is that chain with one lever of :data:`LEVERS` changed, in the
same run (a table per rate: CPU per setpoint against the relay on the same executor drive).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import io
import json
import os
import pathlib
import pstats
import signal
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import yaml
from bridge_probe import Arrivals, BridgeProbe, Sequence, describe
from processes import process_cpu, stop_process

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
URDF = ROOT / "urdf" / "palletizer.urdf"
ARM_YAML = ROOT / "config" / "palletizer_arm.yaml"
SIM_YAML = ROOT / "config" / "sim_palletizer.yaml"
JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
MOD, STEP, BASE = 1000, 0.009, 0.5  # sequence code in base_yaw's effort [N·m]
CHAINS = ("baseline", "separate", "composed")
#: Goals of issue 28, as ratios to the bare relay in the same run: composed p50 <= 2x its p50,
#: drops <= its drops + 0.1 % of the setpoints, main-thread CPU per setpoint <= 1.5x its CPU
#: per message (point 2); RSS growth of a chain process over the run <= 1 MB (the soak).
GOALS = {"p50_ratio": 2.0, "extra_drops": 0.001, "cpu_ratio": 1.5, "rss_mb": 1.0}
#: Levers, each a chain variant ``<chain>:<lever>[+<lever>]`` run in the same run as the plain
#: chains (``--chains baseline,composed,composed:fixed_timer``): ``fixed_timer`` the bridge's
#: loop timer at every period whatever the commands (main before the re-armed timer,
#: ``mit/timer_plan.py``); ``future`` the executor driven by one ``spin_until_future_complete``
#: per 0.2 s (every event of the wake in one call) instead of one ``spin_once`` per event;
#: ``single`` rclpy's SingleThreadedExecutor instead of the EventsExecutor; ``no_slack`` the send
#: budget refilled at exactly ``rate_hz`` (before its 5 % slack: a stream at the rate never repaid
#: a stall's burst, ``mit/send_schedule.py``); ``rate_hz_102`` the bridge's ``rate_hz`` 2 % above
#: the setpoint rate; ``thread_priority_10`` the bridge's ``thread_priority`` 10 (only the thread
#: spinning the chain under SCHED_FIFO; ``--fifo`` puts every thread of every process there).
LEVERS = ("fixed_timer", "future", "single", "no_slack", "rate_hz_102", "thread_priority_10")


class CpuSpan:
    """The main thread's CPU time (``time.thread_time``) and a count of setpoints between
    SIGUSR1 (the parent: measurement starts) and SIGUSR2 (the last setpoint was published);
    the handlers run on the main thread, the executor's."""

    def __init__(self, count) -> None:
        self._count = count
        self.start: tuple[float, int] | None = None
        self.end: tuple[float, int] | None = None
        #: ``E2E_PROFILE=1``: a cProfile on the thread's CPU clock over the span
        self.profiler = cProfile.Profile(time.thread_time) if os.environ.get("E2E_PROFILE") else None
        signal.signal(signal.SIGUSR2, lambda *a: self.mark("end"))

    def mark(self, which: str) -> None:
        setattr(self, which, (time.thread_time(), int(self._count())))
        if self.profiler is not None:
            self.profiler.enable() if which == "start" else self.profiler.disable()

    def profile_text(self, top: int = 30) -> str:
        """The span's profile, by own time (empty without ``E2E_PROFILE``)."""
        if self.profiler is None or self.end is None:
            return ""
        out = io.StringIO()
        pstats.Stats(self.profiler, stream=out).sort_stats("tottime").print_stats(top)
        return out.getvalue()

    def figures(self) -> dict[str, float]:
        """``span_cpu`` [s] and ``span_n`` (setpoints); empty without both marks."""
        if self.start is None or self.end is None:
            return {}
        return {"span_cpu": self.end[0] - self.start[0], "span_n": self.end[1] - self.start[1]}


def spin_future(nodes, stop) -> None:
    """The ``future`` lever: ``nodes`` on :func:`make_executor`'s executor, driven by one
    ``spin_until_future_complete`` of a never-done future per 0.2 s until ``stop()``."""
    from rclpy.task import Future

    from gravity_friction_comp.nodes.runtime import SPIN_WAKE, make_executor

    gc.collect()
    gc.freeze()
    context = nodes[0].context
    executor = make_executor(context)
    for node in nodes:
        executor.add_node(node)
    try:
        while context.ok() and not stop():
            executor.spin_until_future_complete(Future(), timeout_sec=SPIN_WAKE)
    finally:
        executor.shutdown()


def _launch_module():
    spec = importlib.util.spec_from_file_location("arm_launch", ROOT / "launch" / "arm.launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chain_parameters(rate_hz: float) -> dict[str, dict]:
    """Each node's parameters as ``arm.launch.py`` gives them (default files, simulated arm)."""
    arm = _launch_module()
    gravity_file = str(ROOT / "config" / "gravity_compensation.yaml")
    gravity = arm.gravity_parameters(
        arm.node_parameters(gravity_file, "gravity_compensation"), str(ARM_YAML), False
    ) | {"urdf_path": str(URDF)}
    friction = arm.node_parameters(str(ROOT / "config" / "friction_feedforward.yaml"), "friction_feedforward")
    friction |= {"arm_config": str(ARM_YAML)}
    bridge = arm.node_parameters(str(ROOT / "config" / "mit_bridge.yaml"), "mit_bridge")
    bridge |= arm.robot_parameters(gravity_file) | {
        "simulate": True,
        "urdf_path": str(URDF),
        "sim_config": str(SIM_YAML),
        "read_motor_limits": False,
        "rate_hz": float(rate_hz),
    }
    return {"gravity_compensation": gravity, "friction_feedforward": friction, "mit_bridge": bridge}


# --- child processes: the bridge (or relay) with its tap ----------------------------------------


class Tap(Sequence):
    """A second bus on the bridge's virtual channel: (send time, sequence code) of frames to id 1.

    python-can's ``virtual`` bus stamps a frame in ``send`` and queues a copy for every other
    bus on the channel. The tap drains that queue in bulk every :attr:`DRAIN` seconds instead
    of waking a reader thread per frame: a reader thread per frame took 5–8 % of the
    bridge process's GIL at 1 kHz (6000 frames/s), a cost of the measurement, not the chain.
    """

    #: [s] Bulk drain interval (the queue holds ~1200 frames then).
    DRAIN = 0.2

    def __init__(self, channel: str, decode):
        import threading

        import can

        super().__init__()
        self._decode = decode
        self.bus = can.Bus(interface="virtual", channel=channel, ignore_config=True)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="e2e_tap", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.DRAIN):
            self._drain()
        self._drain()

    def _drain(self) -> None:
        while (msg := self.bus.recv(timeout=0.0)) is not None:
            if msg.arbitration_id == 1 and len(msg.data) == 8:
                code = self._decode(bytes(msg.data))
                if code is not None:
                    self.record(msg.timestamp, code)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.bus.shutdown()


def _code(tau: float) -> int | None:
    """The sequence code of an effort, ``None`` off the grid (a hold/damp frame: τ_ff 0)."""
    k = (tau - BASE) / STEP
    return int(round(k)) if -0.3 < k < MOD - 0.7 and abs(k - round(k)) < 0.3 else None


def _bridge_decoder(bridge):
    from gravity_friction_comp.mit.codec import decode_command

    motor = bridge.config.motors[0]

    def decode(data: bytes):
        try:
            command = decode_command(data, motor.limits)
        except Exception:  # noqa: BLE001 - a special frame (enable/disable) carries no sequence
            return None
        return _code(motor.mapping.torque_from_motor(command.tau_ff))

    return decode


class ServerTap(Sequence):
    """The tap of ``--sim-arm process``: frames to motor 1 as the simulated arm's socketcand
    server receives them from the bridge, stamped with the kernel's receive time (see
    :class:`SocketcandServer`'s ``on_frame``: the bridge's ``send`` call). Called on the
    server's reader thread."""

    def __init__(self, decode):
        super().__init__()
        self._decode = decode

    def __call__(self, msg) -> None:
        if msg.arbitration_id == 1 and len(msg.data) == 8:
            code = self._decode(bytes(msg.data))
            if code is not None:
                self.record(msg.timestamp, code)


def run_sim_child(params_file: str, out: str, frozen: bool = False) -> None:
    """``--child sim``: the simulated arm in its own process, served over socketcand on
    127.0.0.1 (:mod:`gravity_friction_comp.sim.socketcand_server`), with the tap; writes the
    port to ``<out>.port`` when ready, runs until SIGINT, saves the tap."""
    from gravity_friction_comp.mit.codec import decode_command
    from gravity_friction_comp.sim.socketcand_server import SocketcandServer
    from gravity_friction_comp.tools.sim_arm import simulated_bus_from_parameters

    stop: list[int] = []
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    values = yaml.safe_load(pathlib.Path(params_file).read_text())["mit_bridge"]["ros__parameters"]
    sim = simulated_bus_from_parameters(values)
    motor = sim.motors[0]

    def decode(data: bytes):
        try:
            command = decode_command(data, motor.motor.limits)
        except Exception:  # noqa: BLE001 - a special frame (enable/disable) carries no sequence
            return None
        return _code(motor.mapping.torque_from_motor(command.tau_ff))

    tap = ServerTap(decode)
    if frozen:
        sim.arm.step = lambda tau, dt=None: None
    sim.start()
    with SocketcandServer(sim, host="127.0.0.1", port=0, on_frame=tap) as server:
        pathlib.Path(out + ".port").write_text(str(server.port))
        while not stop:
            time.sleep(0.05)
    sim.stop()
    np.savez(out, times=tap.times, codes=tap.codes.astype(np.int64))


def run_child(
    kind: str, out: str, sim_arm: str = "process", frozen: bool = False, levers: tuple[str, ...] = ()
) -> None:
    """``--child``: run the bridge part of a chain with a tap until SIGINT; save the tap.

    ``sim_arm`` ``process``: the bridge talks socketcand to the simulated arm's process,
    whose server is the tap (this process saves only its counters). ``levers``: see
    :data:`LEVERS` (``single`` is the parent's: the child's environment)."""
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    stop: list[int] = []
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    counters: dict[str, int] = {}
    tap = None
    if kind == "baseline":
        import can
        from rclpy.node import Node
        from sensor_msgs.msg import JointState

        from gravity_friction_comp.nodes.runtime import spin_node
        from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

        channel = f"e2e_baseline_{os.getpid()}"
        sender = can.Bus(interface="virtual", channel=channel, ignore_config=True)
        tap = Tap(channel, lambda d: _code(struct.unpack("<d", d)[0]))
        node = Node("relay")
        received = [0]

        def relay(msg) -> None:
            received[0] += 1
            sender.send(
                can.Message(arbitration_id=1, data=struct.pack("<d", msg.effort[0]), is_extended_id=False)
            )

        node.create_subscription(JointState, "joint_setpoint", relay, SETPOINT_QOS)
        span = CpuSpan(lambda: received[0])
        signal.signal(signal.SIGUSR1, lambda *a: span.mark("start"))
        if "future" in levers:
            spin_future([node], stop=lambda: bool(stop))
        else:
            spin_node(node, stop=lambda: bool(stop))
        counters = {"received": received[0], **span.figures(), "profile": span.profile_text()}
        sender.shutdown()
        nodes = [node]
    else:
        from gravity_friction_comp.nodes.composed_chain import ComposedChain, spin_chain
        from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode
        from gravity_friction_comp.nodes.runtime import spin_node

        if "no_slack" in levers:  # the budget of before, read by SendSchedule when the bridge builds it
            from gravity_friction_comp.mit import send_schedule

            send_schedule.SLACK, send_schedule.BURST = 0.0, 2.0
        chain = ComposedChain() if kind == "composed" else None
        bridge = chain.bridge if chain is not None else MitBridgeNode()
        if "fixed_timer" in levers:  # main's timer: every period, whatever the commands
            plan = bridge._timer_plan  # noqa: SLF001 - the bench's own lever
            plan.command = plan.tick = lambda now: None
        if sim_arm != "process":
            tap = Tap(bridge.settings.channel, _bridge_decoder(bridge))
        probe = BridgeProbe(bridge)
        arrivals = Arrivals()  # when each setpoint reached the chain in this process
        if chain is not None:  # the gravity stage's callback: the chain's entry
            gravity = chain.gravity
            gravity.on_setpoint = arrivals.wrap(gravity.on_setpoint, lambda msg: _code(msg.effort[0]))
        else:  # the bridge's command, after two hops; base_yaw's τ_ff in the bridge's joint order
            core = bridge._core  # noqa: SLF001 - the bench's own instrumentation
            k = core.joint_names.index(JOINTS[0])
            core.set_command = arrivals.wrap(core.set_command, lambda q, v, tau, now: _code(tau[k]))
        span = CpuSpan(lambda: arrivals.count)  # the setpoints that entered the chain

        def started(*_args) -> None:  # the parent: measurement starts
            probe.start()
            span.mark("start")

        signal.signal(signal.SIGUSR1, started)
        if frozen and sim_arm != "process":  # the arm holds still; its motors still answer
            bridge.simulation.arm.step = lambda tau, dt=None: None
        if "future" in levers:
            nodes = list(chain.nodes) if chain is not None else [bridge]
            spin_future(nodes, stop=lambda: bool(stop))
        elif chain is not None:
            spin_chain(chain, stop=lambda: bool(stop))
            nodes = list(chain.nodes)
        else:
            spin_node(bridge, stop=lambda: bool(stop))
            nodes = [bridge]
        s = bridge.send_schedule
        counters = {"received": s.on_arrival + s.deferred, "deferred": s.deferred, "superseded": s.superseded}
        counters["probe"] = json.dumps(probe.figures())
        counters["stage_errors"] = chain.errors if chain is not None else 0
        counters["entry_times"], counters["entry_codes"] = arrivals.times, arrivals.codes
        counters |= span.figures()
        counters["profile"] = span.profile_text()
    if tap is not None:
        tap.close()
        np.savez(out, times=tap.times, codes=tap.codes.astype(np.int64), **counters)
    else:
        np.savez(out, **counters)
    for node in reversed(nodes):
        node.destroy_node()
    rclpy.try_shutdown()


# --- the parent: processes, setpoints, matching --------------------------------------------------


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _start(args: list[str], env: dict) -> subprocess.Popen:
    log = open(os.path.join(env["E2E_LOG_DIR"], f"proc{len(os.listdir(env['E2E_LOG_DIR']))}.log"), "w")
    return subprocess.Popen([sys.executable, *args], env=env, stdout=log, stderr=subprocess.STDOUT, text=True)


def run_chain(
    kind: str,
    duration: float,
    rate_hz: float,
    warmup: float,
    env: dict,
    tmp: pathlib.Path,
    sim_arm: str,
    frozen: bool = False,
) -> dict:
    """Start one chain, publish ``duration`` s of setpoints at ``rate_hz``, return the figures."""
    import rclpy
    from rclpy.context import Context
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

    params = chain_parameters(rate_hz)
    label = kind.replace(":", "_").replace("+", "_")
    kind, _, lever_text = kind.partition(":")
    levers = tuple(x for x in lever_text.split("+") if x)
    unknown = set(levers) - set(LEVERS)
    if kind not in CHAINS or unknown:
        raise SystemExit(f"unknown chain {kind!r} or lever {sorted(unknown)} (levers: {', '.join(LEVERS)})")
    if "single" in levers:
        env = dict(env, GRAVITY_FRICTION_COMP_EXECUTOR="single")
    if "rate_hz_102" in levers:
        params["mit_bridge"]["rate_hz"] = 1.02 * rate_hz
    if "thread_priority_10" in levers:
        params["mit_bridge"]["thread_priority"] = 10
    out = tmp / f"{label}.npz"
    me = [str(pathlib.Path(__file__).resolve()), "--child", kind, "--out", str(out), "--sim-arm", sim_arm]
    me += ["--frozen"] if frozen else []
    me += ["--levers", "+".join(levers)] if levers else []
    procs: list[subprocess.Popen] = []
    sim_proc = None
    sim_cpu0 = None
    if kind != "baseline" and sim_arm == "process":
        sim_proc, port = _start_sim(params["mit_bridge"], tmp / f"{label}_sim", env, frozen)
        params["mit_bridge"] |= {
            "simulate": False,
            "can.interface": "socketcand",
            "can.host": "127.0.0.1",
            "can.port": port,
        }
    if kind == "baseline":
        procs.append(_start(me, env))
    elif kind == "composed":
        path = _launch_module().composed_parameters_file(
            params["gravity_compensation"], params["friction_feedforward"], params["mit_bridge"]
        )
        procs.append(_start([*me, "--ros-args", "--params-file", path], env))
    else:
        files = {}
        for name, values in params.items():
            files[name] = tmp / f"{name}.yaml"
            files[name].write_text(yaml.safe_dump({name: {"ros__parameters": values}}))
        node = "-m", "gravity_friction_comp.nodes."
        procs.append(
            _start(
                [
                    node[0],
                    node[1] + "gravity_compensation_node",
                    "--ros-args",
                    "--params-file",
                    str(files["gravity_compensation"]),
                    "-r",
                    "joint_command:=gravity/joint_command",
                ],
                env,
            )
        )
        procs.append(
            _start(
                [
                    node[0],
                    node[1] + "friction_feedforward_node",
                    "--ros-args",
                    "--params-file",
                    str(files["friction_feedforward"]),
                    "-r",
                    "joint_setpoint:=gravity/joint_command",
                ],
                env,
            )
        )
        procs.append(_start([*me, "--ros-args", "--params-file", str(files["mit_bridge"])], env))
    context = Context()
    rclpy.init(context=context, domain_id=int(env["ROS_DOMAIN_ID"]))
    node = rclpy.create_node("e2e_setpoints", context=context)
    pub = node.create_publisher(JointState, "joint_setpoint", SETPOINT_QOS)
    deadline = time.monotonic() + 60.0
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(2.0)  # the rest of the chain discovers itself
    n = int(round((warmup + duration) * rate_hz))
    sent = np.zeros(n)
    msg = JointState()
    msg.name = list(JOINTS)
    msg.position = [0.0, 0.3, 0.2]  # [rad]
    msg.velocity = [0.0, 0.0, 0.0]
    period = 1.0 / rate_hz
    gc.collect()
    gc.freeze()
    rss0: list[float] = []
    t0 = time.monotonic() + 0.01
    for k in range(n):
        target = t0 + k * period
        # sleep, never spin: a busy-wait for the last 0.3 ms of each period took ~10 % of one
        # of this machine's 2 cores from the chain; the latency is measured from the
        # publish time itself, so the sleep's overshoot (~0.1 ms) only jitters the setpoints
        if (now := time.monotonic()) < target:
            time.sleep(target - now)
        if k == int(warmup * rate_hz):
            rss0 = [_rss_mb(p.pid) for p in procs]
            sim_cpu0 = (time.monotonic(), process_cpu(sim_proc.pid)) if sim_proc is not None else None
            procs[-1].send_signal(signal.SIGUSR1)
        msg.effort = [BASE + (k % MOD) * STEP, 0.0, 0.0]
        stamp = time.time()
        msg.header.stamp.sec = int(stamp)
        msg.header.stamp.nanosec = int((stamp - int(stamp)) * 1e9)
        sent[k] = time.time()
        pub.publish(msg)
    procs[-1].send_signal(signal.SIGUSR2)  # the measured span ends
    time.sleep(0.5)
    gone = [p.args for p in procs if p.poll() is not None]
    if gone:
        raise RuntimeError(f"{kind}: a chain process ended early: {gone} (logs in {env['E2E_LOG_DIR']})")
    rss1 = [_rss_mb(p.pid) for p in procs]
    sim_share = float("nan")
    if sim_proc is not None and sim_cpu0 is not None:
        sim_share = 100.0 * (process_cpu(sim_proc.pid) - sim_cpu0[1]) / (time.monotonic() - sim_cpu0[0])
    for p in reversed(procs):
        p.send_signal(signal.SIGINT)
    for p in reversed(procs):
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
    if sim_proc is not None:
        stop_process(sim_proc)
    node.destroy_node()
    rclpy.try_shutdown(context=context)
    if not out.exists():
        raise RuntimeError(f"{kind}: the bridge process saved nothing (logs in {env['E2E_LOG_DIR']})")
    tap = dict(np.load(out))
    if sim_proc is not None:
        sim_out = tmp / f"{label}_sim.npz"
        if not sim_out.exists():
            raise RuntimeError(
                f"{kind}: the simulated arm's process saved nothing (logs in {env['E2E_LOG_DIR']})"
            )
        tap |= dict(np.load(sim_out))
    return match(kind, sent, tap, int(warmup * rate_hz), rss0, rss1, period) | {"sim_cpu": sim_share}


def _start_sim(
    bridge_values: dict, out: pathlib.Path, env: dict, frozen: bool = False
) -> tuple[subprocess.Popen, int]:
    """Start the simulated arm's process (``--child sim``) for ``bridge_values``; its port."""
    params = out.with_suffix(".yaml")
    params.write_text(yaml.safe_dump({"mit_bridge": {"ros__parameters": bridge_values}}))
    port_file = pathlib.Path(str(out) + ".npz.port")
    me = [str(pathlib.Path(__file__).resolve()), "--child", "sim", "--out", str(out) + ".npz"]
    proc = _start([*me, "--sim-params", str(params), *(["--frozen"] if frozen else [])], env)
    deadline = time.monotonic() + 60.0
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the simulated arm's process did not start (logs in {env['E2E_LOG_DIR']})")
        time.sleep(0.05)
    time.sleep(0.05)  # the write is complete
    return proc, int(port_file.read_text())


def first_seen(sent: np.ndarray, times: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Per setpoint, the first of ``times`` whose code is its (NaN if none) minus its publish
    time: each time belongs to the newest setpoint with its code published before it."""
    delay = np.full(len(sent), np.nan)
    for t, c in zip(times, codes):
        k = int(np.searchsorted(sent, t, side="right")) - 1  # last setpoint published before t
        k -= (k - int(c)) % MOD  # back to the one with this code
        if 0 <= k < len(sent) and np.isnan(delay[k]):
            delay[k] = t - sent[k]
    return delay


def match(kind: str, sent: np.ndarray, tap, first: int, rss0, rss1, period: float) -> dict:
    """Latency of each measured setpoint (its first frame on the bus) and the drop counts;
    with the chain's arrival times, the latency split at the chain's entry."""
    latency = first_seen(sent, tap["times"], tap["codes"])
    measured = latency[first:]
    seen = measured[~np.isnan(measured)]
    split = {}
    if "entry_times" in tap and len(tap["entry_times"]):
        entry = first_seen(sent, tap["entry_times"], tap["entry_codes"])[first:]
        both = ~np.isnan(entry) & ~np.isnan(measured)
        if both.any():
            way, work = entry[both] * 1e3, (measured[both] - entry[both]) * 1e3
            split = {
                "to_chain_p50": float(np.percentile(way, 50)),
                "to_chain_p99": float(np.percentile(way, 99)),
                "in_chain_p50": float(np.percentile(work, 50)),
                "in_chain_p99": float(np.percentile(work, 99)),
            }
    received = int(tap["received"])
    lost_total = len(sent) - received  # never reached the bridge (whole run, warm-up included)
    return {
        "kind": kind,
        "n": len(measured),
        "p50": float(np.percentile(seen, 50)) * 1e3,
        "p99": float(np.percentile(seen, 99)) * 1e3,
        "max": float(seen.max()) * 1e3,
        "drops": int(np.isnan(measured).sum()),
        "lost": max(lost_total, 0),
        "superseded": int(tap["superseded"]) if "superseded" in tap else 0,
        "probe": json.loads(str(tap["probe"])) if "probe" in tap else {},
        "rss_growth": max(b - a for a, b in zip(rss0, rss1)) if rss0 else float("nan"),
        "period_ms": period * 1e3,
        "split": split,
        # main-thread CPU per setpoint in the measured span [us] (the executor's thread)
        "profile": str(tap["profile"]) if "profile" in tap else "",
        "cpu_per_setpoint_us": (
            1e6 * float(tap["span_cpu"]) / max(int(tap["span_n"]), 1) if "span_cpu" in tap else float("nan")
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="measured seconds per chain")
    parser.add_argument(
        "--soak-seconds",
        "--soak",
        dest="soak",
        type=float,
        default=None,
        help="soak: measured seconds per chain (overrides --duration; 600 = the 10-minute soak)",
    )
    parser.add_argument(
        "--rates",
        "--rate",
        dest="rates",
        default="500,1000",
        help="comma-separated setpoint rates (each also the bridge's rate_hz) [Hz]; every chain runs at each",
    )
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds published before measuring")
    parser.add_argument(
        "--chains", default="baseline,composed", help="comma-separated subset of " + ",".join(CHAINS)
    )
    parser.add_argument(
        "--sim-arm",
        choices=("process", "in-process"),
        default="process",
        help="process: the simulated arm runs in its own process and the bridge reaches it over "
        "socketcand on 127.0.0.1, as it would a real arm (the bridge's process carries only the "
        "chain); in-process: the simulated arm steps at 1 kHz in the bridge's process on a "
        "python-can virtual bus (its GIL share is printed)",
    )
    parser.add_argument(
        "--frozen",
        action="store_true",
        help="stop the simulated arm's physics (its emulated motors still answer; the setpoints "
        "are at rest either way): a real arm's physics costs this machine nothing",
    )
    parser.add_argument(
        "--fifo",
        type=int,
        default=0,
        metavar="PRIO",
        help="run the bench and every process it starts (publisher, relay, chains, simulated arm) "
        "under SCHED_FIFO PRIO, every thread (DDS's too), the same for the relay and the chains "
        "(0: normal scheduler); the bridge's thread_priority alone: lever thread_priority_10",
    )
    parser.add_argument("--child", choices=(*CHAINS, "sim"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--sim-params", help=argparse.SUPPRESS)
    parser.add_argument("--levers", default="", help=argparse.SUPPRESS)
    args, _ros = parser.parse_known_args()
    if args.child == "sim":
        run_sim_child(args.sim_params, args.out, args.frozen)
        return
    if args.child:
        run_child(
            args.child, args.out, args.sim_arm, args.frozen, tuple(x for x in args.levers.split("+") if x)
        )
        return
    duration = args.soak if args.soak is not None else args.duration
    rates = [float(r) for r in args.rates.split(",")]
    if args.fifo:  # inherited by every process started from here
        from gravity_friction_comp.realtime import set_thread_priority

        applied, message = set_thread_priority(args.fifo)
        if not applied:
            raise SystemExit(f"--fifo {args.fifo}: {message}")
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
        ROS_DOMAIN_ID=os.environ.get("ROS_DOMAIN_ID", "46"),
        PYTHONUNBUFFERED="1",
    )
    os.environ.update(env)
    print(
        f"end-to-end latency, setpoint -> CAN frame, {'/'.join(f'{r:g}' for r in rates)} Hz for {duration:g} s "
        f"per chain{' (soak)' if args.soak is not None else ''}, bridge rate_hz = setpoint rate, "
        f"{os.cpu_count()} cores, load average (uptime) {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
        f"simulated arm {args.sim_arm}{' (physics frozen)' if args.frozen else ''}"
        f"{f', every process under SCHED_FIFO {args.fifo}' if args.fifo else ''}"
    )
    goals: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory() as tmp:
        env["E2E_LOG_DIR"] = os.environ.get("E2E_LOG_DIR") or tmp
        for rate in rates:
            print(f"\n== {rate:g} Hz ==")
            results = {}
            here = pathlib.Path(tmp) / f"{rate:g}Hz"  # each rate's files apart (the sim's port file)
            here.mkdir()
            for kind in args.chains.split(","):
                r = results[kind] = run_chain(
                    kind, duration, rate, args.warmup, env, here, args.sim_arm, args.frozen
                )
                _print_chain(kind, r)
            goals += _goals(rate, duration, results)
            _print_levers(rate, results)
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("goals: " + "; ".join(f"{text}: {'met' if ok else 'not met'}" for text, ok in goals))
    print("met" if goals and all(ok for _, ok in goals) else "not met")


def _print_chain(kind: str, r: dict) -> None:
    print(
        f"{kind:9s} n {r['n']:7d} | p50 {r['p50']:6.3f} ms | p99 {r['p99']:6.3f} ms | max {r['max']:7.2f} ms"
        f" | drops {r['drops']} (whole run: never reached the bridge {r['lost']}, superseded in it"
        f" {r['superseded']}) | RSS growth {r['rss_growth']:+.2f} MB"
        f" | main-thread CPU {r['cpu_per_setpoint_us']:.0f} us per setpoint",
        flush=True,
    )
    if r["split"]:
        sp = r["split"]
        where = "the gravity stage's callback" if kind.startswith("composed") else "the bridge's set_command"
        print(
            f"  split at the chain's entry ({where}): publish -> entry p50 {sp['to_chain_p50']:.3f}"
            f" / p99 {sp['to_chain_p99']:.3f} ms (DDS, waiting for the executor), entry -> frame p50"
            f" {sp['in_chain_p50']:.3f} / p99 {sp['in_chain_p99']:.3f} ms (the chain's work, waiting"
            " commands)",
            flush=True,
        )
    if r["probe"]:
        print(describe(r["probe"]), flush=True)
    if r.get("sim_cpu") == r.get("sim_cpu"):  # not NaN: the arm had its own process
        print(f"  simulated arm's process CPU: {r['sim_cpu']:.0f}% of one core", flush=True)
    if r["profile"]:
        print(r["profile"], flush=True)


def _print_levers(rate: float, results: dict) -> None:
    """Each chain variant (:data:`LEVERS`) against the plain chain and the relay of the same run:
    CPU per setpoint, its ratio to the relay on the same executor drive, p50, drops."""
    if not any(":" in kind for kind in results):
        return
    print(f"levers at {rate:g} Hz (same run; ratio: to the relay on the same executor and drive):")
    for kind, r in results.items():
        if kind.startswith("baseline"):
            continue
        drive = "+".join(x for x in kind.partition(":")[2].split("+") if x in ("future", "single"))
        base = results.get(f"baseline:{drive}" if drive else "baseline")
        ratio = r["cpu_per_setpoint_us"] / base["cpu_per_setpoint_us"] if base else float("nan")
        probe = r.get("probe") or {}
        print(
            f"  {kind:26s} CPU {r['cpu_per_setpoint_us']:5.0f} us/setpoint = {ratio:.2f}x"
            f" | p50 {r['p50']:.3f} ms | drops {r['drops']} | timer {probe.get('ticks/s', float('nan')):.0f}"
            f" ticks/s | waited {probe.get('deferred/s', float('nan')):.0f}/s"
        )
    for kind, r in results.items():
        if kind.startswith("baseline:"):
            print(f"  {kind:26s} CPU {r['cpu_per_setpoint_us']:5.0f} us/message | p50 {r['p50']:.3f} ms")


def _goals(rate: float, duration: float, results: dict) -> list[tuple[str, bool]]:
    """Issue 28's goals at ``rate`` as ratios to the bare relay of the same run (:data:`GOALS`)."""
    out = []
    base = results.get("baseline")
    for kind in ("separate", "composed"):
        if kind not in results:
            continue
        r = results[kind]
        tag = f"{kind} @ {rate:g} Hz"
        if base:
            p50 = r["p50"] / base["p50"]
            print(f"{kind} / baseline at {rate:g} Hz: p50 {p50:.2f}x, p99 {r['p99'] / base['p99']:.2f}x")
            allowed = base["drops"] + GOALS["extra_drops"] * r["n"]
            if kind == "composed":
                out.append(
                    (
                        f"{tag} p50 {p50:.2f}x <= {GOALS['p50_ratio']:g}x the bare relay's",
                        p50 <= GOALS["p50_ratio"],
                    )
                )
                cpu = r["cpu_per_setpoint_us"] / base["cpu_per_setpoint_us"]
                out.append(
                    (
                        f"{tag} CPU per setpoint {r['cpu_per_setpoint_us']:.0f} us = {cpu:.2f}x <= "
                        f"{GOALS['cpu_ratio']:g}x the bare relay's {base['cpu_per_setpoint_us']:.0f} us",
                        cpu <= GOALS["cpu_ratio"],
                    )
                )
            out.append(
                (
                    f"{tag} drops {r['drops']} <= bare relay's {base['drops']} + 0.1 % ({allowed:.0f})",
                    r["drops"] <= allowed,
                )
            )
        out.append(
            (
                f"{tag} RSS growth {r['rss_growth']:+.2f} MB in {duration:g} s <= {GOALS['rss_mb']:g} MB",
                r["rss_growth"] <= GOALS["rss_mb"],
            )
        )
    return out


if __name__ == "__main__":
    main()
