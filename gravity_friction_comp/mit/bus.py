"""python-can plumbing of the MIT bridge: open a (CAN or CAN-FD) bus, send and read it, read Damiao limits.

How frames reach the bus (python-can per frame, or the socket directly) and the receive queue
are :mod:`~gravity_friction_comp.mit.frame_transport`; with it and sim.bus, the only modules
of the bridge that import python-can.
"""

from __future__ import annotations

import logging
import math
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import can

from gravity_friction_comp.errors import BusOpenError, ConfigError, GravityFrictionCompError
from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig, check_fd, default_of
from gravity_friction_comp.mit.damiao_registers import (
    DAMIAO_LIMIT_REGISTERS,
    DAMIAO_PARAM_ARBITRATION_ID,
    damiao_register_read_request,
    limits_from_damiao_registers,
    parse_damiao_register_reply,
)
from gravity_friction_comp.mit.frame_transport import (  # the receive queue and frame live there
    SOCKETCAND_TIMEOUT,
    FrameQueue,
    ReceivedFrame,
    transport_for,
)
from gravity_friction_comp.mit.frame_transport import (
    mit_message as mit_message,  # sim.bus builds its replies with it
)
from gravity_friction_comp.mit.motor_table import MotorLimits

#: python-can interfaces whose constructor takes ``data_bitrate`` (the FD data-phase rate).
#: On the others (``socketcan``: set by ``ip link ... dbitrate``; ``virtual``: no timing)
#: only ``fd=True`` is passed.
DATA_BITRATE_INTERFACES = ("etas", "ics_neovi", "neovi", "ixxat", "kvaser", "slcan", "vector")

#: socketcand's default TCP port (github.com/linux-can/socketcand, ``-p``).
SOCKETCAND_PORT = 29536


def can_interfaces() -> tuple[str, ...]:
    """python-can interface names this installation knows, sorted."""
    return tuple(sorted(can.VALID_INTERFACES))


@dataclass(frozen=True)
class CanSettings:
    """Which bus to open.

    Attributes:
        interface: python-can interface (``socketcan``, ``virtual``, ``pcan``, …).
        channel: Interface channel (``can0``; any name for ``virtual``).
        bitrate: Nominal (arbitration-phase) bitrate [bit/s] (> 0), also the bus-load reference.
        fd: Open the bus as CAN-FD and send frames as FD with bit-rate switch.
        data_bitrate: FD data-phase bitrate [bit/s]; ``0`` = the nominal ``bitrate`` (no
            faster data phase). Must be ``>= bitrate`` otherwise; only used when ``fd``.
        host: socketcand server address (``socketcand`` only; required there).
        port: socketcand server TCP port, 1..65535 (``socketcand`` only).

    Raises:
        ConfigError: unknown interface (lists the valid ones), empty channel, bad bitrate,
            non-bool ``fd``, or a data bitrate that is negative, not an integer or below the
            nominal bitrate (key ``can.data_bitrate``, value the data bitrate); a port
            outside 1..65535 (key ``can.port``); ``socketcand`` without a host (key
            ``can.host``) or with ``fd`` (socketcand carries classic frames only).
    """

    interface: str = "socketcan"
    channel: str = "can0"
    bitrate: int = default_of(BridgeConfig, "bitrate")
    fd: bool = default_of(BridgeConfig, "fd")
    data_bitrate: int = default_of(BridgeConfig, "data_bitrate")
    host: str = ""
    port: int = SOCKETCAND_PORT

    def __post_init__(self) -> None:
        if self.interface not in can.VALID_INTERFACES:
            raise ConfigError(
                f"can.interface must be one of {', '.join(can_interfaces())}; got {self.interface!r}",
                key="can.interface",
                value=self.interface,
            )
        if not isinstance(self.channel, str) or not self.channel:
            raise ConfigError(
                f"can.channel must be a non-empty string, got {self.channel!r}",
                key="can.channel",
                value=self.channel,
            )
        if isinstance(self.bitrate, bool) or not isinstance(self.bitrate, int) or self.bitrate <= 0:
            raise ConfigError(
                f"can.bitrate must be a positive integer [bit/s], got {self.bitrate!r}",
                key="can.bitrate",
                value=self.bitrate,
            )
        check_fd(self.fd, self.data_bitrate, self.bitrate)
        if not isinstance(self.host, str):
            raise ConfigError(
                f"can.host must be a string, got {self.host!r}", key="can.host", value=self.host
            )
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 1 <= self.port <= 65535:
            raise ConfigError(
                f"can.port must be an integer in 1..65535, got {self.port!r}", key="can.port", value=self.port
            )
        if self.interface == "socketcand":
            if not self.host:
                raise ConfigError(
                    "can.interface socketcand needs can.host (the socketcand server's address, "
                    "e.g. 127.0.0.1 for a local sim_arm)",
                    key="can.host",
                    value=self.host,
                )
            if self.fd:
                raise ConfigError(
                    "can.interface socketcand carries classic CAN frames only: set can.fd false",
                    key="can.fd",
                    value=self.fd,
                )

    @property
    def effective_data_bitrate(self) -> int:
        """Data-phase bitrate [bit/s] frames use: ``data_bitrate`` with FD (0 → nominal), else nominal."""
        return self.data_bitrate if self.fd and self.data_bitrate else self.bitrate


