"""mit_bridge_node tests: a running node with its simulated arm, driven over DDS.

Graph tests start the real executable in a subprocess (one for the module). Tests that
must see the CAN frames (fault, stale, timeout frames, disable on shutdown) run the node in
this process, because a python-can ``virtual`` bus is visible only inside its process; a
second bus object on the node's channel listens to every frame.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: starts node processes (fast tier: -m "not slow")
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from graph_helpers import (  # noqa: E402
    GraphClient,
    fresh_domain_id,
    graph_client,
    node_process,
    own_namespace,
    write_params,
)
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402

from gravity_friction_comp import Payload, RobotModel  # noqa: E402
from gravity_friction_comp.mit.bus import CanSettings, open_bus  # noqa: E402
from gravity_friction_comp.mit.codec import unpack_command_codes  # noqa: E402
from gravity_friction_comp.mit.special_frames import DISABLE_FRAME  # noqa: E402

NODE = "mit_bridge"
JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
Q0 = {"base_yaw": 0.1, "shoulder_pitch": 0.3, "beam_pitch": 0.2}
PAYLOAD = dict(mass=0.3, shape="point", com=[0.0, 0.0, -0.07], parent="tool")
FRICTION = dict(coulomb=0.02, stribeck_breakaway=0.01, stribeck_velocity=0.05, viscous=0.01)
TIMEOUT = 0.5  # generous: a loaded CI machine can delay DDS delivery (a 0.25 s gap was seen in CI)
RATE = 500.0


def _urdf():
    from conftest import REPO_ROOT

    return str(REPO_ROOT / "urdf" / "palletizer.urdf")


def _params(sim_yaml: str, **extra):
    params = {
        "joints": JOINTS,
        "can_id": [1, 2, 3],
        "master_id": [17, 18, 19],
        "motor_type": ["DM4310", "DM4340", "DM4310"],
        "kp": [0.0, 0.0, 0.0],
        "kd": [0.0, 0.0, 0.0],
        "damp_kd": [2.0, 2.0, 2.0],
        "effort_limit": [10.0, 28.0, 10.0],
        "rate_hz": RATE,
        "command_timeout": TIMEOUT,
        "diagnostics_rate_hz": 20.0,
        "simulate": True,
        "sim_config": sim_yaml,
        "urdf_path": _urdf(),
        **{f"payload.{k}": v for k, v in PAYLOAD.items()},
    }
    params.update(extra)
    return params


def _sim_yaml(path) -> str:
    joints = {n: dict(FRICTION, initial_position=q) for n, q in Q0.items()}
    path.write_text(
        yaml.safe_dump(
            {"simulation": {"version": 1, "physics_rate_hz": 1000.0, "mass_scale": 1.0, "joints": joints}}
        )
    )
    return str(path)


@pytest.fixture(scope="module")
def models():
    bare = RobotModel.from_urdf(_urdf())
    return bare, bare.with_payload(
        Payload.point(PAYLOAD["mass"], com=tuple(PAYLOAD["com"]), parent=PAYLOAD["parent"])
    )


def _command(q, effort):
    msg = JointState()
    msg.name = list(JOINTS)
    msg.position = [float(x) for x in q]
    msg.effort = [float(x) for x in effort]
    return msg


def _positions(states):
    msg = states[-1]
    by_name = dict(zip(msg.name, msg.position))
    return np.array([by_name[n] for n in JOINTS])


def _motor_status(diags, joint):
    for array in reversed(diags):
        for st in array.status:
            if st.name.endswith(f"/{NODE}: {joint}"):  # the test's own bridge, in its namespace
                return st, {kv.key: kv.value for kv in st.values}
    return None, {}


def _stream(client, pub, msg_fn, seconds, proc=None, period=0.01):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pub.publish(msg_fn())
        client.spin_for(period)
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"node exited:\n{proc.stdout.read()}")


# --- graph tests: the executable in a subprocess ----------------------------------------------


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bridge")
    domain, ns = fresh_domain_id(), own_namespace()
    path = write_params(tmp / "params.yaml", NODE, _params(_sim_yaml(tmp / "sim.yaml")), namespace=ns)
    with (
        node_process("mit_bridge_node", domain, path, namespace=ns) as proc,
        graph_client(domain, ns) as client,
    ):
        states = client.subscribe(JointState, "joint_states")
        diags = client.subscribe(DiagnosticArray, "/diagnostics", nodes=[NODE])
        commands = client.publisher(JointState, "joint_command")
        holding = client.publisher(Bool, "gripper/holding")
        client.wait_for_subscriber(commands, timeout=20.0, proc=proc)
        assert client.spin_until(lambda: len(states) > 5 and len(diags) > 0, 10.0, proc)
        yield client, proc, states, diags, commands, holding


def test_joint_states_report_the_simulated_arm(running):
    client, proc, states, *_ = running
    msg = states[-1]
    assert list(msg.name) == JOINTS
    # before any command: damp (kp = 0); friction holds base_yaw (no gravity on a vertical axis)
    assert _positions(states)[0] == pytest.approx(Q0["base_yaw"], abs=25 / 65535)


def test_gravity_feedforward_holds_then_timeout_then_recovery(running, models):
    client, proc, states, diags, commands, holding = running
    bare, loaded = models
    q_hold = _positions(states)
    q_hold[1:] = [0.3, 0.2]
    client.set_parameters(NODE, kp=[20.0, 30.0, 15.0], kd=[0.5, 1.0, 0.3])
    # bring the arm to q_hold under position control with the gravity feedforward
    _stream(client, commands, lambda: _command(q_hold, bare.gravity(q_hold)), 1.0, proc)
    client.set_parameters(NODE, kp=[0.0, 0.0, 0.0], kd=[0.0, 0.0, 0.0])
    client.spin_for(0.05)
    start = _positions(states)
    # pure feedforward = exact gravity (sim mass_scale 1): the arm stays within 1 mrad for 2 s
    n0 = len(diags)
    _stream(client, commands, lambda: _command(start, bare.gravity(start)), 2.0, proc)
    reasons = {_motor_status([d], "shoulder_pitch")[1].get("reason") for d in diags[n0:]}
    assert np.max(np.abs(_positions(states) - start)) < 1e-3, f"motor reasons meanwhile: {reasons}"
    st, values = _motor_status(diags, "shoulder_pitch")
    assert st.level == DiagnosticStatus.OK and values["behavior"] == "command"
    # holding the payload while feeding the bare gravity: the loaded arm sinks (> 1 mrad)
    holding.publish(Bool(data=True))
    _stream(client, commands, lambda: _command(start, bare.gravity(start)), 0.3, proc)
    assert np.max(np.abs(_positions(states) - start)) > 1e-3
    # commands stop → timeout behaviour (damp) reported within timeout + a period + a diag period
    holding.publish(Bool(data=False))
    client.spin_for(0.05)
    n0 = len(diags)
    stopped = time.monotonic()
    assert client.spin_until(
        lambda: _motor_status(diags[n0:], "beam_pitch")[1].get("reason") == "command timeout", 2.0, proc
    )
    assert time.monotonic() - stopped < TIMEOUT + 1 / RATE + 1 / 20.0 + 0.15
    st, values = _motor_status(diags, "beam_pitch")
    assert st.level == DiagnosticStatus.WARN and values["behavior"] == "damp"
    # left as soon as commands return
    n0 = len(diags)
    _stream(client, commands, lambda: _command(start, bare.gravity(start)), 0.2, proc)
    assert _motor_status(diags[n0:], "beam_pitch")[1]["behavior"] == "command"


def test_gain_parameters_validated(running):
    client, *_ = running
    bad = client.set_parameters(NODE, kp=[-1.0, 0.0, 0.0])
    assert not bad[0].successful and ">= 0" in bad[0].reason
    short = client.set_parameters(NODE, kd=[1.0, 2.0])
    assert not short[0].successful and "kd must have shape (3,)" in short[0].reason
    ro = client.set_parameters(NODE, rate_hz=1000.0)
    assert not ro[0].successful
    ok = client.set_parameters(NODE, kd=[0.1, 0.2, 0.3])
    assert ok[0].successful


def test_nan_command_rejected_and_counted(running):
    client, proc, states, diags, commands, _ = running
    msg = _command([0.0, float("nan"), 0.0], [0.0, 0.0, 0.0])
    commands.publish(msg)
    n0 = len(diags)
    assert client.spin_until(lambda: len(diags) > n0 + 1, 20.0, proc)
    bus = [st for st in diags[-1].status if st.name.endswith(f"/{NODE}: bus can0")][0]
    values = {kv.key: kv.value for kv in bus.values}
    assert int(values["rejected_commands"]) >= 1
    # 3 motors × (command + reply) × 500 Hz × 135 bit / 1 Mbit/s = 0.405
    assert float(values["expected_bus_load"]) == pytest.approx(0.405, abs=1e-4)
    # the measured load is that of the frames the bridge counted in the same run (a loaded
    # machine exchanges less often than 500 Hz): 135 bit per classic 8-byte frame, at most
    # the nominal 3 000 frames/s plus catch-up
    fps = float(values["frames_per_second"])
    assert 0.0 < fps < 1.5 * 3000
    assert float(values["bus_load"]) == pytest.approx(fps * 135 / 1e6, abs=1e-4)


def test_sigint_exits_cleanly(tmp_path):
    domain, ns = fresh_domain_id(), own_namespace()
    path = write_params(tmp_path / "p.yaml", NODE, _params(_sim_yaml(tmp_path / "sim.yaml")), namespace=ns)
    with (
        node_process("mit_bridge_node", domain, path, namespace=ns) as proc,
        graph_client(domain, ns) as client,
    ):
        states = client.subscribe(JointState, "joint_states")
        commands = client.publisher(JointState, "joint_command")
        assert client.spin_until(lambda: len(states) > 0, 20.0, proc)
        _stream(client, commands, lambda: _command(list(Q0.values()), [0.0] * 3), 0.3, proc)
        proc.send_signal(2)  # while commands flow
        assert proc.wait(timeout=10) == 0
        out = proc.stdout.read()
        assert "Traceback" not in out and "context is invalid" not in out, out


def test_bad_configuration_exits_with_reason(tmp_path):
    domain = fresh_domain_id()
    path = write_params(
        tmp_path / "p.yaml",
        NODE,
        _params(_sim_yaml(tmp_path / "sim.yaml"), motor_type=["DM4310", "DM9", "DM4310"]),
    )
    with node_process("mit_bridge_node", domain, path) as proc:
        out, _ = proc.communicate(timeout=20)
        assert proc.returncode == 2
        assert "DM9" in out and "DM4340" in out


# --- in-process: frames on the node's virtual bus -----------------------------------------------


@pytest.fixture
def inproc(tmp_path):
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    client = GraphClient(fresh_domain_id(), own_namespace())
    params = _params(_sim_yaml(tmp_path / "sim.yaml"), kp=[20.0, 30.0, 15.0], kd=[0.5, 1.0, 0.3])
    node = MitBridgeNode(
        context=client.context,
        namespace=client.node.get_namespace(),
        parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
    )
    client.executor.add_node(node)
    spy = open_bus(CanSettings("virtual", node.settings.channel, 1_000_000))
    try:
        yield client, node, spy
    finally:
        spy.shutdown()
        client.executor.remove_node(node)
        node.destroy_node()
        client.close()


def _frames(spy, can_id=None):
    out = []
    while (msg := spy.recv(timeout=0.0)) is not None:
        if can_id is None or msg.arbitration_id == can_id:
            out.append((msg.timestamp, msg.arbitration_id, bytes(msg.data)))
    return out


def test_fault_error_diagnostic_and_safe_output_for_that_motor_only(inproc, models):
    client, node, spy = inproc
    bare, _ = models
    diags = client.subscribe(DiagnosticArray, "/diagnostics", nodes=[NODE])
    commands = client.publisher(JointState, "joint_command")
    q = np.array([Q0[n] for n in JOINTS])
    _stream(client, commands, lambda: _command(q, bare.gravity(q)), 0.3)
    node._sim.inject_fault("beam_pitch", 0xA)  # noqa: SLF001 - the simulated motor over-currents
    _stream(client, commands, lambda: _command(q, bare.gravity(q)), 0.2)
    st, values = _motor_status(diags, "beam_pitch")
    assert st.level == DiagnosticStatus.ERROR and "over-current" in st.message
    for other in ("base_yaw", "shoulder_pitch"):
        assert _motor_status(diags, other)[0].level == DiagnosticStatus.OK
    _frames(spy)
    _stream(client, commands, lambda: _command(q, bare.gravity(q)), 0.05)
    frames = _frames(spy)
    beam = [unpack_command_codes(d) for _, i, d in frames if i == 3]
    shoulder = [unpack_command_codes(d) for _, i, d in frames if i == 2]
    assert beam and all(c.kp == 0 and c.tau == 0x800 for c in beam)  # damp: kp 0, τ_ff ≈ 0
    assert shoulder and all(c.kp > 0 for c in shoulder)
    # explicit clear through the service
    from std_srvs.srv import Trigger

    cli = client.node.create_client(Trigger, f"{NODE}/clear_faults")
    assert client.spin_until(cli.service_is_ready, 5.0)
    future = cli.call_async(Trigger.Request())
    assert client.spin_until(future.done, 5.0)
    assert "beam_pitch" in future.result().message
    _stream(client, commands, lambda: _command(q, bare.gravity(q)), 0.2)
    st, values = _motor_status(diags, "beam_pitch")
    assert st.level == DiagnosticStatus.OK, (st.message, values, node._sim.motor_state("beam_pitch"))


def test_removed_replies_become_stale(inproc):
    client, node, spy = inproc
    diags = client.subscribe(DiagnosticArray, "/diagnostics", nodes=[NODE])
    node._sim.set_muted("shoulder_pitch")  # noqa: SLF001
    client.spin_for(0.3)  # > stale_cycles (10) periods of 2 ms
    st, values = _motor_status(diags, "shoulder_pitch")
    assert st.level == DiagnosticStatus.ERROR and values["stale"] == "True"
    assert int(values["missed_replies"]) >= 10
    assert _motor_status(diags, "base_yaw")[1]["stale"] == "False"


def test_timeout_frames_within_timeout_plus_one_period(inproc, models):
    client, node, spy = inproc
    bare, _ = models
    core = node._core  # noqa: SLF001 - observe the node's own clock on both sides
    received, steps = [], []
    set_command, step = core.set_command, core.step

    def spy_set_command(q, v, tau, now):
        received.append(now)
        return set_command(q, v, tau, now)

    def spy_step(now, bus=None):
        frames = step(now, bus)
        steps.append((now, dict(frames)))
        return frames

    core.set_command, core.step = spy_set_command, spy_step
    commands = client.publisher(JointState, "joint_command")
    q = np.array([Q0[n] for n in JOINTS])
    _stream(client, commands, lambda: _command(q, bare.gravity(q)), 0.3, period=0.005)
    client.spin_for(TIMEOUT + 0.1)
    last = received[-1]
    after = [(t, f) for t, f in steps if t > last]
    damp = [t for t, f in after if unpack_command_codes(f[2]).kp == 0]
    commanded = [t for t, f in after if unpack_command_codes(f[2]).kp > 0]
    assert damp, "no damp frame after the timeout"
    # the loop keeps commanding until the timeout, then switches on its next cycle
    assert damp[0] - last > TIMEOUT and max(commanded) - last <= TIMEOUT
    periods = np.diff([t for t, _ in after])
    assert damp[0] - last <= TIMEOUT + periods.max() + 1e-9
    # frames on the bus agree: the shoulder's last frames carry kp = 0
    frames = _frames(spy, can_id=2)
    assert unpack_command_codes(frames[-1][2]).kp == 0


def test_destroy_sends_disable_to_every_motor(inproc):
    client, node, spy = inproc
    client.spin_for(0.05)
    _frames(spy)
    node.shutdown_motors()
    frames = _frames(spy)
    assert {i for _, i, d in frames if d == DISABLE_FRAME} == {1, 2, 3}


def test_position_setpoints_beyond_the_urdf_limits_are_clamped(inproc, models):
    """No position_lower/upper parameters + a URDF: the URDF's <limit> bounds the frames."""
    from gravity_friction_comp.mit.codec import decode_command

    client, node, spy = inproc
    bare, _ = models
    urdf = bare.urdf_joints
    for motor in node.config.motors:  # read from the URDF, not typed into a test value
        assert (motor.position_lower, motor.position_upper) == (
            urdf[motor.name].lower,
            urdf[motor.name].upper,
        )
    diags = client.subscribe(DiagnosticArray, "/diagnostics", nodes=[NODE])
    commands = client.publisher(JointState, "joint_command")
    q = np.array([Q0[n] for n in JOINTS])
    beyond = q.copy()
    beyond[1] = urdf["shoulder_pitch"].upper + 1.0
    _frames(spy)
    _stream(client, commands, lambda: _command(beyond, bare.gravity(q)), 0.3, period=0.005)
    shoulder = node.config.motors[1]
    sent = [decode_command(d, shoulder.limits).position for _, _, d in _frames(spy, can_id=2)]
    assert sent and max(sent) == pytest.approx(urdf["shoulder_pitch"].upper, abs=4e-4)
    assert client.spin_until(
        lambda: _motor_status(diags, "shoulder_pitch")[1].get("position_clamped") == "True", 2.0
    )
    assert _motor_status(diags, "shoulder_pitch")[0].level == DiagnosticStatus.WARN
    assert _motor_status(diags, "base_yaw")[1].get("position_clamped") == "False"


