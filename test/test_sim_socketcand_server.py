"""Tests of gravity_friction_comp.sim.socketcand_server and tools.sim_arm: the simulated arm
behind a socketcand server on 127.0.0.1, reached with python-can's own socketcand client.

Independent routes: MIT frame bytes packed by hand from the codec's published formula
(code = round((x + P_MAX)·(2¹⁶ − 1)/(2·P_MAX))), the simulated arm's own state
(:meth:`SimulatedMotorBus.snapshot`), wall-clock times taken around each send.
"""

from __future__ import annotations

import math
import os
import signal
import socket
import subprocess
import sys
import time

import can
import pytest
import yaml
from conftest import REPO_ROOT

from gravity_friction_comp.errors import BusOpenError
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values, fill_position_limits_from_urdf
from gravity_friction_comp.mit.bus import CanFrameIO, CanSettings, open_bus
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.special_frames import ENABLE_FRAME
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.nodes.robot_params import build_robot_models
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.bus import SimulatedMotor, SimulatedMotorBus
from gravity_friction_comp.sim.config import SimConfig
from gravity_friction_comp.sim.motor_emulator import EmulatedMotor
from gravity_friction_comp.sim.socketcand_server import SocketcandServer, format_frame, parse_send
from gravity_friction_comp.tools.sim_arm import bridge_values, simulated_bus_from_parameters

P_MAX = 12.5  # DM4310 position range [rad] (motor table)


@pytest.fixture(scope="module")
def palletizer():
    return RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf"))


@pytest.fixture
def beam_sim(palletizer):
    """One DM4310 (CAN id 3, master 0x13) on beam_pitch, released from 0.3 rad; not started."""
    arm = SimulatedArm(palletizer, SimConfig(joints={"beam_pitch": {"initial_position": 0.3}}))
    motor = EmulatedMotor(motor_limits("DM4310"), 3, 0x13)
    settings = CanSettings("virtual", f"test_socketcand_{os.getpid()}_{id(arm):x}", 1_000_000)
    sim = SimulatedMotorBus(arm, [SimulatedMotor("beam_pitch", motor, JointMotorMap())], settings)
    yield sim
    sim.stop()


def _wait(predicate, timeout=2.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.0005)
    return True


def _client(server, channel="can0"):
    return can.Bus(interface="socketcand", host="127.0.0.1", port=server.port, channel=channel, tcp_tune=True)


def _exchange(sim, server, bus, data: bytes, arbitration_id: int = 3):
    """Send one frame, let the motors answer (no physics step), return the reply."""
    before = sim.frames_received
    bus.send(can.Message(arbitration_id=arbitration_id, data=data, is_extended_id=False))
    assert _wait(lambda: (sim.answer_frames(), sim.frames_received)[1] > before)
    return bus.recv(timeout=2.0)


def test_hand_packed_command_returns_the_arms_position(beam_sim):
    """Enable, then a zero-gain MIT command packed by hand: p code 0x8000, v 0x800, kp 0, kd 0,
    τ 0x800. The reply's position, decoded by hand, is the simulated arm's own joint position."""
    for _ in range(40):  # let the released beam move: a non-trivial position
        beam_sim.run_once()
    with SocketcandServer(beam_sim) as server, _client(server) as bus:
        enable = _exchange(beam_sim, server, bus, ENABLE_FRAME)
        assert enable.arbitration_id == 0x13 and enable.data[0] == 0x13  # state 1 (enabled) << 4 | id 3
        reply = _exchange(beam_sim, server, bus, bytes.fromhex("8000800000000800"))
        q = float(beam_sim.snapshot().position[beam_sim.arm.joint_names.index("beam_pitch")])
    assert abs(q - 0.3) > 1e-3  # it moved
    assert reply.arbitration_id == 0x13 and not reply.is_extended_id and reply.dlc == 8
    code = reply.data[1] << 8 | reply.data[2]
    assert code == math.floor((q + P_MAX) * 65535 / (2 * P_MAX) + 0.5)
    assert code * 2 * P_MAX / 65535 - P_MAX == pytest.approx(q, abs=P_MAX / 65535)
    motor = beam_sim.motors[0].motor
    assert motor.command.kp == 0.0 and motor.command.tau_ff == pytest.approx(10.0 / 4095, abs=1e-12)


