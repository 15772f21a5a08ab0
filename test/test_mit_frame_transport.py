"""Tests of gravity_friction_comp.mit.frame_transport: the socket written and read directly.

Independent routes: python-can's own socketcand text (``convert_can_message_to_ascii_message``,
``convert_ascii_message_to_can_message``) and socketcan struct (``build_can_frame``) of the
same ``can.Message``; the bytes a Unix socket pair carries in one read.
"""

from __future__ import annotations

import os
import pathlib
import socket
import time
from collections import deque

import can
import numpy as np
import pytest
from can.interfaces.socketcan.socketcan import build_can_frame
from can.interfaces.socketcand.socketcand import (
    convert_ascii_message_to_can_message,
    convert_can_message_to_ascii_message,
)

from gravity_friction_comp.mit.bus import CanFrameIO, mit_message
from gravity_friction_comp.mit.frame_transport import (
    _WHOLE_FRAMES,
    PythonCanTransport,
    SocketcandTransport,
    SocketcanTransport,
    socketcan_frame,
    socketcand_send_text,
    transport_for,
)

REPO = pathlib.Path(__file__).resolve().parents[1]


def _frames(n: int, seed: int = 3) -> list[tuple[int, bytes]]:
    rng = np.random.default_rng(seed)
    out = [(int(rng.integers(0, 0x800)), bytes(rng.integers(0, 256, 8, dtype=np.uint8))) for _ in range(n)]
    return out + [
        (0x001, bytes(8)),
        (0x7FF, b"\xff" * 8),
        (0x013, bytes([0, 1, 0x10, 0xAB, 0xFF, 2, 3, 0xF])),
    ]


def test_socketcand_text_is_python_cans_byte_for_byte():
    for arbitration_id, data in _frames(500):
        ref = convert_can_message_to_ascii_message(mit_message(arbitration_id, data))
        assert socketcand_send_text(arbitration_id, data) == ref


class _FakeSocketcandBus:
    """What SocketcandTransport reads of python-can's SocketCanDaemonBus: its private socket."""

    def __init__(self, sock):
        self._SocketCanDaemonBus__socket = sock


def test_socketcand_send_is_one_write_of_python_cans_lines():
    ours, peer = socket.socketpair()
    try:
        ours.settimeout(2.0)
        transport = SocketcandTransport(_FakeSocketcandBus(ours))
        frames = _frames(8)
        assert transport.send(frames, 0.0005) == (len(frames), None)
        peer.settimeout(1.0)
        got = peer.recv(1 << 16)  # one write: all of it in one read
        ref = "".join(convert_can_message_to_ascii_message(mit_message(i, d)) for i, d in frames)
        assert got == ref.encode("ascii")
        peer.close()
        sent, error = transport.send(frames, 0.0005)  # a closed peer: a ConnectionError, not raised
        while error is None:  # the first write after the close may still be accepted by the kernel
            sent, error = transport.send(frames, 0.0005)
        assert sent == 0 and isinstance(error, ConnectionError)
    finally:
        ours.close()


def test_socketcand_read_parses_as_python_can_in_one_pass_and_keeps_a_partial_message():
    ours, peer = socket.socketpair()
    try:
        ours.settimeout(2.0)
        transport = SocketcandTransport(_FakeSocketcandBus(ours))
        lines = [
            "< frame 013 1700000000.000100 0102030405060708 >",
            "< error 20000004 1700000000.000200 >",
            "< frame 1FFFFFFF 1700000000.000300 AABB >",
            "< frame 011 1700000000.000400  >",  # no data bytes, as the server writes it
        ]
        text = "".join(lines)
        peer.sendall(text.encode("ascii") + b"< frame 012 1700000000.0005")
        out: list = []
        skipped = transport.read(out)
        ref = [convert_ascii_message_to_can_message(line) for line in lines]
        assert out == [(m.arbitration_id, bytes(m.data)) for m in ref if not m.is_error_frame]
        assert skipped == sum(m.is_error_frame for m in ref) == 1
        out.clear()
        assert transport.read(out) == 0 and out == []  # nothing more yet: not blocked, not parsed
        peer.sendall(b"00 1122 >")
        assert transport.read(out) == 0 and out == [(0x012, bytes([0x11, 0x22]))]
        peer.sendall(b"< frame 013 1.0< frame 013 2.0 00 >")  # a garbled frame: python-can fails on it too
        with pytest.raises(can.CanError, match=r"1\.0<"):
            transport.read(out)
    finally:
        ours.close()
        peer.close()


@pytest.mark.parametrize(
    "lines",
    [
        ["< frame 013 1700000000.000100 0102030405060708 >"],
        [
            "< frame 011 1700000000.000100 A1B2C3D4E5F60718 >",
            "< frame 1FFFFFFF 23.424242 aabb >",  # lower-case hex, a short time, 2 bytes
            "< frame 012 1700000000.000400  >",  # no data bytes
            "< frame 7FF 1700000000.000500 00 >",
        ],
    ],
)
def test_socketcand_read_of_whole_frames_is_python_cans_parse(lines):
    """Whole, well-formed frames only (the one-pass route of the read): the frames python-can's
    own parser gives, nothing skipped, nothing left buffered."""
    ours, peer = socket.socketpair()
    try:
        ours.settimeout(2.0)
        transport = SocketcandTransport(_FakeSocketcandBus(ours))
        peer.sendall("".join(lines).encode("ascii"))
        out: list = []
        assert _WHOLE_FRAMES.fullmatch("".join(lines))  # the one-pass route, not the loop's
        assert transport.read(out) == 0
        ref = [convert_ascii_message_to_can_message(line) for line in lines]
        assert out == [(m.arbitration_id, bytes(m.data)) for m in ref]
        peer.sendall(b"< frame 013 1700000000.0001")  # then a split message: kept for the next read
        assert transport.read(out) == 0 and len(out) == len(lines)
        peer.sendall(b"00 0102 >")
        assert transport.read(out) == 0 and out[-1] == (0x013, bytes([1, 2]))
    finally:
        ours.close()
        peer.close()


