"""The chain as ROS 2 users run it (issue 13): Ctrl-C of the process group, a
``ros2 param dump`` file loaded back with ``--params-file``, integers for double parameters."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest
import yaml

pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: starts node processes (fast tier: -m "not slow")

from conftest import REPO_ROOT  # noqa: E402
from graph_helpers import fresh_domain_id, graph_client, node_process, own_namespace, warm_up, write_params  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.param_files import node_parameters  # noqa: E402

JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
URDF = str(REPO_ROOT / "urdf" / "palletizer.urdf")
ARM_YAML = str(REPO_ROOT / "config" / "palletizer_arm.yaml")
GRAVITY = {
    "urdf_path": URDF,
    "payload.mass": 0.13,
    "payload.shape": "cylinder",
    "payload.radius": 0.033,
    "payload.length": 0.12,
    "payload.com": [0.0, 0.0, -0.07],
    "payload.parent": "tool",
    "payload.attached": True,
}
FRICTION = {"joints": JOINTS, "arm_config": ARM_YAML}
#: The simulated palletizer's bridge: config/mit_bridge.yaml, simulated.
BRIDGE = {
    **node_parameters(REPO_ROOT / "config" / "mit_bridge.yaml", "mit_bridge"),
    "simulate": True,
    "urdf_path": URDF,
}
BAD_OUTPUT = ("Traceback", "KeyboardInterrupt", "Failed to publish", "context is invalid", "FATAL")


def _setpoint(position, velocity=(0.1, -0.2, 0.3)) -> JointState:
    msg = JointState()
    msg.name = JOINTS
    msg.position = [float(x) for x in position]
    msg.velocity = [float(x) for x in velocity]
    return msg


#: gravity → friction → (bridge on ``joint_command``), as arm.launch.py remaps them.
GRAVITY_REMAP = ["-r", "joint_command:=gravity/joint_command"]
FRICTION_REMAP = ["-r", "joint_setpoint:=gravity/joint_command"]


@pytest.mark.parametrize("delay", [0.0, 0.35])
def test_sigint_to_the_process_group_exits_cleanly(tmp_path, delay):
    """What ``ros2 launch`` does on Ctrl-C: one SIGINT to the group while setpoints flow at
    ~500 Hz; every node exits with 0 and prints no traceback."""
    domain, ns = fresh_domain_id(), own_namespace()
    g_path = write_params(tmp_path / "g.yaml", "gravity_compensation", GRAVITY, namespace=ns)
    f_path = write_params(tmp_path / "f.yaml", "friction_feedforward", FRICTION, namespace=ns)
    b_path = write_params(tmp_path / "b.yaml", "mit_bridge", BRIDGE, namespace=ns)
    gravity_process = node_process(
        "gravity_compensation_node", domain, g_path, GRAVITY_REMAP, process_group=0, namespace=ns
    )
    with gravity_process as gravity:
        group = os.getpgid(gravity.pid)
        with (
            node_process(
                "friction_feedforward_node", domain, f_path, FRICTION_REMAP, process_group=group, namespace=ns
            ) as friction,
            node_process("mit_bridge_node", domain, b_path, process_group=group, namespace=ns) as bridge,
            graph_client(domain, ns) as client,
        ):
            procs = {"gravity": gravity, "friction": friction, "bridge": bridge}
            commands = client.subscribe(JointState, "joint_command")
            states = client.subscribe(JointState, "joint_states")
            setpoints = client.publisher(JointState, "joint_setpoint")
            warm_up(client, setpoints, _setpoint([0.0, 0.3, 0.2]), commands, friction, timeout=30.0)
            assert client.spin_until(lambda: len(states) > 0, 15.0, bridge), (
                "bridge publishes no joint_states"
            )
            # setpoints keep flowing before, during and after the signal
            start = time.monotonic()
            sent = False
            while time.monotonic() - start < delay + 1.0:
                setpoints.publish(_setpoint([0.0, 0.3 + 0.01 * np.sin(time.monotonic()), 0.2]))
                client.executor.spin_once(timeout_sec=0.002)
                if not sent and time.monotonic() - start >= delay:
                    os.killpg(group, signal.SIGINT)
                    sent = True
            codes = {}
            for name, proc in procs.items():
                try:
                    codes[name] = proc.wait(timeout=15)
                except Exception:  # noqa: BLE001 - report every node, then fail
                    codes[name] = None
            outputs = {name: proc.stdout.read() for name, proc in procs.items()}
    for name, code in codes.items():
        assert code == 0, f"{name} exited with {code}:\n{outputs[name]}"
        for needle in BAD_OUTPUT:
            assert needle not in outputs[name], f"{name} printed {needle!r}:\n{outputs[name]}"


def _dump(client, node_name: str) -> dict:
    """The node's parameters as ``ros2 param dump`` writes them: every name from
    ``list_parameters``, values from ``get_parameters`` (unset: ``None`` → ``null``), dotted
    names nested, under ``/<node>: ros__parameters``."""
    from rcl_interfaces.msg import ParameterType
    from rcl_interfaces.srv import GetParameters, ListParameters

    def call(srv, name, request):
        cli = client.node.create_client(srv, f"{node_name}/{name}")
        assert client.spin_until(cli.service_is_ready, 10.0), f"{name} not ready"
        future = cli.call_async(request)
        assert client.spin_until(future.done, 10.0), f"{name} timed out"
        client.node.destroy_client(cli)
        return future.result()

    names = sorted(call(ListParameters, "list_parameters", ListParameters.Request()).result.names)
    values = call(GetParameters, "get_parameters", GetParameters.Request(names=names)).values
    field = {
        ParameterType.PARAMETER_BOOL: "bool_value",
        ParameterType.PARAMETER_INTEGER: "integer_value",
        ParameterType.PARAMETER_DOUBLE: "double_value",
        ParameterType.PARAMETER_STRING: "string_value",
        ParameterType.PARAMETER_BYTE_ARRAY: "byte_array_value",
        ParameterType.PARAMETER_BOOL_ARRAY: "bool_array_value",
        ParameterType.PARAMETER_INTEGER_ARRAY: "integer_array_value",
        ParameterType.PARAMETER_DOUBLE_ARRAY: "double_array_value",
        ParameterType.PARAMETER_STRING_ARRAY: "string_array_value",
    }
    tree: dict = {}
    for name, value in zip(names, values):
        plain = None if value.type == ParameterType.PARAMETER_NOT_SET else getattr(value, field[value.type])
        if isinstance(plain, (list, tuple)) or hasattr(plain, "tolist"):
            plain = list(plain.tolist() if hasattr(plain, "tolist") else plain)
        *groups, leaf = name.split(".")
        node = tree
        for g in groups:
            node = node.setdefault(g, {})
        node[leaf] = plain
    return {f"{client.node.get_namespace().rstrip('/')}/{node_name}": {"ros__parameters": tree}}


def _output(client, setpoints, commands, proc, msg) -> JointState:
    n0 = len(commands)
    setpoints.publish(msg)
    assert client.spin_until(lambda: len(commands) > n0, 5.0, proc)
    return commands[-1]


@pytest.mark.parametrize(
    ("module", "node_name", "params"),
    [
        ("gravity_compensation_node", "gravity_compensation", GRAVITY),
        ("friction_feedforward_node", "friction_feedforward", FRICTION),
    ],
)
def test_param_dump_loads_back(tmp_path, module, node_name, params):
    """A dump written from the parameter services (unset parameters as ``null``) starts the
    node again with ``--params-file`` and gives the same output; through param_files (what
    the launch files and the demo use) no ``None`` is left."""
    domain, ns = fresh_domain_id(), own_namespace()
    path = write_params(tmp_path / "p.yaml", node_name, params, namespace=ns)
    msg = _setpoint([0.1, 0.4, 0.3])
    with node_process(module, domain, path, namespace=ns) as proc, graph_client(domain, ns) as client:
        commands = client.subscribe(JointState, "joint_command")
        setpoints = client.publisher(JointState, "joint_setpoint")
        warm_up(client, setpoints, msg, commands, proc, timeout=30.0)
        # users type integers: `ros2 param set /node scale 1`
        (result,) = client.set_parameters(node_name, scale=1)
        assert result.successful, result.reason
        before = _output(client, setpoints, commands, proc, msg)
        dump = _dump(client, node_name)
    text = yaml.safe_dump(dump, default_flow_style=False)
    assert ": null" in text  # unset parameters are in the dump, as ros2 param dump writes them
    dump_path = tmp_path / "dump.yaml"
    dump_path.write_text(text)
    loaded = node_parameters(dump_path, node_name, namespace=ns)
    assert None not in loaded.values() and loaded["scale"] == 1.0
    with (
        node_process(module, domain, str(dump_path), namespace=ns) as proc,
        graph_client(domain, ns) as client,
    ):
        commands = client.subscribe(JointState, "joint_command")
        setpoints = client.publisher(JointState, "joint_setpoint")
        warm_up(client, setpoints, msg, commands, proc, timeout=30.0)
        after = _output(client, setpoints, commands, proc, msg)
        assert proc.poll() is None
    assert list(after.effort) == list(before.effort)
    assert np.any(np.asarray(after.effort) != 0.0)


def test_integer_sets_and_bounds_over_dds(tmp_path):
    """`ros2 param set /gravity_compensation scale 1` and `payload.mass 2` work; absurd
    gravity and scale, bools and strings are refused with a reason."""
    domain, ns = fresh_domain_id(), own_namespace()
    path = write_params(
        tmp_path / "p.yaml", "gravity_compensation", {**GRAVITY, "scale": 1, "payload.mass": 1}, namespace=ns
    )
    msg = _setpoint([0.1, 0.4, 0.3])
    with (
        node_process("gravity_compensation_node", domain, path, namespace=ns) as proc,
        graph_client(domain, ns) as client,
    ):
        commands = client.subscribe(JointState, "joint_command")
        setpoints = client.publisher(JointState, "joint_setpoint")
        warm_up(client, setpoints, msg, commands, proc, timeout=30.0)
        base = np.asarray(_output(client, setpoints, commands, proc, msg).effort)
        (result,) = client.set_parameters("gravity_compensation", scale=2)
        assert result.successful, result.reason
        doubled = np.asarray(_output(client, setpoints, commands, proc, msg).effort)
        np.testing.assert_allclose(doubled, 2.0 * base, rtol=1e-12, atol=1e-12)
        (result,) = client.set_parameters("gravity_compensation", payload__mass=2)
        assert result.successful, result.reason
        heavier = np.asarray(_output(client, setpoints, commands, proc, msg).effort)
        assert np.abs(heavier[1]) > np.abs(doubled[1])
        for bad, needle in (
            ({"gravity": [0.0, 0.0, -1e308]}, "gravity"),
            ({"gravity": [1e308, 1e308, 1e308]}, "gravity"),
            ({"scale": 1e308}, "scale"),
            ({"scale": True}, "type"),
            ({"payload__mass": "2"}, "type"),
        ):
            (result,) = client.set_parameters("gravity_compensation", **bad)
            assert not result.successful and needle in result.reason, (bad, result.reason)
        after = np.asarray(_output(client, setpoints, commands, proc, msg).effort)
        np.testing.assert_array_equal(after, heavier)  # output unchanged by the refusals
        assert proc.poll() is None


def test_bridge_param_dump_loads_back(tmp_path):
    """The bridge (simulated arm) started again from its own dump: ``damp_kd`` and the other
    unset parameters come back as unset (was: ``damp_kd has 1 values for 3 joints``)."""
    domain, ns = fresh_domain_id(), own_namespace()
    path = write_params(tmp_path / "b.yaml", "mit_bridge", BRIDGE, namespace=ns)
    with (
        node_process("mit_bridge_node", domain, path, namespace=ns) as proc,
        graph_client(domain, ns) as client,
    ):
        states = client.subscribe(JointState, "joint_states")
        assert client.spin_until(lambda: len(states) > 0, 30.0, proc)
        dump = _dump(client, "mit_bridge")
    text = yaml.safe_dump(dump, default_flow_style=False)
    assert ": null" in text
    dump_path = tmp_path / "dump.yaml"
    dump_path.write_text(text)
    with (
        node_process("mit_bridge_node", domain, str(dump_path), namespace=ns) as proc,
        graph_client(domain, ns) as client,
    ):
        states = client.subscribe(JointState, "joint_states")
        assert client.spin_until(lambda: len(states) > 0, 30.0, proc)
        assert list(states[-1].name) == JOINTS
