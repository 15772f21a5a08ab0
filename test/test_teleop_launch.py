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
    # the one observer's estimate (observer_commands: one per bridge)
    assert values["follower_effort_topics"] == ["/follower/momentum_observer/external_effort"]
    topics = dict(m.teleop_remappings())
    assert topics == {
        "follower_setpoint": "/follower/joint_setpoint",
        "leader_feedback_effort": "/leader/feedback_effort",
    }
    # under a test's own namespace: every topic below it
    rooted = m.teleop_parameters("palletizer", "palletizer", "", root="/t1")
    assert rooted["follower_state_topics"] == ["/t1/follower/joint_states"]
    assert rooted["leader_state_topics"] == ["/t1/leader/joint_states"]
    assert rooted["follower_bridges"] == ["/t1/follower/mit_bridge"]
    assert dict(m.teleop_remappings("/t1"))["follower_setpoint"] == "/t1/follower/joint_setpoint"


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
    # one observer per bus, on its bridge's joint_states (test_teleop_graph.py: over DDS)
    assert values["follower_effort_topics"] == [
        "/follower/left/momentum_observer/external_effort",
        "/follower/right/momentum_observer/external_effort",
    ]
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


def test_the_followers_observers_run_one_per_bridge_on_its_joint_states(repo_root):
    m = _module(repo_root)
    (cmd,) = m.observer_commands("palletizer", "python3")
    assert cmd[:3] == ["python3", "-m", "gravity_friction_comp.nodes.observer_node"]
    assert "__ns:=/follower" in cmd and any(
        a.startswith("urdf_path:=") and a.endswith("palletizer.urdf") for a in cmd
    )
    left, right = m.observer_commands("openarm_v10_bimanual", "python3")
    assert "__ns:=/follower/left" in left and "__ns:=/follower/right" in right
    assert any(a.endswith("openarm_v10_bimanual_hand.urdf") for a in left)  # the whole model
    # the default starts them; a topic list (comma-separated) replaces them
    assert {a[0]: a[1] for a in m.ARGUMENTS}["external_effort_topic"] == ""


def test_the_launch_starts_one_observer_per_follower_bridge_and_the_node_reads_theirs(repo_root):
    m = _module(repo_root)
    arm = "openarm_v10_bimanual"
    defaults = {n: d for n, d, _ in m.ARGUMENTS if n in m.WIRING_ARGUMENTS}
    values, observers = m.teleop_wiring(arm, arm, "python3", **defaults)
    assert observers == m.observer_commands(arm, "python3") and len(observers) == 2
    assert values["follower_effort_topics"] == [
        "/follower/left/momentum_observer/external_effort",
        "/follower/right/momentum_observer/external_effort",
    ]
    assert "feedback.enable" not in values  # the pair YAML's
    # estimates from elsewhere (the bridges' own observers): those topics, no observer started
    given = "/follower/left/mit_bridge/external_effort, /follower/right/mit_bridge/external_effort"
    values, observers = m.teleop_wiring(
        arm, arm, "python3", external_effort_topic=given, feedback="True", feedback_gain="0.5"
    )
    assert observers == []
    assert values["follower_effort_topics"] == [t.strip() for t in given.split(",")]
    assert values["feedback.enable"] is True and values["feedback.gain"] == 0.5
    for bad, needle in ({"feedback": "yes"}, "true or false"), ({"feedback_gain": "high"}, "not a number"):
        with pytest.raises(ValueError, match=needle):
            m.teleop_wiring(arm, arm, "python3", **bad)


def test_the_description_is_arm_launch_pys_helper_on_this_files_arguments(repo_root, monkeypatch):
    """One helper builds both files' descriptions (arm.launch.py's generate_launch_description
    with this file's ARGUMENTS and _setup); ``launch`` replaced by recorders (not installed in
    the pip environment)."""
    import sys
    import types

    launch = types.ModuleType("launch")
    launch.LaunchDescription = list
    actions = types.ModuleType("launch.actions")
    actions.DeclareLaunchArgument = lambda name, default_value, description: (
        name,
        default_value,
        description,
    )
    actions.OpaqueFunction = lambda function: function
    monkeypatch.setitem(sys.modules, "launch", launch)
    monkeypatch.setitem(sys.modules, "launch.actions", actions)
    m = _module(repo_root)
    *declared, setup = m.generate_launch_description()
    assert declared == list(m.ARGUMENTS)
    assert setup is m._setup


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
    motor = yaml.safe_load((repo_root / "config" / "mit_bridge.yaml").read_text())["/**/mit_bridge"]
    assert list(by_ns["follower"]["mit_bridge_node"]["kp"]) == motor["ros__parameters"]["kp"]  # [20, 30, 15]
    assert list(by_ns["leader"]["mit_bridge_node"]["kp"]) == [0.0, 0.0, 0.0]


def test_the_wiring_loads_each_profile_once_and_gives_what_the_helpers_give_from_names(
    repo_root, monkeypatch
):
    """teleop_wiring loads the leader's and the follower's profile once each and hands them
    to every helper (it loaded the follower three times: teleop_parameters, its default pair
    file, observer_commands); the values are those the helpers give from the names."""
    from gravity_friction_comp.profiles import arm_profiles

    m = _module(repo_root)
    arm = "openarm_v10_bimanual"
    expected = m.teleop_parameters(arm, arm, ""), m.observer_commands(arm, "python3")
    loaded = []
    real = arm_profiles.load_arm
    monkeypatch.setattr(
        arm_profiles, "load_arm", lambda name, *a, **k: loaded.append(name) or real(name, *a, **k)
    )
    assert m.teleop_wiring(arm, arm, "python3") == expected
    assert loaded == [arm, arm]  # leader, follower


def test_a_leader_motor_map_without_effort_limit_gives_the_motor_tables_torque(repo_root, tmp_path):
    """``effort_limit`` is optional in a motor map (the bridge then bounds τ_ff by gear_ratio ·
    T_MAX): the leader's feedback limits are that bound (they were read from the file's
    ``effort_limit`` and raised KeyError), from the motor table independently here."""
    import re
    import shutil

    from gravity_friction_comp.mit.motor_table import MOTOR_TABLE
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    mine = tmp_path / "arms" / "mine"
    shutil.copytree(repo_root / "arms" / "yam", mine)
    motors = mine / "mit_bridge.yaml"
    motors.write_text(re.sub(r"(?m)^\s*effort_limit:.*\n", "", motors.read_text()))
    profile = load_arm("mine", root=tmp_path / "arms")
    values = profile.bridge_values()
    assert "effort_limit" not in values
    expected = [MOTOR_TABLE[t].t_max * g for t, g in zip(values["motor_type"], values["gear_ratio"])]
    assert list(profile.effort_limits().values()) == expected
    got = _module(repo_root).teleop_parameters(profile, profile, "")["leader_effort_limit"]
    assert got == [profile.effort_limits()[j] for j in values["joints"]]  # identity pair: every joint
