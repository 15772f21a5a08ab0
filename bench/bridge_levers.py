"""Each lever of issue 28 point 1 on its own: the bridge's per-exchange work, before and after.

8 Damiao motors (the OpenArm arm + gripper types), thread CPU time (``time.thread_time``)
per exchange, median of ``--repeats`` rounds of ``--n`` exchanges, old and new alternated in
the same process:

- ``core``: :meth:`MitBridgeCore.step` + the 8 replies, the tree's core (one-pass codec,
  ``ingest_replies``) against main's ``mit/bridge_core.py`` loaded from git (``encode_command``
  and ``decode_feedback`` per frame, ``ingest_feedback`` per reply);
- ``joint_states``: fill a ``JointState`` and ``publish`` it (rclpy converts and serializes)
  against :class:`~gravity_friction_comp.nodes.joint_state_bytes.JointStateBytes` + publish
  of the bytes, on a real publisher (no subscriber);
- ``socketcand send`` / ``read``: python-can's ``SocketCanDaemonBus.send`` per frame and its
  ``_recv_internal`` per frame (its own code, on a TCP connection over 127.0.0.1) against
  :class:`~gravity_friction_comp.mit.frame_transport.SocketcandTransport` (one write; the
  replies parsed from the socket);
- ``socketcan send``: python-can's ``SocketcanBus.send`` (``select`` per frame) against
  :class:`~gravity_friction_comp.mit.frame_transport.SocketcanTransport`, both on a Unix
  datagram pair (no SocketCAN on this machine: the syscall differs, the Python around it not).

Run: ``python bench/bridge_levers.py [--n 2000] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import socket
import subprocess
import sys
import time
from collections import deque

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))

import numpy as np  # noqa: E402

from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig  # noqa: E402
from gravity_friction_comp.mit.bridge_core import MitBridgeCore  # noqa: E402
from gravity_friction_comp.mit.bus import mit_message  # noqa: E402
from gravity_friction_comp.mit.frame_transport import SocketcandTransport, SocketcanTransport  # noqa: E402
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap  # noqa: E402
from gravity_friction_comp.mit.motor_table import motor_limits  # noqa: E402
from gravity_friction_comp.sim.motor_emulator import EmulatedMotor  # noqa: E402

TYPES = ["DM8009", "DM8009", "DM4340", "DM4340", "DM4310", "DM4310", "DM4310", "DM4310"]


def main_core_class():
    """``MitBridgeCore`` of main's ``mit/bridge_core.py`` (its imports resolve to this tree's
    unchanged modules: codec, feedback, checks)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", "main:gravity_friction_comp/mit/bridge_core.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    spec = importlib.util.spec_from_loader("main_bridge_core", loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules["main_bridge_core"] = module  # its dataclasses look their module up
    exec(compile(source, "main:bridge_core.py", "exec"), module.__dict__)  # noqa: S102 - main's own file
    return module.MitBridgeCore


def config() -> BridgeConfig:
    motors = tuple(
        MotorConfig(
            f"j{k}",
            k + 1,
            0x11 + k,
            motor_limits(t),
            mapping=JointMotorMap(direction=(-1) ** k, gear_ratio=1.0 + k % 3),
            kp=20.0,
            kd=1.0,
        )
        for k, t in enumerate(TYPES)
    )
    return BridgeConfig(motors, rate_hz=1000.0, command_timeout=0.5)


def per_exchange(fn, n: int) -> float:
    """[us] thread CPU per call of ``fn`` over ``n`` calls."""
    t0 = time.thread_time()
    for k in range(n):
        fn(k)
    return 1e6 * (time.thread_time() - t0) / n


def lever_core(n: int):
    cfg = config()
    emus = [EmulatedMotor(m.limits, m.can_id, m.master_id) for m in cfg.motors]
    rng = np.random.default_rng(1)
    q = rng.uniform(-1, 1, len(cfg.motors))

    def run(core, new: bool):
        core.set_command(q, None, q, 0.0)
        replies = [(e.reply_id, e.handle_frame(d)) for e, (_, d) in zip(emus, core.step(0.0))]

        def exchange(k):
            now = k * 1e-3
            if new:
                core.ingest_replies(replies, now)
            else:
                for rid, data in replies:
                    core.ingest_feedback(rid, data, now)
            core.step(now)

        return exchange

    old_class = main_core_class()
    return run(old_class(cfg), False), run(MitBridgeCore(cfg), True)


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
    ours = SocketcandTransport(bus)

    def old(k):
        for i, d in frames:
            bus.send(mit_message(i, d))
        if k % 50 == 0:
            drain(peer)

    def new(k):
        ours.send(frames, 0.0005)
        if k % 50 == 0:
            drain(peer)

    return old, new, lambda: (client.close(), peer.close())


def lever_socketcand_read(n: int):
    client, peer = tcp_pair()
    bus = python_can_socketcand(client)
    ours = SocketcandTransport(bus)
    text = "".join(
        f"< frame {0x11 + k:03X} 1764000000.{k:06d} {bytes(range(k, k + 8)).hex().upper()} >"
        for k in range(8)
    )
    data = text.encode("ascii")

    def old(k):
        peer.sendall(data)
        got = 0
        while got < 8:  # python-can: one select + recv + parse per frame once buffered
            msg, _ = bus._recv_internal(0.01)
            got += msg is not None

    def new(k):
        peer.sendall(data)
        out: list = []
        while len(out) < 8:
            ours.read(out)

    return old, new, lambda: (client.close(), peer.close())


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
        f"8 motors, thread CPU per exchange [us], median of {args.repeats} x {args.n}; load {os.getloadavg()}"
    )
    levers = {
        "core step + 8 replies": lambda n: (*lever_core(n), lambda: None),
        "publish joint_states": lever_joint_states,
        "socketcand send 8 frames": lever_socketcand_send,
        "socketcand read 8 frames": lever_socketcand_read,
        "socketcan send 8 frames (unix pair)": lever_socketcan_send,
    }
    for name, make in levers.items():
        old, new, close = make(args.n)
        old(0), new(0)  # warm
        olds, news = [], []
        for _ in range(args.repeats):
            olds.append(per_exchange(old, args.n))
            news.append(per_exchange(new, args.n))
        close()
        o, w = float(np.median(olds)), float(np.median(news))
        print(f"{name:38s} before {o:7.1f}  after {w:7.1f}  saved {o - w:7.1f} ({w / o:.2f}x)")


if __name__ == "__main__":
    main()