def can_settings_from_values(values: Mapping[str, Any], config: BridgeConfig) -> CanSettings:
    """The bridge's :class:`CanSettings` from its parameter values (``can.interface``,
    ``can.channel``, ``can.bitrate``, ``can.host``, ``can.port``; FD mode and data bitrate
    from ``config``, already validated there). Missing ``can.*`` keys take the defaults.

    Raises:
        ConfigError: as :class:`CanSettings`.
    """
    base = CanSettings()
    return CanSettings(
        values.get("can.interface", base.interface),
        values.get("can.channel", base.channel),
        values.get("can.bitrate", base.bitrate),
        fd=config.fd,
        data_bitrate=config.data_bitrate,
        host=values.get("can.host", base.host),
        port=values.get("can.port", base.port),
    )


def bus_settings(base: CanSettings, buses: Sequence[str]) -> dict[str, CanSettings]:
    """Settings of each named bus: ``base`` with the channel replaced by the bus name.

    Args:
        base: The bridge's settings (``can.interface``, ``can.channel``, bitrates, FD).
        buses: Bus names (``BridgeConfig.buses``); ``""`` stands for ``base.channel``.

    Returns:
        Bus name → :class:`CanSettings`, in the given order (every bus shares interface,
        bitrates and FD mode).

    Raises:
        ConfigError: two names that open the same channel (``""`` and ``base.channel``).
    """
    out: dict[str, CanSettings] = {}
    channels: dict[str, str] = {}
    for name in buses:
        channel = name or base.channel
        if channel in channels and channels[channel] != name:
            raise ConfigError(
                f"bus names {channels[channel]!r} and {name!r} both mean channel {channel!r}: "
                "use one spelling so CAN ids are checked on one bus",
                key="bus",
                value=name,
            )
        channels[channel] = name
        out[name] = replace(base, channel=channel)
    return out


class _FirstOnly(logging.Filter):
    """Passes the first record whose message starts with ``prefix``, counts and drops the rest.

    python-can's socketcand client retries a refused connect in a tight loop for 10 s and
    logs a warning per attempt (600 000 lines measured on loopback)."""

    def __init__(self, prefix: str):
        super().__init__()
        self.prefix = prefix
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith(self.prefix):
            return True
        self.count += 1
        return self.count == 1


def _without_traceback(text: str) -> str:
    """``text`` up to a traceback python-can's socketcand client appends to its errors."""
    return text.split("Traceback (most recent call last)")[0].rstrip()


