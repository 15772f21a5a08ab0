"""Graph tests: a running gravity_compensation_node, driven over DDS from this process."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: starts node processes (fast tier: -m "not slow")
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

from gravity_friction_comp import Payload, RobotModel  # noqa: E402
from gravity_friction_comp.stage.contract import MAX_SCALE  # noqa: E402

NODE = "gravity_compensation"
PAYLOAD = dict(mass=0.13, shape="cylinder", radius=0.033, length=0.12, com=[0.0, 0.0, -0.07], parent="tool")


@pytest.fixture(scope="module")
def urdf_path(request):
    from conftest import REPO_ROOT

    return str(REPO_ROOT / "urdf" / "palletizer.urdf")


@pytest.fixture(scope="module")
def models(urdf_path):
    bare = RobotModel.from_urdf(urdf_path)
    payload = Payload.cylinder(
        PAYLOAD["mass"],
        PAYLOAD["radius"],
        PAYLOAD["length"],
        com=tuple(PAYLOAD["com"]),
        parent=PAYLOAD["parent"],
    )
    return bare, bare.with_payload(payload)


@pytest.fixture(scope="module")
def running(tmp_path_factory, urdf_path):
    domain, ns = fresh_domain_id(), own_namespace()  # ns: a stranger's joint_command is not heard
    params = {"urdf_path": urdf_path, **{f"payload.{k}": v for k, v in PAYLOAD.items()}}
    path = write_params(tmp_path_factory.mktemp("gravity") / "params.yaml", NODE, params, namespace=ns)
    with (
        node_process("gravity_compensation_node", domain, path, namespace=ns) as proc,
        graph_client(domain, ns) as client,
    ):
        commands = client.subscribe(JointState, "joint_command")
        terms = client.subscribe(JointState, f"{NODE}/effort")
        setpoints = client.publisher(JointState, "joint_setpoint")
        holding = client.publisher(Bool, "gripper/holding")
        client.wait_for_subscriber(setpoints, proc=proc)
        client.wait_for_subscriber(holding, proc=proc)
        warm_up(
            client,
            setpoints,
            _setpoint(["base_yaw", "shoulder_pitch", "beam_pitch"], [0.0] * 3),
            commands,
            proc,
        )
        client.spin_for(0.1)
        terms.clear()
        yield client, proc, setpoints, holding, commands, terms


def _setpoint(names, q, effort=()):
    msg = JointState()
    msg.name = list(names)
    msg.position = [float(x) for x in q]
    msg.effort = [float(x) for x in effort]
    return msg


def _exchange(running, msg, timeout=5.0):
    """Publish one setpoint and return the command it produced (or None)."""
    client, proc, setpoints, _, commands, terms = running
    n0 = len(commands)
    setpoints.publish(msg)
    client.spin_until(lambda: len(commands) > n0 and len(terms) >= len(commands), timeout, proc)
    return commands[-1] if len(commands) > n0 else None


def _by_name(msg):
    return dict(zip(msg.name, msg.effort))


def test_effort_equals_core_gravity_any_order_extra_joint(running, models):
    bare, _ = models
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = rng.uniform(-0.8, 0.8, bare.n)
        names = ["gripper", *reversed(bare.joint_names)]
        msg = _setpoint(names, [0.02, *reversed(q)], effort=[0.5, *[0.25] * bare.n])
        out = _exchange(running, msg)
        assert out is not None, "no joint_command"
        expected = np.clip(0.25 + bare.gravity(q), -bare.effort_limits, bare.effort_limits)
        got = _by_name(out)
        assert got["gripper"] == 0.5
        np.testing.assert_allclose([got[j] for j in bare.joint_names], expected, atol=1e-12)
        assert list(out.name) == names and list(out.position) == list(msg.position)
        term = _by_name(running[5][-1])
        np.testing.assert_allclose([term[j] for j in bare.joint_names], expected - 0.25, atol=1e-12)
        assert term["gripper"] == 0.0


def test_holding_toggle_republishes_within_50ms(running, models):
    client, proc, _, holding, commands, _ = running
    bare, loaded = models
    q = np.array([0.3, 0.6, -0.4])
    assert _exchange(running, _setpoint(bare.joint_names, q)) is not None
    for state, model in ((True, loaded), (False, bare)):
        n0 = len(commands)
        t0 = time.monotonic()
        holding.publish(Bool(data=state))
        assert client.spin_until(lambda: len(commands) > n0, 2.0, proc)
        latency = time.monotonic() - t0
        np.testing.assert_allclose(commands[-1].effort, model.gravity(q), atol=1e-12)
        assert latency < 0.050, f"republish took {latency * 1e3:.1f} ms"
    assert not np.allclose(loaded.gravity(q), bare.gravity(q))


def test_parameters_change_output_and_bad_values_are_rejected(running, models):
    client, proc, _, _, commands, _ = running
    bare, _ = models
    q = np.array([-0.2, 0.4, 0.3])
    _exchange(running, _setpoint(bare.joint_names, q))

    def set_and_wait(**values):
        # One parameter per call, as `ros2 param set` does: each accepted change republishes.
        for name, value in values.items():
            n0 = len(commands)
            results = client.set_parameters(NODE, **{name: value})
            assert results[0].successful, results[0].reason
            assert client.spin_until(lambda: len(commands) > n0, 2.0, proc), "no republish"
        return np.array(commands[-1].effort)

    np.testing.assert_allclose(set_and_wait(scale=0.5), 0.5 * bare.gravity(q), atol=1e-12)
    assert set_and_wait(enable=False).tolist() == [0.0, 0.0, 0.0]
    set_and_wait(enable=True, scale=1.0)
    # A heavier payload, attached through the parameter: output follows the new model.
    heavy = bare.with_payload(Payload.cylinder(0.5, 0.033, 0.12, com=(0.0, 0.0, -0.07), parent="tool"))
    np.testing.assert_allclose(
        set_and_wait(**{"payload.mass": 0.5, "payload.attached": True}), heavy.gravity(q), atol=1e-12
    )
    before = list(commands[-1].effort)
    for bad, needle in (
        ({"scale": math.nan}, "scale"),
        ({"payload.mass": -1.0}, "mass"),
        ({"payload.parent": "no_such_link"}, "no_such_link"),
        ({"robot_description": "<robot name='x'><link"}, "robot description"),
        ({"gravity": [0.0, math.inf, -9.81]}, "gravity"),
    ):
        results = client.set_parameters(NODE, **bad)
        assert not results[0].successful, bad
        assert needle in results[0].reason, results[0].reason
    # The last good model is kept.
    out = _exchange(running, _setpoint(bare.joint_names, q))
    assert list(out.effort) == before
    set_and_wait(**{"payload.mass": 0.13, "payload.attached": False})


def test_bad_messages_are_survived_and_clamped(running, models):
    client, proc, setpoints, _, commands, _ = running
    bare, _ = models
    names = list(bare.joint_names)
    n0 = len(commands)
    for msg in (
        _setpoint(names, [0.0, math.nan, 0.0]),
        _setpoint(names[:2], [0.0, 0.0]),
        _setpoint(names, [0.0, 0.0]),
        _setpoint([*names, names[0]], [0.0] * 4),
        _setpoint(names, [0.0, 0.0, 0.0], effort=[0.0, math.inf, 0.0]),
        _setpoint(names, [1e200, 0.0, 0.0]),
    ):  # finite but absurd (|q| > ~1e154)
        setpoints.publish(msg)
    client.spin_for(0.3)
    assert len(commands) == n0, f"a bad setpoint produced output: {commands[n0:]}"
    assert proc.poll() is None
    # A huge scale saturates at the URDF effort limit, never beyond.
    n0 = len(commands)
    results = client.set_parameters(NODE, scale=MAX_SCALE)
    assert results[0].successful
    client.spin_until(lambda: len(commands) > n0, 2.0, proc)
    out = _exchange(running, _setpoint(names, [0.3, 0.8, 0.5]))
    assert out is not None
    assert np.all(np.abs(out.effort) <= bare.effort_limits)
    assert np.isclose(np.abs(out.effort), bare.effort_limits).any()
    # effort_limit overrides the URDF's limits (placeholder limits in real URDFs).
    assert client.set_parameters(NODE, effort_limit=[0.5, 0.25, 0.125])[0].successful
    out = _exchange(running, _setpoint(names, [0.3, 0.8, 0.5]))
    assert np.all(np.abs(out.effort) <= [0.5, 0.25, 0.125])
    assert np.abs(out.effort)[1:].tolist() == [0.25, 0.125]
    for bad in ([1.0, 2.0], [1.0, -1.0, 1.0], 0.0):
        result = client.set_parameters(NODE, effort_limit=bad)[0]
        assert not result.successful and "effort_limit" in result.reason, result.reason
    assert client.set_parameters(NODE, effort_limit=bare.effort_limits.tolist())[0].successful
    client.set_parameters(NODE, scale=1.0)


def test_inverse_dynamics_mode(running, models):
    """mode=inverse_dynamics: constant setpoint velocity → q̈ = 0, τ = C(q, q̇)q̇ + g(q)."""
    client, proc, setpoints, _, commands, _ = running
    bare, _ = models
    result = client.set_parameters(NODE, mode="magic")[0]
    assert not result.successful and "valid choices" in result.reason
    assert not client.set_parameters(NODE, acceleration_cutoff_hz=0.0)[0].successful
    assert client.set_parameters(NODE, mode="inverse_dynamics")[0].successful
    client.spin_for(0.1)
    q0, v0 = np.array([0.1, 0.3, -0.2]), np.array([1.5, -2.0, 2.0])
    for k in range(5):
        t = 10.0 + 0.01 * k
        msg = _setpoint(bare.joint_names, q0 + v0 * 0.01 * k)
        msg.velocity = v0.tolist()
        msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), int(round((t % 1) * 1e9))
        out = _exchange(running, msg)
        q = q0 + v0 * 0.01 * k
        # Independent route: Gᵀ·RNEA on the full model with a = 0.
        import pinocchio as pin

        full = bare.full_model
        data = full.createData()
        tau_full = pin.rnea(full, data, bare.full_configuration(q), bare.coupling @ v0, np.zeros(full.nv))
        expected = bare.coupling.T @ tau_full
        np.testing.assert_allclose(out.effort, expected, atol=1e-10)
        assert not np.allclose(expected, bare.gravity(q), atol=1e-3)  # C(q,q̇)q̇ matters
    assert client.set_parameters(NODE, mode="gravity")[0].successful


def test_hostile_parameter_changes_are_refused(running, models):
    """Deleting a parameter, clearing the description, absurd payloads: refused, node alive."""
    client, proc, _, _, commands, _ = running
    bare, _ = models
    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rcl_interfaces.srv import SetParameters

    cli = client.node.create_client(SetParameters, f"{NODE}/set_parameters")
    assert client.spin_until(cli.service_is_ready, 10.0)
    request = SetParameters.Request()
    request.parameters = [ParameterMsg(name="effort_limit")]  # type NOT_SET: `ros2 param delete`
    future = cli.call_async(request)
    assert client.spin_until(future.done, 10.0)
    result = future.result().results[0]
    assert not result.successful and "cannot be deleted" in result.reason
    for bad, needle in (
        ({"urdf_path": ""}, "no robot description"),
        ({"payload.com": [1e300, 0.0, 0.0]}, "within 100 m"),
        ({"payload.shape": "cone"}, "cone"),
    ):
        result = client.set_parameters(NODE, **bad)[0]
        assert not result.successful and needle in result.reason, (bad, result.reason)
    # still computing with the last good model, and later changes still work
    assert client.set_parameters(NODE, scale=1.0)[0].successful
    q = np.array([0.1, 0.2, 0.3])
    out = _exchange(running, _setpoint(bare.joint_names, q))
    np.testing.assert_allclose(out.effort, bare.gravity(q), atol=1e-12)
    assert proc.poll() is None


def test_empty_robot_description_topic_is_ignored(tmp_path):
    """A node fed by the robot_description topic survives an empty message."""
    from conftest import REPO_ROOT
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    domain = fresh_domain_id()
    xml = (REPO_ROOT / "urdf" / "palletizer.urdf").read_text()
    latched = QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )
    with node_process("gravity_compensation_node", domain) as proc, graph_client(domain) as client:
        commands = client.subscribe(JointState, "joint_command")
        description = client.publisher(String, "robot_description", latched)
        setpoints = client.publisher(JointState, "joint_setpoint")
        client.wait_for_subscriber(description, proc=proc)
        description.publish(String(data=""))  # first message empty: no model yet, no crash
        client.spin_for(0.3)
        description.publish(String(data=xml))
        names = ["base_yaw", "shoulder_pitch", "beam_pitch"]
        warm_up(client, setpoints, _setpoint(names, [0.0] * 3), commands, proc)
        description.publish(String(data=""))  # later empty message: keep the model
        client.spin_for(0.3)
        assert proc.poll() is None
        n0 = len(commands)
        setpoints.publish(_setpoint(names, [0.0, 0.4, 0.2]))
        assert client.spin_until(lambda: len(commands) > n0, 5.0, proc)
        bare = RobotModel.from_urdf(xml)
        np.testing.assert_allclose(commands[-1].effort, bare.gravity(np.array([0.0, 0.4, 0.2])), atol=1e-12)


def test_descriptors_carry_the_declared_ranges(running):
    """`ros2 param describe` sees each Param's range (FloatingPointRange) and description."""
    from rcl_interfaces.srv import DescribeParameters

    from gravity_friction_comp.nodes.gravity_compensation_node import PARAMETERS

    client = running[0]
    declared = {p.name: p for p in PARAMETERS}
    names = ["scale", "payload.mass", "acceleration_cutoff_hz", "mode"]
    cli = client.node.create_client(DescribeParameters, f"{NODE}/describe_parameters")
    assert client.spin_until(cli.service_is_ready, 10.0)
    future = cli.call_async(DescribeParameters.Request(names=names))
    assert client.spin_until(future.done, 10.0)
    by_name = {d.name: d for d in future.result().descriptors}
    for name in names:
        d, p = by_name[name], declared[name]
        assert d.description.startswith(p.description)
        if p.low is None and p.high is None:
            assert not d.floating_point_range
        else:
            (rng,) = d.floating_point_range
            assert (rng.from_value, rng.to_value) == (p.low, math.inf if p.high is None else p.high)
    assert by_name["payload.mass"].floating_point_range[0].from_value == 0.0


