"""stage/free_drive.py: measured state -> setpoint, bad input -> no setpoint, follow <-> free-drive blend."""

from __future__ import annotations

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.stage.free_drive import FreeDriveConfig, FreeDriveSource

J = ("a", "b")


def _source(mode="free_drive", **kw):
    return FreeDriveSource(FreeDriveConfig(J, ("finger",), (0.01,), **kw), mode)


def test_free_drive_publishes_the_measured_pose_at_rest_velocity():
    s = _source()
    assert s.setpoint(0.0) is None and s.fault(0.0) == "no measured joint state yet"
    assert s.measured(["b", "a", "x"], [0.2, 0.1, 9.0], 1.0) == ""
    sp = s.setpoint(1.01)
    assert sp.names == ("a", "b", "finger")
    np.testing.assert_array_equal(sp.position, [0.1, 0.2, 0.01])
    np.testing.assert_array_equal(sp.velocity, [0.0, 0.0, 0.0])  # the bridge's kd damps to rest


def test_stale_measurement_gives_no_setpoint_until_a_fresh_one():
    s = _source(stale_timeout=0.05)
    s.measured(J, [0.1, 0.2], 1.0)
    assert s.setpoint(1.05) is not None
    assert s.setpoint(1.0501) is None and "old" in s.fault(1.0501)
    s.measured(J, [0.1, 0.2], 1.06)
    assert s.setpoint(1.07) is not None


def test_stale_motor_from_diagnostics():
    s = _source()
    s.measured(J, [0.1, 0.2], 1.0)
    s.set_stale(["b", "other"])
    assert s.setpoint(1.0) is None and "['b'] stale" in s.fault(1.0)
    s.set_stale([])
    assert s.setpoint(1.0) is not None


@pytest.mark.parametrize("bad", [[0.1, float("nan")], [0.1, float("inf")], [0.1, 0.2 + 0.25]])
def test_non_finite_or_jump_stops_output_for_recover_samples(bad):
    s = _source(recover_samples=3, max_jump=0.2)
    s.measured(J, [0.1, 0.2], 1.0)
    assert s.measured(J, bad, 1.001) != ""
    assert s.setpoint(1.001) is None
    new = [0.1, 0.45] if np.all(np.isfinite(bad)) else [0.1, 0.2]  # a jump becomes the reference
    for k in range(3):
        assert s.setpoint(1.002 + k * 0.001) is None  # never a torque from the old pose
        assert s.measured(J, new, 1.002 + k * 0.001) == ""
    sp = s.setpoint(1.005)
    np.testing.assert_array_equal(sp.position[:2], new)


def test_missing_joint_is_ignored_with_a_reason():
    s = _source()
    assert "lacks ['b']" in s.measured(["a"], [0.1], 1.0)
    assert s.setpoint(1.0) is None


def test_repeated_names_are_ignored_and_text_positions_refused_with_a_reason():
    s = _source(recover_samples=2)
    assert s.measured(J, [0.1, 0.2], 1.0) == ""
    # which "a" is meant is unknown: ignored, the last good pose kept
    assert "names repeat: ['a']" in s.measured(["a", "b", "a"], [0.1, 0.2, 0.9], 1.001)
    np.testing.assert_array_equal(s.setpoint(1.001).position[:2], [0.1, 0.2])
    assert s.measured(J, ["x", 0.2], 1.002) == "non-numeric measured position"  # was a bare ValueError
    assert s.setpoint(1.002) is None  # a bad sample: the recovery count, as a NaN


def test_switch_to_follow_starts_at_the_measured_pose_and_blends():
    s = _source(blend_time=1.0)
    s.measured(J, [0.1, 0.2], 1.0)
    s.follow(["a", "b", "finger"], [0.5, -0.2, 0.01], [0.2, 0.4, 0.0])
    s.switch("follow", 1.0)
    sp = s.setpoint(1.0)  # bumpless: the position setpoint is the measured position
    np.testing.assert_array_equal(sp.position, [0.1, 0.2, 0.01])
    np.testing.assert_array_equal(sp.velocity, [0.0, 0.0, 0.0])
    sp = s.setpoint(1.25)
    np.testing.assert_allclose(sp.position, [0.1 + 0.25 * 0.4, 0.2 - 0.25 * 0.4, 0.01])
    np.testing.assert_allclose(sp.velocity, [0.05, 0.1, 0.0])
    sp = s.setpoint(2.5)
    np.testing.assert_array_equal(sp.position, [0.5, -0.2, 0.01])
    s.switch("free_drive", 3.0)
    s.measured(J, [0.3, 0.3], 3.0)
    np.testing.assert_array_equal(s.setpoint(3.0).position, [0.3, 0.3, 0.01])


