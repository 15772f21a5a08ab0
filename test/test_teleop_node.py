"""teleop_node (issue 31): parameters checked at start-up and at runtime, the link and the
feedback driven through the node's callbacks (no DDS graph: calls on the node object)."""

from __future__ import annotations

import math

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from gravity_friction_comp.errors import ConfigError  # noqa: E402

J = ["base_yaw", "shoulder_pitch", "beam_pitch"]


def _node(context, repo_root, **values):
    from rclpy.parameter import Parameter

    from gravity_friction_comp.nodes.teleop_node import TeleopNode

    base = {
        "joints": J,
        "urdf_path": str(repo_root / "urdf" / "palletizer.urdf"),
        "arm_config": str(repo_root / "config" / "palletizer_arm.yaml"),
        "leader_effort_limit": [10.0, 28.0, 10.0],
    }
    overrides = [Parameter(k, value=v) for k, v in {**base, **values}.items()]
    return TeleopNode(context=context, parameter_overrides=overrides, start_parameter_services=False)


def _state(names, position):
    from sensor_msgs.msg import JointState

    msg = JointState()
    msg.name, msg.position = list(names), [float(x) for x in position]
    return msg


def _effort(names, effort):
    from sensor_msgs.msg import JointState

    msg = JointState()
    msg.name, msg.effort = list(names), [float(x) for x in effort]
    return msg


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"feedback.gain": 1.5}, "within [0, 1]"),
        ({"feedback.cap": -1.0}, ">= 0"),
        ({"leader_effort_limit": [10.0]}, "one per mapped joint"),
        # was taken: the feedback bounded by the cap alone (1e308 allowed)
        ({"leader_effort_limit": None}, "leader_effort_limit: no effort limit"),
        ({"urdf_path": ""}, "urdf_path"),
        # were published in every follower setpoint (NaN; base_yaw named twice)
        (
            {
                "joints": J[:2],
                "leader_effort_limit": [10.0, 28.0],
                "fixed_joints": ["beam_pitch"],
                "fixed_positions": [math.nan],
            },
            "finite values",
        ),
        (
            {
                "joints": J[:2],
                "leader_effort_limit": [10.0, 28.0],
                "fixed_joints": ["beam_pitch"],
                "fixed_positions": [math.inf],
            },
            "finite values",
        ),
        ({"fixed_joints": ["base_yaw"], "fixed_positions": [0.0]}, "duplicate"),
    ],
)
def test_bad_start_up_values_are_refused(context, repo_root, values, needle):
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        _node(context, repo_root, **values)


@pytest.mark.parametrize("rate", [1e9, math.inf])
def test_a_rate_beyond_the_shapers_maximum_is_refused_with_its_name(context, repo_root, rate):
    """1e9 Hz was taken (a 1 ns timer: the node busy for ever); inf was refused without the
    parameter's name ("period must be > 0")."""
    from rclpy.exceptions import InvalidParameterValueException

    with pytest.raises((ConfigError, InvalidParameterValueException), match="rate_hz"):
        _node(context, repo_root, rate_hz=rate)


def test_runtime_feedback_parameters_validated_and_applied(context, repo_root):
    from rclpy.parameter import Parameter

    node = _node(context, repo_root, **{"feedback.enable": True, "feedback.gain": 0.5, "feedback.cap": 2.0})
    try:
        for name, bad, needle in (
            ("feedback.gain", 2.0, "within [0, 1]"),
            ("feedback.gain", [0.1, 0.2], "one per mapped joint"),
            ("feedback.cap", math.nan, "finite"),
            ("feedback.enable", "yes", ""),
        ):
            (result,) = node.set_parameters([Parameter(name, value=bad)])
            assert not result.successful and needle in result.reason, (name, result.reason)
        assert node.feedback.settings.gain == dict.fromkeys(J, 0.5)
        (result,) = node.set_parameters([Parameter("feedback.gain", value=[0.2, 0.4, 0.6])])
        assert result.successful, result.reason
        assert node.feedback.settings.gain == {"base_yaw": 0.2, "shoulder_pitch": 0.4, "beam_pitch": 0.6}
        # the estimate through the node: gain x torque, capped at 2 N·m
        published = []
        node._feedback_pub.publish = published.append
        node.on_external(_effort(J, [1.0, -10.0, 0.5]))
        np.testing.assert_allclose(published[-1].effort, [0.2, -2.0, 0.3])
        (result,) = node.set_parameters([Parameter("feedback.enable", value=False)])
        assert result.successful
        node.on_external(_effort(J, [1.0, -10.0, 0.5]))
        np.testing.assert_array_equal(published[-1].effort, [0.0, 0.0, 0.0])
    finally:
        node.destroy_node()


def test_one_element_lists_mean_every_joint_and_enable_is_never_per_joint(context, repo_root):
    """`ros2 param set /teleop feedback.gain "[0.3]"`: the reason for a wrong length promises
    "1 or 3 values", so one value is every joint; feedback.enable as a list is refused as
    not a bool (was: "expected 1 or 3 values" for any list, one element included)."""
    from rclpy.parameter import Parameter

    node = _node(context, repo_root, **{"feedback.gain": [0.25]})
    try:
        assert node.feedback.settings.gain == dict.fromkeys(J, 0.25)
        for name, value in (("feedback.gain", [0.3]), ("feedback.cap", [1.5])):
            (result,) = node.set_parameters([Parameter(name, value=value)])
            assert result.successful, (name, result.reason)
        assert node.feedback.settings.gain == dict.fromkeys(J, 0.3)
        assert node.feedback.settings.cap == dict.fromkeys(J, 1.5)
        (result,) = node.set_parameters([Parameter("feedback.enable", value=[True])])
        assert not result.successful and "true or false" in result.reason, result.reason
        (result,) = node.set_parameters([Parameter("feedback.gain", value=[0.1, 0.2])])
        assert not result.successful and "expected 1 or 3 values" in result.reason
    finally:
        node.destroy_node()


