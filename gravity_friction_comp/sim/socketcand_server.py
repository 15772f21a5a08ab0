"""A socketcand rawmode server in front of a SimulatedMotorBus: the simulated arm in its own process, over TCP.

A bridge opens ``can.interface: socketcand`` (python-can's client) on ``host:port`` exactly as
it would a socketcand daemon on a real arm's computer; the emulated motors answer each frame
it sends (:meth:`SimulatedMotorBus.answer`) and the replies come back to it.

Protocol (socketcand ``doc/protocol.md``, github.com/linux-can/socketcand; checked against
python-can 4.6.1's client, ``can/interfaces/socketcand/socketcand.py``), ASCII over TCP,
each message ``< ... >``::

    server: < hi >
    client: < open CHANNEL >                 server: < ok >   (unknown channel: < error ... >)
    client: < rawmode >                      server: < ok >
    client: < send ID LEN B0 B1 ... >        (hex; ID of 3 digits = 11 bit, else 29 bit)
    server: < frame ID SECONDS.USEC HEXDATA >

Classic CAN only (socketcand has no FD frames). The client expects ``< hi >`` and each
``< ok >`` as one read of its own, so nothing else is sent to a client before its
``rawmode`` is answered. Malformed or unsupported messages are counted
(:attr:`SocketcandServer.malformed`) and skipped, the first of each connection logged as one
warning with its text; a client that disconnects is dropped and
another may connect; one that stops reading is dropped once its send buffer stays full
for :data:`SEND_TIMEOUT` (counted in :attr:`SocketcandServer.dropped`). Several clients on one channel see each other's frames (a bus is
shared), the simulator sees them all.

One thread serves every socket (``select``): it accepts, handshakes, parses a whole
``recv`` at once, has the emulated motors answer each frame and sends the replies of that
``recv`` back in one write (no hop through the simulator's own bus: each thread hand-off
cost this process ~60 % of a core at 1 kHz with 3 motors). The physics runs on the
simulator's own thread (or the caller's :meth:`SimulatedMotorBus.run_once`); the motors'
state is shared under the simulator's lock.
"""

from __future__ import annotations

import logging
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping

import can

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.sim.bus import SimulatedMotorBus

__all__ = ["SocketcandServer", "format_frame", "parse_send"]

_log = logging.getLogger(__name__)

#: A client whose socket buffer stays full this long [s] (it stopped reading: suspended,
#: frozen in a debugger) is dropped: a blocking send would stall every other client.
SEND_TIMEOUT = 0.2

#: ``SO_TIMESTAMPNS`` of ``<asm-generic/socket.h>`` (Python's socket module lacks the name):
#: the kernel stamps each received segment with CLOCK_REALTIME. Linux only.
_SO_TIMESTAMPNS = 35 if sys.platform == "linux" else None
_TIMESPEC = struct.Struct("qq")

#: python-can's client needs ``< hi >`` etc. within one ``recv``; messages longer than this
#: without a closing ``>`` are discarded (a ``send`` of 8 bytes is < 40 characters).
MAX_MESSAGE = 256


def parse_send(body: str) -> can.Message | None:
    """``send ID LEN B0 ..`` (the text between ``<`` and ``>``) → a classic frame, or ``None``
    when it is not a well-formed send (wrong count, non-hex, id or length out of range)."""
    parts = body.split()
    if len(parts) < 3 or parts[0] != "send":
        return None
    try:
        can_id, length = int(parts[1], 16), int(parts[2], 16)
        data = bytes(int(b, 16) for b in parts[3:])
    except ValueError:  # non-hex, or a byte above 0xFF (bytes() raises ValueError too)
        return None
    extended = len(parts[1]) > 3
    if (
        not 0 <= length <= 8
        or len(data) != length
        or can_id > (0x1FFFFFFF if extended else 0x7FF)
        or can_id < 0
    ):
        return None
    if any(len(b) > 2 for b in parts[3:]):
        return None
    return can.Message(arbitration_id=can_id, data=data, is_extended_id=extended)


def format_frame(msg: can.Message, timestamp: float) -> bytes:
    """``< frame ID SECONDS.USEC HEXDATA >`` as python-can's client parses it (3 hex digits
    for an 11-bit id, 8 for a 29-bit one; data without spaces)."""
    can_id = f"{msg.arbitration_id:08X}" if msg.is_extended_id else f"{msg.arbitration_id:03X}"
    return f"< frame {can_id} {timestamp:.6f} {bytes(msg.data).hex().upper()} >".encode("ascii")