def test_parameter_names_and_defaults_are_kept():
    """One declaration per parameter, with the names and defaults users' YAML files rely on."""
    from gravity_friction_comp.nodes.gravity_compensation_node import PARAMETERS

    names = [p.name for p in PARAMETERS]
    assert len(names) == len(set(names))
    defaults = {p.name: p.default for p in PARAMETERS}
    assert defaults == {
        "enable": True,
        "scale": 1.0,
        "robot_description": "",
        "urdf_path": "",
        "xacro_args": [""],
        "gravity": [0.0, 0.0, -9.81],
        "payload.mass": 0.0,
        "payload.shape": "point",
        "payload.radius": 0.0,
        "payload.length": 0.0,
        "payload.size": [0.0, 0.0, 0.0],
        "payload.com": [0.0, 0.0, 0.0],
        "payload.rpy": [0.0, 0.0, 0.0],
        "payload.parent": "",
        "payload.attached": False,
        "mode": "gravity",
        "acceleration_cutoff_hz": 20.0,
        "arm_config": "",
        "effort_limit": None,
    }


def test_out_of_range_start_up_value_is_a_clear_error(tmp_path, urdf_path):
    path = write_params(tmp_path / "bad.yaml", NODE, {"urdf_path": urdf_path, "payload.mass": -1.0})
    with node_process("gravity_compensation_node", fresh_domain_id(), path) as proc:
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2, out
    assert "invalid configuration" in out and "payload.mass" in out