def test_on_frame_sees_each_frame_once_with_its_arrival_time(beam_sim):
    seen: list[can.Message] = []
    windows = []
    with SocketcandServer(beam_sim, on_frame=seen.append) as server, _client(server) as bus:
        for k in range(20):
            before = time.time()
            bus.send(can.Message(arbitration_id=0x100 + k, data=bytes([k, 0xA5]), is_extended_id=False))
            assert _wait(lambda k=k: len(seen) > k)
            windows.append((before, time.time()))
        bus.send(can.Message(arbitration_id=0x1ABCDEF, data=b"", is_extended_id=True))
        assert _wait(lambda: len(seen) == 21)
        time.sleep(0.05)
    assert len(seen) == 21 and server.frames_in == 21 and server.malformed == 0
    for k, (msg, (before, after)) in enumerate(zip(seen, windows)):
        assert (msg.arbitration_id, bytes(msg.data), msg.is_extended_id) == (
            0x100 + k,
            bytes([k, 0xA5]),
            False,
        )
        assert before <= msg.timestamp <= after
    assert (seen[-1].arbitration_id, seen[-1].is_extended_id, seen[-1].dlc) == (0x1ABCDEF, True, 0)


@pytest.mark.skipif(sys.platform != "linux", reason="SO_TIMESTAMPNS is Linux's")
def test_arrival_time_is_the_kernels_not_when_the_busy_server_read_it(beam_sim):
    """The first frame's on_frame holds the reading thread 150 ms; the second, sent 30 ms
    after the first, is read ~120 ms after it arrived, and its stamp is still its send
    (a stamp taken at the read would be >= 100 ms late)."""
    seen: list[can.Message] = []

    def slow(msg):
        seen.append(msg)
        if len(seen) == 1:
            time.sleep(0.15)

    windows = []
    with SocketcandServer(beam_sim, on_frame=slow) as server, _client(server) as bus:
        for k in range(2):
            before = time.time()
            bus.send(can.Message(arbitration_id=0x100 + k, data=bytes([k]), is_extended_id=False))
            windows.append((before, time.time()))
            time.sleep(0.03)
        assert _wait(lambda: len(seen) == 2)
        read_after = time.time()
    assert read_after - windows[1][1] > 0.1  # the server was busy: it read the frame late
    for msg, (before, after) in zip(seen, windows):
        assert before <= msg.timestamp <= after + 0.02


def test_parse_and_format_match_the_protocol_text():
    msg = parse_send("send 003 8 80 0 80 0 0 0 8 0")  # python-can's client: unpadded hex bytes
    assert (msg.arbitration_id, bytes(msg.data), msg.is_extended_id) == (
        3,
        bytes.fromhex("8000800000000800"),
        False,
    )
    assert parse_send("send 00000003 1 ff").is_extended_id
    for bad in (
        "send 003 9 0 0 0 0 0 0 0 0 0",
        "send 003 2 01",
        "send 800 0",
        "send xyz 1 0",
        "send 003 1 100",
        "sned 003 0",
        "send 003",
        "send 003 1 0ff",
    ):
        assert parse_send(bad) is None, bad
    frame = can.Message(arbitration_id=0x13, data=bytes.fromhex("1380007ff7ff1a"), is_extended_id=False)
    assert format_frame(frame, 12.5) == b"< frame 013 12.500000 1380007FF7FF1A >"


