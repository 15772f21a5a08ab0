"""The bridge's per-exchange work lever by lever, before (main) and after (this tree), alternated.

Thread CPU time (``time.thread_time``) per exchange, min / median of ``--repeats`` rounds of
``--n`` exchanges, old and new alternated in the same process. "Before" is main's package as
a whole (``git archive main``, imported as ``gravity_friction_comp_main``: its core, codec,
checks, transport, joint_states bytes), "after" this tree's:

- ``exchange``: a whole exchange without rclpy (3 motors: the palletizer; 8: OpenArm + gripper
  types): the replies waiting on a socketcand TCP connection read and parsed, the command set
  (read-only arrays, as a stage hands them on), ingest, step, the frames sent in one write,
  ``joint_states`` packed; ``caches evicted``: an 8 MB copy before each exchange (not timed),
  as in the chain, where the stages and rclpy run between two exchanges;
- ``core``: command, replies, step and the measured lists of :class:`MitBridgeCore`;
- ``publish joint_states``: fill a ``JointState`` and ``publish`` it (rclpy converts and
  serializes) against :class:`~gravity_friction_comp.nodes.joint_state_bytes.JointStateBytes`
  + publish of the bytes, on a real publisher (no subscriber; the former route, not main's);
- ``socketcand send`` / ``read``: :class:`~gravity_friction_comp.mit.frame_transport.SocketcandTransport`
  on a TCP connection over 127.0.0.1 (the peer's write of the replies included in a read);
- ``socketcan send``: python-can's ``SocketcanBus.send`` (``select`` per frame) against
  :class:`~gravity_friction_comp.mit.frame_transport.SocketcanTransport`, both on a Unix
  datagram pair (no SocketCAN on this machine: the syscall differs, the Python around it not);
- then the socket calls alone (min of the rounds): the peer's write, ``os.read`` of waiting
  replies and of an empty socket, ``sendall``, ``TCP_QUICKACK``: what of an exchange is the
  kernel's, not Python's.

Run: ``python bench/bridge_levers.py [--n 2000] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import pathlib
import re
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import deque

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))

import numpy as np  # noqa: E402

from gravity_friction_comp.mit import frame_transport  # noqa: E402
from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig  # noqa: E402
from gravity_friction_comp.mit.bridge_core import MitBridgeCore  # noqa: E402
from gravity_friction_comp.mit.bus import mit_message  # noqa: E402
from gravity_friction_comp.mit.frame_transport import SocketcandTransport, SocketcanTransport  # noqa: E402
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap  # noqa: E402
from gravity_friction_comp.mit.motor_table import motor_limits  # noqa: E402
from gravity_friction_comp.nodes import joint_state_bytes  # noqa: E402
from gravity_friction_comp.sim.motor_emulator import EmulatedMotor  # noqa: E402

TYPES = ["DM8009", "DM8009", "DM4340", "DM4340", "DM4310", "DM4310", "DM4310", "DM4310"]


def main_package():
    """main's ``gravity_friction_comp`` as the package ``gravity_friction_comp_main`` (``git archive``
    into a temporary directory, its imports renamed), importable beside this tree's: the
    levers' "before" is main's code as a whole (core, codec, checks, transport)."""
    if "gravity_friction_comp_main" in sys.modules:
        return sys.modules["gravity_friction_comp_main"]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bridge_levers_main_"))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "main", "gravity_friction_comp"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp, filter="data")
    (tmp / "gravity_friction_comp").rename(tmp / "gravity_friction_comp_main")
    for path in (tmp / "gravity_friction_comp_main").rglob("*.py"):
        text = path.read_text()
        path.write_text(re.sub(r"\bgravity_friction_comp\b(?=[. ])", "gravity_friction_comp_main", text))
    sys.path.insert(0, str(tmp))
    return importlib.import_module("gravity_friction_comp_main")


def main_module(name: str):
    """Module ``name`` (``mit.bridge_core``, …) of :func:`main_package`."""
    main_package()
    return importlib.import_module(f"gravity_friction_comp_main.{name}")


def main_core_class():
    """``MitBridgeCore`` of main (:func:`main_package`: with main's codec, checks, feedback)."""
    return main_module("mit.bridge_core").MitBridgeCore


def config(n: int = 8, main: bool = False) -> BridgeConfig:
    """``n`` motors of :data:`TYPES` (gear ratios 1–3, directions alternating), the tree's
    classes or main's (``main``: for main's core, which checks its config's class)."""
    if main:
        cfg_mod, map_mod, table = (
            main_module(f"mit.{x}") for x in ("bridge_config", "joint_motor_map", "motor_table")
        )
        config_class, motor_class = cfg_mod.BridgeConfig, cfg_mod.MotorConfig
        map_class, limits_of = map_mod.JointMotorMap, table.motor_limits
    else:
        config_class, motor_class, map_class, limits_of = (
            BridgeConfig,
            MotorConfig,
            JointMotorMap,
            motor_limits,
        )
    motors = tuple(
        motor_class(
            f"j{k}",
            k + 1,
            0x11 + k,
            limits_of(t),
            mapping=map_class(direction=(-1) ** k, gear_ratio=1.0 + k % 3),
            kp=20.0,
            kd=1.0,
        )
        for k, t in enumerate(TYPES[:n])
    )
    return config_class(motors, rate_hz=1000.0, command_timeout=0.5)


def per_exchange(fn, n: int) -> float:
    """[us] thread CPU per call of ``fn`` over ``n`` calls."""
    t0 = time.thread_time()
    for k in range(n):
        fn(k)
    return 1e6 * (time.thread_time() - t0) / n


def lever_core(n_motors: int):
    """A bridge exchange's core work for ``n_motors``: the command handed on (read-only
    arrays, as a stage's output), the replies ingested, the step, the measured lists."""

    def run(main: bool):
        cfg = config(n_motors, main)
        core = (main_core_class() if main else MitBridgeCore)(cfg)
        emus = [EmulatedMotor(m.limits, m.can_id, m.master_id) for m in config(n_motors).motors]
        q = np.random.default_rng(1).uniform(-1, 1, n_motors)
        q.flags.writeable = False
        core.set_command(q, None, q, 0.0)
        replies = [(e.reply_id, e.handle_frame(d)) for e, (_, d) in zip(emus, core.step(0.0))]

        def exchange(k):
            now = k * 1e-3
            core.set_command(q, None, q, now)
            core.ingest_replies(replies, now)
            core.step(now)
            core.measured()

        return exchange

    return run(True), run(False)


def lever_joint_states(n: int):
    import rclpy
    from builtin_interfaces.msg import Time as TimeMsg
    from rclpy.context import Context
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.nodes.joint_state_bytes import JointStateBytes

    ctx = Context()
    rclpy.init(context=ctx, domain_id=int(os.environ["ROS_DOMAIN_ID"]))
    node = rclpy.create_node("bench_levers", context=ctx)
    pub = node.create_publisher(JointState, "bench_levers/joint_states", 10)
    names = [f"j{k}" for k in range(8)]
    values = np.linspace(-1, 1, 8)
    msg = JointState(check_fields=False)
    state = JointStateBytes(names)

    def old(k):  # the bridge's former _publish_state for every joint valid
        ns = 1_764_000_000_000_000_000 + k
        msg.header.stamp = TimeMsg(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
        msg.name = names
        msg.position, msg.velocity, msg.effort = values.tolist(), values.tolist(), values.tolist()
        pub.publish(msg)

    def new(k):
        v = values.tolist()
        pub.publish(state.fill(1_764_000_000_000_000_000 + k, v, v, v))

    def close():
        node.destroy_node()
        rclpy.try_shutdown(context=ctx)

    return old, new, close


def tcp_pair() -> tuple[socket.socket, socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    peer, _ = server.accept()
    server.close()
    for s in (client, peer):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client.settimeout(2.0)
    return client, peer


def python_can_socketcand(sock):
    """python-can's SocketCanDaemonBus on ``sock`` without its handshake (its send and
    receive code as is)."""
    from can.interfaces.socketcand.socketcand import SocketCanDaemonBus

    bus = SocketCanDaemonBus.__new__(SocketCanDaemonBus)
    bus._SocketCanDaemonBus__socket = sock
    bus._SocketCanDaemonBus__tcp_tune = True
    bus._SocketCanDaemonBus__message_buffer = deque()
    bus._SocketCanDaemonBus__receive_buffer = ""
    bus.channel = "can0"
    return bus


def frames8():
    cfg = config()
    core = MitBridgeCore(cfg)
    return core.step(0.0)


def drain(peer):
    try:
        while peer.recv(1 << 16, socket.MSG_DONTWAIT):
            pass
    except BlockingIOError:
        pass


def lever_socketcand_send(n: int):
    frames = frames8()
    client, peer = tcp_pair()
    bus = python_can_socketcand(client)
    old_transport = main_module("mit.frame_transport").SocketcandTransport(bus)
    ours = SocketcandTransport(bus)

    def run(transport):
        def send(k):
            transport.send(frames, 0.0005)
            if k % 50 == 0:
                drain(peer)

        return send

    return run(old_transport), run(ours), lambda: (client.close(), peer.close())


def reply_text(n: int) -> bytes:
    """``n`` replies as socketcand sends them (``< frame ID TIME HEX >``)."""
    return "".join(
        f"< frame {0x11 + k:03X} 1764000000.{k:06d} {bytes(range(k, k + 8)).hex().upper()} >"
        for k in range(n)
    ).encode("ascii")


def lever_socketcand_read(n: int, replies: int = 8):
    """Read ``replies`` waiting replies (each round: the peer writes them, the read takes them)."""
    client, peer = tcp_pair()
    bus = python_can_socketcand(client)
    old_transport = main_module("mit.frame_transport").SocketcandTransport(bus)
    ours = SocketcandTransport(bus)
    data = reply_text(replies)

    def run(transport):
        def read(k):
            peer.sendall(data)
            out: list = []
            while len(out) < replies:
                transport.read(out)

        return read

    return run(old_transport), run(ours), lambda: (client.close(), peer.close())


def lever_socketcand_read_empty(n: int):
    """A read with nothing waiting (the socket empty)."""
    client, peer = tcp_pair()
    bus = python_can_socketcand(client)
    old_transport = main_module("mit.frame_transport").SocketcandTransport(bus)
    ours = SocketcandTransport(bus)

    def run(transport):
        return lambda k: transport.read([])

    return run(old_transport), run(ours), lambda: (client.close(), peer.close())


def lever_exchange(n: int, replies: int = 3):
    """A whole exchange of the bridge without rclpy, ``replies`` motors (3: the palletizer):
    read the replies waiting on a socketcand TCP connection (the peer wrote them), the
    command handed on, ingest, step, send the frames (drained by the peer), the measured
    lists packed as ``joint_states`` bytes: main's modules against this tree's."""
    client, peer = tcp_pair()
    bus = python_can_socketcand(client)
    q = np.random.default_rng(1).uniform(-1, 1, replies)
    q.flags.writeable = False
    names = [f"j{k}" for k in range(replies)]

    def run(main: bool):
        transport = (main_module("mit.frame_transport") if main else frame_transport).SocketcandTransport(bus)
        state_bytes = (main_module("nodes.joint_state_bytes") if main else joint_state_bytes).JointStateBytes
        fill = state_bytes(names).fill
        core = (main_core_class() if main else MitBridgeCore)(config(replies, main))
        emus = [EmulatedMotor(m.limits, m.can_id, m.master_id) for m in config(replies).motors]
        core.set_command(q, None, q, 0.0)
        data = b"".join(
            f"< frame {e.reply_id:03X} 1764000000.000100 {e.handle_frame(d).hex().upper()} >".encode("ascii")
            for e, (_, d) in zip(emus, core.step(0.0))
        )

        def exchange(k):
            now = k * 1e-3
            peer.sendall(data)
            core.set_command(q, None, q, now)
            frames: list = []
            while len(frames) < replies:
                transport.read(frames)
            core.ingest_replies(frames, now)
            transport.send(core.step(now), 0.0005)
            position, velocity, effort, _ = core.measured()
            fill(1_764_000_000_000_000_000 + k, position, velocity, effort)
            if k % 50 == 0:
                drain(peer)

        return exchange

    return run(True), run(False), lambda: (client.close(), peer.close())


def per_exchange_cold(fn, n: int) -> float:
    """[us] :func:`per_exchange` with the caches evicted before each call (an 8 MB copy, not
    timed): as in the chain, where the stages and rclpy run between two exchanges."""
    churn = bytearray(8 << 20)
    total = 0
    for k in range(n):
        bytes(churn)
        t0 = time.thread_time_ns()
        fn(k)
        total += time.thread_time_ns() - t0
    return total / n / 1e3


def syscalls_alone(n: int, repeats: int) -> None:
    """What the socket calls cost without the Python around them: the peer's write of 3 and
    8 replies then one ``os.read`` of them (the peer's write measured alone, to subtract), or
    ``recv_into`` a preallocated buffer with ``MSG_DONTWAIT`` (the socket's timeout makes
    CPython ``poll`` first),
    an ``os.read`` of an empty socket (``BlockingIOError``), a ``sendall`` of 8 frames' text,
    the ``TCP_QUICKACK`` ``setsockopt``."""
    client, peer = tcp_pair()
    fd = client.fileno()
    text = b"".join(
        f"< send {0x01 + k:03X} 8 {' '.join(f'{b:x}' for b in range(k, k + 8))} >".encode() for k in range(8)
    )

    def write_read(data):
        def run(k):
            peer.sendall(data)
            os.read(fd, 65536)

        return run

    def empty(k):
        try:
            os.read(fd, 65536)
        except BlockingIOError:
            pass

    buffer = bytearray(65536)

    def recv_into(data):
        def run(k):  # python-can's socket has a timeout: CPython polls before each recv
            peer.sendall(data)
            client.recv_into(buffer, 65536, socket.MSG_DONTWAIT)

        return run

    def send(k):
        client.sendall(text)
        if k % 50 == 0:
            drain(peer)

    def quickack(k):
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)

    def write_only(data):
        def run(k):
            peer.sendall(data)
            if k % 50 == 49:  # os.read: the client's socket has a timeout (recv would poll first)
                try:
                    while os.read(fd, 1 << 16):
                        pass
                except BlockingIOError:
                    pass

        return run

    calls = {
        "peer write 3 replies (subtracted below)": write_only(reply_text(3)),
        "peer write + os.read 3 replies": write_read(reply_text(3)),
        "peer write 8 replies (subtracted below)": write_only(reply_text(8)),
        "peer write + os.read 8 replies": write_read(reply_text(8)),
        "peer write + sock.recv_into 3 replies": recv_into(reply_text(3)),
        "os.read empty (BlockingIOError)": empty,
        "sendall 8 frames' text": send,
        "setsockopt TCP_QUICKACK": quickack,
    }
    for name, fn in calls.items():
        fn(0)
        us = min(per_exchange(fn, n) for _ in range(repeats))
        print(f"  syscall {name:40s} min {us:6.1f} us")
    client.close()
    peer.close()


def lever_socketcan_send(n: int):
    from can.interfaces.socketcan.socketcan import SocketcanBus

    frames = frames8()
    ours_sock, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    bus = SocketcanBus.__new__(SocketcanBus)
    bus.socket, bus.channel = ours_sock, "can0"
    ours = SocketcanTransport(ours_sock)

    def old(k):
        for i, d in frames:
            bus.send(mit_message(i, d), timeout=0.0005)
        drain(peer)

    def new(k):
        ours.send(frames, 0.0005)
        drain(peer)

    return old, new, lambda: (ours_sock.close(), peer.close())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="exchanges per round")
    parser.add_argument("--repeats", type=int, default=5, help="rounds, old and new alternated")
    args = parser.parse_args()
    print(
        f"thread CPU per exchange [us], min / median of {args.repeats} x {args.n}, before (main) and after "
        f"(this tree) alternated; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    levers = {
        "exchange, 3 motors (no rclpy)": lever_exchange,
        "exchange, 3 motors, caches evicted": lever_exchange,
        "exchange, 8 motors, caches evicted": lambda n: lever_exchange(n, 8),
        "core: command, 3 replies, step": lambda n: (*lever_core(3), lambda: None),
        "core: command, 8 replies, step": lambda n: (*lever_core(8), lambda: None),
        "publish joint_states": lever_joint_states,
        "socketcand send 8 frames": lever_socketcand_send,
        "socketcand read 3 replies": lambda n: lever_socketcand_read(n, 3),
        "socketcand read 8 replies": lever_socketcand_read,
        "socketcand read, nothing waiting": lever_socketcand_read_empty,
        "socketcan send 8 frames (unix pair)": lever_socketcan_send,
    }
    for name, make in levers.items():
        old, new, close = make(args.n)
        old(0), new(0)  # warm
        olds, news = [], []
        timing = per_exchange_cold if "evicted" in name else per_exchange
        for _ in range(args.repeats):
            olds.append(timing(old, args.n))
            news.append(timing(new, args.n))
        close()
        o, w = float(np.median(olds)), float(np.median(news))
        print(
            f"{name:38s} before {min(olds):6.1f} / {o:6.1f}  after {min(news):6.1f} / {w:6.1f}  "
            f"saved (median) {o - w:6.1f} ({w / o:.2f}x)"
        )
    syscalls_alone(args.n, args.repeats)


if __name__ == "__main__":
    main()
