"""free_drive_node's bridge gains (issue 19 fresh-user attack): a wrong-length, negative or NaN
``free_drive_kd`` / ``follow_kp`` / ``follow_kd`` is a one-line ConfigError at start-up
(exit 2), never silently dropped; a runtime set is refused with a reason."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

rclpy = pytest.importorskip("rclpy")

from gravity_friction_comp.errors import ConfigError, DimensionError  # noqa: E402
from gravity_friction_comp.nodes.free_drive_node import bridge_gains  # noqa: E402

UNSET = {"free_drive_kd": None, "follow_kp": None, "follow_kd": None}


def test_gains_per_joint_and_a_number_for_every_joint():
    gains = bridge_gains({"free_drive_kd": [0.1, 0.2], "follow_kp": 5.0, "follow_kd": [1, 2]}, 2)
    assert gains == {"free_drive": ([0.0, 0.0], [0.1, 0.2]), "follow": ([5.0, 5.0], [1.0, 2.0])}
    assert bridge_gains({**UNSET, "free_drive_kd": [0.1, 0.2]}, 2) == {"free_drive": ([0.0, 0.0], [0.1, 0.2])}
    assert bridge_gains(UNSET, 2) == {}


@pytest.mark.parametrize(
    ("given", "key", "error"),
    [
        ({"free_drive_kd": [0.1]}, "free_drive_kd", DimensionError),
        (
            {"free_drive_kd": [0.1, 0.1], "follow_kp": [1.0], "follow_kd": [1.0, 1.0]},
            "follow_kp",
            DimensionError,
        ),
        (
            {"free_drive_kd": [0.1, 0.1], "follow_kp": [1.0, 1.0], "follow_kd": [-0.1, math.nan]},
            "follow_kd",
            ConfigError,
        ),
        ({"free_drive_kd": [0.1, -0.1]}, "free_drive_kd", ConfigError),
        ({"free_drive_kd": [0.1, math.inf]}, "free_drive_kd", ConfigError),
        ({"free_drive_kd": ["a", "b"]}, "free_drive_kd", ConfigError),
        ({"free_drive_kd": [0.1, 0.1], "follow_kp": [1.0, 1.0]}, "follow_kd", ConfigError),
        ({"follow_kp": [1.0, 1.0], "follow_kd": [1.0, 1.0]}, "follow_kp", ConfigError),
    ],
)
def test_bad_gains_name_the_parameter(given, key, error):
    with pytest.raises(error) as info:
        bridge_gains({**UNSET, **given}, 2)
    assert info.value.key == key


def _node(context, **values):
    from rclpy.parameter import Parameter

    from gravity_friction_comp.nodes.free_drive_node import FreeDriveNode

    overrides = [Parameter(k, value=v) for k, v in {"joints": ["a", "b"], **values}.items()]
    return FreeDriveNode(context=context, parameter_overrides=overrides, start_parameter_services=False)


def _captured(node) -> dict[str, list[str]]:
    """The node's ``error`` and ``info`` log lines from now on (``{"error": [...], "info": [...]}``);
    its other logger calls go to its real logger."""
    logged: dict[str, list[str]] = {"error": [], "info": []}
    real = node.get_logger()

    class Logger:
        def __getattr__(self, name):
            if name in logged:
                return lambda text, **kw: logged[name].append(text)
            return getattr(real, name)

    logger = Logger()
    node.get_logger = lambda: logger
    return logged


@pytest.mark.parametrize(
    "values",
    [
        {"free_drive_kd": [0.1]},
        {"free_drive_kd": [0.1, 0.1], "follow_kp": [1.0], "follow_kd": [1.0, 1.0]},
        {"free_drive_kd": [0.1, 0.1], "follow_kp": [1.0, 1.0], "follow_kd": [-0.1, math.nan]},
    ],
)
def test_node_refuses_bad_gains_at_start_up(context, values):
    with pytest.raises(ConfigError):
        _node(context, **values)


def test_runtime_gains_checked_against_joints_bad_refused_with_the_reason(context):
    from rclpy.parameter import Parameter

    node = _node(context, free_drive_kd=[0.1, 0.2], follow_kp=[3.0, 4.0], follow_kd=[0.5, 0.6])
    try:
        kept = {"free_drive": ([0.0, 0.0], [0.1, 0.2]), "follow": ([3.0, 4.0], [0.5, 0.6])}
        assert node._gains == kept
        for name, bad, needle in (
            ("follow_kd", [-0.1, math.nan], "follow_kd: values must be finite"),
            ("follow_kp", [1.0], "follow_kp: expected 2 values (one per joint), got 1"),
            ("free_drive_kd", [0.1, -1.0], "free_drive_kd: values must be >= 0"),
            ("free_drive_kd", "x", "free_drive_kd: expected a number or a list of numbers"),
        ):
            (result,) = node.set_parameters([Parameter(name, value=bad)])
            assert not result.successful and needle in result.reason, (name, result.reason)
            assert node._gains == kept
        assert list(node.get_parameter("follow_kd").value) == [0.5, 0.6]
        # a good value is taken; the mode in force gets it with its next setpoint
        node._gains_for = "free_drive"  # as after the first free-drive setpoint
        (result,) = node.set_parameters([Parameter("free_drive_kd", value=[0.3, 0.4])])
        assert result.successful, result.reason
        assert node._gains["free_drive"] == ([0.0, 0.0], [0.3, 0.4]) and node._gains_for is None
    finally:
        node.destroy_node()


def test_executable_exits_2_with_one_line(tmp_path):
    """The brief's command: ``--params-file fd.yaml`` with ``free_drive_kd: [0.1]`` for 2 joints."""
    fd = tmp_path / "fd.yaml"
    fd.write_text("free_drive:\n  ros__parameters:\n    joints: [a, b]\n    free_drive_kd: [0.1]\n")
    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gravity_friction_comp.nodes.free_drive_node",
            "--ros-args",
            "--params-file",
            str(fd),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        "[free_drive] invalid configuration: free_drive_kd: expected 2 values (one per joint), got 1"
    ]
    assert "free_drive on" not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_gains_reach_the_bridge_on_a_setpoint_and_a_refusal_is_logged(context):
    """Through the real set_parameters service of a stand-in bridge (kp/kd parameters, kd ≤ 1
    accepted): free_drive's gains arrive with its first setpoint, a runtime free_drive_kd
    arrives with the next one, and a value the bridge refuses is logged as an ERROR."""
    import time

    from rcl_interfaces.msg import SetParametersResult
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    bridge = rclpy.create_node("mit_bridge", context=context)
    bridge.declare_parameter("kp", [80.0, 10.0])
    bridge.declare_parameter("kd", [5.0, 1.5])

    def refuse_kd_above_1(params):
        for p in params:
            if p.name == "kd" and max(p.value) > 1.0:
                return SetParametersResult(successful=False, reason="kd above the motor's 1.0")
            if p.name == "kp" and max(p.value) > 200.0:
                return SetParametersResult(successful=False, reason="kp above the motor's 200")
        return SetParametersResult(successful=True)

    bridge.add_on_set_parameters_callback(refuse_kd_above_1)
    node = _node(
        context, free_drive_kd=[0.1, 0.2], follow_kp=[3.0, 4.0], follow_kd=[0.5, 0.6], stale_timeout=5.0
    )
    errors = _captured(node)["error"]
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(bridge)
    executor.add_node(node)

    def spin_until(done, seconds=10.0):
        end = time.monotonic() + seconds
        state = JointState(name=["a", "b"], position=[0.1, 0.2])
        while time.monotonic() < end and not done():
            state.header.stamp = node.get_clock().now().to_msg()
            node.on_state(state)  # a measured state: one free-drive setpoint
            executor.spin_once(timeout_sec=0.02)
        return done()

    def gains():
        return list(bridge.get_parameter("kp").value), list(bridge.get_parameter("kd").value)

    try:
        assert spin_until(lambda: gains() == ([0.0, 0.0], [0.1, 0.2])), gains()
        (result,) = node.set_parameters([Parameter("free_drive_kd", value=[0.3, 0.4])])
        assert result.successful, result.reason
        assert spin_until(lambda: gains() == ([0.0, 0.0], [0.3, 0.4])), gains()
        (result,) = node.set_parameters([Parameter("free_drive_kd", value=[2.0, 0.4])])
        assert result.successful, result.reason  # this node's rule holds; the motor's is the bridge's
        assert spin_until(lambda: bool(errors)), gains()
        assert errors == ["mit_bridge refused the free_drive gains: kd above the motor's 1.0"]
        assert gains() == ([0.0, 0.0], [0.3, 0.4])
        # follow gains beyond the motor's kp: kp and kd refused together (not kd alone), and
        # the node back in free drive (following with the bridge's kp 0 would only look engaged)
        (result,) = node.set_parameters([Parameter("free_drive_kd", value=[0.3, 0.4])])
        errors.clear()
        results = node.set_parameters(
            [Parameter("follow_kp", value=[300.0, 4.0]), Parameter("follow_kd", value=[0.7, 0.8])]
        )
        assert all(r.successful for r in results)
        (result,) = node.set_parameters([Parameter("mode", value="follow")])
        assert result.successful, result.reason
        follow = JointState(name=["a", "b"], position=[0.1, 0.2])
        end = time.monotonic() + 10.0
        while time.monotonic() < end and node.source.mode == "follow":
            node._on_follow(follow)  # noqa: SLF001 - a follow setpoint: the follow gains are sent
            executor.spin_once(timeout_sec=0.02)
        assert errors[0] == "mit_bridge refused the follow gains: kp above the motor's 200"
        assert node.get_parameter("mode").value == "free_drive" and node.source.mode == "free_drive"
        assert gains() == ([0.0, 0.0], [0.3, 0.4])  # kd 0.7/0.8 not applied without its kp
    finally:
        executor.shutdown()
        node.destroy_node()
        bridge.destroy_node()


