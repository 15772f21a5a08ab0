"""Tests of gravity_friction_comp.mit.bus: bus settings, opening errors, the bridge's frame IO."""

from __future__ import annotations

import threading
import time

import can
import pytest

from gravity_friction_comp.errors import BusOpenError, ConfigError
from gravity_friction_comp.mit.bus import BridgeCanIO, CanFrameIO, CanSettings, bus_settings, open_bus


def test_settings_validation_lists_interfaces():
    with pytest.raises(ConfigError, match="virtual") as err:
        CanSettings("no_such_iface", "can0", 1_000_000)
    assert err.value.key == "can.interface"
    with pytest.raises(ConfigError):
        CanSettings("virtual", "", 1_000_000)
    with pytest.raises(ConfigError):
        CanSettings("virtual", "x", 0)


def test_open_bus_failure_is_a_config_error():
    with pytest.raises(BusOpenError) as err:
        open_bus(CanSettings("socketcan", "gfc_no_such_can_device", 1_000_000))
    assert "gfc_no_such_can_device" in str(err.value)


def test_open_bus_failure_is_caught_as_os_error():
    # code that guards device access with `except OSError` (no knowledge of this package)
    with pytest.raises(OSError) as err:
        open_bus(CanSettings("socketcan", "gfc_no_such_can_device", 1_000_000))
    assert isinstance(err.value, BusOpenError)
    assert (err.value.key, err.value.value) == ("can.channel", "gfc_no_such_can_device")


def test_settings_defaults():
    assert CanSettings() == CanSettings("socketcan", "can0", 1_000_000)
    assert (CanSettings().fd, CanSettings().data_bitrate) == (False, 0)


# --- CAN-FD ------------------------------------------------------------------------------------


def test_fd_settings_validation_names_the_value():
    s = CanSettings("virtual", "x", 1_000_000, fd=True, data_bitrate=5_000_000)
    assert (s.fd, s.data_bitrate, s.effective_data_bitrate) == (True, 5_000_000, 5_000_000)
    assert CanSettings("virtual", "x", 1_000_000, fd=True).effective_data_bitrate == 1_000_000  # 0 = nominal
    assert CanSettings("virtual", "x", 1_000_000, data_bitrate=5_000_000).effective_data_bitrate == 1_000_000
    with pytest.raises(ConfigError, match="500000") as err:
        CanSettings("virtual", "x", 1_000_000, fd=True, data_bitrate=500_000)
    assert (err.value.key, err.value.value) == ("can.data_bitrate", 500_000)
    for bad in (-1, 5e6, True, "5000000"):
        with pytest.raises(ConfigError) as err:
            CanSettings("virtual", "x", 1_000_000, fd=True, data_bitrate=bad)
        assert err.value.key == "can.data_bitrate"
    with pytest.raises(ConfigError) as err:
        CanSettings("virtual", "x", 1_000_000, fd="yes")
    assert err.value.key == "can.fd"


def _fd_pair(channel: str):
    settings = CanSettings("virtual", channel, 1_000_000, fd=True, data_bitrate=5_000_000)
    return open_bus(settings), open_bus(settings)


def test_open_bus_fd_on_virtual_reports_the_fd_protocol():
    a, b = _fd_pair("gfc_fd_proto")
    try:
        assert a.protocol is can.CanProtocol.CAN_FD
    finally:
        a.shutdown()
        b.shutdown()
    classic = open_bus(CanSettings("virtual", "gfc_fd_proto", 1_000_000))
    try:
        assert classic.protocol is can.CanProtocol.CAN_20
    finally:
        classic.shutdown()


def test_bridge_io_sends_fd_frames_with_bit_rate_switch():
    a, b = _fd_pair("gfc_fd_send")
    io = CanFrameIO(a, fd=True)
    try:
        assert io.send([(0x01, bytes(range(8))), (0x02, b"\xff" * 8)]) == 2
        got = [b.recv(timeout=1.0) for _ in range(2)]
    finally:
        io.close()
        b.shutdown()
    assert [m.arbitration_id for m in got] == [1, 2]
    for m in got:
        assert (m.is_fd, m.bitrate_switch, m.is_extended_id, m.dlc) == (True, True, False, 8)
    assert bytes(got[0].data) == bytes(range(8))


