"""teleop/config.py, link.py, feedback.py: mapping, soft engage, hold, feedback saturation (issue 31)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.teleop.config import (
    MAX_FEEDBACK_GAIN,
    FeedbackSettings,
    GripperMap,
    JointMap,
    TeleopPairConfig,
    load_pair_config,
)
from gravity_friction_comp.teleop.feedback import ForceFeedback
from gravity_friction_comp.teleop.link import ENGAGE_RATE, FALLBACK_VELOCITY, TeleopLink

#: leader effort limits [N·m] above every cap of these tests (a limit is required per joint)
LIMITS = {"l1": 40.0, "l2": 40.0}


def _pair(**kw):
    joints = {"f1": JointMap("l1"), "f2": JointMap("l2", sign=-1, scale=2.0, offset=0.1)}
    gripper = GripperMap("lg", "fg", (0.0, 1.0), (0.0, 0.04))
    return TeleopPairConfig(joints, gripper, **kw)


def _link(**kw):
    # f1 velocity limit 1 rad/s, f2 none (fallback), gripper 0.1 m/s; f2 within ±1 rad
    return TeleopLink(_pair(**kw), [-3, -1, 0], [3, 1, 0.04], [1.0, math.inf, 0.1])


def test_mapping_sign_scale_offset_gripper_and_limits():
    link = _link()
    link.leader(["lg", "l2", "l1"], [0.5, 0.2, 0.3], 0.0)
    # f1 = 0.3; f2 = 0.1 - 2*0.2 = -0.3; gripper halfway: 0.02
    np.testing.assert_allclose(link.mapped(), [0.3, -0.3, 0.02])
    link.leader(["l1", "l2", "lg"], [0.3, -1.0, 7.0], 0.0)
    np.testing.assert_allclose(link.mapped(), [0.3, 1.0, 0.04])  # f2 2.1 -> URDF upper 1; gripper clipped


def test_soft_engage_from_the_measured_pose_then_follow():
    link = _link(engage_speed=0.5, engage_tolerance=0.01)
    assert link.target(0.0) is None and link.state == "waiting"
    link.follower(["f1", "f2", "fg"], [0.0, 0.0, 0.0], 0.0)
    link.leader(["l1", "l2", "lg"], [0.3, 0.0, 1.0], 0.0)
    t0 = link.target(0.0)
    np.testing.assert_array_equal(t0, [0.0, 0.0, 0.0])  # starts where the follower is: no jump
    assert link.state == "engaging"
    dt = 0.01
    targets = [t0]
    for k in range(1, 200):
        t = k * dt
        link.follower(["f1", "f2", "fg"], targets[-1], t)
        link.leader(["l1", "l2", "lg"], [0.3, 0.0, 1.0], t)
        targets.append(link.target(t))
        if link.state == "following":
            break
    steps = np.abs(np.diff(np.array(targets), axis=0))
    assert ENGAGE_RATE == 5.0  # the figures below
    # engage speed 0.5 x (1 rad/s, fallback, 0.1 m/s) per 10 ms; the last step, into
    # following, adds what was left: at most the tolerance (the shaper smooths it)
    limit = np.array([0.5, 0.5 * FALLBACK_VELOCITY, 0.05]) * dt
    assert np.all(steps[:-1] <= limit + 1e-12)
    assert np.all(steps[-1] <= 0.01 + limit + 1e-12)
    # per tick the distance e shrinks by e(1 - r), r = exp(-ENGAGE_RATE dt), at most v dt: f1
    # (e0 0.3, v dt 0.005) rate-limited down to 0.005 / (1 - r) = 0.1025 (39.5 ticks), then
    # geometric to the tolerance 0.01: ln(10.25) / 0.05 = 46.5 ticks, 86 in all (f2: 52,
    # gripper: 60, both earlier)
    assert link.state == "following"
    assert 85 <= k <= 88
    np.testing.assert_allclose(targets[-1], [0.3, 0.1, 0.04])


def test_stale_leader_holds_then_reengages_from_the_measured_pose():
    link = _link(stale_timeout=0.05, engage_tolerance=0.05)
    link.follower(["f1", "f2", "fg"], [0.2, 0.0, 0.0], 0.0)
    link.leader(["l1", "l2", "lg"], [0.2, 0.05, 0.0], 0.0)
    link.target(0.0)
    assert link.state == "following"  # within tolerance from the start
    link.follower(["f1", "f2", "fg"], [0.2, 0.0, 0.0], 0.1)
    held = link.target(0.1)
    assert link.state == "holding" and "leader state 0.100 s old" in link.status()
    np.testing.assert_allclose(held, [0.2, 0.0, 0.0])  # the last target
    link.leader(["l1", "l2", "lg"], [1.0, 0.05, 0.0], 0.1)  # leader back, 0.8 rad away
    link.follower(["f1", "f2", "fg"], [0.19, 0.0, 0.0], 0.1)
    t = link.target(0.1)
    assert link.state == "engaging"
    np.testing.assert_allclose(t, [0.19, 0.0, 0.0])  # from the measured pose, no jump to 1.0


def test_follower_fault_latches_hold_until_cleared():
    link = _link(engage_tolerance=0.05)
    link.follower(["f1", "f2", "fg"], [0.0, 0.0, 0.0], 0.0)
    link.leader(["l1", "l2", "lg"], [0.0, 0.05, 0.0], 0.0)
    link.target(0.0)
    link.set_fault("contact on f1")
    link.leader(["l1", "l2", "lg"], [0.5, 0.05, 0.0], 0.01)
    link.follower(["f1", "f2", "fg"], [0.0, 0.0, 0.0], 0.01)
    np.testing.assert_allclose(link.target(0.01), [0.0, 0.0, 0.0])
    assert link.state == "holding" and "contact on f1" in link.status()
    link.clear_fault()
    link.target(0.02)
    assert link.state == "engaging"
    with pytest.raises(ConfigError):
        link.set_fault("")


def test_bad_leader_samples_are_refused():
    link = _link()
    assert "not finite" in link.leader(["l1", "l2", "lg"], [0.0, float("nan"), 0.0], 0.0)
    assert "has none of" in link.leader(["x"], [0.0], 0.0)
    assert "lengths differ" in link.leader(["l1", "l2"], [0.0], 0.0)
    assert link.leader(["l1", "l2"], [0.0, 0.0], 0.0) == ""  # a partial sample (one bus) is taken
    assert link.mapped() is None  # but the pose is not whole: lg never came
    link.follower(["f1", "f2", "fg"], [0.0, 0.0, 0.0], 0.0)
    link.target(0.0)
    assert link.state == "holding" and "missing ['lg']" in link.status()


def test_a_joint_named_twice_is_refused_leader_follower_and_estimate():
    """A message naming a joint twice is ambiguous: refused whole, never its last value taken."""
    link = _link()
    why = link.leader(["l1", "l1", "l2", "lg"], [0.0, 5.0, 0.0, 0.0], 0.0)
    assert "given twice ['l1']" in why and link.mapped() is None
    assert "given twice ['f1']" in link.follower(["f1", "f2", "fg", "f1"], [0.0, 0.0, 0.0, 9.0], 0.0)
    assert link.target(0.0) is None and link.state == "waiting"  # nothing of it taken
    cfg = _pair(feedback=FeedbackSettings.build(("f1", "f2"), True, 1.0, 10.0))
    fb = ForceFeedback(cfg, LIMITS)
    assert fb.external(["f1", "f2"], [1.0, 0.0], 1.0) == ""
    assert "given twice ['f1']" in fb.external(["f1", "f1"], [5.0, -5.0], 1.0)
    np.testing.assert_allclose(fb.effort(1.0).effort, [1.0, 0.0])  # the earlier estimate stands


def test_a_position_beyond_the_plausible_bound_is_refused_and_the_link_recovers():
    """One follower joint_states with 1e308 (finite) became the engage start: the link's target
    stayed ~1e308 and the shaper failed on it for ever. Refused; the next good sample engages."""
    link = _link()
    assert "beyond ±1e+06" in link.follower(["f1", "f2", "fg"], [1e308, 0.0, 0.0], 0.0)
    assert "beyond ±1e+06" in link.leader(["l1", "l2", "lg"], [0.0, -1e308, 0.0], 0.0)
    assert link.follower(["f1", "f2", "fg"], [0.2, 0.0, 0.0], 0.0) == ""
    assert link.leader(["l1", "l2", "lg"], [0.2, -0.05, 0.0], 0.0) == ""
    np.testing.assert_allclose(link.target(0.0), [0.2, 0.0, 0.0])  # from the good sample


def test_the_clock_going_back_makes_nothing_fresh_no_old_contact_fed_back():
    """The clock going back 100 s (a simulation restarted): the estimate of t = 200 was fed back
    at t = 100 (100 s of an old contact) and the link followed a leader silent since; now 0 and
    holding until new samples come on the new clock."""
    cfg = _pair(feedback=FeedbackSettings.build(("f1", "f2"), True, 1.0, 10.0))
    fb = ForceFeedback(cfg, LIMITS)
    fb.external(["f1", "f2"], [2.0, 0.0], 200.0)
    np.testing.assert_allclose(fb.effort(200.0).effort, [2.0, 0.0])
    np.testing.assert_array_equal(fb.effort(100.0).effort, [0.0, 0.0])
    fb.external(["f1", "f2"], [1.0, 0.0], 100.0)  # the new clock's estimate is taken
    np.testing.assert_allclose(fb.effort(100.0).effort, [1.0, 0.0])
    link = _link()
    link.follower(["f1", "f2", "fg"], [0.0, 0.0, 0.0], 200.0)
    link.leader(["l1", "l2", "lg"], [0.0, 0.05, 0.0], 200.0)
    link.target(200.0)
    link.target(100.0)
    assert link.state == "holding" and "ahead of the clock" in link.status()
    link.follower(["f1", "f2", "fg"], [0.0, 0.0, 0.0], 100.0)
    link.leader(["l1", "l2", "lg"], [0.0, 0.05, 0.0], 100.0)
    link.target(100.0)
    assert link.state != "holding", link.status()


def _two_buses(link, t, leader, follower):
    """The leader's and the follower's state as two bridges publish them: one message per bus
    (bus a: joint 1 and the gripper, bus b: joint 2), in the buses' own order."""
    (l1, l2, lg), (f1, f2, fg) = leader, follower
    assert link.leader(["lg", "l1"], [lg, l1], t, [0.0, 0.1], "/leader/a/joint_states") == ""
    assert link.leader(["l2"], [l2], t, [-0.2], "/leader/b/joint_states") == ""
    assert link.follower(["f1", "fg"], [f1, fg], t, "/follower/a/joint_states") == ""
    assert link.follower(["f2"], [f2], t, "/follower/b/joint_states") == ""


