"""Graph tests: friction_feedforward_node alone, and the gravity → friction chain over DDS."""

from __future__ import annotations

import math

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: starts node processes (fast tier: -m "not slow")
from conftest import REPO_ROOT  # noqa: E402
from graph_helpers import (
    fresh_domain_id,
    graph_client,
    node_process,
    own_namespace,
    warm_up,  # noqa: E402
    write_params,
)
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402

from gravity_friction_comp.stage.contract import MAX_SCALE  # noqa: E402

NODE = "friction_feedforward"
JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
ARM_YAML = REPO_ROOT / "config" / "palletizer_arm.yaml"
# The values of config/palletizer_arm.yaml, restated: the test computes friction by hand.
BREAKAWAY = np.array([0.12, 0.20, 0.10])
EPS = 0.02  # a measured velocity's tanh scale
EPS_SETPOINT = 0.005  # a setpoint's (eps_setpoint)
VISCOUS = np.array([0.02, 0.04, 0.02])


def _hand_friction(v, breakaway=BREAKAWAY, eps=EPS_SETPOINT, viscous=VISCOUS):
    return np.array([b * math.tanh(x / eps) + c * x for b, x, c in zip(breakaway, v, viscous)])


def _js(names, q, v=(), effort=()):
    msg = JointState()
    msg.name = list(names)
    msg.position = [float(x) for x in q]
    msg.velocity = [float(x) for x in v]
    msg.effort = [float(x) for x in effort]
    return msg


@pytest.fixture(scope="module")
def friction(tmp_path_factory):
    domain, ns = fresh_domain_id(), own_namespace()  # ns: a stranger's joint_command is not heard
    path = write_params(
        tmp_path_factory.mktemp("friction") / "p.yaml",
        NODE,
        {"joints": JOINTS, "arm_config": str(ARM_YAML)},
        namespace=ns,
    )
    with (
        node_process("friction_feedforward_node", domain, path, namespace=ns) as proc,
        graph_client(domain, ns) as client,
    ):
        commands = client.subscribe(JointState, "joint_command")
        setpoints = client.publisher(JointState, "joint_setpoint")
        states = client.publisher(JointState, "joint_states")
        client.wait_for_subscriber(setpoints, proc=proc)
        client.wait_for_subscriber(states, proc=proc)
        warm_up(client, setpoints, _js(JOINTS, [0.0] * 3, [0.0] * 3), commands, proc)
        yield client, proc, setpoints, states, commands


def _exchange(client, proc, pub, commands, msg):
    n0 = len(commands)
    pub.publish(msg)
    assert client.spin_until(lambda: len(commands) > n0, 5.0, proc), "no joint_command"
    return commands[-1]


def test_friction_added_from_arm_yaml_and_extra_joint_passes(friction):
    client, proc, setpoints, _, commands = friction
    v = np.array([0.3, -0.01, 0.0])
    out = _exchange(
        client,
        proc,
        setpoints,
        commands,
        _js(["gripper", *JOINTS], [0.0] * 4, [1.0, *v], [0.7, 1.0, 2.0, 3.0]),
    )
    eff = dict(zip(out.name, out.effort))
    assert eff["gripper"] == 0.7
    np.testing.assert_allclose(
        [eff[j] for j in JOINTS], np.array([1.0, 2.0, 3.0]) + _hand_friction(v), atol=1e-12
    )
    assert eff["beam_pitch"] == 3.0  # v = 0 → exactly no friction


