"""setpoint_player profile ``hold`` (issue 13 point 4) and the end of a non-looping profile
(issue 16 point 4): the hold profile's samples, the launch file's ``player:=none`` parameters,
and the player process over DDS (measured pose latched, home fallback, ``~/done``)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from conftest import REPO_ROOT

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.trajectory.profiles import PROFILE_NAMES, profile_from_options

NAMES = ["base_yaw", "shoulder_pitch", "beam_pitch"]


def _arm_launch():
    from test_launch import load_launch_module

    return load_launch_module(REPO_ROOT, "arm.launch.py")


def test_hold_profile_is_one_pose_for_ever():
    assert "hold" in PROFILE_NAMES
    pose = [0.1, -0.25, 0.4]
    p = profile_from_options("hold", NAMES, home=pose)
    for t in (0.0, 0.5, 1.0, 7.3, 1e6):
        s = p.sample(t)
        assert s.position.tolist() == pose and s.velocity.tolist() == [0.0, 0.0, 0.0]
        assert s.holding is None
    assert p.loop  # never "done"
    s.position[0] = 99.0  # a sample is a copy: the held pose cannot be changed through it
    assert p.sample(0.0).position[0] == 0.1
    with pytest.raises(ConfigError):
        profile_from_options("hold", NAMES, home=[0.0, 0.0])
    with pytest.raises(ConfigError):
        profile_from_options("hold", NAMES, home=[0.0, float("nan"), 0.0])


def test_launch_player_none_is_hold():
    """player:=none → hold: simulated arm at the sim config's initial positions at once (read
    here straight from the YAML); real arm: measured joints only; other players unchanged."""
    arm = _arm_launch()
    sim = REPO_ROOT / "config" / "sim_palletizer.yaml"
    joints = yaml.safe_load(sim.read_text())["simulation"]["joints"]
    values = arm.player_parameters("none", True, str(sim))
    assert values == {
        "profile": "hold",
        "joint_names": list(joints),
        "home": [float(j["initial_position"]) for j in joints.values()],
        "hold_wait": 0.0,
    }
    assert values["joint_names"] == NAMES and values["home"] == [0.0, 0.3, 0.2]
    assert arm.player_parameters("none", False, str(sim)) == {"profile": "hold", "joint_names": [""]}
    assert arm.player_parameters("sine", True, str(sim)) == {"profile": "sine"}
    pytest.importorskip("rclpy")
    from gravity_friction_comp.nodes.setpoint_player import PARAMETERS

    declared = {p.name for p in PARAMETERS}
    assert set(values) <= declared  # a typo would be ignored by launch


# --------------------------------------------------------------------------- over DDS
def _run(tmp_path, params, until, timeout=20.0, publish_states=None):
    """Start the player with ``params``; optionally publish ``publish_states`` (a list of
    (names, positions)) on joint_states, one per spin; return (setpoints, done, output)."""
    pytest.importorskip("rclpy")
    from graph_helpers import node_and_client
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool

    from gravity_friction_comp.nodes.setpoint_player import DONE_QOS

    with node_and_client("setpoint_player", "setpoint_player", params, tmp_path) as (proc, client):
        setpoints = client.subscribe(JointState, "joint_setpoint")
        done: list = []
        client.node.create_subscription(Bool, "setpoint_player/done", done.append, DONE_QOS)
        if publish_states:
            pub = client.publisher(JointState, "joint_states")
            client.wait_for_subscriber(pub, 15.0, proc)
            client.spin_for(0.3)
            assert not setpoints, "hold published before it had a pose"
            for names, position in publish_states:
                msg = JointState(name=names, position=position)
                pub.publish(msg)
                client.spin_for(0.05)
        ok = client.spin_until(lambda: until(setpoints, done), timeout, proc)
        assert ok, f"setpoints {len(setpoints)}, done {[d.data for d in done]}"
    return setpoints, done, proc.stdout.read()


@pytest.mark.slow
def test_hold_latches_the_first_complete_measurement(tmp_path):
    """A joint_states without every joint is skipped; the first complete one is held exactly
    (velocity 0); a later measurement does not move the setpoint."""
    first = [0.11, 0.47, -0.31]
    setpoints, _, out = _run(
        tmp_path,
        dict(profile="hold", joint_names=NAMES, home=[0.0, 0.3, 0.2], hold_wait=10.0, rate_hz=200.0),
        lambda s, d: len(s) >= 50,
        publish_states=[
            (NAMES[:2], [0.9, 0.9]),  # shoulder/beam not all measured: skipped
            (NAMES, first),
            (NAMES, [0.5, 0.5, 0.5]),  # after the latch: ignored
        ],
    )
    for msg in setpoints:
        assert list(msg.name) == NAMES
        assert list(msg.position) == first and list(msg.velocity) == [0.0, 0.0, 0.0]
    assert "holding the measured position of joint_states" in out and "0.4700" in out


@pytest.mark.slow
def test_hold_without_measurement_holds_home(tmp_path):
    home = [0.0, 0.3, 0.2]
    setpoints, _, out = _run(
        tmp_path,
        dict(profile="hold", joint_names=NAMES, home=home, hold_wait=0.5, rate_hz=200.0),
        lambda s, d: len(s) >= 20,
    )
    assert all(list(m.position) == home and not any(m.velocity) for m in setpoints)
    assert "holding the home pose (no joint_states with every joint within 0.5 s)" in out


@pytest.mark.slow
def test_non_looping_profile_says_done_once(tmp_path):
    """sine, loop false, period 0.4 s: ~/done goes false → true, the log says so once, and the
    player keeps publishing the last pose (home: sin(2π) = 0) with velocity 0."""
    home, amp = [0.0, 0.3, 0.2], [0.0, 0.1, 0.05]
    setpoints, done, out = _run(
        tmp_path,
        dict(
            profile="sine", joint_names=NAMES, home=home, amplitude=amp, period=0.4, loop=False, rate_hz=200.0
        ),
        lambda s, d: any(m.data for m in d) and len(s) >= 400,
    )
    assert [m.data for m in done][-1] is True
    assert out.count("profile sine done after 0.400 s (loop=false)") == 1, out
    tail = setpoints[-50:]
    assert all(np.allclose(m.position, home, atol=1e-12) and not any(m.velocity) for m in tail)