def test_malformed_lines_are_skipped_and_a_client_may_reconnect(beam_sim):
    with SocketcandServer(beam_sim, channels={"can0": ""}) as server:
        raw = _raw_rawmode(server)
        before = beam_sim.frames_received
        # 5 malformed: bad length, count mismatch, junk outside <>, unknown command, non-hex id;
        # then one good frame (the enable), split across two writes
        raw.sendall(b"< send 003 9 0 >< send 003 2 01 > junk < frobnicate >< send x 0 >< send 003 8 ff ff")
        raw.sendall(b" ff ff ff ff ff fc >")
        assert _wait(lambda: server.frames_in == 1)
        assert server.malformed == 5
        assert _wait(lambda: (beam_sim.answer_frames(), beam_sim.frames_received)[1] == before + 1)
        assert beam_sim.motor_state("beam_pitch") == (True, 0)
        reply = raw.recv(128)
        assert reply.startswith(b"< frame 013 ") and reply.endswith(b" >")
        raw.close()
        assert _wait(lambda: server.clients == 0)
        with _client(server) as bus:  # the server survived the disconnect
            assert _exchange(beam_sim, server, bus, ENABLE_FRAME).arbitration_id == 0x13
        assert _wait(lambda: server.clients == 0)
        with pytest.raises(BusOpenError, match="can1"):  # a channel it does not serve: refused
            open_bus(CanSettings("socketcand", "can1", 1_000_000, host="127.0.0.1", port=server.port))
    assert server.connections == 3 and server.clients == 0


def _palletizer_values():
    values = yaml.safe_load((REPO_ROOT / "config" / "mit_bridge.yaml").read_text())["/**/mit_bridge"][
        "ros__parameters"
    ]
    return dict(
        values,
        urdf_path=str(REPO_ROOT / "urdf" / "palletizer.urdf"),
        sim_config=str(REPO_ROOT / "config" / "sim_palletizer.yaml"),
        read_motor_limits=False,
    )


def test_bridge_core_over_socketcand_holds_the_palletizer_arm():
    """MitBridgeCore (hold at start-up) on can.interface socketcand against the real-time
    simulated palletizer in sim_arm's builder: the positions it reads are the sim's own."""
    values = _palletizer_values()
    sim = simulated_bus_from_parameters(values)
    checked = bridge_values(values)
    fill_position_limits_from_urdf(checked, build_robot_models(checked).bare.urdf_joints)
    config = bridge_config_from_values(checked)
    core = MitBridgeCore(config, startup_behavior="hold")
    with SocketcandServer(sim, channels={"can0": ""}) as server:
        sim.start()
        io = CanFrameIO(
            open_bus(CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1", port=server.port)),
            core.reply_ids,
        )
        try:
            io.send(core.enable_frames())
            t0 = time.monotonic()
            start = None
            # at least 1.5 s of holding and 1000 frames each way, however long a busy machine
            # takes for those (546 frames came in 1.5 s under load); 60 s: a broken link fails
            while (now := time.monotonic() - t0) < 1.5 or (
                min(server.frames_in, server.frames_out) <= 1000 and now < 60.0
            ):
                for f in io.drain():
                    core.ingest_feedback(f.arbitration_id, f.data, now)
                io.send(core.step(now))
                if start is None and now > 0.1:
                    start = sim.snapshot().position.copy()
                time.sleep(0.002)
            time.sleep(0.01)
            for f in io.drain():
                core.ingest_feedback(f.arbitration_id, f.data, now)
            state, truth = core.joint_state(), sim.snapshot()
        finally:
            io.close()
            sim.stop()
    assert server.frames_in > 1000 and server.frames_out > 1000 and server.malformed == 0
    assert abs(truth.velocity).max() < 0.01  # settled: held
    assert abs(truth.position - start).max() < 0.05  # held where it was, within the kp sag
    assert state.position == pytest.approx(truth.position, abs=1e-3)  # 1e-3 rad: 5 LSB


def test_socketcand_settings_are_checked():
    from gravity_friction_comp.errors import ConfigError

    with pytest.raises(ConfigError, match="can.host") as err:
        CanSettings("socketcand", "can0", 1_000_000)
    assert err.value.key == "can.host"
    for port in (0, 65536, True, 1.5):
        with pytest.raises(ConfigError, match="1..65535") as err:
            CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1", port=port)
        assert err.value.key == "can.port"
    with pytest.raises(ConfigError, match="classic") as err:
        CanSettings("socketcand", "can0", 1_000_000, fd=True, host="127.0.0.1")
    assert err.value.key == "can.fd"
    assert CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1").port == 29536


def _tool(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    cmd = [sys.executable, "-m", "gravity_friction_comp.tools.sim_arm", *args]
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO_ROOT
    )


def test_sim_arm_tool_serves_until_sigterm(tmp_path):
    path = tmp_path / "bridge.yaml"
    path.write_text(yaml.safe_dump({"mit_bridge": {"ros__parameters": _palletizer_values()}}))
    proc = _tool("--params-file", str(path), "--port", "0")
    try:
        line = proc.stdout.readline()
        assert line.startswith("sim_arm: serving 127.0.0.1:"), line + proc.stderr.read()
        port = int(line.split()[2].rsplit(":", 1)[1])
        with can.Bus(interface="socketcand", host="127.0.0.1", port=port, channel="can0") as bus:
            bus.send(can.Message(arbitration_id=2, data=ENABLE_FRAME, is_extended_id=False))
            reply = bus.recv(timeout=2.0)
        assert reply.arbitration_id == 0x12 and reply.data[0] == 0x12  # shoulder_pitch enabled
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert "frames in 1," in proc.stdout.read()
    finally:
        proc.kill()
        proc.wait()
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump({"mit_bridge": {"ros__parameters": dict(_palletizer_values(), can_id=[1, 2])}})
    )
    proc = _tool("--params-file", str(bad))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("sim_arm: error:") and "can_id" in err