def test_socketcand_read_reads_again_while_a_read_fills_its_size(monkeypatch):
    """One os.read takes what waits unless it returns the whole read size: then it reads
    again, so replies beyond one read's size are all taken in the same call."""
    import gravity_friction_comp.mit.frame_transport as frame_transport

    monkeypatch.setattr(frame_transport, "_READ_SIZE", 64)
    ours, peer = socket.socketpair()
    try:
        ours.settimeout(2.0)
        transport = SocketcandTransport(_FakeSocketcandBus(ours))
        lines = [
            f"< frame {0x11 + k:03X} 1700000000.{k:06d} {bytes(range(k, k + 8)).hex().upper()} >"
            for k in range(9)
        ]
        peer.sendall("".join(lines).encode("ascii"))
        out: list = []
        assert transport.read(out) == 0
        assert out == [(0x11 + k, bytes(range(k, k + 8))) for k in range(9)]
    finally:
        ours.close()
        peer.close()


def test_socketcand_read_takes_over_what_python_cans_own_reads_buffered():
    """read_damiao_limits reads the bus through python-can before the bridge owns it: the
    frames python-can parsed and the partial message it kept are not lost."""
    ours, peer = socket.socketpair()
    try:
        ours.settimeout(2.0)
        bus = _FakeSocketcandBus(ours)
        bus._SocketCanDaemonBus__message_buffer = deque(
            [convert_ascii_message_to_can_message("< frame 011 1.000000 0A0B >")]
        )
        bus._SocketCanDaemonBus__receive_buffer = "< frame 012 2.0000"
        transport = SocketcandTransport(bus)
        peer.sendall(b"00 0C0D >")
        out: list = []
        deadline = time.monotonic() + 1.0
        while len(out) < 2 and time.monotonic() < deadline:
            transport.read(out)
        assert out == [(0x011, b"\x0a\x0b"), (0x012, b"\x0c\x0d")]
        assert not bus._SocketCanDaemonBus__message_buffer  # taken, not read twice
    finally:
        ours.close()
        peer.close()


@pytest.mark.parametrize("fd", [False, True])
def test_socketcan_frame_is_python_cans_build_can_frame(fd):
    for arbitration_id, data in _frames(300):
        assert socketcan_frame(arbitration_id, data, fd) == build_can_frame(
            mit_message(arbitration_id, data, fd)
        )


def test_socketcan_transport_writes_each_frame_and_reads_without_waiting():
    """A datagram socket pair stands for the raw CAN socket (one frame per datagram)."""
    ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        transport = SocketcanTransport(ours, fd=False)
        frames = _frames(5)
        assert transport.send(frames, 0.0005) == (len(frames), None)
        peer.settimeout(1.0)
        assert [peer.recv(72) for _ in frames] == [build_can_frame(mit_message(i, d)) for i, d in frames]
        out: list = []
        assert transport.read(out) == 0 and out == []  # nothing waiting: returns at once
        error = can.Message(arbitration_id=0x11, data=bytes(8), is_error_frame=True, is_extended_id=False)
        remote = can.Message(arbitration_id=0x11, is_remote_frame=True, dlc=8, is_extended_id=False)
        extended = can.Message(arbitration_id=0x1ABCDE, data=b"\x01\x02", is_extended_id=True)
        reply = mit_message(0x12, bytes(range(8)))
        fd_reply = mit_message(0x13, bytes(range(8)), fd=True)
        for msg in (reply, error, remote, extended, fd_reply):
            peer.send(build_can_frame(msg))
        assert transport.read(out) == 2
        assert out == [(0x12, bytes(range(8))), (0x1ABCDE, b"\x01\x02"), (0x13, bytes(range(8)))]
    finally:
        ours.close()
        peer.close()


def test_the_virtual_bus_goes_through_python_can_and_io_counts_as_before():
    channel = f"gfc_transport_{os.getpid()}"
    a = can.Bus(interface="virtual", channel=channel, ignore_config=True)
    b = can.Bus(interface="virtual", channel=channel, ignore_config=True)
    io = CanFrameIO(a, accept=frozenset({0x11}))
    try:
        assert isinstance(io.transport, PythonCanTransport) and isinstance(
            transport_for(b), PythonCanTransport
        )
        assert io.send([(1, bytes(8)), (2, bytes(8))]) == 2
        assert [b.recv(1.0).arbitration_id for _ in range(2)] == [1, 2]
        for cid in (0x11, 0x99, 0x11):
            b.send(can.Message(arbitration_id=cid, data=bytes([cid]) * 8, is_extended_id=False))
        assert io.read() == [(0x11, bytes([0x11]) * 8)] * 2
        assert (io.listener.received, io.listener.ignored) == (2, 1)
    finally:
        io.close()
        b.shutdown()


def test_python_cans_multicast_interface_is_named_nowhere():
    """python-can's UDP multicast interface sends to a multicast group that leaves the
    loopback interface (issue 28 point 5): no code, test, bench or launch file names it."""
    needle = "udp" + "_multicast"
    hits = []
    for folder in ("gravity_friction_comp", "test", "bench", "launch", "scripts", "config"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".md", ".yaml", ".sh", ".xml", ".txt", ""):
                if needle in path.read_text(errors="replace"):
                    hits.append(str(path.relative_to(REPO)))
    assert hits == []