def test_per_bus_states_merged_by_name_give_the_whole_message_setpoint():
    leader, follower = (0.2, 0.05, 0.5), (0.19, -0.01, 0.02)
    whole, split = _link(engage_tolerance=0.05), _link(engage_tolerance=0.05)
    for k in range(3):
        t = 0.01 * k
        whole.leader(["l1", "l2", "lg"], leader, t, [0.1, -0.2, 0.0])
        whole.follower(["f1", "f2", "fg"], follower, t)
        _two_buses(split, t, leader, follower)
        np.testing.assert_array_equal(split.target(t), whole.target(t))
        np.testing.assert_array_equal(split.velocity, whole.velocity)
        assert split.state == whole.state == "following"
    # by hand: f1 = 0.2, f2 = 0.1 - 2 * 0.05 = 0.0, gripper 0.5 of 0.04; velocity f1 0.1,
    # f2 -2 * -0.2 = 0.4, gripper 0.04 * 0.0
    np.testing.assert_allclose(split.target(0.02), [0.2, 0.0, 0.02])
    np.testing.assert_allclose(split.velocity, [0.1, 0.4, 0.0])


def test_a_silent_bus_holds_the_follower_naming_that_bus():
    link = _link(stale_timeout=0.05, engage_tolerance=0.05)
    leader, follower = (0.2, 0.05, 0.5), (0.2, 0.0, 0.02)
    _two_buses(link, 0.0, leader, follower)
    np.testing.assert_allclose(link.target(0.0), [0.2, 0.0, 0.02])
    # follower bus b goes silent; bus a and the leader go on
    for t in (0.02, 0.04, 0.06):
        link.leader(["lg", "l1"], [0.5, 0.3 if t < 0.05 else 0.4], t, None, "/leader/a/joint_states")
        link.leader(["l2"], [0.05], t, None, "/leader/b/joint_states")
        link.follower(["f1", "fg"], [0.2, 0.02], t, "/follower/a/joint_states")
        target = link.target(t)
    assert link.state == "holding"
    assert link.status() == "follower state 0.060 s old on /follower/b/joint_states (stale_timeout 0.05 s)"
    np.testing.assert_allclose(target, [0.3, 0.0, 0.02])  # the target at 0.04 held, not the leader's 0.4
    # a silent leader bus the same way
    link.follower(["f2"], [0.0], 0.06, "/follower/b/joint_states")
    for t in (0.08, 0.10, 0.12):
        link.leader(["lg", "l1"], [0.5, 0.3], t, None, "/leader/a/joint_states")
        link.follower(["f1", "fg"], [0.3, 0.02], t, "/follower/a/joint_states")
        link.follower(["f2"], [0.0], t, "/follower/b/joint_states")
        link.target(t)
    assert link.state == "holding"
    assert link.status() == "leader state 0.060 s old on /leader/b/joint_states (stale_timeout 0.05 s)"