def test_urdf_limits_on_hardware_and_a_malformed_urdf_leaves_the_joint_unbounded():
    """simulate:=false on a (virtual) bus: URDF limits apply; inverted ones are not used."""
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    urdf = (
        '<robot name="t"><link name="base"/><link name="a"><inertial><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<link name="b"><inertial><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="ok" type="revolute"><parent link="base"/><child link="a"/>'
        '<axis xyz="0 0 1"/><limit lower="-0.5" upper="0.7" effort="5" velocity="1"/></joint>'
        '<joint name="inverted" type="revolute"><parent link="a"/><child link="b"/>'
        '<axis xyz="0 1 0"/><limit lower="0.2" upper="-0.2" effort="5" velocity="1"/></joint>'
        "</robot>"
    )
    client = GraphClient(fresh_domain_id())
    params = {
        "joints": ["ok", "inverted"],
        "can_id": [1, 2],
        "master_id": [17, 18],
        "motor_type": ["DM4310", "DM4310"],
        "robot_description": urdf,
        "can.interface": "virtual",
        "can.channel": f"hw_test_{os.getpid()}",
    }
    node = MitBridgeNode(
        context=client.context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
    )
    try:
        ok, inverted = node.config.motors
        assert (ok.position_lower, ok.position_upper) == (-0.5, 0.7)
        assert (inverted.position_lower, inverted.position_upper) == (-math.inf, math.inf)
    finally:
        node.destroy_node()
        client.close()