class _NoTraceback(logging.Filter):
    """Cuts the traceback python-can's socketcand reader puts into its ``Failed to receive``
    message (a reset connection: 6 lines), leaving the first line."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if "Traceback (most recent call last)" in text:
            record.msg, record.args = _without_traceback(text), None
        return True


_SOCKETCAND_LOG = "can.interfaces.socketcand.socketcand"
_NO_TRACEBACK = _NoTraceback()


def open_bus(settings: CanSettings, *, receive_own_messages: bool = False, **kwargs: Any) -> can.BusABC:
    """Open ``settings``' bus: ``can.Bus(interface, channel, bitrate, ignore_config=True)``.

    With ``settings.fd`` the bus is opened as CAN-FD: ``fd=True`` always, plus
    ``data_bitrate`` on the interfaces of :data:`DATA_BITRATE_INTERFACES`, and for
    ``virtual`` ``protocol=CAN_FD`` (so ``bus.protocol`` reports it); ``socketcand`` gets
    ``host``, ``port`` and ``tcp_tune=True`` (TCP_NODELAY: one frame per segment). On ``socketcan`` the
    bitrates belong to the kernel device (``ip link set can0 type can bitrate 1000000
    dbitrate 5000000 fd on``); python-can only switches the socket to FD frames.

    Args:
        settings: :class:`CanSettings`.
        receive_own_messages: Passed to python-can (False: a bus object does not see what
            it sends).
        **kwargs: Extra interface arguments (they win over the FD ones, e.g. a pcan
            ``timing=BitTimingFd(...)``).

    Returns:
        The bus; close it with ``shutdown()`` (idempotent) or use it as a context manager.

    Raises:
        BusOpenError: python-can failed (missing device, driver, permission, no FD
            support; a socketcand server refusing for 10 s, or silent for
            :data:`SOCKETCAND_TIMEOUT` in the handshake); names the bus.
    """
    fd_kwargs: dict[str, Any] = {}
    if settings.fd:
        fd_kwargs["fd"] = True
        if settings.interface in DATA_BITRATE_INTERFACES:
            fd_kwargs["data_bitrate"] = settings.effective_data_bitrate
        if settings.interface == "virtual":
            fd_kwargs["protocol"] = can.CanProtocol.CAN_FD
    retries = _FirstOnly("Failed to connect to server")
    socketcand_log = logging.getLogger(_SOCKETCAND_LOG)
    default_timeout = socket.getdefaulttimeout()
    socketcand = settings.interface == "socketcand"
    if socketcand:
        fd_kwargs.update(host=settings.host, port=settings.port, tcp_tune=True)
        socketcand_log.addFilter(retries)
        # its socket, made in can.Bus, gets this timeout: a server that never says hi, no hang
        socket.setdefaulttimeout(SOCKETCAND_TIMEOUT)
    fd_kwargs.update(kwargs)
    try:
        return can.Bus(
            interface=settings.interface,
            channel=settings.channel,
            bitrate=settings.bitrate,
            receive_own_messages=receive_own_messages,
            ignore_config=True,
            **fd_kwargs,
        )
    except (can.CanError, OSError, ImportError, ValueError, TypeError, NotImplementedError) as error:
        fd_text = f" / FD data {settings.effective_data_bitrate} bit/s" if settings.fd else ""
        tries = (
            f" ({retries.count} connection attempts to {settings.host}:{settings.port})"
            if retries.count
            else ""
        )
        raise BusOpenError(
            f"cannot open CAN bus {settings.interface}:{settings.channel} "
            f"@ {settings.bitrate} bit/s{fd_text}: {error}{tries}",
            key="can.channel",
            value=settings.channel,
        ) from None
    finally:
        if socketcand:
            socketcand_log.removeFilter(retries)
            socket.setdefaulttimeout(default_timeout)


class CanFrameIO:
    """A bridge's bus, read and written on the control loop's thread: send frames, read what
    arrived, count failures, own the bus.

    No reader thread: :meth:`drain` reads every frame waiting on the bus (the kernel's socket
    buffer, python-can's queue) once per exchange. The replies to a period's frames are read
    at the next exchange either way, and a second thread costs
    more than it saves: at 1 kHz, 3 motors, a python-can Notifier took ~10 % of a core and
    the executor waited for the GIL on each reply (setpoint → frame p50 2.1 → 0.9–1.3 ms,
    ``bench/end_to_end_latency.py``). A frame's ``time`` is when it was read (at most a
    period after it arrived; it only dates the motor's last reply for the stale check).

    Args:
        bus: An open python-can bus (owned from now on: :meth:`close` shuts it down).
        accept: Arbitration ids the listener keeps (the core's ``reply_ids``).
        send_timeout: Per-frame send timeout [s] (a full TX queue must not block the loop).
        fd: Send every frame as CAN-FD with bit-rate switch (``CanSettings.fd``; the bus
            must have been opened for FD).
    """

    def __init__(
        self,
        bus: can.BusABC,
        accept: frozenset[int] | None = None,
        send_timeout: float = 0.0005,
        *,
        fd: bool = False,
    ):
        self.fd = bool(fd)
        self._attach(bus)
        self.listener = FrameQueue(accept=accept)
        self.send_timeout = float(send_timeout)
        self.sent = 0
        self.send_errors = 0
        self.last_send_error = ""
        self.last_send_exception: BaseException | None = None
        self._closed = False

    def _attach(self, bus: can.BusABC) -> None:
        self.bus = bus
        self.transport = transport_for(bus, self.fd)  # socketcand, socketcan: the socket directly

    def send(self, frames: Sequence[tuple[int, bytes]]) -> int:
        """Send ``[(arbitration_id, data), ...]`` as 11-bit frames; returns how many went.

        Classic frames, or with :attr:`fd` CAN-FD frames with bit-rate switch (the data
        phase at the bus's data bitrate), through :attr:`transport`
        (:mod:`~gravity_friction_comp.mit.frame_transport`: one write per call on socketcand).
        Failed sends are counted (:attr:`send_errors`), never raised: the loop must go on.
        """
        ok, error = self.transport.send(frames, self.send_timeout)
        if error is not None:
            self.send_errors += len(frames) - ok
            self.last_send_error = str(error)
            self.last_send_exception = error
        self.sent += ok
        return ok

    def pop_events(self) -> list[str]:
        """Link events since the last call, for the node's log (none on a plain bus)."""
        return []

    def read(self) -> list[tuple[int, bytes]]:
        """Every reply waiting on the bus now, ``(arbitration_id, data)``, oldest first, read
        on this thread in one pass (no ``can.Message`` on socketcand/socketcan, no queue);
        filtered and counted by :attr:`listener` (:meth:`FrameQueue.take`).

        A failed read (a bus gone down) is counted in ``listener.errors`` with its text in
        ``listener.last_error``, never raised; the frames read before it are returned.
        """
        frames: list[tuple[int, bytes]] = []
        skipped = 0
        if not self._closed:
            try:
                skipped = self.transport.read(frames)
            except (can.CanError, OSError) as error:
                self.listener.on_error(error)
        return self.listener.take(frames, skipped)

    def drain(self) -> list[ReceivedFrame]:
        """:meth:`read` as :class:`ReceivedFrame` stamped now, after any frames a python-can
        Notifier queued in :attr:`listener`."""
        queued = self.listener.drain()
        now = time.monotonic()
        return queued + [ReceivedFrame(now, arbitration_id, data) for arbitration_id, data in self.read()]

    def close(self) -> None:
        """Shut the bus down (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.bus.shutdown()


#: The bridge's bus class by its former name (it ran a python-can Notifier thread until
#: 2026-12; now the one :class:`CanFrameIO`).
BridgeCanIO = CanFrameIO


#: SocketcandCanIO: seconds between reconnection attempts while the link is lost.
RETRY_PERIOD = 1.0
#: TCP connect timeout of a probe [s]: bounds the caller's stall per attempt.
PROBE_TIMEOUT = 0.05


class SocketcandCanIO(CanFrameIO):
    """:class:`CanFrameIO` on a socketcand bus that notices a lost TCP connection and reconnects.

    python-can's socketcand client (4.6) neither reports a closed connection on receive (a
    read of the closed stream returns nothing, and python-can's Notifier thread spun on it:
    a whole core measured after ``sim_arm`` was stopped) nor reconnects. Here a send that
    fails with a :class:`ConnectionError` (the server is gone: broken pipe, reset) marks the
    link lost: the bus is shut, frames are counted as failed sends and nothing is read, and
    every :data:`RETRY_PERIOD` a TCP probe (at most :data:`PROBE_TIMEOUT`, on the caller's
    thread) checks for the server; once it accepts, the bus is opened again and read into
    the same listener. The motors behind the new connection are as the server left them (a
    restarted ``sim_arm``: disabled). A failed read drops the connection too, and the next
    send opens a fresh one at once (then every :data:`RETRY_PERIOD`): python-can's client
    keeps a frame it could not parse in its buffer and fails on it in every later read.

    Args:
        bus: The open socketcand bus (from :func:`open_bus` with ``settings``).
        accept, send_timeout, fd: As :class:`CanFrameIO`.
        settings: The bus's :class:`CanSettings` (``host``, ``port``), to open it again.

    Attributes:
        lost_since: ``time.monotonic()`` [s] when the link was lost, ``None`` while connected.
        reconnects: Connections opened again after a loss.
    """

    def __init__(
        self,
        bus: can.BusABC,
        accept: frozenset[int] | None = None,
        send_timeout: float = 0.0005,
        *,
        fd: bool = False,
        settings: CanSettings,
    ):
        super().__init__(bus, accept, send_timeout, fd=fd)
        self.settings = settings
        self.lost_since: float | None = None
        self.reconnects = 0
        self._next_try = 0.0
        self._reconnected_at = -math.inf
        self._events: list[str] = []
        logging.getLogger(_SOCKETCAND_LOG).addFilter(_NO_TRACEBACK)  # the loss: one line (once added)

    def send(self, frames: Sequence[tuple[int, bytes]]) -> int:
        """As :meth:`CanFrameIO.send`; while the link is lost, retries it (once per
        :data:`RETRY_PERIOD`) and counts the frames as failed sends until it is back."""
        if self._closed or (self.lost_since is not None and not self._reconnect()):
            self.send_errors += len(frames)
            return 0
        ok = super().send(frames)
        if ok < len(frames) and isinstance(self.last_send_exception, ConnectionError):
            self._lose(self.last_send_error)
        return ok

    def read(self) -> list[tuple[int, bytes]]:
        """As :meth:`CanFrameIO.read`; nothing is read while the link is lost (the bus is
        shut), and a failed read marks it lost (a fresh connection on the next send)."""
        if self.lost_since is not None:
            return []
        errors = self.listener.errors
        frames = super().read()
        if self.listener.errors > errors:
            self._lose(self.listener.last_error, at_once=True)
        return frames

    def pop_events(self) -> list[str]:
        """Loss and reconnection messages since the last call (one line each)."""
        events, self._events = self._events, []
        return events

    def _where(self) -> str:
        return f"socketcand {self.settings.host}:{self.settings.port} ({self.settings.channel})"

    def _lose(self, reason: str, at_once: bool = False) -> None:
        now = time.monotonic()
        self.lost_since = now
        # at once only if the last reconnection is older than a period: a server that keeps
        # sending junk costs one reconnection per period, not one per exchange
        at_once = at_once and now - self._reconnected_at > RETRY_PERIOD
        self._next_try = now if at_once else now + RETRY_PERIOD
        self.bus.shutdown()
        retry = "reconnecting at once, then" if at_once else "retrying"
        self._events.append(
            f"{self._where()}: connection lost ({_without_traceback(reason)}); {retry} every "
            f"{RETRY_PERIOD:g} s, frames count as send errors meanwhile"
        )

    def _reconnect(self) -> bool:
        now = time.monotonic()
        if now < self._next_try:
            return False
        self._next_try = now + RETRY_PERIOD
        try:
            socket.create_connection((self.settings.host, self.settings.port), timeout=PROBE_TIMEOUT).close()
            bus = open_bus(self.settings)
        except OSError:  # BusOpenError is one too
            return False
        assert self.lost_since is not None
        self._events.append(f"{self._where()}: reconnected after {now - self.lost_since:.1f} s")
        self._attach(bus)
        self.lost_since = None
        self.reconnects += 1
        self._reconnected_at = now
        return True


def read_damiao_limits(
    bus: can.BusABC, motors: Sequence[MotorConfig], timeout: float = 0.05
) -> dict[str, tuple[MotorLimits, str]]:
    """Ask each Damiao motor for registers 21–23 and apply the answers over the table.

    Call before a :class:`CanFrameIO` owns the bus (this function reads it directly), with the
    motors disabled and at rest (see :func:`parse_damiao_register_reply`).

    Args:
        bus: Open bus.
        motors: Motor configs; non-Damiao motors are skipped.
        timeout: Wait per register [s].

    Returns:
        Joint name → ``(limits, note)``: limits with the reported registers applied (the
        configured ones when nothing answered), note ``""`` when all three answered, else
        what happened (for the log/diagnostics).

    Raises:
        Nothing for silent or bad motors (reported in the note).
    """
    out: dict[str, tuple[MotorLimits, str]] = {}
    for m in motors:
        if m.limits.family != "damiao":
            continue
        values: dict[int, float] = {}
        for rid in DAMIAO_LIMIT_REGISTERS:
            msg = can.Message(
                arbitration_id=DAMIAO_PARAM_ARBITRATION_ID,
                data=damiao_register_read_request(m.can_id, rid),
                is_extended_id=False,
            )
            try:
                bus.send(msg, timeout=timeout)
            except (can.CanError, OSError):
                break
            deadline = time.monotonic() + timeout
            while (left := deadline - time.monotonic()) > 0:
                reply = bus.recv(timeout=left)
                if reply is None or reply.arbitration_id != m.master_id:
                    continue
                parsed = parse_damiao_register_reply(bytes(reply.data), m.can_id)
                if parsed is not None and parsed.register_id == rid:
                    values[rid] = parsed.value
                    break
        missing = [DAMIAO_LIMIT_REGISTERS[r] for r in DAMIAO_LIMIT_REGISTERS if r not in values]
        try:
            limits = limits_from_damiao_registers(m.limits, values)
            note = "" if not missing else f"no answer for {missing}; table values kept for those"
        except GravityFrictionCompError as error:
            limits, note = m.limits, f"bad register value ({error}); table values kept"
        out[m.name] = (limits, note)
    return out