def test_two_buses_are_two_channels_with_repeated_ids(tmp_path):
    """beam_pitch alone on can1 with CAN id 1, as base_yaw on can0: each client opens its bus
    by name and gets its own motors' replies, positions as the arm's (2 motors vs 1)."""
    from gravity_friction_comp.mit.bus import bus_settings
    from gravity_friction_comp.tools.sim_arm import socketcand_channels

    values = dict(
        _palletizer_values(),
        bus=["can0", "can0", "can1"],
        can_id=[1, 2, 1],
        master_id=[0x11, 0x12, 0x11],
        sim_config=str(tmp_path / "sim.yaml"),
    )
    # id 1 at 0.2 rad on can0, at -0.4 rad on can1: a reply from the wrong bus shows at once
    joints = {"base_yaw": {"initial_position": 0.2}, "beam_pitch": {"initial_position": -0.4}}
    (tmp_path / "sim.yaml").write_text(yaml.safe_dump({"simulation": {"version": 1, "joints": joints}}))
    sim = simulated_bus_from_parameters(values)
    checked = bridge_values(values)
    config = bridge_config_from_values(checked)
    core = MitBridgeCore(config)
    channels = socketcand_channels(checked, sim)
    assert channels == {"can0": "can0", "can1": "can1"}
    with SocketcandServer(sim, channels=channels) as server:
        base = CanSettings("socketcand", "can0", 1_000_000, host="127.0.0.1", port=server.port)
        ios = {
            b: CanFrameIO(open_bus(s), core.reply_ids) for b, s in bus_settings(base, config.buses).items()
        }
        try:
            for b, io in ios.items():
                io.send(core.enable_frames(b))
            assert _wait(lambda: (sim.answer_frames(), sim.frames_received)[1] == 3)
            got = {b: [] for b in ios}
            assert _wait(
                lambda: (
                    [got[b].extend(io.drain()) for b, io in ios.items()] and sum(map(len, got.values())) == 3
                )
            )
            for b, frames in got.items():
                for f in frames:
                    core.ingest_feedback(f.arbitration_id, f.data, 0.0, b)
            updated = {b: sorted({f.arbitration_id for f in frames}) for b, frames in got.items()}
        finally:
            for io in ios.values():
                io.close()
            sim.stop()
    assert updated == {"can0": [0x11, 0x12], "can1": [0x11]}
    truth = sim.snapshot().position
    assert truth[0] == pytest.approx(0.2) and truth[2] == pytest.approx(-0.4)
    assert core.joint_state().position == pytest.approx(truth, abs=P_MAX / 65535)