# --- parameter declarations --------------------------------------------------------------------


def test_parameter_declarations_defaults_and_ranges():
    from gravity_friction_comp.nodes.mit_bridge_node import PARAMETERS
    from gravity_friction_comp.nodes.parameters import descriptor

    by = {p.name: p for p in PARAMETERS}
    assert len(by) == len(PARAMETERS)  # each declared once
    # the documented defaults (README, config/mit_bridge.yaml), written out here
    assert {k: by[k].default for k in ("rate_hz", "command_timeout", "stale_cycles", "can.bitrate")} == {
        "rate_hz": 500.0,
        "command_timeout": 0.1,
        "stale_cycles": 10,
        "can.bitrate": 1_000_000,
    }
    assert (by["can.interface"].default, by["can.channel"].default) == ("socketcan", "can0")
    assert (by["timeout_behavior"].default, by["fault_behavior"].default) == ("damp", "damp")
    for name in ("rate_hz", "command_timeout", "diagnostics_rate_hz"):
        (r,) = descriptor(by[name]).floating_point_range
        assert (r.from_value, r.to_value) == (0.0, math.inf), name
    for name in ("stale_cycles", "can.bitrate"):
        (r,) = descriptor(by[name]).integer_range
        assert (r.from_value, r.to_value) == (1, 2**63 - 1), name
    # per-joint arrays: dynamic typing (empty = default), kp/kd runtime-settable
    assert descriptor(by["can_id"]).dynamic_typing and by["can_id"].type == "int[]"
    assert not by["kp"].read_only and not by["kd"].read_only and by["rate_hz"].read_only
    # the robot/payload parameters are part of the node's list
    assert {"robot_description", "urdf_path", "gravity", "payload.mass", "payload.attached"} <= set(by)
    # every key the shipped parameter file sets is declared
    from conftest import REPO_ROOT

    data = yaml.safe_load((REPO_ROOT / "config" / "mit_bridge.yaml").read_text())
    assert set(data[f"/**/{NODE}"]["ros__parameters"]) <= set(by)


