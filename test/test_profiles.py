"""Profiles against closed forms, finite differences and hand-written recordings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError
from gravity_friction_comp.trajectory.periodic import RampProfile, SineProfile
from gravity_friction_comp.trajectory.profiles import PROFILE_NAMES, profile_from_options
from gravity_friction_comp.trajectory.replay import ReplayProfile, load_csv, load_rosbag
from gravity_friction_comp.trajectory.waypoints import (
    Waypoint,
    WaypointProfile,
    minimum_jerk,
    pick_place_profile,
)

NAMES = ("base_yaw", "shoulder_pitch", "beam_pitch")


def finite_difference(profile, t, h=1e-6):
    return (profile.sample(t + h).position - profile.sample(t - h).position) / (2 * h)


def test_sine_closed_form_points_and_derivative():
    p = SineProfile(NAMES, [0.0, 0.3, 0.2], [0.0, 0.1, 0.05], period=4.0)
    # t = 0: at the centre, moving at 2πA/T
    s0 = p.sample(0.0)
    np.testing.assert_allclose(s0.position, [0.0, 0.3, 0.2])
    np.testing.assert_allclose(s0.velocity, [0.0, 2 * math.pi * 0.1 / 4, 2 * math.pi * 0.05 / 4])
    # t = T/4: at centre + A, at rest
    s1 = p.sample(1.0)
    np.testing.assert_allclose(s1.position, [0.0, 0.4, 0.25])
    np.testing.assert_allclose(s1.velocity, 0.0, atol=1e-15)
    assert s1.holding is None
    rng = np.random.default_rng(3)
    for t in rng.uniform(0.1, 3.9, 5):
        np.testing.assert_allclose(p.sample(t).velocity, finite_difference(p, t), atol=1e-7)


def test_sine_loops_and_holds():
    p = SineProfile(NAMES, 0.0, 0.1, period=2.0)
    np.testing.assert_allclose(p.sample(0.5 + 4.0).position, p.sample(0.5).position, atol=1e-12)
    once = SineProfile(NAMES, 0.0, 0.1, period=2.0, loop=False)
    end = once.sample(7.3)
    np.testing.assert_allclose(end.position, 0.0, atol=1e-12)  # sin(2π) = 0
    np.testing.assert_array_equal(end.velocity, 0.0)


def test_ramp_triangle_corners_and_speed():
    p = RampProfile(NAMES, [0.0, 0.3, 0.2], [0.2, 0.1, 0.0], period=8.0)
    np.testing.assert_allclose(p.sample(0.0).position, [0.0, 0.3, 0.2])
    np.testing.assert_allclose(p.sample(2.0).position, [0.2, 0.4, 0.2])  # T/4: +A
    np.testing.assert_allclose(p.sample(6.0).position, [-0.2, 0.2, 0.2])  # 3T/4: −A
    np.testing.assert_allclose(p.sample(8.0 - 1e-12).position, [0.0, 0.3, 0.2], atol=1e-12)
    # speed 4A/T with the sign of the leg
    np.testing.assert_allclose(p.sample(1.0).velocity, [0.1, 0.05, 0.0])
    np.testing.assert_allclose(p.sample(4.0).velocity, [-0.1, -0.05, 0.0])
    for t in (0.7, 3.1, 7.2):
        np.testing.assert_allclose(p.sample(t).velocity, finite_difference(p, t), atol=1e-7)


def test_minimum_jerk_closed_form():
    assert minimum_jerk(0.0) == (0.0, 0.0)
    assert minimum_jerk(1.0) == pytest.approx((1.0, 0.0))
    # s(½) = 10/8 − 15/16 + 6/32 = ½ ; s'(½) = 30·¼·¼ = 15/8
    assert minimum_jerk(0.5) == pytest.approx((0.5, 15 / 8))
    # s' integrates to s (trapezoid on a fine grid)
    tau = np.linspace(0, 0.7, 7001)
    ds = np.array([minimum_jerk(x)[1] for x in tau])
    integral = np.sum((ds[1:] + ds[:-1]) / 2 * np.diff(tau))
    assert integral == pytest.approx(minimum_jerk(0.7)[0], abs=1e-8)


def test_pick_place_cycle_poses_holding_and_velocity():
    home, pick, place = [0.0, 0.3, 0.2], [0.5, 0.6, 0.4], [-0.5, 0.5, 0.1]
    p = pick_place_profile(NAMES, home, pick, place, move_time=2.0, dwell_time=1.0, grip_time=0.5)
    # 3 moves × 2 s + 4 dwells × 1 s + 0.5 s gripper
    assert p.period == pytest.approx(10.5)
    # starts at home (the last waypoint), gripper open
    np.testing.assert_allclose(p.sample(0.0).position, home)
    assert p.sample(0.0).holding is False
    # halfway through the first move: midpoint, speed (pick − home)·(15/8)/T
    mid = p.sample(1.0)
    np.testing.assert_allclose(mid.position, (np.array(home) + pick) / 2)
    np.testing.assert_allclose(mid.velocity, (np.array(pick) - home) * (15 / 8) / 2.0)
    assert mid.holding is False
    # at pick: still with the gripper open (2–3 s), closing (3–3.5 s), closed (3.5–4.5 s)
    for t, holding in ((2.0, False), (2.9, False), (3.2, False), (3.5, True), (4.4, True)):
        s = p.sample(t)
        np.testing.assert_allclose(s.position, pick)
        np.testing.assert_allclose(s.velocity, 0.0, atol=1e-12)
        assert s.holding is holding, t
    assert p.sample(5.0).holding is True  # carried to place
    s = p.sample(7.0)
    np.testing.assert_allclose(s.position, place)
    assert s.holding is False  # released on arrival
    np.testing.assert_allclose(p.sample(10.2).position, home)
    assert p.segment_times(1) == pytest.approx((3.0, 3.5, 4.5))
    for t in (0.3, 5.7, 8.9):
        np.testing.assert_allclose(p.sample(t).velocity, finite_difference(p, t), atol=1e-6)
    # next cycle repeats
    np.testing.assert_allclose(p.sample(11.5).position, mid.position)


def test_waypoint_validation():
    with pytest.raises(ConfigError, match="≥ 2 waypoints"):
        WaypointProfile(NAMES, [Waypoint((0.0, 0.0, 0.0), 1.0)])
    with pytest.raises(ConfigError, match="move_time"):
        WaypointProfile(NAMES, [Waypoint((0.0, 0.0, 0.0), 1.0), Waypoint((0.0, 0.0, 0.0), 0.0)])
    with pytest.raises(DimensionError):
        WaypointProfile(NAMES, [Waypoint((0.0, 0.0), 1.0), Waypoint((0.0, 0.0, 0.0), 1.0)])


def test_bad_options_fail_clearly():
    with pytest.raises(ConfigError) as info:
        profile_from_options("circle", NAMES, home=[0, 0, 0])
    for name in PROFILE_NAMES:
        assert name in str(info.value)
    with pytest.raises(DimensionError):
        profile_from_options("sine", NAMES, home=[0, 0], amplitude=0.1)
    with pytest.raises(ConfigError, match="period"):
        SineProfile(NAMES, 0.0, 0.1, period=0.0)
    with pytest.raises(ConfigError, match="duplicate names"):
        SineProfile(("a", "a"), 0.0, 0.1, period=1.0)
    with pytest.raises(ConfigError, match="finite"):
        SineProfile(NAMES, [0.0, float("nan"), 0.0], 0.1, period=1.0)
    with pytest.raises(InputError):
        SineProfile(NAMES, 0.0, 0.1, period=1.0).sample(-1.0)


def test_options_defaults_pick_place_from_amplitude():
    p = profile_from_options(
        "pick_place", NAMES, home=[0.0, 0.3, 0.2], amplitude=[0.4, 0.1, 0.0], move_time=1.0, dwell_time=0.5
    )
    np.testing.assert_allclose(p.sample(1.2).position, [0.4, 0.4, 0.2])  # pick = home + A
    np.testing.assert_allclose(p.sample(3.4).position, [-0.4, 0.2, 0.2])  # place = home − A


def test_replay_interpolation_and_slope():
    t = [10.0, 10.5, 11.5]
    q = [[0.0, 1.0], [0.5, 1.0], [0.5, 0.0]]
    p = ReplayProfile(t, ("a", "b"), q)
    assert p.period == pytest.approx(1.5)
    s = p.sample(0.25)
    np.testing.assert_allclose(s.position, [0.25, 1.0])
    np.testing.assert_allclose(s.velocity, [1.0, 0.0])  # slope of the first segment
    np.testing.assert_allclose(p.sample(1.0).velocity, [0.0, -1.0])
    with pytest.raises(ConfigError, match="increasing"):
        ReplayProfile([0.0, 0.0], ("a",), [[0.0], [1.0]])
    with pytest.raises(DimensionError):
        ReplayProfile([0.0, 1.0], ("a", "b"), [[0.0], [1.0]])


def test_csv_replay(tmp_path):
    path = tmp_path / "rec.csv"
    path.write_text(
        "time,position.b,position.a,velocity.a,velocity.b\n0.0,1.0,0.0,0.0,0.0\n1.0,3.0,2.0,4.0,2.0\n"
    )
    p = load_csv(path)
    assert p.joint_names == ("b", "a")
    s = p.sample(0.5)
    np.testing.assert_allclose(s.position, [2.0, 1.0])
    np.testing.assert_allclose(s.velocity, [1.0, 2.0])  # interpolated recorded velocity
    # restricted and reordered by name through the options
    sel = profile_from_options("csv", ["a"], home=[], csv_path=str(path))
    np.testing.assert_allclose(sel.sample(0.5).position, [1.0])
    bad = tmp_path / "bad.csv"
    bad.write_text("t,position.a\n0,1\n")
    with pytest.raises(ConfigError, match="'time'"):
        load_csv(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_csv(tmp_path / "missing.csv")


def _write_bag(folder, samples):
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header = store.types["std_msgs/msg/Header"]
    Time = store.types["builtin_interfaces/msg/Time"]
    with Writer(folder, version=8) as writer:
        conn = writer.add_connection("/leader/joint_states", JointState.__msgtype__, typestore=store)
        other = writer.add_connection("/other", "std_msgs/msg/Header", typestore=store)
        for i, (stamp, names, pos, vel) in enumerate(samples):
            sec = int(stamp)
            msg = JointState(
                header=Header(stamp=Time(sec=sec, nanosec=int(round((stamp - sec) * 1e9))), frame_id=""),
                name=list(names),
                position=np.array(pos, dtype=float),
                velocity=np.array(vel, dtype=float),
                effort=np.array([], dtype=float),
            )
            writer.write(conn, 1000 + i, store.serialize_cdr(msg, JointState.__msgtype__))
        writer.write(
            other,
            5000,
            store.serialize_cdr(Header(stamp=Time(sec=0, nanosec=0), frame_id="x"), "std_msgs/msg/Header"),
        )


def test_rosbag_replay_maps_by_name(tmp_path):
    bag = tmp_path / "bag"
    _write_bag(
        bag,
        [
            (100.0, ["j1", "j2"], [0.0, 1.0], [0.0, 0.0]),
            (100.5, ["j2", "j1"], [2.0, 1.0], [4.0, 2.0]),  # other order: mapped by name
            (100.7, ["j1"], [9.0], [9.0]),  # lacks j2: skipped
            (101.0, ["j1", "j2"], [2.0, 2.0], [0.0, 0.0]),
        ],
    )
    p = load_rosbag(bag, "leader/joint_states")
    assert p.joint_names == ("j1", "j2")
    np.testing.assert_allclose(p.times, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(p.sample(0.5).position, [1.0, 2.0])
    np.testing.assert_allclose(p.sample(0.25).position, [0.5, 1.5])
    np.testing.assert_allclose(p.sample(0.25).velocity, [1.0, 2.0])
    with pytest.raises(ConfigError, match="/leader/joint_states"):
        load_rosbag(bag, "/joint_states")
    with pytest.raises(ConfigError, match="cannot read"):
        load_rosbag(tmp_path / "nothing_here")


# ---- durations, overflow, argument types, file encodings ---------------------------------
def test_min_duration_and_overflowing_velocity():
    from gravity_friction_comp.trajectory.base import MIN_DURATION

    assert MIN_DURATION == 1e-6
    with pytest.raises(ConfigError, match=r"period must be >= 1e-06") as info:
        SineProfile(["a"], 0.0, 1.0, 1e-308)
    assert info.value.key == "period"
    # the shortest period is accepted: T/4 → c + A at rest, t = 0 → speed 2πA/T (by hand)
    p = SineProfile(["a"], 0.5, 0.25, MIN_DURATION)
    np.testing.assert_allclose(p.sample(MIN_DURATION / 4).position, [0.75])
    np.testing.assert_allclose(p.sample(0.0).velocity, [2 * math.pi * 0.25 / 1e-6])
    for cls in (SineProfile, RampProfile):
        with pytest.raises(ConfigError, match="peak velocity") as info:
            cls(["a"], 0.0, 1e308, 0.1)
        assert info.value.key == "amplitude"
    with pytest.raises(ConfigError, match="centre ± amplitude"):
        SineProfile(["a"], 1e308, 1e308, 1.0)


def test_pick_place_times_validated_by_key():
    for kwargs, key, fragment in (
        ({"move_time": 1e-320}, "move_time", ">= 1e-06"),
        ({"grip_time": 0.0}, "grip_time", "> 0"),
        ({"dwell_time": "x"}, "dwell_time", "must be a number"),
        ({"dwell_time": None}, "dwell_time", "must be a number"),
        ({"dwell_time": -1.0}, "dwell_time", ">= 0"),
    ):
        with pytest.raises(ConfigError, match=fragment) as info:
            pick_place_profile(["a"], [0.0], [1.0], [2.0], **kwargs)
        assert info.value.key == key, kwargs
    with pytest.raises(ConfigError, match="peak velocity"):
        pick_place_profile(["a"], [0.0], [1e308], [0.0], move_time=1e-3)
    with pytest.raises(ConfigError, match="step between waypoints"):
        pick_place_profile(["a"], [-1e308], [1e308], [0.0])
    with pytest.raises(ConfigError, match="cycle length"):
        pick_place_profile(["a"], [0.0], [1.0], [2.0], dwell_time=1e308)
    with pytest.raises(ConfigError, match="list of Waypoint"):
        WaypointProfile(["a"], None)


def test_options_argument_types():
    # a scalar pick is broadcast: at the end of the first move every joint is at 0.3
    p = profile_from_options(
        "pick_place", ["a", "b"], home=[0.0, 0.0], pick=0.3, move_time=1.0, dwell_time=0.5
    )
    np.testing.assert_allclose(p.sample(1.0).position, [0.3, 0.3])
    for names in (None, "ab", ["a", 1]):
        for profile in ("sine", "csv", "bag"):
            with pytest.raises(ConfigError, match="list of joint names") as info:
                profile_from_options(profile, names, home=[0.0, 0.0])
            assert info.value.key == "joint_names"
    with pytest.raises(ConfigError, match="flat list") as info:
        profile_from_options("sine", ["a", "b"], home=[[0.0, 1.0]], amplitude=0.5)
    assert info.value.key == "home"
    with pytest.raises(ConfigError, match="non-empty path") as info:
        profile_from_options("csv", [], home=[], csv_path=None)
    assert info.value.key == "csv_path"
    with pytest.raises(InputError, match="must be a number"):
        SineProfile(["a"], 0.0, 0.1, 1.0).sample("soon")


def test_replay_minimum_step_and_overflowing_slope():
    with pytest.raises(ConfigError, match=r"sample 2 is at") as info:
        ReplayProfile([0.0, 1.0, 1.0 + 1e-9], ["a"], [[0.0], [1.0], [2.0]])
    assert info.value.key == "times"
    # a 1 µs step is accepted: slope 1/1e-6
    p = ReplayProfile([0.0, 1e-6], ["a"], [[0.0], [1.0]])
    np.testing.assert_allclose(p.sample(0.0).velocity, [1e6])
    with pytest.raises(ConfigError, match="slope"):
        ReplayProfile([0.0, 1e-3], ["a"], [[0.0], [1e308]])
    with pytest.raises(ConfigError, match="step between samples"):
        ReplayProfile([0.0, 1.0], ["a"], [[-1e308], [1e308]])
    with pytest.raises(ConfigError, match="step between samples") as info:
        ReplayProfile([0.0, 1.0], ["a"], [[0.0], [1.0]], [[-1e308], [1e308]])
    assert info.value.key == "velocities"
    with pytest.raises(ConfigError, match="finite"):
        ReplayProfile([-1e308, 1e308], ["a"], [[0.0], [1.0]])


@pytest.mark.parametrize(
    "data, fragment",
    [
        (b"time,position.a\n0,0\n1e-320,1\n", "1e-06"),
        (b"time,position.a\n0,\xff\n1,2\n", "not UTF-8"),
        (b"time,position.a\n", "no data rows"),
        (b"time,position.a\n0,1\n1,2,3\n", "line 3 has 3 cells"),
        (b"time,position.a\n0,1\n1,x\n", "line 3, column 'position.a': not a number"),
        (b"time,time,position.a\n0,0,1\n1,1,2\n", "repeated column"),
    ],
)
def test_csv_errors_name_the_file(tmp_path, data, fragment):
    path = tmp_path / "rec.csv"
    path.write_bytes(data)
    with pytest.raises(ConfigError, match=fragment) as info:
        load_csv(path)
    assert info.value.key == "csv_path"
    assert str(path) in str(info.value)


def test_csv_with_byte_order_mark(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbftime,position.a\r\n0,1\r\n2,2\r\n")
    p = load_csv(path)
    assert p.joint_names == ("a",)
    np.testing.assert_allclose(p.sample(1.0).position, [1.5])
    np.testing.assert_allclose(p.sample(1.0).velocity, [0.5])


def test_rosbag_argument_types_and_repeated_stamps(tmp_path):
    with pytest.raises(ConfigError, match="topic must be") as info:
        load_rosbag(tmp_path / "bag", None)
    assert info.value.key == "topic"
    with pytest.raises(ConfigError, match="list of joint names"):
        load_rosbag(tmp_path / "bag", "joint_states", "ab")
    bag = tmp_path / "bag"
    _write_bag(
        bag,
        [
            (100.0, ["j1"], [0.0], [0.0]),
            (100.0000005, ["j1"], [5.0], [0.0]),  # 0.5 µs later: a repeated stamp, dropped
            (101.0, ["j1"], [2.0], [0.0]),
        ],
    )
    p = load_rosbag(bag, "leader/joint_states", ["j1"])
    np.testing.assert_allclose(p.times, [0.0, 1.0])
    np.testing.assert_allclose(p.positions, [[0.0], [2.0]])
