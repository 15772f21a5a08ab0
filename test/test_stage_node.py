"""Shared node plumbing: executor choice, and a stage executable on each executor over DDS."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: starts node processes (fast tier: -m "not slow")

from graph_helpers import fresh_domain_id, node_and_client, node_process, warm_up, write_params  # noqa: E402

from gravity_friction_comp.errors import ConfigError  # noqa: E402
from gravity_friction_comp.nodes.runtime import EXECUTOR_ENV, executor_choice, make_executor  # noqa: E402


def _has_events_executor() -> bool:
    try:
        from rclpy.experimental import EventsExecutor  # noqa: F401
    except ImportError:
        return False
    return True


def test_executor_choice_reads_the_environment():
    events = "events" if _has_events_executor() else "single"
    assert executor_choice({}) == events
    assert executor_choice({EXECUTOR_ENV: ""}) == events
    assert executor_choice({EXECUTOR_ENV: " Events "}) == events
    assert executor_choice({EXECUTOR_ENV: "single"}) == "single"
    with pytest.raises(ConfigError, match="valid choices: events, single"):
        executor_choice({EXECUTOR_ENV: "multi"})


def test_make_executor_builds_the_chosen_kind(monkeypatch):
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    context = Context()
    rclpy.init(context=context, domain_id=fresh_domain_id())
    try:
        monkeypatch.setenv(EXECUTOR_ENV, "single")
        executor = make_executor(context)
        assert isinstance(executor, SingleThreadedExecutor)
        executor.shutdown()
        if _has_events_executor():
            monkeypatch.setenv(EXECUTOR_ENV, "events")
            executor = make_executor(context)
            assert type(executor).__name__ == "EventsExecutor"
            executor.shutdown()
    finally:
        rclpy.try_shutdown(context=context)


@pytest.mark.parametrize("executor", ["events", "single"])
def test_gravity_executable_on_each_executor(tmp_path, repo_root, executor):
    """Same effort as the core, parameter service answers, SIGINT exits 0 (no hang)."""
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.model.robot_model import RobotModel

    model = RobotModel.from_urdf(repo_root / "urdf/palletizer.urdf")
    params = {"urdf_path": str(repo_root / "urdf/palletizer.urdf")}
    with node_and_client(
        "gravity_compensation_node", "gravity_compensation", params, tmp_path, env={EXECUTOR_ENV: executor}
    ) as (proc, client):
        commands = client.subscribe(JointState, "joint_command")
        setpoints = client.publisher(JointState, "joint_setpoint")
        msg = JointState()
        msg.name = list(model.joint_names)
        msg.position = [0.1, 0.7, -0.4]
        warm_up(client, setpoints, msg, commands, proc)
        setpoints.publish(msg)
        assert client.spin_until(lambda: len(commands) > 0, 5.0, proc)
        np.testing.assert_array_equal(commands[-1].effort, model.gravity([0.1, 0.7, -0.4]))
        assert client.set_parameters("gravity_compensation", scale=0.5)[0].successful
        proc.send_signal(2)
        assert proc.wait(timeout=10) == 0


def test_unknown_executor_is_a_clear_start_up_error(tmp_path, repo_root):
    params = write_params(
        tmp_path / "g.yaml", "gravity_compensation", {"urdf_path": str(repo_root / "urdf/palletizer.urdf")}
    )
    with node_process(
        "gravity_compensation_node", fresh_domain_id(), params, env={EXECUTOR_ENV: "turbo"}
    ) as proc:
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "GRAVITY_FRICTION_COMP_EXECUTOR='turbo' unknown" in out