def test_per_joint_scale_set_at_runtime(running, models):
    """`ros2 param set /gravity_compensation scale "[...]"`: each joint's term by its factor;
    integers (scalar or list) work; wrong lengths, NaN, beyond MAX_SCALE, bools, strings are
    refused with a reason and the output stays as it was."""
    client, proc, _, _, commands, terms = running
    bare, _ = models
    q = np.array([0.3, 0.6, -0.4])
    g = bare.gravity(q)  # the core model; the node's own route is compared to Pinocchio above
    assert np.all(np.abs(g[1:]) > 1e-3)

    def set_and_exchange(value):
        n0 = len(commands)
        (result,) = client.set_parameters(NODE, scale=value)
        assert result.successful, result.reason
        assert client.spin_until(lambda: len(commands) > n0, 2.0, proc), "no republish"
        return _exchange(running, _setpoint(bare.joint_names, q, effort=[0.25] * 3))

    factors = [0.5, 1.5, -2.0]
    out = set_and_exchange(factors)
    np.testing.assert_allclose(out.effort, 0.25 + np.array(factors) * g, rtol=0, atol=1e-12)
    term = _by_name(terms[-1])
    np.testing.assert_allclose([term[j] for j in bare.joint_names], np.array(factors) * g, atol=1e-12)
    out = set_and_exchange([1, 2, 3])  # an int list, as YAML reads "[1, 2, 3]"
    np.testing.assert_allclose(out.effort, 0.25 + np.array([1.0, 2.0, 3.0]) * g, atol=1e-12)
    out = set_and_exchange(2)  # an int scalar: every joint
    np.testing.assert_allclose(out.effort, 0.25 + 2.0 * g, atol=1e-12)
    out = set_and_exchange([0.5, 1.5, -2.0])
    before = list(out.effort)
    for bad, needle in (
        ([1.0, 1.1], "scale: expected 3 values"),
        ([1.0, 1.1, 1.2, 1.3], "scale: expected 3 values"),
        ([1.0, math.nan, 1.0], "scale"),
        ([1.0, 150.0, 1.0], "within [-100, 100]"),
        (150.0, "scale"),
        ([True, False, True], "Wrong parameter type"),
        (["1", "2", "3"], "Wrong parameter type"),
        ("1.2", "Wrong parameter type"),
        (False, "Wrong parameter type"),
    ):
        (result,) = client.set_parameters(NODE, scale=bad)
        assert not result.successful and needle in result.reason, (bad, result.reason)
    out = _exchange(running, _setpoint(bare.joint_names, q, effort=[0.25] * 3))
    assert list(out.effort) == before  # every refusal left the per-joint scale in force
    value = _get_parameter(client, "scale")
    assert list(value.double_array_value) == [0.5, 1.5, -2.0]
    set_and_exchange(1.0)