def _raw_rawmode(server, rcvbuf: int | None = None) -> socket.socket:
    """A raw TCP client through the handshake (``rcvbuf``: its receive buffer [bytes])."""
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    raw.settimeout(2.0)
    raw.connect(("127.0.0.1", server.port))
    for send, expect in ((None, b"< hi >"), (b"< open can0 >", b"< ok >"), (b"< rawmode >", b"< ok >")):
        if send:
            raw.sendall(send)
        assert raw.recv(64) == expect
    return raw


def test_a_client_that_stops_reading_is_dropped_and_the_others_stay_served(beam_sim):
    """A second client on the bus that never reads (suspended ``nc``): the frames broadcast
    to it fill its socket buffers (~4 MB on loopback); a blocking send there stalled the
    server's one thread, so the active client got no reply any more. Each reply counted
    against the frames sent: all 120 000 answered, the silent client dropped once."""
    enable = b"< send 003 8 FF FF FF FF FF FF FF FC >"
    batch, batches = 1000, 120  # ~110 B broadcast per frame: 13 MB, past any socket buffer
    with SocketcandServer(beam_sim, channels={"can0": ""}) as server:
        lazy = _raw_rawmode(server, rcvbuf=4096)
        active = _raw_rawmode(server)
        replies, buffer = 0, b""
        for _ in range(batches):
            active.sendall(enable * batch)
            while buffer.count(b">") < batch:  # this batch's replies (recv times out at 2 s)
                buffer += active.recv(65536)
            replies += buffer.count(b"< frame 013 ")
            buffer = b""
        assert replies == batch * batches
        assert server.dropped == 1 and server.clients == 1
        lazy.close()
        active.close()


@pytest.mark.parametrize("port", ["70000", "-1", "abc"])
def test_sim_arm_port_outside_0_65535_is_one_usage_error(tmp_path, capsys, port):
    """bind() raised OverflowError (a traceback, exit 1) for 70000 and -1."""
    from gravity_friction_comp.tools.sim_arm import main

    path = tmp_path / "bridge.yaml"
    path.write_text(yaml.safe_dump({"mit_bridge": {"ros__parameters": _palletizer_values()}}))
    with pytest.raises(SystemExit) as exit_:
        main(["--params-file", str(path), "--port", port])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("sim_arm: error: argument --port:"), err
    assert "Traceback" not in err


def test_a_clients_first_malformed_message_is_one_warning_naming_it(beam_sim, caplog):
    """Malformed messages were only counted (seen in ``sim_arm``'s last line at stop): a
    client sending 27 of them got no word. Now the first of each connection is one WARNING
    with the text and the client's address; the rest are counted."""
    import logging

    with caplog.at_level(logging.WARNING, logger="gravity_friction_comp.sim.socketcand_server"):
        with SocketcandServer(beam_sim) as server:
            for i in range(2):
                raw = _raw_rawmode(server)
                port = raw.getsockname()[1]
                raw.sendall(b"< send ZZZ 1 00 >< send 003 9 0 > junk ")
                assert _wait(lambda: server.malformed == 3 * (i + 1))  # noqa: B023
                raw.close()
                assert _wait(lambda: server.clients == 0)
                assert f"127.0.0.1:{port}" in caplog.records[-1].getMessage()
    assert server.malformed == 6
    texts = [r.getMessage() for r in caplog.records]
    assert len(texts) == 2 and all("send ZZZ 1 00" in t and "malformed" in t for t in texts)
