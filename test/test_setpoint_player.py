"""setpoint_player executable over DDS: what it publishes against the profiles' closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: starts node processes (fast tier: -m "not slow")

from graph_helpers import fresh_domain_id, node_and_client, node_process, write_params  # noqa: E402

NAMES = ["base_yaw", "shoulder_pitch", "beam_pitch"]


def _collect(tmp_path, params, topics, predicate, timeout=15.0):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool

    types = {"joint_setpoint": JointState, "gripper/holding": Bool}
    with node_and_client("setpoint_player", "setpoint_player", params, tmp_path) as (proc, client):
        boxes = {t: client.subscribe(types[t], t) for t in topics}
        ok = client.spin_until(lambda: predicate(boxes), timeout, proc)
        assert ok, f"not enough messages: { {t: len(b) for t, b in boxes.items()} }"
        return boxes


def test_sine_setpoints_lie_on_the_ellipse(tmp_path):
    """(q−c)²/A² + (q̇/(Aω))² = 1 on every moving joint; still joints stay at home."""
    amp, period = [0.0, 0.1, 0.05], 2.0
    home = [0.0, 0.3, 0.2]
    boxes = _collect(
        tmp_path,
        dict(profile="sine", joint_names=NAMES, home=home, amplitude=amp, period=period, rate_hz=200.0),
        ["joint_setpoint"],
        lambda b: len(b["joint_setpoint"]) >= 40,
    )
    w = 2 * math.pi / period
    for msg in boxes["joint_setpoint"]:
        assert list(msg.name) == NAMES
        q, v = np.array(msg.position), np.array(msg.velocity)
        assert q[0] == 0.0 and v[0] == 0.0
        for j in (1, 2):
            ellipse = ((q[j] - home[j]) / amp[j]) ** 2 + (v[j] / (amp[j] * w)) ** 2
            assert ellipse == pytest.approx(1.0, abs=1e-9)
        assert msg.header.stamp.sec > 0  # stamped
    # stamps advance by about one period of the timer (1/200 s), not frozen
    stamps = [m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in boxes["joint_setpoint"]]
    assert np.all(np.diff(stamps) > 0)


def _changes(states):
    """States with consecutive repeats removed (the player republishes once a second)."""
    return [s for i, s in enumerate(states) if i == 0 or s != states[i - 1]]


def test_pick_place_toggles_holding(tmp_path):
    home, pick, place = [0.0, 0.3, 0.2], [0.4, 0.5, 0.3], [-0.4, 0.4, 0.25]
    boxes = _collect(
        tmp_path,
        dict(
            profile="pick_place",
            joint_names=NAMES,
            home=home,
            pick=pick,
            place=place,
            move_time=0.3,
            dwell_time=0.2,
            rate_hz=200.0,
        ),
        ["joint_setpoint", "gripper/holding"],
        lambda b: _changes([m.data for m in b["gripper/holding"]])[-3:] == [True, False, True],
    )
    states = [m.data for m in boxes["gripper/holding"]]
    assert True in states and False in states
    # setpoints at rest (dwells) sit exactly on the waypoint poses, and pick/place are visited
    still = [np.array(m.position) for m in boxes["joint_setpoint"] if not np.any(m.velocity)]
    poses = np.array([home, pick, place])
    for q in still:
        assert np.min(np.max(np.abs(poses - q), axis=1)) < 1e-12, q
    visited = {int(np.argmin(np.max(np.abs(poses - q), axis=1))) for q in still}
    assert {1, 2} <= visited


def test_bad_profile_exits_with_the_valid_names(tmp_path):
    domain = fresh_domain_id()
    params_file = write_params(
        tmp_path / "player.yaml",
        "setpoint_player",
        dict(profile="circle", joint_names=NAMES, home=[0.0, 0.0, 0.0]),
    )
    with node_process("setpoint_player", domain, params_file) as proc:
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert "circle" in out and "pick_place" in out and "sine" in out


def test_parameter_declarations_ranges_and_checks():
    from conftest import REPO_ROOT

    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.nodes.parameters import check, descriptor
    from gravity_friction_comp.nodes.setpoint_player import PARAMETERS, PLAYER_PARAMETERS

    by = {p.name: p for p in PARAMETERS}
    assert len(by) == len(PARAMETERS) and all(p.read_only for p in PARAMETERS)
    assert {k: v[0] for k, v in PLAYER_PARAMETERS.items()} == {p.name: p.default for p in PARAMETERS}
    assert (by["rate_hz"].default, by["profile"].default, by["period"].default) == (250.0, "sine", 8.0)
    (r,) = descriptor(by["rate_hz"]).floating_point_range
    assert (r.from_value, r.to_value) == (0.0, 5000.0)
    (r,) = descriptor(by["start_delay"]).floating_point_range
    assert (r.from_value, r.to_value) == (0.0, math.inf)
    (r,) = descriptor(by["period"]).floating_point_range
    assert r.from_value == 1e-6  # profiles.MIN_DURATION
    for bad in ({"rate_hz": 0.0}, {"rate_hz": 5000.5}, {"start_delay": -1.0}, {"start_delay": math.inf}):
        with pytest.raises(ConfigError) as err:
            check(PARAMETERS, bad)
        assert err.value.key == next(iter(bad))
    check(PARAMETERS, {"rate_hz": 5000.0, "start_delay": 0.0})
    data = yaml.safe_load((REPO_ROOT / "config" / "setpoint_player.yaml").read_text())
    assert set(data["/**/setpoint_player"]["ros__parameters"]) <= set(by)
