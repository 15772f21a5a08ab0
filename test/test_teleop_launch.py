"""launch/teleop.launch.py (issue 31.3): the teleop node's values per pair of profiles; the
launch description itself needs launch_ros (skipped in the pip environment)."""

from __future__ import annotations

import importlib.util

import pytest
import yaml
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


def test_follower_include_sets_every_argument_the_leaders_does(repo_root):
    """An include's arguments stay set in the launch context: each arm's include names the same
    arguments (mode, player), so the leader's ``mode:=free_drive`` cannot reach the follower."""
    m = _module(repo_root)
    leader, follower = m.arm_arguments("palletizer", "yam_ultra", "true")
    assert leader.keys() == follower.keys()
    assert (leader["arm"], leader["namespace"], leader["mode"]) == ("palletizer", "leader", "free_drive")
    assert (follower["arm"], follower["namespace"]) == ("yam_ultra", "follower")
    assert (follower["mode"], follower["player"]) == ("follow", "external")


def launched_nodes(module, **configurations) -> list[tuple[str, str, dict]]:
    """(namespace, executable, parameters) of every ``Node`` the launch file starts, its includes
    expanded in order in one launch context (as ``ros2 launch`` does; no process started)."""
    from launch.actions import ExecuteProcess
    from launch_ros.actions import Node
    from launch_ros.utilities import evaluate_parameters

    from launch import LaunchContext

    context = LaunchContext()
    found = []

    def visit(entity):
        if isinstance(entity, Node):
            values = evaluate_parameters(context, entity._Node__parameters)
            params = {k: v for d in values if isinstance(d, dict) for k, v in d.items()}
            ns = context.launch_configurations.get("ros_namespace", "")
            found.append((ns, entity.node_executable, params))
            return
        if isinstance(entity, ExecuteProcess):
            return
        for sub in entity.visit(context) or []:
            visit(sub)

    for entity in module.generate_launch_description().entities:
        visit(entity)
        if type(entity).__name__ == "DeclareLaunchArgument":
            context.launch_configurations.update(configurations)
    return found


def test_teleop_launch_runs_the_follower_in_follow_mode(repo_root):
    """Launch level: the leader is the free-drive chain (its free_drive node, kp 0), the follower
    the follow chain without player or free_drive node, its bridge at the motor map's kp (before:
    the leader's mode:=free_drive leaked into the follower's include: a /follower/free_drive
    node and kp 0 on the follower's bridge)."""
    require_launch_ros()
    m = _module(repo_root)
    nodes = launched_nodes(m, leader="palletizer", follower="palletizer")
    by_ns: dict[str, dict[str, dict]] = {}
    for ns, executable, params in nodes:
        by_ns.setdefault(ns.strip("/"), {})[executable] = params
    assert "free_drive_node" in by_ns["leader"]
    assert "free_drive_node" not in by_ns["follower"] and "setpoint_player" not in by_ns["follower"]
    motor = yaml.safe_load((repo_root / "config" / "mit_bridge.yaml").read_text())["mit_bridge"]
    assert list(by_ns["follower"]["mit_bridge_node"]["kp"]) == motor["ros__parameters"]["kp"]  # [20, 30, 15]
    assert list(by_ns["leader"]["mit_bridge_node"]["kp"]) == [0.0, 0.0, 0.0]