def test_ranges_visible_on_the_running_node_and_enforced(inproc, tmp_path):
    _, node, _ = inproc
    (r,) = node.describe_parameter("rate_hz").floating_point_range
    assert (r.from_value, r.to_value) == (0.0, math.inf)
    (r,) = node.describe_parameter("stale_cycles").integer_range
    assert r.from_value == 1
    from rclpy.exceptions import InvalidParameterValueException

    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    client = GraphClient(fresh_domain_id())
    try:
        params = _params(_sim_yaml(tmp_path / "sim2.yaml"), stale_cycles=0)
        with pytest.raises(InvalidParameterValueException):
            MitBridgeNode(
                context=client.context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
            )
    finally:
        client.close()


def test_lockstep_parameters_defaults_and_checks(tmp_path):
    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.nodes.mit_bridge_node import PARAMETERS, MitBridgeNode

    by = {p.name: p for p in PARAMETERS}
    names = ("sim_lockstep", "sim_setpoint_rate_hz", "sim_delay", "sim_stall_timeout")
    assert {k: by[k].default for k in names} == {
        "sim_lockstep": False,
        "sim_setpoint_rate_hz": 250.0,
        "sim_delay": 0.001,
        "sim_stall_timeout": 3.0,
    }
    client = GraphClient(fresh_domain_id())
    try:
        for extra, match in (
            ({"simulate": False, "sim_lockstep": True}, "needs simulate:=true"),
            ({"sim_lockstep": True, "sim_setpoint_rate_hz": 300.0}, "sim_setpoint_rate_hz.*whole number"),
            ({"sim_lockstep": True, "sim_delay": 0.0015}, "sim_delay.*whole number"),
        ):
            params = _params(_sim_yaml(tmp_path / "sim_ls.yaml"), **extra)
            with pytest.raises(ConfigError, match=match):
                MitBridgeNode(
                    context=client.context,
                    parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
                )
    finally:
        client.close()


