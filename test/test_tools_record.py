"""The record tool over DDS (issue 16 point 4): a small publisher → ``record`` (subprocess) →
rosbag2 (MCAP, sqlite3) or CSV → read back by ``identify_friction``.

Independent route: the published arrays themselves (CDR carries float64 exactly; stamps
to the nanosecond), and the closed-form friction of conftest.sweep_log (0.15 N·m Coulomb).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml
from conftest import REPO_ROOT, sweep_log

pytestmark = pytest.mark.slow  # graph-level: a recorder process and DDS

pytest.importorskip("rclpy")
from graph_helpers import GraphClient, fresh_domain_id, namespace_args, own_namespace  # noqa: E402

from gravity_friction_comp.ident.joint_log import load_log  # noqa: E402
from gravity_friction_comp.tools.identify_friction import main as identify_main  # noqa: E402

T0 = 1000.0  # [s] stamp of the first message (0 would mean "unstamped")


def _truth(v):
    return 0.15 * np.sign(v) + 0.05 * v


def _recorder(domain: int, namespace: str, *args: str) -> subprocess.Popen:
    """The record tool under ``namespace``: it hears only this test's publishers."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    cmd = [sys.executable, "-m", "gravity_friction_comp.tools.record", *args, *namespace_args(namespace)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _publish(log, topics, count: int, recorder: subprocess.Popen, domain: int, namespace: str) -> str:
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    client = GraphClient(domain, namespace)
    try:
        qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=count, reliability=ReliabilityPolicy.RELIABLE)
        pubs = [client.node.create_publisher(JointState, t, qos) for t in topics]
        for pub in pubs:
            client.wait_for_subscriber(pub, 20.0, recorder)
        for k in range(count):
            msg = JointState()
            stamp = T0 + log.time[k]
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(stamp), round((stamp % 1) * 1e9)
            msg.name = list(log.joint_names)
            msg.position = log.position[k].tolist()
            msg.velocity = log.velocity[k].tolist()
            msg.effort = log.effort[k].tolist()
            for pub in pubs:
                pub.publish(msg)
            time.sleep(0.0005)  # ~1 kHz, a chain's rate (a burst beyond the history is lost)
        out, _ = recorder.communicate(timeout=60)
    finally:
        client.close()
    assert recorder.returncode == 0, out
    return out


def _assert_same(read, log, count: int) -> None:
    assert read.joint_names == log.joint_names
    np.testing.assert_array_equal(read.position, log.position[:count])
    np.testing.assert_array_equal(read.velocity, log.velocity[:count])
    np.testing.assert_array_equal(read.effort, log.effort[:count])
    np.testing.assert_allclose(read.time, log.time[:count] - log.time[0], rtol=0, atol=2e-9)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_bag_round_trip_and_identify_friction_reads_it(tmp_path, storage, capsys):
    _, log = sweep_log(_truth)
    count = log.time.size  # 3200 messages, 16 s of 5 ms samples
    bag = tmp_path / "run"
    domain, ns = fresh_domain_id(), own_namespace()
    recorder = _recorder(
        domain, ns, "--out", str(bag), "--storage", storage, "--count", str(count), "--duration", "60"
    )
    out = _publish(log, ["joint_states"], count, recorder, domain, ns)
    assert f"{count} {ns}/joint_states" in out
    assert (
        yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"][
            "storage_identifier"
        ]
        == storage
    )
    _assert_same(load_log(bag, f"{ns}/joint_states"), log, count)
    code = identify_main(
        [
            "--bag",
            str(bag),
            "--topic",
            f"{ns}/joint_states",
            "--urdf",
            str(REPO_ROOT / "urdf" / "palletizer.urdf"),
            "--out-dir",
            str(tmp_path / "f"),
            "--no-plots",
        ]
    )
    assert code == 0, capsys.readouterr().err
    doc = yaml.safe_load((tmp_path / "f" / "friction_identified.yaml").read_text())
    assert doc["joints"] == ["base_yaw"]
    assert doc["friction_comp"]["breakaway"][0] == pytest.approx(0.15, abs=0.01)


def test_csv_with_command_round_trip(tmp_path):
    _, log = sweep_log(_truth)
    count = 300
    csv = tmp_path / "run.csv"
    domain, ns = fresh_domain_id(), own_namespace()
    recorder = _recorder(
        domain, ns, "--out", str(csv), "--command", "--count", str(count), "--duration", "60"
    )
    _publish(log, ["joint_states", "joint_command"], count, recorder, domain, ns)
    _assert_same(load_log(csv), log, count)
    # the command topic is recorded once the joint_states count is reached: most of it
    command = load_log(tmp_path / "run_command.csv", require=("position",))
    assert count - 5 <= command.time.size <= count
    np.testing.assert_array_equal(command.position, log.position[: command.time.size])


def test_existing_output_and_nothing_received_exit_2(tmp_path):
    (tmp_path / "taken").mkdir()
    proc = _recorder(fresh_domain_id(), own_namespace(), "--out", str(tmp_path / "taken"), "--count", "1")
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "exists" in out and "Traceback" not in out
    proc = _recorder(
        fresh_domain_id(), own_namespace(), "--out", str(tmp_path / "empty"), "--duration", "0.5"
    )
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "no message received" in out and not (tmp_path / "empty").exists()