def test_feedback_effort_topic_reaches_the_free_drive_setpoint(context):
    """Teleoperation's force feedback (issue 31): a ``feedback_effort`` message is the effort
    of the next free-drive setpoint (the stages add g and friction to it)."""
    from sensor_msgs.msg import JointState

    node = _node(context)
    try:
        sent = []
        node._pub.publish = sent.append
        state = JointState()
        state.name, state.position = ["a", "b"], [0.1, 0.2]
        node.on_state(state)
        assert list(sent[-1].effort) == []  # no feedback: no effort field
        fb = JointState()
        fb.name, fb.effort = ["b"], [-0.4]
        node.on_feedback(fb)
        node.on_state(state)
        assert list(sent[-1].effort) == [0.0, -0.4]
        fb.effort = [float("nan")]
        node.on_feedback(fb)  # refused with a warning, the last good one kept
        node.on_state(state)
        assert list(sent[-1].effort) == [0.0, -0.4]
    finally:
        node.destroy_node()


def test_a_measurement_that_keeps_jumping_is_not_logged_once_per_sample(context):
    """Every sample a jump or a recovery step gave a new fault text (the jump, then ``(9 good
    sample(s) still needed)``): an ERROR line per ``joint_states`` sample, 500 lines/s from a
    500 Hz bridge. Now the first fault is logged at once and a changed reason while faulted
    once per throttle period (the throttle's clock frozen here: one period), the way back at once."""
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.throttle import Throttle

    node = _node(context, stale_timeout=5.0, recover_samples=2)
    logged = _captured(node)
    errors, infos = logged["error"], logged["info"]
    node._fault_throttle = Throttle(2.0, clock=lambda: 0.0)
    try:
        msg = JointState()
        msg.name = ["a", "b"]
        for k in range(60):  # 0, 0.5, 0.5, 0, 0, 0.5, ...: a jump, then one good sample
            msg.position = [0.5 * ((k + 1) // 2 % 2), 0.0]
            node.on_state(msg)
        assert len(errors) == 1 and "jumped 0.500 rad" in errors[0], errors[:3]
        for _ in range(3):  # steady: recovers
            node.on_state(msg)
        assert infos[-1] == "free drive: measured state good again, setpoints resumed"
        msg.position = [0.0, 0.0] if msg.position[0] else [0.5, 0.0]
        node.on_state(msg)  # a new fault after recovering: logged at once
        assert len(errors) == 2 and "jumped 0.500 rad" in errors[1]
    finally:
        node.destroy_node()