def test_switch_refusals():
    s = _source()
    with pytest.raises(InputError, match="cannot switch to follow"):
        s.switch("follow", 0.0)  # no pose to start from
    with pytest.raises(ConfigError, match="mode must be one of"):
        s.switch("teach", 0.0)
    with pytest.raises(InputError, match="lacks"):
        s.follow(["a"], [0.0], [])


@pytest.mark.parametrize(
    "kw,key",
    [
        ({"joints": ()}, "joints"),
        ({"fixed_joints": ("c",), "fixed_positions": ()}, "fixed_positions"),
        ({"fixed_joints": ("a",), "fixed_positions": (0.0,)}, "fixed_joints"),
        ({"stale_timeout": 0.0}, "stale_timeout"),
        ({"max_jump": float("nan")}, "max_jump"),
        ({"recover_samples": 0}, "recover_samples"),
        ({"blend_time": -1.0}, "blend_time"),
    ],
)
def test_config_rejects(kw, key):
    args = {"joints": J, **kw}
    with pytest.raises(ConfigError) as info:
        FreeDriveConfig(**args)
    assert info.value.key == key


def test_feedback_effort_rides_on_the_free_drive_setpoint_until_it_times_out():
    # teleoperation's force feedback (issue 31): the effort the stages add g and friction to
    s = _source(feedback_timeout=0.05)
    s.measured(J, [0.1, 0.2], 1.0)
    np.testing.assert_array_equal(s.setpoint(1.0).effort, [0.0, 0.0, 0.0])
    s.feedback(["b"], [-0.7], 1.0)
    np.testing.assert_array_equal(s.setpoint(1.0).effort, [0.0, -0.7, 0.0])  # a: 0, finger: 0
    s.measured(J, [0.1, 0.2], 1.04)
    np.testing.assert_array_equal(s.setpoint(1.05).effort, [0.0, -0.7, 0.0])
    s.measured(J, [0.1, 0.2], 1.06)
    np.testing.assert_array_equal(s.setpoint(1.0501 + 0.01).effort, [0.0, 0.0, 0.0])  # 60 ms old: 0
    with pytest.raises(InputError, match="not in"):
        s.feedback(["nope"], [1.0], 1.1)
    with pytest.raises(InputError, match="not finite"):
        s.feedback(["a"], [float("nan")], 1.1)
    with pytest.raises(ConfigError, match="feedback_timeout"):
        FreeDriveConfig(J, feedback_timeout=0.0)


def test_follow_setpoints_carry_no_feedback_effort():
    s = _source(mode="follow")
    s.feedback(["a"], [1.0], 0.0)
    s.follow(["a", "b", "finger"], [0.1, 0.2, 0.0], None)
    np.testing.assert_array_equal(s.setpoint(0.0).effort, [0.0, 0.0, 0.0])


def test_a_nan_time_never_keeps_a_measurement_or_a_feedback_effort_fresh():
    """The ROS-free source takes any float time: ``t - t_last > timeout`` is False for NaN, so a
    NaN-stamped sample (or a NaN query time) passed as fresh forever, a NaN-stamped feedback
    effort never expired, and a NaN time in the follow blend gave a NaN position. NaN now
    counts as stale (no setpoint, zero feedback), and the blend holds its start pose."""
    nan = float("nan")
    s = _source(stale_timeout=0.05, feedback_timeout=0.05)
    s.measured(J, [0.1, 0.2], nan)
    assert s.setpoint(1.0) is None and "old" in s.fault(1.0)
    s.measured(J, [0.1, 0.2], 1.0)
    assert s.setpoint(1.01) is not None
    assert s.setpoint(nan) is None  # a NaN query time: no age to trust
    s.feedback(["a"], [1.5], nan)
    np.testing.assert_array_equal(s.feedback_effort(1.01), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(s.setpoint(1.01).effort, [0.0, 0.0, 0.0])
    s.switch("follow", 1.02)
    s.follow(["a", "b", "finger"], [0.5, 0.6, 0.01], None)
    sp = s.setpoint(nan)
    np.testing.assert_array_equal(sp.position, [0.1, 0.2, 0.01])  # the pose at the switch
    np.testing.assert_array_equal(sp.velocity, [0.0, 0.0, 0.0])