def test_robot_parameters_read_only_and_bool_gains_refused(inproc):
    """Robot/payload parameters are read at start-up only: ``ros2 param set`` says read-only;
    a bool gain array is refused with a reason and the gains stay."""
    _, node, _ = inproc
    from gravity_friction_comp.nodes.mit_bridge_parameters import PARAMETERS

    by_name = {p.name: p for p in PARAMETERS}
    for name in ("payload.mass", "gravity", "urdf_path"):
        assert by_name[name].read_only, name
        assert node.describe_parameter(name).read_only, name
    before = (node._core._kp.tolist(), node.get_parameter("kp").value)
    for param in (
        Parameter("payload.mass", value=1.0),
        Parameter("gravity", value=[0.0, 0.0, -9.0]),
        Parameter("urdf_path", value="/nonexistent.urdf"),
    ):
        (result,) = node.set_parameters([param])
        assert not result.successful and "read-only" in result.reason, (param.name, result.reason)
    (result,) = node.set_parameters([Parameter("kp", value=[True, True, True])])
    assert not result.successful and result.reason
    assert (node._core._kp.tolist(), node.get_parameter("kp").value) == before


def test_loop_and_diagnostics_after_the_context_shut_down(tmp_path):
    """SIGINT ends the context while a timer may still run: no "publisher's context is
    invalid" from the loop or the diagnostics; the motors still get their disable frames."""
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    client = GraphClient(fresh_domain_id())
    params = _params(_sim_yaml(tmp_path / "sim.yaml"))
    node = MitBridgeNode(
        context=client.context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
    )
    spy = open_bus(CanSettings("virtual", node.settings.channel, 1_000_000))
    try:
        for _ in range(20):
            node._loop()
            time.sleep(0.003)
        assert node._core.joint_state().valid.any()  # so the loop does publish
        rclpy.shutdown(context=client.context)
        node._loop()
        node._publish_diagnostics()
        _frames(spy)
        node.shutdown_motors()
        assert {i for _, i, d in _frames(spy) if d == DISABLE_FRAME} == {1, 2, 3}
    finally:
        spy.shutdown()
        node.destroy_node()
        client.close()