def test_runtime_parameters_override_yaml_and_reject_bad_values(friction):
    client, proc, setpoints, _, commands = friction
    v = np.array([0.05, 0.1, -0.2])
    msg = _js(JOINTS, [0.0] * 3, v)
    # eps serves the measured velocity; the setpoint's is eps_setpoint's (from the YAML, then set)
    for name, value in (("breakaway", [0.5, 0.6, 0.7]), ("eps", 0.07)):
        assert client.set_parameters(NODE, **{name: value})[0].successful
    out = _exchange(client, proc, setpoints, commands, msg)
    np.testing.assert_allclose(out.effort, _hand_friction(v, [0.5, 0.6, 0.7], EPS_SETPOINT), atol=1e-12)
    assert client.set_parameters(NODE, eps_setpoint=0.05)[0].successful
    out = _exchange(client, proc, setpoints, commands, msg)
    np.testing.assert_allclose(out.effort, _hand_friction(v, [0.5, 0.6, 0.7], 0.05), atol=1e-12)
    for bad, needle in (
        ({"breakaway": [0.1, 0.2]}, "expected 3"),
        ({"breakaway": [0.1, -0.2, 0.1]}, "breakaway"),
        ({"eps": 0.0}, "eps"),
        ({"eps_setpoint": 0.0}, "eps_setpoint: values must be > 0"),
        ({"eps_setpoint": [0.01, 0.01]}, "eps_setpoint: expected 3"),
        ({"model": "magic"}, "valid choices"),
        ({"velocity_source": "psychic"}, "valid choices"),
        ({"scale": math.nan}, "scale"),
    ):
        result = client.set_parameters(NODE, **bad)[0]
        assert not result.successful and needle in result.reason, (bad, result.reason)
    out = _exchange(client, proc, setpoints, commands, msg)  # last good model kept
    np.testing.assert_allclose(out.effort, _hand_friction(v, [0.5, 0.6, 0.7], 0.05), atol=1e-12)
    assert client.set_parameters(NODE, enable=False)[0].successful
    out = _exchange(client, proc, setpoints, commands, _js(JOINTS, [0.0] * 3, v, [0.1 + 0.2] * 3))
    assert list(out.effort) == [0.1 + 0.2] * 3  # bit-identical pass-through
    for name, value in (
        ("enable", True),
        ("breakaway", [0.12, 0.20, 0.10]),
        ("eps", EPS),
        ("eps_setpoint", EPS_SETPOINT),
    ):
        assert client.set_parameters(NODE, **{name: value})[0].successful


def test_measured_velocity_with_deadband_gives_no_dither(friction):
    client, proc, setpoints, states, commands = friction
    for name, value in (("velocity_source", "measured"), ("velocity_deadband", 0.003)):
        assert client.set_parameters(NODE, **{name: value})[0].successful
    half_lsb = 10.0 / 4095  # DM4340 12-bit velocity, ±10 rad/s: rest reads ±½ LSB
    for sign in (1.0, -1.0, 1.0):
        states.publish(_js(JOINTS, [0.0] * 3, [sign * half_lsb] * 3))
        client.spin_for(0.1)
        out = _exchange(client, proc, setpoints, commands, _js(JOINTS, [0.0] * 3, [0.5] * 3))
        assert list(out.effort) == [0.0, 0.0, 0.0]
    states.publish(_js(JOINTS, [0.0] * 3, [0.2, -0.2, 0.0]))
    client.spin_for(0.1)
    out = _exchange(client, proc, setpoints, commands, _js(JOINTS, [0.0] * 3, [0.5] * 3))
    np.testing.assert_allclose(out.effort, _hand_friction([0.2, -0.2, 0.0], eps=EPS), atol=1e-12)
    for name, value in (("velocity_source", "setpoint"), ("velocity_deadband", 0.0)):
        assert client.set_parameters(NODE, **{name: value})[0].successful


def test_bad_messages_survived(friction):
    client, proc, setpoints, _, commands = friction
    n0 = len(commands)
    for msg in (
        _js(JOINTS, [0.0, math.nan, 0.0]),
        _js(JOINTS[:2], [0.0] * 2),
        _js(JOINTS, [0.0] * 3, [0.0, 0.0]),
        _js(JOINTS, [0.0] * 3, [math.inf] * 3),
    ):
        setpoints.publish(msg)
    client.spin_for(0.3)
    assert len(commands) == n0 and proc.poll() is None
    assert _exchange(client, proc, setpoints, commands, _js(JOINTS, [0.0] * 3, [0.1] * 3))


