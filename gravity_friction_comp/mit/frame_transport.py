"""How the bridge's frames reach the bus: python-can per frame, or the socket written directly.

:class:`~gravity_friction_comp.mit.bus.CanFrameIO` sends and reads through one of these,
picked by :func:`transport_for` from the python-can bus it owns:

- :class:`SocketcandTransport` (python-can's ``socketcand`` client): all of an exchange's
  frames as one ASCII write (python-can writes and acks one TCP segment per frame), and
  the replies read from the socket and parsed in one pass (python-can: a ``select``, a
  ``recv`` and a ``can.Message`` per frame). The text is python-can's own, byte for byte.
- :class:`SocketcanTransport` (python-can's ``socketcan``): each frame written to the raw
  CAN socket without python-can's per-frame ``select`` and ``can.Message``; replies read
  with non-blocking ``recv``. The frame struct is python-can's ``build_can_frame``'s.
- :class:`PythonCanTransport`: any other interface (``virtual``, ``pcan``, …), through
  python-can's ``send`` / ``recv`` per frame.

Each transport's :meth:`send` returns ``(frames sent, last error or None)`` and never
raises; :meth:`read` appends ``(arbitration_id, data)`` of each received data frame and
returns the count of error/remote frames skipped; it raises ``can.CanError``/``OSError``
on a failed read (the frames read before it are kept in the list).

The only module of the bridge besides ``mit.bus`` that touches python-can's bus objects.
"""

from __future__ import annotations

import os
import re
import socket
import struct
import time
from collections import deque
from collections.abc import Sequence
from typing import Any, NamedTuple

import can

__all__ = [
    "SOCKETCAND_TIMEOUT",
    "FrameQueue",
    "ReceivedFrame",
    "mit_message",
    "PythonCanTransport",
    "SocketcanTransport",
    "SocketcandTransport",
    "socketcan_frame",
    "socketcand_send_text",
    "transport_for",
]

Frames = Sequence[tuple[int, bytes]]
#: Timeout [s] of a socketcand connection's socket operations: the handshake (python-can
#: reads ``< hi >`` with no timeout of its own) and a send into a full TCP buffer.
SOCKETCAND_TIMEOUT = 2.0

# --- received frames -----------------------------------------------------------------------


class ReceivedFrame(NamedTuple):
    """A frame as the control loop sees it: ``time`` [s, time.monotonic], id, data bytes."""

    time: float
    arbitration_id: int
    data: bytes


class FrameQueue(can.Listener):
    """Received frames → a bounded queue, stamped and filtered (a python-can ``Listener``).

    :meth:`CanFrameIO.drain` feeds it on the control loop's thread; it also works as a
    Notifier's listener (append and popleft of a ``deque`` are atomic). When the queue is
    full the frame is dropped and counted in :attr:`dropped`.

    Args:
        maxsize: Queue capacity [frames].
        accept: Arbitration ids to keep (``None``: all); others are counted in
            :attr:`ignored` (cheap software filter, works on every interface).
    """

    def __init__(self, maxsize: int = 4096, accept: frozenset[int] | None = None):
        self._queue: deque[ReceivedFrame] = deque()
        self._maxsize = maxsize
        self._accept = accept
        self.dropped = 0
        self.ignored = 0
        self.received = 0
        self.errors = 0
        self.last_error: str = ""

    def on_message_received(self, msg: can.Message) -> None:
        if msg.is_error_frame or msg.is_remote_frame:
            self.ignored += 1
            return
        if self._accept is not None and msg.arbitration_id not in self._accept:
            self.ignored += 1
            return
        self.received += 1
        if len(self._queue) >= self._maxsize:
            self.dropped += 1
            return
        self._queue.append(ReceivedFrame(time.monotonic(), msg.arbitration_id, bytes(msg.data)))

    def on_error(self, exc: Exception) -> None:
        # a failed read: kept for diagnostics, never raised into the loop
        self.errors += 1
        self.last_error = str(exc)

    def take(self, frames: list[tuple[int, bytes]], skipped: int = 0) -> list[tuple[int, bytes]]:
        """``frames`` (``(arbitration_id, data)``, read from the bus) filtered by ``accept``
        and counted as :meth:`on_message_received` counts them, without the queue;
        ``skipped``: error/remote frames the read left out (counted in :attr:`ignored`)."""
        self.ignored += skipped
        if self._accept is not None:
            kept = [f for f in frames if f[0] in self._accept]
            self.ignored += len(frames) - len(kept)
            frames = kept
        self.received += len(frames)
        return frames

    def drain(self, limit: int | None = None) -> list[ReceivedFrame]:
        """Everything queued now (at most ``limit`` frames), oldest first."""
        out: list[ReceivedFrame] = []
        while self._queue and (limit is None or len(out) < limit):
            out.append(self._queue.popleft())
        return out


