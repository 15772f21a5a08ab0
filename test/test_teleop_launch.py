"""launch/teleop.launch.py (issue 31.3): the teleop node's values per pair of profiles; the
launch description itself needs launch_ros (skipped in the pip environment)."""

from __future__ import annotations

import importlib.util

import pytest
from test_launch import assert_profile_file, require_launch_ros


def _module(repo_root):
    spec = importlib.util.spec_from_file_location("teleop_launch", repo_root / "launch" / "teleop.launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_pair_from_the_followers_pair_file_and_the_leaders_effort_limits(repo_root):
    m = _module(repo_root)
    values = m.teleop_parameters("palletizer", "palletizer", "")
    assert_profile_file(values["pair_config"], repo_root, "palletizer", "teleop.yaml")
    assert values["joints"] == [""]  # the file maps them
    assert values["leader_effort_limit"] == [10.0, 28.0, 10.0]  # config/mit_bridge.yaml
    assert values["fixed_joints"] == [""]  # mimic joints are the model's, not the setpoint's
    assert values["rate_hz"] == 500.0 and values["follower_bridges"] == ["/follower/mit_bridge"]
    # one bus each: the bridges' one joint_states (what teleop_remappings gave before)
    assert values["leader_state_topics"] == ["/leader/joint_states"]
    assert values["follower_state_topics"] == ["/follower/joint_states"]
    topics = dict(m.teleop_remappings("/follower/external_effort"))
    assert topics["follower_setpoint"] == "/follower/joint_setpoint"
    assert topics["leader_feedback_effort"] == "/leader/feedback_effort"


def test_bimanual_pairs_are_one_node_over_both_arms_fingers_fixed(repo_root):
    from gravity_friction_comp.teleop.config import load_pair_config

    m = _module(repo_root)
    values = m.teleop_parameters("openarm_v10_bimanual", "openarm_v10_bimanual", "")
    pair = load_pair_config(values["pair_config"])
    assert_profile_file(values["pair_config"], repo_root, "openarm_v10_bimanual", "teleop.yaml")
    assert len(pair.joints) == 14 and pair.follower_joints[0] == "openarm_left_joint1"
    assert all(j == pair.joints[j].leader for j in pair.joints)  # identity
    # the follower: one bridge per bus (motor map: can1 the left arm, can0 the right), each
    # bridge's joint_states given to the link and its diagnostics watched for a fault; the
    # leader in free drive: one bridge over both buses
    assert values["follower_state_topics"] == ["/follower/left/joint_states", "/follower/right/joint_states"]
    assert values["follower_bridges"] == ["/follower/left/mit_bridge", "/follower/right/mit_bridge"]
    assert values["leader_state_topics"] == ["/leader/joint_states"]
    # the model's independent joints no bridge drives (finger_joint2 mimics finger_joint1)
    assert values["fixed_joints"] == ["openarm_left_finger_joint1", "openarm_right_finger_joint1"]
    assert len(values["fixed_positions"]) == 2 and values["rate_hz"] == 1000.0


def test_profiles_without_a_common_joint_are_refused(repo_root):
    from gravity_friction_comp.errors import ConfigError

    m = _module(repo_root)
    with pytest.raises(ConfigError, match="share no joint"):
        m.teleop_parameters("palletizer", "yam_ultra", "")


def test_launch_description_builds(repo_root):
    require_launch_ros()
    m = _module(repo_root)
    description = m.generate_launch_description()
    names = [a.name for a in description.entities if hasattr(a, "name")]
    assert {"leader", "follower", "pair_config", "feedback"} <= set(names)


def test_the_followers_observer_runs_on_its_joint_states(repo_root):
    m = _module(repo_root)
    cmd = m.observer_command("palletizer", "python3")
    assert cmd[:3] == ["python3", "-m", "gravity_friction_comp.nodes.observer_node"]
    assert "__ns:=/follower" in cmd and any(
        a.startswith("urdf_path:=") and a.endswith("palletizer.urdf") for a in cmd
    )
    # what the teleop node reads by default is this node's ~/external_effort
    assert m.EXTERNAL_EFFORT == "/follower/momentum_observer/external_effort"
    assert {a[0]: a[1] for a in m.ARGUMENTS}["external_effort_topic"] == m.EXTERNAL_EFFORT