def _get_parameter(client, name):
    from rcl_interfaces.srv import GetParameters

    cli = client.node.create_client(GetParameters, f"{NODE}/get_parameters")
    assert client.spin_until(cli.service_is_ready, 10.0)
    future = cli.call_async(GetParameters.Request(names=[name]))
    assert client.spin_until(future.done, 10.0)
    client.node.destroy_client(cli)
    return future.result().values[0]


def _arm_yaml(path, joints, factors):
    path.write_text(f"joints: {list(joints)}\ngravity_scale: {list(factors)}\n")
    return str(path)


def test_arm_config_gravity_scale_is_the_default_of_scale(tmp_path, urdf_path, models):
    """Precedence: scale given (start-up or runtime) > arm_config's gravity_scale > 1.0."""
    bare, _ = models
    q = np.array([0.3, 0.6, -0.4])
    g = bare.gravity(q)
    # by name: the file lists two of the three joints, in another order; base_yaw keeps 1
    first = _arm_yaml(tmp_path / "a.yaml", ["beam_pitch", "shoulder_pitch"], [0.5, 1.5])
    second = _arm_yaml(tmp_path / "b.yaml", ["shoulder_pitch"], [3.0])
    params = {"urdf_path": urdf_path, "arm_config": first}
    path = write_params(tmp_path / "p.yaml", NODE, params)
    domain = fresh_domain_id()
    with node_process("gravity_compensation_node", domain, path) as proc, graph_client(domain) as client:
        commands = client.subscribe(JointState, "joint_command")
        setpoints = client.publisher(JointState, "joint_setpoint")
        msg = _setpoint(bare.joint_names, q)
        warm_up(client, setpoints, msg, commands, proc)

        def output(**change):
            if change:
                (result,) = client.set_parameters(NODE, **change)
                assert result.successful, result.reason
                client.spin_for(0.1)
            n0 = len(commands)
            setpoints.publish(msg)
            assert client.spin_until(lambda: len(commands) > n0, 5.0, proc)
            return np.array(commands[-1].effort)

        np.testing.assert_allclose(output(), [1.0, 1.5, 0.5] * g, rtol=0, atol=1e-12)
        # scale not set yet: a new arm_config brings its own gravity_scale
        np.testing.assert_allclose(output(arm_config=second), [1.0, 3.0, 1.0] * g, atol=1e-12)
        # a bad file is refused with its reason, the last scale kept
        bad = _arm_yaml(tmp_path / "c.yaml", ["no_such_joint"], [2.0])
        (result,) = client.set_parameters(NODE, arm_config=bad)
        assert not result.successful and "no_such_joint" in result.reason
        # setting scale (even to its default value) overrides the file, also across changes
        np.testing.assert_allclose(output(scale=1.0), g, atol=1e-12)
        np.testing.assert_allclose(output(arm_config=first), g, atol=1e-12)
        assert proc.poll() is None
    # scale given at start-up wins over the file from the start
    path = write_params(tmp_path / "p2.yaml", NODE, {**params, "scale": 2})
    with node_process("gravity_compensation_node", domain, path) as proc, graph_client(domain) as client:
        commands = client.subscribe(JointState, "joint_command")
        setpoints = client.publisher(JointState, "joint_setpoint")
        warm_up(client, setpoints, _setpoint(bare.joint_names, q), commands, proc)
        setpoints.publish(_setpoint(bare.joint_names, q))
        assert client.spin_until(lambda: len(commands) > 0, 5.0, proc)
        np.testing.assert_allclose(commands[-1].effort, 2.0 * g, atol=1e-12)