def mit_message(arbitration_id: int, data: bytes, fd: bool = False) -> can.Message:
    """An 11-bit MIT-mode frame: classic, or CAN-FD with bit-rate switch when ``fd``."""
    return can.Message(
        arbitration_id=arbitration_id, data=data, is_extended_id=False, is_fd=fd, bitrate_switch=fd
    )


# --- python-can per frame -------------------------------------------------------------------


class PythonCanTransport:
    """python-can's ``send`` / ``recv`` per frame (see the module docstring).

    Args:
        bus: The open python-can bus. fd: Send CAN-FD frames with bit-rate switch.
    """

    def __init__(self, bus: can.BusABC, fd: bool = False):
        self.bus = bus
        self.fd = fd

    def send(self, frames: Frames, timeout: float) -> tuple[int, BaseException | None]:
        ok, error = 0, None
        fd, send = self.fd, self.bus.send
        for arbitration_id, data in frames:
            try:
                send(mit_message(arbitration_id, data, fd), timeout=timeout)
                ok += 1
            except (can.CanError, OSError) as exc:
                error = exc
        return ok, error

    def read(self, out: list[tuple[int, bytes]]) -> int:
        skipped = 0
        recv = self.bus.recv
        while (msg := recv(timeout=0.0)) is not None:
            if msg.is_error_frame or msg.is_remote_frame:
                skipped += 1
            else:
                out.append((msg.arbitration_id, bytes(msg.data)))
        return skipped


# --- socketcand: one write per exchange, replies parsed from the socket ----------------------------

#: [bytes] One read of the socketcand socket (~1,500 replies); a shorter read took all that waited.
_READ_SIZE = 65536
#: Text of whole, well-formed data frames only (what a read gets but for an error frame or a
#: split message), each ``< frame ID SECONDS HEX >``: parsed in one pass; anything else by the loop.
_WHOLE_FRAMES = re.compile(r"(?:< frame [0-9A-Fa-f]+ [0-9]+\.[0-9]+ (?:[0-9A-Fa-f]{2})* >)+")
_FRAME = re.compile(r"< frame ([0-9A-Fa-f]+) [0-9.]+ ([0-9A-Fa-f]*) >")


def _send_line(arbitration_id: int, length: int) -> str:
    """:func:`socketcand_send_text`'s line with a ``%x`` in place of each data byte (python-can's
    byte format in a send: lower-case, no zero padding), to be formatted with the bytes."""
    return f"< send {arbitration_id & 0x7FF:03X} {length:X} {' '.join(['%x'] * length)} >"


def socketcand_send_text(arbitration_id: int, data: bytes) -> str:
    """The ``< send ID LEN b0 b1 … >`` line python-can's socketcand client writes for an
    11-bit frame (``convert_can_message_to_ascii_message``: id ``%03X``, length ``%X``,
    bytes lower-case hex without padding)."""
    return _send_line(arbitration_id, len(data)) % tuple(data)