def test_follower_fault_from_the_bridge_diagnostics_holds_until_cleared(context, repo_root):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from std_srvs.srv import Trigger

    node = _node(context, repo_root, **{"feedback.enable": True})
    try:
        arr = DiagnosticArray()
        arr.status = [
            DiagnosticStatus(
                level=DiagnosticStatus.ERROR,
                name="/follower/mit_bridge: shoulder_pitch",
                message="overtemperature",
            )
        ]
        other = DiagnosticArray()
        other.status = [
            DiagnosticStatus(level=DiagnosticStatus.ERROR, name="/leader/mit_bridge: x", message="no")
        ]
        node._on_diagnostics(other)
        assert node.link.fault == ""  # another node's error is not the follower's
        node._on_diagnostics(arr)
        assert node.link.fault == "/follower/mit_bridge: shoulder_pitch: overtemperature"
        node.on_external(_effort(J, [1.0, 1.0, 1.0]))
        assert not node.feedback.effort(node._now()).effort.any()  # feedback stopped
        node._clear_fault(Trigger.Request(), Trigger.Response())
        assert node.link.fault == ""
    finally:
        node.destroy_node()


def test_setpoints_engage_from_the_follower_pose(context, repo_root):
    node = _node(context, repo_root)
    try:
        sent = []
        node._setpoint_pub.publish = sent.append
        node._tick()
        assert sent == []  # waiting: no follower state, nothing published
        node.on_follower(_state(J, [0.0, 0.3, 0.2]))
        node.on_leader(_state(J, [0.5, 0.3, 0.2]))
        node._tick()
        np.testing.assert_allclose(sent[-1].position, [0.0, 0.3, 0.2])  # from the follower's pose
        assert node.link.state == "engaging" and sent[-1].name == J
    finally:
        node.destroy_node()


def test_per_bus_state_topics_merged_a_silent_one_named_and_each_bus_bridge_faults(context, repo_root):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    a, b = "/follower/a/joint_states", "/follower/b/joint_states"
    ea, eb = "/follower/a/momentum_observer/external_effort", "/follower/b/momentum_observer/external_effort"
    node = _node(
        context,
        repo_root,
        follower_state_topics=[a, b],
        follower_effort_topics=[ea, eb],
        **{"feedback.enable": True, "feedback.gain": 0.5},
        follower_bridges=["/follower/a/mit_bridge", "/follower/b/mit_bridge"],
        **{"joints": J, "rate_hz": 100.0},
    )
    try:
        subs = {s.topic_name: s for s in node.subscriptions}
        assert {a, b, ea, eb, "/leader_joint_states"} <= set(subs)
        assert not {"/follower_joint_states", "/follower_external_effort"} & set(subs)
        # each bus's observer: its joints' estimates, the whole feedback published each time
        published = []
        node._feedback_pub.publish = published.append
        now = node._now
        t0 = now()
        node._now = lambda: t0  # both buses' estimates at one time: none stale (CI: a busy
        # machine once took longer than feedback.timeout between the two callbacks)
        subs[ea].callback(_effort(J[:2], [1.0, -2.0]))
        np.testing.assert_allclose(published[-1].effort, [0.5, -1.0, 0.0])  # bus b not heard yet
        subs[eb].callback(_effort(J[2:], [4.0]))
        np.testing.assert_allclose(published[-1].effort, [0.5, -1.0, 2.0])
        node._now = now
        sent = []
        node._setpoint_pub.publish = sent.append
        subs[a].callback(_state(J[:2], [0.0, 0.3]))
        node.on_leader(_state(J, [0.0, 0.3, 0.2]))
        node._tick()
        assert sent == [] and "missing ['beam_pitch']" in node.link.status()  # bus b not heard yet
        subs[b].callback(_state(J[2:], [0.2]))
        node._tick()
        np.testing.assert_allclose(sent[-1].position, [0.0, 0.3, 0.2])  # the merged pose
        # bus b silent past stale_timeout (0.05 s default of the identity pair); bus a goes on
        t_b = node.link._follower_state._t[2]
        node._now = lambda: t_b + 0.08
        subs[a].callback(_state(J[:2], [0.0, 0.3]))
        node.on_leader(_state(J, [0.0, 0.3, 0.2]))
        node._tick()
        assert node.link.state == "holding" and node.link.status().startswith(
            "follower state 0.080 s old on " + b
        )
        arr = DiagnosticArray()
        arr.status = [
            DiagnosticStatus(level=DiagnosticStatus.ERROR, name="/follower/b/mit_bridge: x", message="ot")
        ]
        node._on_diagnostics(arr)
        assert node.link.fault == "/follower/b/mit_bridge: x: ot"
    finally:
        node.destroy_node()