def test_diagnostics_names_carry_the_namespace_and_the_bus(tmp_path):
    """Two arms side by side: ``/left/mit_bridge: base_yaw``, the bus named by its channel,
    on the absolute ``/diagnostics`` (issue 32.5: ``/left/diagnostics`` before, where the
    standard diagnostic_aggregator sees nothing)."""
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    client = GraphClient(fresh_domain_id())
    params = _params(_sim_yaml(tmp_path / "sim.yaml"), **{"can.channel": "can3"})
    node = MitBridgeNode(
        context=client.context,
        namespace="left",
        parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
    )
    try:
        client.executor.add_node(node)
        diags = client.subscribe(DiagnosticArray, "/diagnostics", nodes=["/left/mit_bridge"])
        assert client.spin_until(lambda: len(diags) > 1, 5.0)
        names = {st.name: st for st in diags[-1].status}
        assert set(names) == {f"/left/mit_bridge: {j}" for j in JOINTS} | {"/left/mit_bridge: bus can3"}
        motor = names["/left/mit_bridge: base_yaw"]
        assert motor.hardware_id == "can3 can_id 0x1"
        assert {kv.key: kv.value for kv in motor.values}["bus"] == "can3"
        bus = {kv.key: kv.value for kv in names["/left/mit_bridge: bus can3"].values}
        # 3 motors × 2 frames × 500 Hz × 135 bit / 1 Mbit/s (classic worst case)
        assert float(bus["expected_bus_load"]) == pytest.approx(3 * 2 * RATE * 135 / 1e6, abs=1e-4)
        assert bus["fd"] == "False" and bus["bus"] == "can3"
    finally:
        client.executor.remove_node(node)
        node.destroy_node()
        client.close()


