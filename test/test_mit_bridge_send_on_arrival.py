"""mit_bridge_node sends a command's frames when it arrives; its timer only fills periods
without one; a frame counter on the node's virtual bus never sees two frames for a motor in
one timer period.

The node runs in this process (a python-can ``virtual`` bus is visible only inside its
process) and is not spun: the test calls its command callback and its timer callback in a
chosen order, so the timing is the test's, not the machine's.
"""

from __future__ import annotations

import collections

import pytest
import yaml

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # starts rclpy and a simulated arm
from conftest import REPO_ROOT  # noqa: E402
from graph_helpers import GraphClient, fresh_domain_id  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.mit.bus import CanSettings, open_bus  # noqa: E402
from gravity_friction_comp.mit.codec import unpack_command_codes  # noqa: E402

JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
IDS = (1, 2, 3)


@pytest.fixture
def bridge(tmp_path):
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    sim = tmp_path / "sim.yaml"
    joints = {n: {"initial_position": 0.1} for n in JOINTS}
    sim.write_text(
        yaml.safe_dump({"simulation": {"version": 1, "physics_rate_hz": 1000.0, "joints": joints}})
    )
    params = {
        "joints": JOINTS,
        "can_id": list(IDS),
        "master_id": [17, 18, 19],
        "motor_type": ["DM4310", "DM4340", "DM4310"],
        "kp": [20.0, 30.0, 15.0],
        "kd": [0.5, 1.0, 0.3],
        "rate_hz": 500.0,
        "command_timeout": 10.0,  # the watchdog stays out of this test's way
        "simulate": True,
        "sim_config": str(sim),
        "urdf_path": str(REPO_ROOT / "urdf" / "palletizer.urdf"),
    }
    client = GraphClient(fresh_domain_id())
    node = MitBridgeNode(
        context=client.context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
    )
    node.destroy_timer(node._loop_timer)  # noqa: SLF001 - the test calls the timer callback itself
    spy = open_bus(CanSettings("virtual", node.settings.channel, 1_000_000))
    try:
        yield node, spy
    finally:
        spy.shutdown()
        node.destroy_node()
        client.close()


def _command(q: float) -> JointState:
    msg = JointState()
    msg.name = list(JOINTS)
    msg.position = [q, q, q]
    msg.effort = [0.0, 0.0, 0.0]
    return msg


def _counts(spy) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    while (m := spy.recv(timeout=0.0)) is not None:
        if m.arbitration_id in IDS:
            counts[m.arbitration_id] += 1
    return counts


def _position_code(spy, can_id: int) -> int | None:
    code = None
    while (m := spy.recv(timeout=0.0)) is not None:
        if m.arbitration_id == can_id:
            code = unpack_command_codes(bytes(m.data)).p
    return code


def test_a_command_leaves_on_arrival_not_on_the_timer(bridge):
    node, spy = bridge
    node._loop()  # noqa: SLF001 - one period closes: the hold frames of start-up
    _counts(spy)
    node.accept_command(_command(0.2))
    assert _counts(spy) == {1: 1, 2: 1, 3: 1}  # before any timer callback
    node.accept_command(_command(0.3))  # same period: waits
    assert _counts(spy) == {}
    node._loop()  # noqa: SLF001 - the period had its exchange: the timer sends nothing
    assert _counts(spy) == {}
    node.accept_command(_command(0.4))  # new period: at once, carrying the newest command
    code_04 = _position_code(spy, 1)
    node._loop()  # noqa: SLF001
    node._loop()  # noqa: SLF001 - commands stopped: the timer keeps the motor fed
    assert _position_code(spy, 1) == code_04
    schedule = node.send_schedule
    assert (schedule.on_arrival, schedule.deferred) == (2, 1)


def test_never_more_than_one_frame_per_motor_per_period(bridge):
    node, spy = bridge
    # commands 0..3 per period (faster, equal, slower, stopped), ticks closing each period
    pattern = [1, 1, 2, 3, 0, 0, 1, 0, 2, 1, 1, 0, 0, 0, 3, 1]
    q = 0.1
    for per_period in pattern * 4:
        for _ in range(per_period):
            q += 0.001
            node.accept_command(_command(q))
        node._loop()  # noqa: SLF001
        counts = _counts(spy)
        assert counts == {1: 1, 2: 1, 3: 1}, (per_period, counts)  # fed, and at most once