class SocketcandTransport:
    """python-can's socketcand bus, its socket written and read directly (module docstring).

    Reading: the bytes waiting on the socket (non-blocking), parsed as python-can's client
    parses them: ``< frame ID TIME HEX >`` is a data frame, ``< error … >`` an error frame
    (skipped), other messages are skipped, a partial message waits for the rest (dropped
    beyond 200 characters); a frame that does not parse raises ``can.CanError`` naming it.
    A closed stream reads as nothing, as in python-can.

    Args:
        bus: The open ``SocketCanDaemonBus`` (its socket is python-can's private
            ``_SocketCanDaemonBus__socket``; :func:`transport_for` checks it is there).
    """

    def __init__(self, bus: can.BusABC):
        self.bus = bus
        self.sock: socket.socket = bus._SocketCanDaemonBus__socket  # type: ignore[attr-defined]
        if self.sock.gettimeout() is None:  # a blocking socket: os.read would wait for data
            self.sock.settimeout(SOCKETCAND_TIMEOUT)
        self._fd = self.sock.fileno()
        self._quickack = getattr(bus, "_SocketCanDaemonBus__tcp_tune", False) and hasattr(
            socket, "TCP_QUICKACK"
        )
        # what python-can's own reads (read_damiao_limits before the bridge owns the bus) left
        # in its buffers: its parsed frames come first, its partial text is parsed on
        queued = getattr(bus, "_SocketCanDaemonBus__message_buffer", None) or ()
        self._pending = [(m.arbitration_id, bytes(m.data)) for m in queued if not m.is_error_frame]
        self._buffer: str = getattr(bus, "_SocketCanDaemonBus__receive_buffer", "") or ""
        if queued:
            queued.clear()
        self._lines: dict[tuple[int, int], str] = {}  # (id, length) → _send_line

    def _ack(self) -> None:
        if self._quickack:  # as python-can after each send and recv (tcp_tune)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)

    def send(self, frames: Frames, timeout: float) -> tuple[int, BaseException | None]:
        """All ``frames`` in one ``sendall`` (the socket's own timeout bounds a full buffer);
        on a failure none counts as sent."""
        if not frames:
            return 0, None
        lines = self._lines
        parts = []
        for arbitration_id, data in frames:
            line = lines.get((arbitration_id, len(data)))
            if line is None:
                line = lines[arbitration_id, len(data)] = _send_line(arbitration_id, len(data))
            parts.append(line % tuple(data))
        try:
            self.sock.sendall("".join(parts).encode("ascii"))
        except OSError as error:
            return 0, error
        self._ack()
        return len(frames), None

    def read(self, out: list[tuple[int, bytes]]) -> int:
        if self._pending:
            out.extend(self._pending)
            self._pending = []
        try:
            chunk = os.read(self._fd, _READ_SIZE)
        except BlockingIOError:  # nothing waiting
            return 0
        if not chunk:  # the server closed: python-can reads nothing either
            return 0
        chunks = [chunk]
        while len(chunk) == _READ_SIZE:  # one read takes all that waits unless it fills the size
            try:
                chunk = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                break
            chunks.append(chunk)
        self._ack()
        text = self._buffer + b"".join(chunks).decode("ascii", errors="replace")
        if _WHOLE_FRAMES.fullmatch(text):  # the loop's result without its dozen steps per frame
            out.extend([(int(can_id, 16), bytes.fromhex(data)) for can_id, data in _FRAME.findall(text)])
            self._buffer = ""
            return 0
        skipped, pos, n = 0, 0, len(text)
        while pos < n:
            start = text.find("<", pos)
            if start < 0:  # no message left: python-can discards the rest
                pos = n
                break
            end = text.find(">", start)
            if end < 0:
                if n - pos > 200:  # python-can: an incomplete message beyond 200 chars is discarded
                    pos = n
                break
            message = text[start : end + 1]
            pos = end + 1
            if message.startswith("< frame ") and message.endswith(" >"):
                parts = message[8:-2].split(" ", 3)
                try:
                    can_id = int(parts[0], 16)
                    float(parts[1])  # python-can parses the time: a garbled frame fails here
                    data = bytes.fromhex(parts[2])
                except (ValueError, IndexError) as error:
                    self._buffer = text[pos:]
                    raise can.CanError(f"Failed to receive: {error} in {message!r}") from None
                out.append((can_id, data))
            else:  # "< error … >" (an error frame) or a message python-can does not parse
                skipped += 1
        self._buffer = text[pos:]
        return skipped


