"""trajectory/joint_trajectory.py: JTC's interpolation against hand-computed polynomials, and
JTC's documented behaviour (stamp 0 = now, replacement from the first point after now, hold
at the end, refusals that keep the running motion)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import InputError, Reason
from gravity_friction_comp.trajectory.joint_trajectory import (
    TrajectoryFollower,
    TrajectoryPoint,
    interpolate,
)
from gravity_friction_comp.trajectory.waypoints import minimum_jerk

NAMES = ("a", "b")


def _follower(limits=(10.0, 10.0), hold=(0.0, 0.0)) -> TrajectoryFollower:
    return TrajectoryFollower(NAMES, hold, limits)


def test_cubic_segment_is_the_hand_computed_hermite_polynomial():
    # q0 = 0, v0 = 0 → q1 = 1, v1 = 0 over T = 2: c2 = 3/4, c3 = -1/4 (by hand)
    a = (np.array([0.0]), np.array([0.0]), None)
    b = (np.array([1.0]), np.array([0.0]), None)
    for t in (0.0, 0.5, 1.0, 1.5, 2.0):
        s = interpolate(0.0, a, 2.0, b, t)
        assert s.position[0] == pytest.approx(0.75 * t**2 - 0.25 * t**3, abs=1e-15)
        assert s.velocity[0] == pytest.approx(1.5 * t - 0.75 * t**2, abs=1e-15)
        assert s.acceleration[0] == pytest.approx(1.5 - 1.5 * t, abs=1e-15)
    # with end velocities v0 = 1, v1 = -1 over T = 1, Δq = 0: c2 = (0 - (2 - 1))/1 = -1,
    # c3 = (0 + 0)/1 = 0 → q = t - t²
    s = interpolate(
        0.0, (np.array([0.0]), np.array([1.0]), None), 1.0, (np.array([0.0]), np.array([-1.0]), None), 0.25
    )
    assert s.position[0] == pytest.approx(0.25 - 0.0625, abs=1e-15)
    assert s.velocity[0] == pytest.approx(1.0 - 0.5, abs=1e-15)
    assert s.acceleration[0] == pytest.approx(-2.0, abs=1e-15)


def test_quintic_rest_to_rest_is_the_minimum_jerk_polynomial():
    # q, q̇, q̈ zero at both ends: 10s³ − 15s⁴ + 6s⁵ (trajectory/waypoints.minimum_jerk)
    zero = np.zeros(1)
    a, b = (zero, zero, zero), (np.array([2.0]), zero, zero)
    for t in np.linspace(0.0, 3.0, 13):
        s, ds = minimum_jerk(t / 3.0)
        out = interpolate(0.0, a, 3.0, b, t)
        assert out.position[0] == pytest.approx(2.0 * s, abs=1e-12)
        assert out.velocity[0] == pytest.approx(2.0 * ds / 3.0, abs=1e-12)


def test_quintic_matches_end_accelerations_and_linear_has_none():
    a = (np.array([0.0]), np.array([0.5]), np.array([1.0]))
    b = (np.array([1.0]), np.array([0.0]), np.array([-2.0]))
    start, end = interpolate(0.0, a, 1.5, b, 0.0), interpolate(0.0, a, 1.5, b, 1.5)
    np.testing.assert_allclose(
        [start.position[0], start.velocity[0], start.acceleration[0]], [0, 0.5, 1], atol=1e-12
    )
    np.testing.assert_allclose(
        [end.position[0], end.velocity[0], end.acceleration[0]], [1, 0, -2], atol=1e-12
    )
    lin = interpolate(0.0, (np.array([0.0]), None, None), 2.0, (np.array([1.0]), np.array([0.0]), None), 0.5)
    assert (lin.position[0], lin.velocity[0], lin.acceleration[0]) == (0.25, 0.5, 0.0)
    # accelerations without velocities: linear (JTC's output stays at zero there)
    acc_only = interpolate(
        0.0, (np.array([0.0]), None, np.array([1.0])), 2.0, (np.array([1.0]), None, np.array([1.0])), 1.0
    )
    assert (acc_only.position[0], acc_only.velocity[0], acc_only.acceleration[0]) == (0.5, 0.5, 0.0)


def test_stamp_zero_starts_now_and_the_last_point_is_held():
    f = _follower()
    f.set_trajectory(
        ["b", "a"], [TrajectoryPoint(1.0, [2.0, 1.0]), TrajectoryPoint(2.0, [2.0, 3.0])], 0.0, 10.0
    )
    # linear from the hold pose (0, 0) at 10 s to (a=1, b=2) at 11 s: names reordered
    np.testing.assert_allclose(f.sample(10.5).position, [0.5, 1.0])
    np.testing.assert_allclose(f.sample(10.5).velocity, [1.0, 2.0])
    np.testing.assert_allclose(f.sample(11.5).position, [2.0, 2.0])
    held = f.sample(20.0)
    np.testing.assert_allclose(held.position, [3.0, 2.0])
    np.testing.assert_array_equal(held.velocity, [0.0, 0.0])
    assert f.done(12.0) and not f.done(11.9)


def test_a_stamped_trajectory_runs_on_its_own_times_and_replacement_starts_after_now():
    f = _follower()
    pts = [
        TrajectoryPoint(t, [t, -t], [1.0, -1.0] if t < 4 else [0.0, 0.0]) for t in (0.0, 1.0, 2.0, 3.0, 4.0)
    ]
    f.set_trajectory(NAMES, pts, 100.0, 100.0)  # stamped now: the point at 0 is dropped (it is now)
    mid = f.sample(101.5)  # cubic with v = 1 at both ends and Δq = 1: exactly linear
    np.testing.assert_allclose(mid.position, [1.5, -1.5], atol=1e-12)
    # a trajectory stamped 2 s in the past: at now = 102.5 its points up to 2.5 s are past;
    # the first segment runs from the current setpoint to the point at 3 s
    current = f.sample(102.5)
    new = [TrajectoryPoint(t, [0.5 * t, 0.0], [0.0, 0.0]) for t in (1.0, 2.0, 3.0, 5.0)]
    f.set_trajectory(NAMES, new, 100.5, 102.5)
    np.testing.assert_allclose(f.sample(102.5).position, current.position, atol=1e-12)
    np.testing.assert_allclose(f.sample(102.5).velocity, current.velocity, atol=1e-12)
    # the kept point at stamp + 3 s = 103.5 (cubic from current, v = 0 there)
    np.testing.assert_allclose(f.sample(103.5).position, [1.5, 0.0], atol=1e-12)
    np.testing.assert_allclose(f.sample(200.0).position, [2.5, 0.0])


def test_an_empty_trajectory_holds_the_current_position():
    f = _follower()
    f.set_trajectory(NAMES, [TrajectoryPoint(2.0, [1.0, 1.0])], 0.0, 0.0)
    f.set_trajectory(NAMES, [], 0.0, 1.0)
    np.testing.assert_allclose(f.sample(5.0).position, [0.5, 0.5])
    np.testing.assert_array_equal(f.sample(5.0).velocity, [0.0, 0.0])


@pytest.mark.parametrize(
    "names, points, reason, text",
    [
        (["a"], [TrajectoryPoint(1.0, [0.1])], Reason.MISSING_JOINTS, "missing \\['b'\\]"),
        (["a", "b", "c"], [TrajectoryPoint(1.0, [0, 0, 0])], Reason.MISSING_JOINTS, "unknown \\['c'\\]"),
        (["a", "a"], [TrajectoryPoint(1.0, [0, 0])], Reason.DUPLICATE_NAMES, "named twice"),
        (NAMES, [TrajectoryPoint(2.0, [0, 0]), TrajectoryPoint(1.0, [0, 0])], Reason.RANGE, "not strictly"),
        (NAMES, [TrajectoryPoint(1.0, [0, 0]), TrajectoryPoint(1.0, [0, 0])], Reason.RANGE, "not strictly"),
        (NAMES, [TrajectoryPoint(1.0, [0, math.nan])], Reason.NOT_FINITE, "for joints \\['b'\\]"),
        (NAMES, [TrajectoryPoint(1.0, [0, 0], [0.0])], Reason.SHAPE, "1 velocities for 2"),
        (NAMES, [TrajectoryPoint(1.0, [0, 0], [0.0, 0.1])], Reason.RANGE, "non-zero velocity at its last"),
        # b: 0.1 → 0.5 rad in 0.1 s from the current setpoint: 4 rad/s > its limit 2
        (NAMES, [TrajectoryPoint(0.1, [0, 0.5])], Reason.RANGE, "mean velocity 4 rad/s from the current"),
        (
            NAMES,
            [TrajectoryPoint(1.0, [0, 0], [0, 3.0]), TrajectoryPoint(2.0, [0, 0])],
            Reason.RANGE,
            "velocity 3",
        ),
    ],
)
def test_bad_trajectories_are_refused_with_a_reason_and_the_motion_kept(names, points, reason, text):
    f = _follower(limits=(10.0, 2.0))
    f.set_trajectory(NAMES, [TrajectoryPoint(4.0, [0.4, 0.4])], 0.0, 0.0)
    before = f.sample(1.0)
    with pytest.raises(InputError, match=text) as info:
        f.set_trajectory(names, points, 0.0, 1.0)
    assert info.value.reason == reason
    np.testing.assert_array_equal(f.sample(1.0).position, before.position)
    np.testing.assert_allclose(f.sample(9.0).position, [0.4, 0.4])


def test_a_trajectory_that_ends_in_the_past_is_refused():
    f = _follower()
    with pytest.raises(InputError, match="not after now") as info:
        f.set_trajectory(NAMES, [TrajectoryPoint(1.0, [0.0, 0.0])], 5.0, 7.0)
    assert info.value.reason == Reason.RANGE


def test_a_point_outside_the_position_limits_is_refused_one_on_them_accepted():
    # a: continuous (no limits); b: [-1, 0.5] rad (a URDF <limit lower upper>)
    f = TrajectoryFollower(NAMES, (0.0, 0.0), (10.0, 10.0), ((-math.inf, -1.0), (math.inf, 0.5)))
    f.set_trajectory(NAMES, [TrajectoryPoint(4.0, [0.4, 0.4])], 0.0, 0.0)
    before = f.sample(1.0)
    for q_b, text in ((0.5 + 1e-3, "0.501 rad at point 1"), (-1.2, "-1.2 rad at point 0"), (1e30, "1e\\+30")):
        points = [TrajectoryPoint(2.0, [0.0, min(q_b, 0.0)]), TrajectoryPoint(60.0, [0.0, q_b])]
        if q_b < 0:
            points = [TrajectoryPoint(2.0, [0.0, q_b]), TrajectoryPoint(60.0, [0.0, 0.0])]
        with pytest.raises(InputError, match=f"position {text}.*'b'.*\\[-1, 0.5\\]") as info:
            f.set_trajectory(NAMES, points, 0.0, 1.0)
        assert info.value.reason == Reason.RANGE
        np.testing.assert_array_equal(f.sample(1.0).position, before.position)
    # on the limits (and within the 1e-6 rad of a sender's rounding), a far out continuous joint
    f.set_trajectory(
        NAMES, [TrajectoryPoint(2.0, [20.0, -1.0]), TrajectoryPoint(60.0, [40.0, 0.5 + 1e-7])], 0.0, 1.0
    )
    np.testing.assert_allclose(f.sample(61.0).position, [40.0, 0.5 + 1e-7])


@pytest.mark.parametrize(
    "limits", [((0.0,), (1.0,)), ((0.0, 0.0), (1.0, -1.0)), ((0.0, math.nan), (1.0, 1.0))]
)
def test_bad_position_limits_are_a_config_error(limits):
    from gravity_friction_comp.errors import ConfigError

    with pytest.raises(ConfigError, match="position_limits"):
        TrajectoryFollower(NAMES, (0.0, 0.0), None, limits)