def test_bridge_io_classic_by_default_and_receives_fd_replies():
    a, b = _fd_pair("gfc_fd_recv")
    io = CanFrameIO(a)
    try:
        io.send([(0x03, bytes(8))])
        sent = b.recv(timeout=1.0)
        b.send(
            can.Message(
                arbitration_id=0x13, data=b"\x01" * 8, is_fd=True, bitrate_switch=True, is_extended_id=False
            )
        )
        deadline = time.monotonic() + 1.0
        frames = []
        while not frames and time.monotonic() < deadline:
            frames = io.drain()
            time.sleep(0.005)
    finally:
        io.close()
        b.shutdown()
    assert sent is not None and not sent.is_fd
    assert [(f.arbitration_id, f.data) for f in frames] == [(0x13, b"\x01" * 8)]


def test_open_bus_passes_data_bitrate_only_where_the_interface_takes_it(monkeypatch):
    seen = []
    monkeypatch.setattr(can, "Bus", lambda **kw: seen.append(kw) or "bus")
    open_bus(CanSettings("kvaser", "0", 1_000_000, fd=True, data_bitrate=5_000_000))
    open_bus(CanSettings("socketcan", "can0", 1_000_000, fd=True, data_bitrate=5_000_000))
    open_bus(CanSettings("socketcan", "can0", 1_000_000))
    assert (seen[0]["fd"], seen[0]["data_bitrate"]) == (True, 5_000_000)
    assert seen[1]["fd"] is True and "data_bitrate" not in seen[1]  # set by `ip link ... dbitrate`
    assert "fd" not in seen[2]


def test_bus_settings_per_bus_and_same_channel_twice_refused():
    base = CanSettings("virtual", "can0", 1_000_000, fd=True, data_bitrate=5_000_000)
    out = bus_settings(base, ["can1", "", "can2"])
    assert list(out) == ["can1", "", "can2"]
    assert [s.channel for s in out.values()] == ["can1", "can0", "can2"]
    assert all(s.fd and s.data_bitrate == 5_000_000 for s in out.values())
    with pytest.raises(ConfigError, match="can0") as err:
        bus_settings(base, ["", "can0"])
    assert err.value.key == "bus"


def test_fd_open_failure_names_both_bitrates():
    settings = CanSettings("socketcan", "gfc_no_such_can_device", 1_000_000, fd=True, data_bitrate=5_000_000)
    with pytest.raises(BusOpenError, match="1000000 bit/s / FD data 5000000 bit/s") as err:
        open_bus(settings)
    assert err.value.value == "gfc_no_such_can_device"


def test_frame_queue_keeps_the_oldest_when_full_counts_the_rest_and_drains_in_order():
    """Full queue (the loop stalled): newer frames are dropped and counted; error, remote and
    unlisted-id frames are ignored; drain hands frames out oldest first, ``limit`` at a time."""
    from gravity_friction_comp.mit.bus import FrameQueue

    q = FrameQueue(maxsize=3, accept=frozenset({0x11}))
    for k in range(5):
        q.on_message_received(can.Message(arbitration_id=0x11, data=bytes([k] * 8), is_extended_id=False))
    q.on_message_received(can.Message(arbitration_id=0x12, data=bytes(8), is_extended_id=False))
    q.on_message_received(can.Message(arbitration_id=0x11, is_remote_frame=True, is_extended_id=False))
    q.on_message_received(can.Message(arbitration_id=0x11, is_error_frame=True, is_extended_id=False))
    assert (q.received, q.dropped, q.ignored) == (5, 2, 3)
    first = q.drain(limit=2)
    assert [f.data for f in first] == [bytes([0] * 8), bytes([1] * 8)]
    assert all(f.arbitration_id == 0x11 and isinstance(f.data, bytes) for f in first)
    assert [f.data for f in q.drain()] == [bytes([2] * 8)]
    assert q.drain() == []
    q.on_message_received(can.Message(arbitration_id=0x11, data=bytes([9] * 8), is_extended_id=False))
    assert [f.data for f in q.drain()] == [bytes([9] * 8)] and q.dropped == 2  # room again