def test_can_fd_simulated_arm_runs_and_frames_are_fd_with_bit_rate_switch(tmp_path):
    """can.fd:=true, can.data_bitrate:=5 Mbit/s: the simulated arm answers (joint_states flow,
    every frame both ways FD + BRS) and the diagnostics use the FD frame time."""
    from gravity_friction_comp.mit.bus_load import mit_bus_load
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    client = GraphClient(fresh_domain_id(), own_namespace())
    fd = {"can.fd": True, "can.data_bitrate": 5_000_000}
    params = _params(_sim_yaml(tmp_path / "sim.yaml"), **fd)
    node = MitBridgeNode(
        context=client.context,
        namespace=client.node.get_namespace(),
        parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
    )
    spy = open_bus(CanSettings("virtual", node.settings.channel, 1_000_000, fd=True, data_bitrate=5_000_000))
    try:
        assert node.settings.fd and node.settings.effective_data_bitrate == 5_000_000
        assert node.simulation is not None and node.simulation.settings.fd
        client.executor.add_node(node)
        states = client.subscribe(JointState, "joint_states")
        diags = client.subscribe(DiagnosticArray, "/diagnostics", nodes=[NODE])
        assert client.spin_until(lambda: len(states) > 20 and len(diags) > 1, 5.0)
        assert set(states[-1].name) == set(JOINTS)
        q = _positions(states)
        assert np.all(np.isfinite(q))
        frames = []
        while (msg := spy.recv(timeout=0.0)) is not None:
            frames.append(msg)
        commands = [m for m in frames if m.arbitration_id in (1, 2, 3)]
        replies = [m for m in frames if m.arbitration_id in (17, 18, 19)]
        assert commands and replies
        assert all(m.is_fd and m.bitrate_switch for m in commands + replies)
        bus = {kv.key: kv.value for kv in diags[-1].status[-1].values}
        assert bus["fd"] == "True" and int(bus["data_bitrate"]) == 5_000_000
        expected = mit_bus_load(3, RATE, 1_000_000, fd=True, data_bitrate=5_000_000)
        assert float(bus["expected_bus_load"]) == pytest.approx(expected, abs=1e-4)
        assert expected < mit_bus_load(3, RATE, 1_000_000)  # the fast data phase saves bus time
    finally:
        spy.shutdown()
        client.executor.remove_node(node)
        node.destroy_node()
        client.close()