def test_massless_moving_link_is_one_warning_in_the_log(tmp_path):
    """Issue 26 point 7: the node's log names the link without <inertial>, once."""
    import threading
    import xml.etree.ElementTree as ET

    from conftest import REPO_ROOT

    root = ET.fromstring((REPO_ROOT / "urdf" / "palletizer.urdf").read_text())
    link = root.find("link[@name='upper_arm']")
    link.remove(link.find("inertial"))
    urdf = tmp_path / "no_upper_arm_inertial.urdf"
    urdf.write_text(ET.tostring(root, encoding="unicode"))
    path = write_params(tmp_path / "params.yaml", NODE, {"urdf_path": str(urdf)})
    lines: list[str] = []
    logged = threading.Event()
    with node_process("gravity_compensation_node", fresh_domain_id(), path) as proc:

        def read() -> None:
            for line in proc.stdout:
                lines.append(line)
                if "[WARN]" in line and "without <inertial>" in line:
                    logged.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert logged.wait(60), "".join(lines)
        time.sleep(0.5)  # anything logged twice would follow at once
    reader.join(10)
    warned = [s for s in lines if "[WARN]" in s and "without <inertial>" in s]
    assert len(warned) == 1, "".join(lines)
    assert "upper_arm (joint shoulder_pitch)" in warned[0]