def test_socketcand_refused_connect_logs_one_warning_and_counts_the_attempts(monkeypatch, caplog):
    """python-can retries a refused connect for 10 s (its clock) with one warning per attempt:
    600 000 lines in 10 s measured on loopback. Its clock here advances 1 s per reading, so
    it makes about 10 attempts; one warning passes, the error counts them all."""
    import socket

    import can.interfaces.socketcand.socketcand as client

    class OneSecondPerReading:
        def __init__(self):
            self.now = 0.0

        def time(self):
            self.now += 1.0
            return self.now

    monkeypatch.setattr(client, "time", OneSecondPerReading())
    with socket.socket() as s:  # a port where nothing listens: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        caplog.set_level("WARNING", logger=client.__name__)
        with pytest.raises(BusOpenError, match=rf"\(10 connection attempts to 127\.0\.0\.1:{port}\)"):
            open_bus(CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1", port=port))
    failed = [r for r in caplog.records if r.getMessage().startswith("Failed to connect to server")]
    assert len(failed) == 1
    caplog.clear()  # the filter is gone: later warnings pass as before
    client.log.warning("Failed to connect to server: a")
    client.log.warning("Failed to connect to server: b")
    assert len(caplog.records) == 2


def test_socketcand_server_that_never_says_hi_is_an_error_not_a_hang():
    """A TCP listener that accepts and stays silent: python-can waited for ``< hi >`` with
    no timeout (the bridge hung at start-up, deaf to SIGTERM, measured > 30 s)."""
    import socket
    import threading

    outcome: list[Exception] = []

    def attempt(port):
        try:
            open_bus(CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1", port=port))
        except Exception as error:  # noqa: BLE001 (the test asserts which one)
            outcome.append(error)

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        thread = threading.Thread(target=attempt, args=(listener.getsockname()[1],), daemon=True)
        t0 = time.monotonic()
        thread.start()
        thread.join(5.0)
        waited = time.monotonic() - t0
    assert not thread.is_alive(), "open_bus still waiting for the handshake after 5 s"
    from gravity_friction_comp.mit.bus import SOCKETCAND_TIMEOUT

    assert SOCKETCAND_TIMEOUT - 0.1 < waited < 5.0
    assert len(outcome) == 1 and isinstance(outcome[0], BusOpenError)
    assert "socketcand:can0" in str(outcome[0])
    assert socket.getdefaulttimeout() is None  # restored for every other socket


def test_drain_reads_on_the_callers_thread_in_order_and_starts_no_thread():
    a, b = _fd_pair("gfc_drain_order")
    threads = threading.active_count()
    io = CanFrameIO(a, accept=frozenset({0x11, 0x12}))
    try:
        assert threading.active_count() == threads  # no reader thread
        before = time.monotonic()
        for cid in (0x12, 0x99, 0x11):  # 0x99 is not a reply id: ignored
            b.send(can.Message(arbitration_id=cid, data=bytes([cid]) * 8, is_extended_id=False))
        frames = io.drain()
        after = time.monotonic()
    finally:
        io.close()
        b.shutdown()
    assert [(f.arbitration_id, f.data[0]) for f in frames] == [(0x12, 0x12), (0x11, 0x11)]
    assert all(before <= f.time <= after for f in frames)
    assert (io.listener.received, io.listener.ignored) == (2, 1)
    assert BridgeCanIO is CanFrameIO  # the former name of the bridge's bus


class _FailingBus:
    """A bus whose third read fails as a downed socketcan interface does."""

    def __init__(self):
        self.reads = 0

    def recv(self, timeout=None):
        self.reads += 1
        if self.reads == 3:
            raise can.CanError("Failed to receive: [Errno 100] Network is down")
        return can.Message(arbitration_id=0x11, data=bytes(8), is_extended_id=False)

    def shutdown(self):
        pass


def test_drain_counts_a_failed_read_and_returns_the_frames_before_it():
    io = CanFrameIO(_FailingBus())
    frames = io.drain()
    assert len(frames) == 2
    assert io.listener.errors == 1 and "Network is down" in io.listener.last_error
    io.close()
    assert io.drain() == []  # closed: not read again