def test_feedback_maps_scales_and_saturates():
    cfg = _pair(
        feedback=FeedbackSettings.build(("f1", "f2"), True, {"f1": 0.5, "f2": 1.0}, {"f1": 2.0, "f2": 10.0})
    )
    fb = ForceFeedback(cfg, {"l1": 40.0, "l2": 1.5})
    fb.external(["f2", "f1"], [0.5, -3.0], 1.0)
    out = fb.effort(1.0)
    assert out.names == ("l1", "l2")
    # l1: 0.5 * 1 * -3 = -1.5; l2: 1.0 * (-1*2) * 0.5 = -1.0 (power: tau_l = sign*scale*tau_f)
    np.testing.assert_allclose(out.effort, [-1.5, -1.0])
    fb.external(["f1", "f2"], [-10.0, -5.0], 1.0)
    out = fb.effort(1.0)
    np.testing.assert_allclose(out.effort, [-2.0, 1.5])  # cap 2; leader effort limit 1.5 < cap 10
    assert out.saturated == ("l1", "l2")
    np.testing.assert_array_equal(fb.effort(1.06).effort, [0.0, 0.0])  # estimate 60 ms old
    fb.external(["f1", "f2"], [-1.0, 0.0], 2.0)
    fb.set_fault(True)
    np.testing.assert_array_equal(fb.effort(2.0).effort, [0.0, 0.0])
    fb.set_fault(False)
    fb.update(enable=False)
    np.testing.assert_array_equal(fb.effort(2.0).effort, [0.0, 0.0])