def test_can_fd_on_hardware_sends_fd_frames_on_the_shared_bus(tmp_path):
    """simulate:=false on a shared python-can virtual channel: the bridge's frames are FD
    with bit-rate switch; its disable frames too."""
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    client = GraphClient(fresh_domain_id())
    channel = f"fd_test_{os.getpid()}"
    spy = open_bus(CanSettings("virtual", channel, 1_000_000, fd=True, data_bitrate=5_000_000))
    params = _params(
        "",
        simulate=False,
        **{"can.interface": "virtual", "can.channel": channel, "can.fd": True, "can.data_bitrate": 5_000_000},
    )
    node = MitBridgeNode(
        context=client.context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
    )
    try:
        client.executor.add_node(node)
        client.spin_for(0.1)
        node.shutdown_motors()
        frames = []
        while (msg := spy.recv(timeout=0.0)) is not None:
            frames.append(msg)
        assert {m.arbitration_id for m in frames} == {1, 2, 3}
        assert all(m.is_fd and m.bitrate_switch for m in frames)
        assert {m.arbitration_id for m in frames if bytes(m.data) == DISABLE_FRAME} == {1, 2, 3}
    finally:
        spy.shutdown()
        client.executor.remove_node(node)
        node.destroy_node()
        client.close()


def test_without_a_command_the_bridge_holds_the_first_measured_position(inproc):
    """No joint_command for 2 s (startup_behavior hold, the default): every frame commands one
    latched position per joint (the first measured one) with the joint's kp and τ_ff 0."""
    from gravity_friction_comp.mit.codec import decode_command

    client, node, spy = inproc
    assert node.get_parameter("startup_behavior").value == "hold"
    _frames(spy)
    client.spin_for(2.0)
    frames = [f for f in _frames(spy) if f[1] in (1, 2, 3)]
    assert len(frames) > 3 * 100
    q0 = np.array(list(Q0.values()))
    kp = dict(zip((1, 2, 3), (20.0, 30.0, 15.0)))
    codes: dict[int, set[int]] = {1: set(), 2: set(), 3: set()}
    for _, can_id, data in frames[6:]:  # after the first replies latched the positions
        m = node.config.motors[can_id - 1]
        cmd = decode_command(data, m.limits)
        # near q0: the simulated arm falls only until the first tick (the sim starts in __init__)
        assert cmd.position == pytest.approx(q0[can_id - 1], abs=0.25), (m.name, cmd)
        assert cmd.kp == pytest.approx(kp[can_id], abs=0.2) and cmd.tau_ff == pytest.approx(0.0, abs=0.01)
        codes[can_id].add(unpack_command_codes(data).p)
    assert all(len(c) == 1 for c in codes.values()), codes  # one latched setpoint, never re-latched
    assert all((s.behavior, s.reason) == ("hold", "no command yet") for s in node._core.status())