class _Client:
    """One TCP connection: its socket, receive buffer, handshake state and channel."""

    def __init__(self, sock: socket.socket, peer: str = "?"):
        self.sock = sock
        self.peer = peer  # host:port, for the log
        self.warned = False  # its first malformed message was logged
        self.buffer = ""
        self.bus: str | None = None  # sim bus name once ``open`` succeeded
        self.raw = False  # rawmode answered: frames flow
        self.lock = threading.Lock()  # sends come from two threads

    def send(self, data: bytes) -> bool:
        with self.lock:
            try:
                self.sock.sendall(data)
                return True
            except OSError:
                return False


class SocketcandServer:
    """socketcand rawmode server for a :class:`SimulatedMotorBus` (see the module docstring).

    Args:
        sim_bus: The simulator; the server asks it for each frame's replies.
        host: Address to bind (loopback by default: nothing leaves the machine).
        port: TCP port; ``0`` = a free one (read :attr:`port` after :meth:`start`).
        on_frame: Called on the reading thread with each frame a client sent (before it goes
            onto the bus); keep it short. Its ``timestamp`` [s, ``time.time()``'s clock] is
            when the frame's bytes reached this socket: the kernel's receive stamp
            (``SO_TIMESTAMPNS``) on Linux, so the time this process took to wake and read is
            not in it (of the last TCP segment of the read: a frame that shared a read with
            later ones is stamped as late as they are); ``time.time()`` at the read elsewhere.
        channels: socketcand channel name (what the client ``open`` s) → sim bus name. ``None``:
            a single-bus simulator serves any channel name; several buses serve their bus names.

    Raises:
        ConfigError: a channel mapped to a bus the simulator lacks.
        OSError: (from :meth:`start`) the address cannot be bound.

    Counters (read any time): :attr:`frames_in` (from clients), :attr:`frames_out` (to
    clients), :attr:`malformed`, :attr:`connections`, :attr:`dropped` (clients dropped after a
    send failed or stayed blocked for :data:`SEND_TIMEOUT`).
    """

    def __init__(
        self,
        sim_bus: SimulatedMotorBus,
        host: str = "127.0.0.1",
        port: int = 0,
        on_frame: Callable[[can.Message], None] | None = None,
        channels: Mapping[str, str] | None = None,
    ):
        self.sim_bus = sim_bus
        self.host = host
        self.port = int(port)
        self.on_frame = on_frame
        self._channels = dict(channels) if channels is not None else None
        for channel, bus in (self._channels or {}).items():
            if bus not in sim_bus.bus_settings:
                raise ConfigError(
                    f"socketcand channel {channel!r} maps to bus {bus!r}; the simulator's buses: "
                    f"{list(sim_bus.bus_settings)}",
                    key="channels",
                    value=channel,
                )
        self.frames_in = 0
        self.frames_out = 0
        self.malformed = 0
        self.connections = 0
        self.dropped = 0
        self._clients: list[_Client] = []
        self._clients_lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._listener: socket.socket | None = None

    # --- life cycle -------------------------------------------------------------------------
    def start(self) -> SocketcandServer:
        """Bind, listen and start the threads (idempotent); returns ``self``."""
        if self._listener is not None:
            return self
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((self.host, self.port))
            listener.listen(8)
        except BaseException:
            listener.close()
            raise
        self._listener = listener
        self.port = listener.getsockname()[1]
        self._stop.clear()
        self._threads = [threading.Thread(target=self._serve, name="socketcand_server", daemon=True)]
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread (joined) and close every socket (idempotent).
        The simulator itself is the caller's to stop."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2.0)
        self._threads = []
        with self._clients_lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.sock.close()
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def __enter__(self) -> SocketcandServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def channels(self) -> list[str]:
        """The channel names a client may ``open`` (``["*"]``: any, a single-bus simulator)."""
        if self._channels is not None:
            return list(self._channels)
        buses = list(self.sim_bus.bus_settings)
        return ["*"] if len(buses) == 1 else buses

    @property
    def clients(self) -> int:
        """Connected clients now."""
        with self._clients_lock:
            return len(self._clients)

    # --- reading thread ---------------------------------------------------------------------
    def _serve(self) -> None:
        assert self._listener is not None
        listener = self._listener
        while not self._stop.is_set():
            with self._clients_lock:
                by_sock = {c.sock: c for c in self._clients}
            try:
                readable, _, _ = select.select([listener, *by_sock], [], [], 0.1)
            except (OSError, ValueError):  # a socket closed under us: rebuild the list
                continue
            for sock in readable:
                if sock is listener:
                    self._accept()
                else:
                    self._read(by_sock[sock])

    def _accept(self) -> None:
        try:
            sock, address = self._listener.accept()  # type: ignore[union-attr]
        except OSError:
            return
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if _SO_TIMESTAMPNS is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
            except OSError:  # a kernel without it: stamped at the read instead
                pass
        sock.settimeout(SEND_TIMEOUT)  # recv only after select: the timeout bounds sends
        client = _Client(sock, f"{address[0]}:{address[1]}")
        if client.send(b"< hi >"):
            self.connections += 1
            with self._clients_lock:
                self._clients.append(client)
        else:
            sock.close()

    def _drop(self, client: _Client, send_failed: bool = True) -> None:
        with self._clients_lock:
            if client in self._clients:
                self._clients.remove(client)
                self.dropped += send_failed
        client.sock.close()

    def _read(self, client: _Client) -> None:
        try:
            chunk, ancillary, _, _ = client.sock.recvmsg(65536, socket.CMSG_SPACE(_TIMESPEC.size))
        except OSError:
            chunk, ancillary = b"", []
        if not chunk:  # disconnected
            self._drop(client, send_failed=False)
            return
        arrived = time.time()
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(data) >= _TIMESPEC.size:
                sec, nsec = _TIMESPEC.unpack_from(data)
                arrived = sec + nsec * 1e-9
        client.buffer += chunk.decode("ascii", errors="replace")
        replies: list[can.Message] = []
        try:
            self._parse(client, replies, arrived)
        finally:
            if replies and client.bus is not None:  # the replies of this recv in one write
                if client.send(b"".join(format_frame(r, time.time()) for r in replies)):
                    self.frames_out += len(replies)
                else:
                    self._drop(client)
                for reply in replies:
                    self._broadcast(client.bus, reply, exclude=client)

    def _parse(self, client: _Client, replies: list[can.Message], arrived: float) -> None:
        while True:
            start = client.buffer.find("<")
            if start < 0:
                if client.buffer.strip():
                    self._malformed(client, client.buffer)
                client.buffer = ""
                return
            if start > 0 and client.buffer[:start].strip():
                self._malformed(client, client.buffer[:start])  # text outside < >
            end = client.buffer.find(">", start)
            if end < 0:
                if len(client.buffer) - start > MAX_MESSAGE:
                    self._malformed(client, client.buffer[start:])
                    client.buffer = ""
                else:
                    client.buffer = client.buffer[start:]
                return
            body = client.buffer[start + 1 : end]
            client.buffer = client.buffer[end + 1 :]
            if "<" in body:  # an unclosed message before this one
                self._malformed(client, body[: body.rfind("<")])
                body = body[body.rfind("<") + 1 :]
            self._message(client, body.strip(), replies, arrived)

    def _message(self, client: _Client, body: str, replies: list[can.Message], arrived: float) -> None:
        if client.raw:
            msg = parse_send(body)
            if msg is None:
                self._malformed(client, f"<{body}>")
                return
            msg.timestamp = arrived
            self.frames_in += 1
            if self.on_frame is not None:
                self.on_frame(msg)
            assert client.bus is not None
            self._broadcast(client.bus, msg, exclude=client)  # other clients on the bus see it
            replies += self.sim_bus.answer(msg, client.bus)
            return
        parts = body.split()
        if client.bus is None and len(parts) == 2 and parts[0] == "open":
            bus = self._bus_of(parts[1])
            if bus is None:
                client.send(b"< error could not open bus >")
                self._malformed(client, f"<{body}>")
                return
            client.bus = bus
            client.send(b"< ok >")
        elif client.bus is not None and parts == ["rawmode"]:
            client.raw = True
            client.send(b"< ok >")
        else:
            self._malformed(client, f"<{body}>")

    def _malformed(self, client: _Client, text: str) -> None:
        self.malformed += 1
        if not client.warned:  # one line per connection: a garbling client must not flood the log
            client.warned = True
            _log.warning(
                f"socketcand server: malformed message from {client.peer} ignored: "
                f"{text.strip()[:80]!r} (further ones from it are only counted)"
            )

    def _bus_of(self, channel: str) -> str | None:
        if self._channels is not None:
            return self._channels.get(channel)
        buses = self.sim_bus.bus_settings
        if len(buses) == 1:
            return next(iter(buses))
        return channel if channel in buses else None

    def _broadcast(self, bus: str, msg: can.Message, exclude: _Client | None = None) -> None:
        with self._clients_lock:
            targets = [c for c in self._clients if c.raw and c.bus == bus and c is not exclude]
        if not targets:
            return
        line = format_frame(msg, time.time())
        for client in targets:
            if client.send(line):
                self.frames_out += 1
            else:
                self._drop(client)