def test_feedback_estimate_in_parts_one_per_bus_each_joint_ages_alone():
    """One observer per bus (the bimanual follower): each message carries some of the joints;
    each joint keeps its own latest value and time; a silent bus's joints feed back 0."""
    cfg = _pair(feedback=FeedbackSettings.build(("f1", "f2"), True, 0.5, 10.0))
    fb = ForceFeedback(cfg, LIMITS)
    assert fb.external(["f1", "other"], [2.0, 9.0], 1.0, "/f/a/ext") == ""  # names it lacks skipped
    # f2 never heard: 0 there; f1: 0.5 * 2
    np.testing.assert_array_equal(fb.effort(1.0).effort, [1.0, 0.0])
    assert fb.external(["f2"], [1.0], 1.03, "/f/b/ext") == ""
    # f2: 0.5 * (-1 * 2) * 1 = -1 (sign, scale of the map)
    np.testing.assert_allclose(fb.effort(1.03).effort, [1.0, -1.0])
    # bus a silent: at 1.06 its f1 estimate is 60 ms old (> 50 ms timeout), f2's 30 ms
    np.testing.assert_allclose(fb.effort(1.06).effort, [0.0, -1.0])
    # refused, nothing taken: the reason names the source
    assert (
        fb.external(["x"], [1.0], 1.07, "/f/b/ext") == "external_effort on /f/b/ext has none of ['f1', 'f2']"
    )
    assert "not finite" in fb.external(["f2"], [math.nan], 1.07)
    assert "lengths differ" in fb.external(["f1", "f2"], [1.0], 1.07)
    np.testing.assert_allclose(fb.effort(1.07).effort, [0.0, -1.0])


