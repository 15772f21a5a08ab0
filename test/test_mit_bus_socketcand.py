"""Tests of gravity_friction_comp.mit.bus.SocketcandCanIO: the bridge's socketcand bus when the
server goes away and comes back (the simulated arm's socketcand server on 127.0.0.1).

Independent routes: the reply frame's id (the emulated motor's master id 0x13), the
threads alive, the process CPU time while the link is down.
"""

from __future__ import annotations

import os
import threading
import time

import pytest
from conftest import REPO_ROOT

from gravity_friction_comp.mit.bus import RETRY_PERIOD, CanSettings, SocketcandCanIO, open_bus
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.special_frames import ENABLE_FRAME
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.bus import SimulatedMotor, SimulatedMotorBus
from gravity_friction_comp.sim.config import SimConfig
from gravity_friction_comp.sim.motor_emulator import EmulatedMotor
from gravity_friction_comp.sim.socketcand_server import SocketcandServer


@pytest.fixture
def beam_sim():
    """One DM4310 (CAN id 3, master 0x13) on beam_pitch; physics not started (replies only)."""
    arm = SimulatedArm(RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf")), SimConfig())
    settings = CanSettings("virtual", f"test_link_{os.getpid()}_{id(arm):x}", 1_000_000)
    motor = SimulatedMotor("beam_pitch", EmulatedMotor(motor_limits("DM4310"), 3, 0x13), JointMotorMap())
    sim = SimulatedMotorBus(arm, [motor], settings)
    yield sim
    sim.stop()


def _replies(io, n_before, timeout=2.0):
    deadline = time.monotonic() + timeout
    frames = io.drain()
    while io.listener.received <= n_before and time.monotonic() < deadline:
        time.sleep(0.001)
        frames += io.drain()
    return frames


def test_server_gone_marks_the_link_lost_then_reconnects_on_the_same_port(beam_sim):
    """python-can's reader thread spun on the closed connection (~80 % of a core) and the
    bridge never reconnected. Now: no reader thread at all; the send after the server stops
    marks the link lost, frames count as send errors, nothing is read, and a server
    restarted on the same port is reconnected within RETRY_PERIOD; its motor answers again."""
    server = SocketcandServer(beam_sim).start()
    port = server.port
    settings = CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1", port=port)
    io = SocketcandCanIO(open_bus(settings), frozenset({0x13}), settings=settings)
    try:
        assert io.send([(3, ENABLE_FRAME)]) == 1
        assert [f.arbitration_id for f in _replies(io, 0)] == [0x13]
        server.stop()
        deadline = time.monotonic() + 2.0
        while io.lost_since is None and time.monotonic() < deadline:  # first sends may still go
            io.send([(3, ENABLE_FRAME)])
            time.sleep(0.002)
        assert io.lost_since is not None
        events = io.pop_events()
        assert len(events) == 1 and "connection lost" in events[0] and f"127.0.0.1:{port}" in events[0]
        reader = [t for t in threading.enumerate() if t.name.startswith("can.notifier")]
        assert reader == []  # the bus is read on the caller's thread only
        assert io.drain() == [] and io.listener.errors == 0  # a lost link: nothing read, no error
        errors = io.send_errors
        assert io.send([(3, ENABLE_FRAME)]) == 0 and io.send_errors == errors + 1
        server = SocketcandServer(beam_sim, port=port).start()
        deadline = time.monotonic() + RETRY_PERIOD + 1.0
        while io.lost_since is None or time.monotonic() < deadline:
            if io.send([(3, ENABLE_FRAME)]) == 1:
                break
            time.sleep(0.01)
        assert io.lost_since is None and io.reconnects == 1
        assert "reconnected" in io.pop_events()[0]
        n = io.listener.received
        io.send([(3, ENABLE_FRAME)])
        assert 0x13 in [f.arbitration_id for f in _replies(io, n)]
    finally:
        io.close()
        server.stop()


def test_reader_takes_no_cpu_while_the_link_is_down(beam_sim):
    """Measured with python-can's Notifier reading the closed connection (the bridge's bus
    until 2026-12): 0.50 s of process CPU in 0.5 s after the server stopped; the loop's
    drains must not spin either."""
    server = SocketcandServer(beam_sim).start()
    settings = CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1", port=server.port)
    io = SocketcandCanIO(open_bus(settings), frozenset({0x13}), settings=settings)
    try:
        server.stop()
        for _ in range(20):
            io.send([(3, ENABLE_FRAME)])
            time.sleep(0.002)
        before = time.process_time()
        for _ in range(500):  # the bridge's drains at 1 kHz while the link is down
            assert io.drain() == []
            time.sleep(0.001)
        assert io.lost_since is not None
        assert time.process_time() - before < 0.05
    finally:
        io.close()


def test_bus_status_is_error_while_the_link_is_lost():
    """The bridge's bus diagnostics: ERROR naming the loss while ``lost_since`` is set, the
    load line again once it is ``None`` (a plain bus has no ``lost_since``)."""
    from types import SimpleNamespace

    import numpy as np
    from diagnostic_msgs.msg import DiagnosticStatus

    from gravity_friction_comp.nodes.bridge_diagnostics import bus_status

    settings = CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1")
    listener = SimpleNamespace(received=0, dropped=0, errors=0)
    io = SimpleNamespace(sent=0, send_errors=0, last_send_error="", listener=listener)
    core = SimpleNamespace(n_joints=3, unknown_frames=0)

    def status(io):
        return bus_status("/b", core, io, settings, 500.0, 0.0, np.array([]), 0, False)

    assert status(io).level == DiagnosticStatus.OK
    io.lost_since = time.monotonic() - 2.0
    lost = status(io)
    assert lost.level == DiagnosticStatus.ERROR and "connection lost 2.0 s ago" in lost.message
    io.lost_since = None
    assert status(io).level == DiagnosticStatus.OK and "load 0.0%" in status(io).message


def test_python_cans_receive_error_on_a_reset_connection_is_one_line(beam_sim):
    """python-can logs ``Failed to receive: [Errno 104] ...  Traceback (most recent call
    last): ...`` (6 lines, measured when sim_arm closed with frames unread); with a
    SocketcandCanIO open, its first line only. The records are taken at the client's logger
    itself (ERROR and above), not through pytest's caplog at the root: where the real ``launch``
    is imported (a ROS install, colcon test) it sets the root to INFO (the client's "connected"
    line came along) and loggers made after it do not propagate (the record never arrived)."""
    import logging

    import can.interfaces.socketcand.socketcand as client

    records: list[logging.LogRecord] = []

    class Kept(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Kept(logging.ERROR)
    with SocketcandServer(beam_sim) as server:
        settings = CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1", port=server.port)
        io = SocketcandCanIO(open_bus(settings), frozenset({0x13}), settings=settings)
        client.log.addHandler(handler)
        try:
            client.log.error("Failed to receive: reset  Traceback (most recent call last):\n  File x\nE")
        finally:
            client.log.removeHandler(handler)
            io.close()
    assert [r.getMessage() for r in records] == ["Failed to receive: reset"]


def test_a_malformed_frame_from_the_server_costs_one_reconnection_not_the_link(beam_sim):
    """python-can's client (4.6) keeps a frame it failed to parse in its receive buffer, so
    every later read failed on it: a half message (``< frame 013 1.0`` joined by the next
    frame) made the bridge miss every reply from then on (measured through ``sim_arm``: 2,504
    ``Failed to receive: could not convert string to float: '1.0<'`` lines in 9 s, the
    motors stale). Now a failed read drops the connection and opens a fresh one at once;
    the motor answers again."""
    with SocketcandServer(beam_sim) as server:
        settings = CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1", port=server.port)
        io = SocketcandCanIO(open_bus(settings), frozenset({0x13}), settings=settings)
        try:
            assert io.send([(3, ENABLE_FRAME)]) == 1
            assert [f.arbitration_id for f in _replies(io, 0)] == [0x13]
            assert server._clients[0].send(b"< frame 013 1.0")  # test only: the server's socket
            deadline = time.monotonic() + 0.5
            while io.listener.errors == 0 and time.monotonic() < deadline:
                io.send([(3, ENABLE_FRAME)])
                time.sleep(0.002)
                io.drain()
            assert io.listener.errors == 1 and "1.0<" in io.listener.last_error
            n = io.listener.received
            answered = []
            deadline = time.monotonic() + 0.5  # well under RETRY_PERIOD: reconnected at once
            while not answered and time.monotonic() < deadline:
                io.send([(3, ENABLE_FRAME)])
                time.sleep(0.002)
                answered = [f.arbitration_id for f in io.drain()]
            assert answered == [0x13] and io.listener.received > n
            assert io.reconnects == 1 and io.listener.errors == 1
            events = io.pop_events()
            assert len(events) == 2 and "connection lost" in events[0] and "1.0<" in events[0]
            assert "reconnected" in events[1]
        finally:
            io.close()