def test_chain_command_is_sum_of_terms_and_holding_propagates(tmp_path):
    domain = fresh_domain_id()
    gravity_params = write_params(
        tmp_path / "g.yaml",
        "gravity_compensation",
        {
            "urdf_path": str(REPO_ROOT / "urdf" / "palletizer.urdf"),
            "payload": {
                "mass": 0.13,
                "shape": "cylinder",
                "radius": 0.033,
                "length": 0.12,
                "com": [0.0, 0.0, -0.07],
                "parent": "tool",
            },
        },
    )
    friction_params = write_params(tmp_path / "f.yaml", NODE, {"joints": JOINTS, "arm_config": str(ARM_YAML)})
    with (
        node_process(
            "gravity_compensation_node",
            domain,
            gravity_params,
            ["-r", "joint_command:=gravity/joint_command"],
        ) as gproc,
        node_process(
            "friction_feedforward_node",
            domain,
            friction_params,
            ["-r", "joint_setpoint:=gravity/joint_command"],
        ) as fproc,
        graph_client(domain) as client,
    ):
        commands = client.subscribe(JointState, "joint_command")
        g_terms = client.subscribe(JointState, "/gravity_compensation/effort")
        f_terms = client.subscribe(JointState, "/friction_feedforward/effort")
        setpoints = client.publisher(JointState, "joint_setpoint")
        holding = client.publisher(Bool, "gripper/holding")
        client.wait_for_subscriber(setpoints, proc=gproc)
        client.wait_for_subscriber(holding, proc=gproc)
        # Warm up until the whole chain has discovered itself, then start counting.
        warm_up(client, setpoints, _js(JOINTS, [0.0] * 3, [0.0] * 3), commands, fproc)
        g_terms.clear()
        f_terms.clear()
        rng = np.random.default_rng(3)
        for _ in range(10):
            setpoints.publish(_js(JOINTS, rng.uniform(-0.5, 0.5, 3), rng.uniform(-1, 1, 3)))
            client.spin_for(0.02)
        assert client.spin_until(lambda: len(commands) >= 10, 5.0, fproc)
        n0 = len(commands)
        holding.publish(Bool(data=True))
        assert client.spin_until(lambda: len(commands) > n0, 2.0, fproc), "holding did not propagate"
        client.spin_for(0.2)
        assert len(commands) == len(g_terms) == len(f_terms) == 11
        for cmd, g, f in zip(commands, g_terms, f_terms):
            np.testing.assert_allclose(cmd.effort, np.add(g.effort, f.effort), rtol=0, atol=1e-12)
        # The republished command differs from the one before by the payload's gravity only.
        from gravity_friction_comp import Payload, RobotModel

        bare = RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf"))
        loaded = bare.with_payload(Payload.cylinder(0.13, 0.033, 0.12, com=(0, 0, -0.07), parent="tool"))
        q = np.array(commands[-1].position)
        np.testing.assert_allclose(
            np.subtract(commands[-1].effort, commands[-2].effort),
            loaded.gravity(q) - bare.gravity(q),
            atol=1e-12,
        )


def test_parameter_declarations_keep_names_defaults_and_give_ranges():
    from gravity_friction_comp.nodes.friction_feedforward_node import MODEL_PARAMETERS, PARAMETERS
    from gravity_friction_comp.nodes.parameters import descriptor

    by_name = {p.name: p for p in PARAMETERS}
    assert len(by_name) == len(PARAMETERS)
    expected = {
        "enable": True,
        "scale": 1.0,
        "joints": [""],
        "arm_config": "",
        "effort_limit": None,
        "velocity_source": "setpoint",
        "velocity_cutoff_hz": 20.0,
        "velocity_deadband": 0.0,
        "drive": "velocity",
        "eps_position": 0.01,
        "measurement_timeout": 0.1,
        "joint_states_topic": "joint_states",
        "dither": 0.0,  # off unless free drive sets it (stage/dither.py)
        "dither_hz": 5.0,
        **{name: None for name in MODEL_PARAMETERS},
    }
    assert {name: p.default for name, p in by_name.items()} == expected
    for name, low in (("velocity_cutoff_hz", 0.0), ("velocity_deadband", 0.0), ("scale", -MAX_SCALE)):
        (rng,) = descriptor(by_name[name]).floating_point_range
        assert rng.from_value == low
    assert descriptor(by_name["breakaway"]).dynamic_typing


def test_out_of_range_values_refused_with_the_name(friction):
    client = friction[0]
    for bad, needle in (
        ({"velocity_cutoff_hz": -5.0}, "velocity_cutoff_hz"),
        ({"scale": 2 * MAX_SCALE}, "scale"),
    ):
        result = client.set_parameters(NODE, **bad)[0]
        assert not result.successful and needle in result.reason, (bad, result.reason)
    # the range admits 0, the config refuses it (> 0): same reason vocabulary as the Python API
    result = client.set_parameters(NODE, velocity_cutoff_hz=0.0)[0]
    assert not result.successful and "velocity_cutoff_hz must be > 0" in result.reason, result.reason


def test_per_joint_scale_in_joints_order(friction):
    client, proc, setpoints, _, commands = friction
    v = np.array([0.05, 0.1, -0.2])
    msg = _js(JOINTS, [0.0] * 3, v)
    assert client.set_parameters(NODE, scale=[2.0, 0.5, -1.0])[0].successful
    out = _exchange(client, proc, setpoints, commands, msg)
    np.testing.assert_allclose(out.effort, [2.0, 0.5, -1.0] * _hand_friction(v), rtol=0, atol=1e-12)
    for bad in ([1.0, 2.0], [1.0, 2.0, 3.0, 4.0]):
        result = client.set_parameters(NODE, scale=bad)[0]
        assert not result.successful and "scale: expected 3 values" in result.reason, result.reason
    out = _exchange(client, proc, setpoints, commands, msg)
    np.testing.assert_allclose(out.effort, [2.0, 0.5, -1.0] * _hand_friction(v), rtol=0, atol=1e-12)
    assert client.set_parameters(NODE, scale=1)[0].successful
