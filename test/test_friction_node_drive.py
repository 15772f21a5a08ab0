"""friction_feedforward_node: the position-error drive over DDS and the off-unless-said log
(issue 17 points 4 and 5).

Independent route: i2rt PR #37's formula ``breakaway * tanh((p_target - p_meas) / eps)``
written out by hand for the YAM Ultra block (breakaway 1.2, 1.8, 1.6, 0.1, 0, 0 N·m).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.slow  # graph-level: starts node processes
from conftest import REPO_ROOT  # noqa: E402
from graph_helpers import fresh_domain_id, node_and_client, node_process, warm_up, write_params  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

NODE = "friction_feedforward"
JOINTS = [f"joint{i}" for i in range(1, 7)]
ULTRA = REPO_ROOT / "test" / "data" / "arms" / "i2rt_yam_ultra.yml"
BREAKAWAY = [1.2, 1.8, 1.6, 0.1, 0.0, 0.0]


def _js(q, stamp=0.0):
    msg = JointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(stamp), round((stamp % 1) * 1e9)
    msg.name = list(JOINTS)
    msg.position = [float(x) for x in q]
    msg.velocity = [0.0] * 6
    msg.effort = [0.0] * 6
    return msg


def test_stuck_follower_gets_the_error_driven_term_then_none_when_stale(tmp_path):
    params = {"joints": JOINTS, "arm_config": str(ULTRA), "drive": "position_error", "eps_position": 0.005}
    q = np.linspace(-0.3, 0.4, 6)
    with node_and_client("friction_feedforward_node", NODE, params, tmp_path) as (proc, client):
        commands = client.subscribe(JointState, "joint_command")
        setpoints = client.publisher(JointState, "joint_setpoint")
        states = client.publisher(JointState, "joint_states")
        client.wait_for_subscriber(states, proc=proc)
        states.publish(_js(q, 100.0))  # measured at t = 100 s
        client.spin_for(0.3)
        warm_up(client, setpoints, _js(q + 0.01, 100.05), commands, proc)
        setpoints.publish(_js(q + 0.01, 100.05))  # 50 ms later: fresh (timeout 0.1 s)
        assert client.spin_until(lambda: len(commands) > 0, 5.0, proc)
        want = [b * math.tanh(0.01 / 0.005) for b in BREAKAWAY]
        np.testing.assert_allclose(commands[-1].effort, want, rtol=1e-12)
        assert round(commands[-1].effort[0], 3) == 1.157
        commands.clear()
        setpoints.publish(_js(q + 0.01, 100.5))  # 0.5 s after the measurement: stale
        assert client.spin_until(lambda: len(commands) > 0, 5.0, proc)
        assert list(commands[-1].effort) == [0.0] * 6
        client.spin_for(0.2)
    out = proc.stdout.read()
    assert "measured position stale" in out


def test_enable_less_block_is_off_and_logged(tmp_path):
    data = yaml.safe_load(ULTRA.read_text())
    del data["friction_comp"]["enable"]
    arm = tmp_path / "no_enable.yml"
    arm.write_text(yaml.safe_dump(data))
    q = np.zeros(6)
    params = {"joints": JOINTS, "arm_config": str(arm)}
    with node_and_client("friction_feedforward_node", NODE, params, tmp_path) as (proc, client):
        commands = client.subscribe(JointState, "joint_command")
        setpoints = client.publisher(JointState, "joint_setpoint")
        msg = _js(q)
        msg.velocity = [0.01] * 6  # moving: the block's values would give 1.157 N·m on joint 1
        warm_up(client, setpoints, msg, commands, proc)
        setpoints.publish(msg)
        assert client.spin_until(lambda: len(commands) > 0, 5.0, proc)
        assert list(commands[-1].effort) == [0.0] * 6
        assert client.set_parameters(NODE, enabled=True)[0].successful  # explicit override
        commands.clear()
        setpoints.publish(msg)
        assert client.spin_until(lambda: len(commands) > 0, 5.0, proc)
        assert commands[-1].effort[0] == pytest.approx(1.2 * math.tanh(0.01 / 0.005), rel=1e-12)
    out = proc.stdout.read()
    assert "friction is off" in out and "no enabled/enable key" in out


def test_position_error_drive_without_joint_states_refused_at_start_up(tmp_path):
    params = {"joints": JOINTS, "arm_config": str(ULTRA), "drive": "position_error", "joint_states_topic": ""}
    path = write_params(tmp_path / "p.yaml", NODE, params)
    with node_process("friction_feedforward_node", fresh_domain_id(), path) as proc:
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2, out
    assert "drive: position_error needs measured" in out and "no measurement source" in out