def test_feedback_settings_are_validated_all_or_nothing():
    fb = ForceFeedback(_pair(feedback=FeedbackSettings.build(("f1", "f2"), True, 0.5, 2.0)), LIMITS)
    for kwargs, match in (
        ({"gain": MAX_FEEDBACK_GAIN + 0.1}, "within"),
        ({"gain": -0.1}, ">= 0"),
        ({"cap": float("nan")}, "finite"),
        ({"gain": {"f9": 0.1}}, "unknown key"),
        ({"enable": "yes"}, "true or false"),
    ):
        with pytest.raises(ConfigError, match=match):
            fb.update(**kwargs)
    assert fb.settings.gain == {"f1": 0.5, "f2": 0.5} and fb.settings.enable
    fb.update(gain={"f1": 0.8})
    assert fb.settings.gain == {"f1": 0.8, "f2": 0.0}


PAIR_YAML = """
teleop_pair:
  version: 1
  joints:
    f1: {leader: l1}
    f2: {leader: l2, sign: -1, scale: 2.0, offset: 0.1}
  gripper: {leader: lg, follower: fg, leader_range: [0.0, 1.0], follower_range: [0.0, 0.04]}
  engage: {speed: 0.3, tolerance: 0.01}
  stale_timeout: 0.1
  feedback: {enable: true, gain: {f1: 0.6}, cap: 3.0}
"""


def test_pair_yaml_reads_and_refuses_unknown_keys(tmp_path):
    path = tmp_path / "pair.yaml"
    path.write_text(PAIR_YAML)
    cfg = load_pair_config(path)
    assert cfg.follower_joints == ("f1", "f2", "fg") and cfg.leader_joints == ("l1", "l2", "lg")
    assert cfg.joints["f2"].gain == -2.0 and cfg.engage_speed == 0.3 and cfg.stale_timeout == 0.1
    assert cfg.feedback.gain == {"f1": 0.6, "f2": 0.0} and cfg.feedback.cap == {"f1": 3.0, "f2": 3.0}
    for old, new, match in (
        ("stale_timeout", "stale_timout", "did you mean 'stale_timeout'"),
        ("scale: 2.0", "scal: 2.0", "did you mean 'scale'"),
        ("sign: -1", "sign: 0.5", "sign must be 1 or -1"),
        ("speed: 0.3", "speed: 1.5", r"within \(0, 1\]"),
        ("f2: {leader: l2", "f2: {leader: l1", "duplicate names"),
        ("version: 1", "version: 2", "version must be 1"),
    ):
        path.write_text(PAIR_YAML.replace(old, new))
        with pytest.raises(ConfigError, match=match) as info:
            load_pair_config(path)
        assert str(path) in str(info.value)


def test_the_feedback_never_exceeds_the_leader_limit_and_a_joint_without_one_is_refused():
    """Without ``leader_effort_limit`` the bound was the cap alone: cap 1e308 fed back 1e8 and
    2e8 N·m. A limit is now required per mapped leader joint (finite, > 0; key named), and the
    feedback is clipped to it whatever the cap."""
    cfg = _pair(feedback=FeedbackSettings.build(("f1", "f2"), True, 1.0, 1e308))
    for limits, needle in (
        (None, r"\['l1', 'l2'\]"),
        ({"l1": 5.0}, r"\['l2'\]"),
        ({"l1": 5.0, "l2": math.inf}, "finite and > 0"),
        ({"l1": 5.0, "l2": math.nan}, "finite and > 0"),
        ({"l1": 5.0, "l2": 0.0}, "finite and > 0"),
    ):
        with pytest.raises(ConfigError, match=needle) as info:
            ForceFeedback(cfg, limits)
        assert info.value.key == "leader_effort_limit"
    fb = ForceFeedback(cfg, {"l1": 5.0, "l2": 1.5})
    fb.external(["f1", "f2"], [1e8, -1e8], 1.0)
    out = fb.effort(1.0)
    # by hand: l1 = 1 * 1e8 → 5; l2 = 1 * (-1 * 2) * -1e8 = 2e8 → 1.5
    np.testing.assert_array_equal(out.effort, [5.0, 1.5])
    assert out.saturated == ("l1", "l2")