# --- socketcan: the raw CAN socket without python-can's per-frame select ---------------------------

_CAN_HEADER = struct.Struct("=IBB1xB")  # python-can's CAN_FRAME_HEADER_STRUCT (struct can_frame)
_CANFD_FDF, _CANFD_BRS = 0x04, 0x01
_CAN_EFF_FLAG, _CAN_RTR_FLAG, _CAN_ERR_FLAG = 0x80000000, 0x40000000, 0x20000000
_CANFD_MTU = 72
_FD_LENGTHS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64)


def socketcan_frame(arbitration_id: int, data: bytes, fd: bool = False) -> bytes:
    """The ``struct can_frame`` (``canfd_frame`` when ``fd``: FDF and BRS flags) python-can's
    ``build_can_frame`` makes of an 11-bit data frame: header ``=IBB1xB`` (id, length,
    flags, dlc), data padded to 8 (64) bytes."""
    n = len(data)
    if fd:
        length = min(x for x in _FD_LENGTHS if x >= n)
        return _CAN_HEADER.pack(arbitration_id, length, _CANFD_FDF | _CANFD_BRS, n) + data.ljust(64, b"\0")
    return _CAN_HEADER.pack(arbitration_id, n, 0, n) + data.ljust(8, b"\0")


class SocketcanTransport:
    """python-can's socketcan bus, its raw socket written and read directly (module docstring).

    A frame the kernel's TX queue has no room for fails at once (``ENOBUFS``/``EAGAIN``),
    counted as a send error, instead of python-can's ``select`` wait per frame.

    Args:
        sock: The bus's raw CAN socket (``SocketcanBus.socket``). fd: Send CAN-FD frames.
        bus: The python-can bus (kept for :meth:`CanFrameIO.close`).
    """

    def __init__(self, sock: socket.socket, fd: bool = False, bus: Any = None):
        self.bus = bus
        self.sock = sock
        self.fd = fd

    def send(self, frames: Frames, timeout: float) -> tuple[int, BaseException | None]:
        ok, error = 0, None
        send, flags = self.sock.send, socket.MSG_DONTWAIT
        for arbitration_id, data in frames:
            try:
                send(socketcan_frame(arbitration_id, data, self.fd), flags)
                ok += 1
            except OSError as exc:
                error = can.CanOperationError(f"Failed to transmit: {exc.strerror}", exc.errno)
        return ok, error

    def read(self, out: list[tuple[int, bytes]]) -> int:
        skipped = 0
        recv, flags = self.sock.recv, socket.MSG_DONTWAIT
        while True:
            try:
                cf = recv(_CANFD_MTU, flags)
            except BlockingIOError:
                return skipped
            except OSError as error:
                raise can.CanOperationError(f"Error receiving: {error.strerror}", error.errno) from error
            if len(cf) < 8:
                skipped += 1
                continue
            can_id, length, _flags, _dlc = _CAN_HEADER.unpack_from(cf)
            if can_id & (_CAN_ERR_FLAG | _CAN_RTR_FLAG):
                skipped += 1
                continue
            arbitration_id = can_id & 0x1FFFFFFF if can_id & _CAN_EFF_FLAG else can_id & 0x7FF
            out.append((arbitration_id, cf[8 : 8 + length]))


def transport_for(
    bus: can.BusABC, fd: bool = False
) -> PythonCanTransport | SocketcandTransport | SocketcanTransport:
    """The transport of ``bus``: direct socket access for python-can's socketcand and
    socketcan buses (when their socket attribute is where python-can 4.6 keeps it), else
    python-can per frame."""
    kind = type(bus).__name__  # by name: python-can's socketcan module imports on Linux only
    if kind == "SocketCanDaemonBus" and hasattr(bus, "_SocketCanDaemonBus__socket") and not fd:
        return SocketcandTransport(bus)
    if kind == "SocketcanBus" and isinstance(getattr(bus, "socket", None), socket.socket):
        return SocketcanTransport(bus.socket, fd, bus)  # type: ignore[attr-defined]
    return PythonCanTransport(bus, fd)
