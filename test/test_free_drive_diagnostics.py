"""free_drive_node and the bridge's diagnostics (issue 32 points 5 and 7): the absolute
``/diagnostics``, only its own bridge's statuses, a stale motor judged by the age of its last
reply against ``stale_timeout`` (derived from the bridge's rate by the launch), and the
message saying how late it was."""

from __future__ import annotations

import pytest

rclpy = pytest.importorskip("rclpy")

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue  # noqa: E402

from gravity_friction_comp.nodes.free_drive_launch import free_drive_overrides  # noqa: E402
from gravity_friction_comp.stage.free_drive import FreeDriveConfig, FreeDriveSource  # noqa: E402


def _node(context, namespace: str, **values):
    from rclpy.parameter import Parameter

    from gravity_friction_comp.nodes.free_drive_node import FreeDriveNode

    overrides = [Parameter(k, value=v) for k, v in {"joints": ["a", "b"], **values}.items()]
    return FreeDriveNode(
        context=context, namespace=namespace, parameter_overrides=overrides, start_parameter_services=False
    )


def _status(name: str, **values) -> DiagnosticStatus:
    return DiagnosticStatus(name=name, values=[KeyValue(key=k, value=str(v)) for k, v in values.items()])


def _diagnostics(bridge: str, missed: dict[str, int], rate_hz: float = 500.0) -> list[DiagnosticStatus]:
    """The bridge's statuses as bridge_diagnostics writes them: a motor is flagged stale at
    stale_cycles (10) missed replies."""
    motors = [_status(f"{bridge}: {j}", stale=n >= 10, missed_replies=n) for j, n in missed.items()]
    return motors + [_status(f"{bridge}: bus can0", rate_hz=rate_hz)]


def test_diagnostics_are_the_absolute_topic_and_only_the_own_bridges(context):
    """Under namespace left the node listens on /diagnostics (where the bridge publishes,
    issue 32.5; /left/diagnostics before) and takes only /left/mit_bridge's statuses: the
    right arm's stale motor "a" (same joint names) does not stop the left arm."""
    node = _node(context, "left")
    try:
        assert [s.topic_name for s in node.subscriptions if s.msg_type is DiagnosticArray] == ["/diagnostics"]
        msg = DiagnosticArray(
            status=_diagnostics("/right/mit_bridge", {"a": 80, "b": 0})
            + _diagnostics("/left/mit_bridge", {"a": 0, "b": 0})
        )
        node._on_diagnostics(msg)
        assert "stale" not in node.source.fault(0.0)
        msg = DiagnosticArray(status=_diagnostics("/left/mit_bridge", {"a": 0, "b": 80}))
        node._on_diagnostics(msg)
        assert "motor(s) ['b'] stale" in node.source.fault(0.0)
    finally:
        node.destroy_node()


def test_a_stale_motor_counts_once_its_reply_is_older_than_stale_timeout(context):
    """Issue 32.7: the bridge flags a motor after 10 missed replies (20 ms at 500 Hz); free
    drive stopped at once (3 ERRORs in 25 s under load with a 0.05 s timeout). Now the age
    (missed / rate_hz) is compared with stale_timeout and the message says it: 15 missed at
    500 Hz = 30 ms < 50 ms: still fine; 40 missed = 80 ms: stale, "b 80 ms"."""
    node = _node(context, "", stale_timeout=0.05)
    try:
        node._on_diagnostics(DiagnosticArray(status=_diagnostics("/mit_bridge", {"a": 0, "b": 15})))
        assert "stale" not in node.source.fault(0.0)
        node._on_diagnostics(DiagnosticArray(status=_diagnostics("/mit_bridge", {"a": 0, "b": 40})))
        fault = node.source.fault(0.0)
        assert fault == "motor(s) ['b'] stale: last reply b 80 ms ago (stale_timeout 50 ms)", fault
        # at 1 kHz the same 40 missed replies are 40 ms: within the limit
        node._on_diagnostics(DiagnosticArray(status=_diagnostics("/mit_bridge", {"a": 0, "b": 40}, 1000.0)))
        assert "stale" not in node.source.fault(0.0)
    finally:
        node.destroy_node()


def test_source_stale_ages_and_plain_names():
    s = FreeDriveSource(FreeDriveConfig(["a", "b"], stale_timeout=0.05))
    s.set_stale({"a": 0.05, "b": 0.0500001, "other": 1.0})  # exactly at the limit is not stale
    assert s.fault(0.0) == "motor(s) ['b'] stale: last reply b 50 ms ago (stale_timeout 50 ms)"
    s.set_stale(["a"])  # names only (age unknown): stale, as the bridge says
    assert s.fault(0.0) == "motor(s) ['a'] stale"
    s.set_stale({})
    assert s.fault(0.0) == "no measured joint state yet"


@pytest.mark.parametrize(("rate_hz", "timeout"), [(500.0, 0.05), (1000.0, 0.025), (None, 0.05)])
def test_launch_derives_stale_timeout_from_the_bridge_rate(rate_hz, timeout):
    """25 bridge periods: 0.05 s at 500 Hz (the bridge's default rate when the motor map has
    none), 0.025 s at 1 kHz (openarm_v10's motor map)."""
    bridge = {"joints": ["a", "b"], "kp": [1.0, 1.0], "kd": [0.1, 0.1]}
    if rate_hz is not None:
        bridge["rate_hz"] = rate_hz
    _, _, node = free_drive_overrides(
        bridge, ["a", "b"], {}, kd_scale=0.5, friction_deadband=0.0, rate_hz=0.0
    )
    assert node["stale_timeout"] == pytest.approx(timeout)
    bridge["rate_hz"] = 0.0
    with pytest.raises(ValueError, match="rate_hz"):
        free_drive_overrides(bridge, ["a", "b"], {}, kd_scale=0.5, friction_deadband=0.0, rate_hz=0.0)
