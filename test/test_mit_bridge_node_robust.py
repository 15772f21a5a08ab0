"""mit_bridge_node never dies on one message or one ``ros2 param set`` (issue 26 points 1-2,
issue 32 points 3 and 6): a finite command that overflows once mapped to the motor, a scalar
or a string for a gain array, a gain beyond the motor's range; and the shutdown log line.

The node runs in this process on a python-can ``virtual`` bus (no motors: nothing answers),
driven over DDS by a test client; a spy bus on the node's channel reads the frames it sends.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: DDS between the test client and the node
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from graph_helpers import GraphClient, fresh_domain_id, own_namespace  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.mit.bus import CanSettings, open_bus  # noqa: E402
from gravity_friction_comp.mit.codec import decode_command  # noqa: E402
from gravity_friction_comp.mit.motor_table import motor_limits  # noqa: E402

NODE = "mit_bridge"
JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
GOOD = [0.1, 0.2, 0.3]  # [rad]
DM4310 = motor_limits("DM4310")  # P_MAX 12.5 rad, V_MAX 30 rad/s, T_MAX 10 N·m, KP 500, KD 5
P_LSB = 2 * DM4310.p_max / 65535
HUGE = 1e308


def _bridge(client: GraphClient, gear: float, **extra):
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    params = {
        "joints": JOINTS,
        "can_id": [1, 2, 3],
        "master_id": [17, 18, 19],
        "motor_type": ["DM4310"] * 3,
        "gear_ratio": [gear] * 3,
        "kp": [10.0, 10.0, 10.0],
        "kd": [0.2, 0.2, 0.2],
        "rate_hz": 200.0,
        "command_timeout": 30.0,  # the last good command stays the one sent
        "diagnostics_rate_hz": 20.0,
        "can.interface": "virtual",
        "can.channel": f"robust_{os.getpid()}_{gear:g}_{len(extra)}",
        **extra,
    }
    node = MitBridgeNode(
        context=client.context,
        namespace=client.node.get_namespace(),
        parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
    )
    client.executor.add_node(node)
    return node


@pytest.fixture
def client():
    c = GraphClient(fresh_domain_id(), own_namespace())  # the bridge runs there too
    yield c
    c.close()


def _command(position, velocity=(0.0, 0.0, 0.0), effort=(0.0, 0.0, 0.0)) -> JointState:
    msg = JointState()
    msg.name = list(JOINTS)
    msg.position = [float(x) for x in position]
    msg.velocity = [float(x) for x in velocity]
    msg.effort = [float(x) for x in effort]
    return msg


def _last_frame(client, spy, can_id=1):
    """The last command frame to ``can_id`` sent in the next 60 ms (or the first after), decoded
    (motor side)."""
    while spy.recv(timeout=0.0) is not None:
        pass
    client.spin_for(0.06)
    frames: list[bytes] = []

    def read() -> bool:
        while (m := spy.recv(timeout=0.0)) is not None:
            if m.arbitration_id == can_id:
                frames.append(bytes(m.data))
        return bool(frames)

    assert client.spin_until(read, 5.0), "the bridge stopped sending"
    return decode_command(frames[-1], DM4310)


def _overflows(field: str, value: float, gear: float) -> bool:
    # the joint → motor map: θ = r·q, θ̇ = r·q̇, τ_θ = τ/r (offset 0, direction +1)
    return math.isinf(value * gear if field in ("position", "velocity") else value / gear)


def _rejected(diags) -> int:
    for array in reversed(diags):
        for st in array.status:
            if f"/{NODE}: bus " in st.name:  # the test's own bridge, in its namespace
                return int({kv.key: kv.value for kv in st.values}["rejected_commands"])
    raise AssertionError("no bus status")


@pytest.mark.parametrize("gear", [0.5, 2.0, 10.0])
def test_a_command_that_overflows_on_the_motor_side_is_refused_and_the_bridge_stays_up(client, gear):
    """Issue 26 point 1: velocity or position 1e308 at gear 2 or 10, effort 1e308 at gear
    0.5 overflow once mapped to the motor; each is refused (counted, the previous command
    kept on the bus), never raised out of the callback. What does not overflow is taken."""
    node = _bridge(client, gear)
    spy = open_bus(CanSettings("virtual", node.settings.channel, 1_000_000))
    try:
        pub = client.publisher(JointState, "joint_command")
        diags = client.subscribe(DiagnosticArray, "/diagnostics", nodes=[NODE])
        client.wait_for_subscriber(pub)
        good = _command(GOOD)
        assert client.spin_until(
            lambda: (pub.publish(good) or True) and node._core.status()[0].behavior == "command"
        )
        assert _last_frame(client, spy).position == pytest.approx(gear * GOOD[0], abs=P_LSB)
        expected = 0
        for field in ("position", "velocity", "effort"):
            for value in (HUGE, -HUGE):
                values = {"position": list(GOOD), "velocity": [0.0] * 3, "effort": [0.0] * 3}
                values[field][0] = value
                pub.publish(_command(values["position"], values["velocity"], values["effort"]))
                frame = _last_frame(client, spy)  # spins: the node takes the message
                if _overflows(field, value, gear):
                    expected += 1
                    # refused: the previous (good) command still goes out
                    assert frame.position == pytest.approx(gear * GOOD[0], abs=P_LSB), (field, value)
                    assert frame.velocity == pytest.approx(0.0, abs=2 * DM4310.v_max / 4095)
                elif field == "velocity":  # taken: saturated at ±V_MAX by the encoder
                    assert frame.velocity == pytest.approx(math.copysign(DM4310.v_max, value), rel=1e-3)
                assert node._rejected == expected, (field, value)
                pub.publish(good)
                _last_frame(client, spy)
        assert expected == (2 if gear < 1 else 4)  # effort at 0.5; position and velocity at 2, 10
        # a hostile run: 300 commands, a third of them a huge value in a random field
        rng = np.random.default_rng(26)
        for _ in range(300):
            values = {"position": list(GOOD), "velocity": [0.0] * 3, "effort": [0.0] * 3}
            field = ("position", "velocity", "effort")[rng.integers(3)]
            value = float(rng.choice([1.0, HUGE, -HUGE, 1e300]))
            values[field][rng.integers(3)] = value
            expected += _overflows(field, value, gear)
            pub.publish(_command(values["position"], values["velocity"], values["effort"]))
            client.spin_for(0.002)
        client.spin_for(0.2)
        assert node._rejected == expected
        n = len(diags)
        assert client.spin_until(lambda: len(diags) > n + 1)
        assert _rejected(diags) == expected
    finally:
        spy.shutdown()
        client.executor.remove_node(node)
        node.destroy_node()


def test_gain_parameters_over_the_set_parameters_service(client):
    """Issue 26 point 2 and issue 32 point 3 over DDS (the service ``ros2 param set`` calls):
    a scalar gain means every joint; a string, a wrong length or a gain beyond the motor's
    encodable range (KP_MAX 500, KD_MAX 5 at gear 1) is refused with the joint, the value and
    the range; the bridge keeps its gains and stays up."""
    node = _bridge(client, 1.0)
    try:
        (ok,) = client.set_parameters(NODE, kp=5.0)
        assert ok.successful, ok.reason
        assert node._core.gains[0].tolist() == [5.0, 5.0, 5.0]
        assert list(node.get_parameter("kp").value) == [5.0, 5.0, 5.0]
        (ok,) = client.set_parameters(NODE, kd=5)  # an int, at the top of the range
        assert ok.successful, ok.reason
        assert node._core.gains[1].tolist() == [5.0, 5.0, 5.0]
        for name, value, needles in (
            ("kp", [1e9, 1e9, 1e9], ("base_yaw", "kp 1e+09", "0..500")),
            ("kp", 1000, ("base_yaw", "kp 1000", "0..500")),
            ("kd", 1e9, ("base_yaw", "kd 1e+09", "0..5")),
            ("kd", [0.1, 0.1, 6.0], ("beam_pitch", "kd 6", "0..5")),
            ("kp", "abc", ("Wrong parameter type for kp",)),
            ("kp", [1.0, 2.0], ("3 values",)),
            ("kd", [True, True, True], ("kd",)),
        ):
            (result,) = client.set_parameters(NODE, **{name: value})
            assert not result.successful, (name, value)
            for needle in needles:
                assert needle in result.reason, (name, value, result.reason)
        assert node._core.gains[0].tolist() == [5.0, 5.0, 5.0]
        assert node._core.gains[1].tolist() == [5.0, 5.0, 5.0]
        assert list(node.get_parameter("kp").value) == [5.0, 5.0, 5.0]
        # every array parameter of the bridge, in process: never raises, refusals give a reason
        from gravity_friction_comp.nodes.mit_bridge_parameters import PARAMETERS

        for p in PARAMETERS:
            if not p.type.endswith("[]"):
                continue
            for value in (5.0, 5, "abc", [1.0], ["a", "b", "c"]):
                (result,) = node.set_parameters([Parameter(p.name, value=value)])
                assert result.successful == (p.name in ("kp", "kd") and value in (5.0, 5)), (p.name, value)
                assert result.successful or result.reason
        assert node._core.gains[0].tolist() == [5.0, 5.0, 5.0]
    finally:
        client.executor.remove_node(node)
        node.destroy_node()


def test_gains_beyond_the_motor_range_refused_at_start_up(client):
    """Issue 32 point 3 at start-up: kp 600 at gear 1 on a DM4310 (KP_MAX 500) is refused,
    the joint, the value and the range named; at gear 2 the joint range is 500 · 2² = 2000."""
    from gravity_friction_comp.errors import ConfigError

    with pytest.raises(ConfigError, match=r"joint base_yaw: kp 600 is beyond the motor's range 0\.\.500"):
        _bridge(client, 1.0, kp=[600.0, 10.0, 10.0])
    node = _bridge(client, 2.0, kp=[2000.0, 10.0, 10.0])
    client.executor.remove_node(node)
    node.destroy_node()


def test_shutdown_logs_the_motors_disabled_and_those_that_did_not_answer(client, capfd):
    """Issue 32 point 6: one INFO line at shutdown naming the motors disabled and, here
    (no motors on the bus), that none answered the disable frame."""
    node = _bridge(client, 1.0)
    client.spin_for(0.05)
    client.executor.remove_node(node)
    capfd.readouterr()
    node.destroy_node()
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if "shutdown: disable sent" in line]
    assert len(lines) == 1, err
    assert "INFO" in lines[0]
    assert f"disable sent to 3 motors {JOINTS}" in lines[0]
    assert f"no reply after it from {JOINTS}" in lines[0]
