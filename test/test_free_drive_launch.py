"""nodes/free_drive_launch.py: what arm.launch.py mode:=free_drive overrides."""

from __future__ import annotations

import os
import pathlib
import signal

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.nodes.free_drive_launch import MIN_FREE_DRIVE_DEADBAND, free_drive_overrides

BRIDGE = {"joints": ["a", "b"], "kp": [80.0, 10.0], "kd": [5.0, 1.5]}


def test_overrides_kp_zero_kd_scaled_measured_friction_and_both_gain_sets():
    bridge, friction, node = free_drive_overrides(
        BRIDGE, ["a", "b", "finger"], {"finger": 0.01}, kd_scale=0.2, friction_deadband=0.003, rate_hz=0.0
    )
    assert bridge == {"kp": [0.0, 0.0], "kd": [1.0, 0.30000000000000004]}
    assert friction == {"velocity_source": "measured", "velocity_deadband": MIN_FREE_DRIVE_DEADBAND}
    assert node["joints"] == ["a", "b"] and node["fixed_joints"] == ["finger"]
    assert node["fixed_positions"] == [0.01]
    assert node["free_drive_kd"] == bridge["kd"]
    assert (node["follow_kp"], node["follow_kd"]) == (BRIDGE["kp"], BRIDGE["kd"])


def test_a_number_for_the_bridges_kp_kd_means_every_joint():
    """``kp: 5.0`` in the bridge's file (the bridge takes it for every joint) is read so here too."""
    bridge, _, node = free_drive_overrides(
        {**BRIDGE, "kp": 5.0, "kd": 2}, ["a", "b"], {}, kd_scale=0.5, friction_deadband=0.0, rate_hz=0.0
    )
    assert bridge == {"kp": [0.0, 0.0], "kd": [1.0, 1.0]}
    assert (node["follow_kp"], node["follow_kd"]) == ([5.0, 5.0], [2.0, 2.0])


def test_no_fixed_joint_and_a_larger_deadband_kept():
    _, friction, node = free_drive_overrides(
        BRIDGE, ["a", "b"], {}, kd_scale=1.0, friction_deadband=0.05, rate_hz=250.0
    )
    assert friction["velocity_deadband"] == 0.05
    assert node["fixed_joints"] == [""] and node["rate_hz"] == 250.0


@pytest.mark.parametrize("scale", [0.0, 1.5, float("nan")])
def test_kd_scale_out_of_range(scale):
    with pytest.raises(ConfigError) as info:
        free_drive_overrides(BRIDGE, ["a", "b"], {}, kd_scale=scale, friction_deadband=0.0, rate_hz=0.0)
    assert info.value.key == "free_drive_kd_scale"


def test_the_profiles_dither_goes_to_the_friction_stage():
    _, friction, _ = free_drive_overrides(
        BRIDGE, ["a", "b"], {}, kd_scale=0.2, friction_deadband=0.0, rate_hz=0.0, dither=(0.7, 0.0)
    )
    assert friction["dither"] == [0.7, 0.0]


def test_profile_free_drive_dither_by_joint_others_off(tmp_path):
    import shutil

    from gravity_friction_comp.profiles.arm_profiles import load_arm

    assert load_arm("yam_ultra").free_drive_dither == (0.7, 0.5, 0.6, 0.0, 0.0, 0.0)
    arm = tmp_path / "arm"
    shutil.copytree(load_arm("yam_ultra").directory, arm)
    text = (arm / "profile.yaml").read_text()
    for bad in ("{dof_joint9: 0.5}", "{dof_joint1: 0.99}", "[0.5]", "{dof_joint1: x}"):
        (arm / "profile.yaml").write_text(
            text.replace("{dof_joint1: 0.7, dof_joint2: 0.5, dof_joint3: 0.6}", bad)
        )
        with pytest.raises(ConfigError, match="free_drive"):
            load_arm(arm)


def _launched(repo_root, **configurations):
    from test_launch import launched_parameters, load_launch_module, require_launch_ros

    require_launch_ros()
    return launched_parameters(load_launch_module(repo_root, "arm.launch.py"), **configurations)


def test_launch_free_drive_palletizer_has_the_profiles_dither(repo_root):
    nodes = _launched(repo_root, arm="palletizer", mode="free_drive")
    friction = nodes["friction_feedforward_node"]
    assert friction["dither"] == [0.8, 0.8, 0.65] and friction["velocity_source"] == "measured"
    assert "free_drive_node" in nodes


def test_launch_free_drive_composed_runs_composed_free_drive_with_a_free_drive_section(repo_root):
    from test_launch import require_launch_ros

    require_launch_ros()
    from test_launch import load_launch_module

    arm = load_launch_module(repo_root, "arm.launch.py")
    from launch import LaunchContext

    context = LaunchContext()
    for entity in arm.generate_launch_description().entities:
        entity.visit(context)
    context.launch_configurations.update(arm="palletizer", mode="free_drive", composed="true")
    nodes = [n for n in arm._setup(context)[0].get_sub_entities() if type(n).__name__ == "Node"]
    executables = [n.node_executable for n in nodes]
    assert "composed_free_drive" in executables
    assert not {"free_drive_node", "mit_bridge_node", "composed_chain"} & set(executables)
    node = nodes[executables.index("composed_free_drive")]
    path = node._Node__parameters[0]
    if hasattr(path, "evaluate"):  # launch_ros wraps a file path in a ParameterFile
        path = path.evaluate(context)
    path = path if isinstance(path, str | pathlib.Path) else path.perform(context)
    # read by rcl's own parser, as the node reads it (PyYAML accepted the aliases rcl refuses)
    from test_param_files import rcl_parameters

    free = rcl_parameters(path, "free_drive")
    assert free["mode"] == "free_drive" and free["joints"] == ["base_yaw", "shoulder_pitch", "beam_pitch"]
    assert rcl_parameters(path, "friction_feedforward")["dither"] == [0.8, 0.8, 0.65]
    bridge = rcl_parameters(path, "mit_bridge")
    assert bridge["kp"] == [0.0, 0.0, 0.0] and bridge["kd"] == free["free_drive_kd"]
    os.unlink(path)


def test_launch_free_drive_bimanual_is_one_bridge_on_both_buses(repo_root):
    """Follow mode starts one bridge per bus; free drive one bridge serving both buses, so one
    joint_states carries both arms to the one free-drive source."""
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    profile = load_arm("openarm_v10_bimanual")
    nodes = _launched(repo_root, arm="openarm_v10_bimanual", mode="free_drive")
    bridge = nodes["mit_bridge_node"]
    assert bridge["joints"] == list(profile.joints) and len(set(bridge["bus"])) == 2
    assert nodes["free_drive_node"]["joints"] == list(profile.joints)


def test_composed_parameters_file_has_a_free_drive_section_when_given(repo_root):
    import yaml
    from test_launch import load_launch_module

    arm = load_launch_module(repo_root, "arm.launch.py")
    path = arm.composed_parameters_file({}, {}, {}, {"mode": "free_drive"})
    try:
        data = yaml.safe_load(open(path).read())
    finally:
        os.unlink(path)
    assert data["/**/free_drive"] == {"ros__parameters": {"mode": "free_drive"}}
    assert set(data) == {
        "/**/gravity_compensation",
        "/**/friction_feedforward",
        "/**/mit_bridge",
        "/**/free_drive",
    }


def test_composed_free_drive_file_parses_in_rcl(repo_root):
    """Issue 32.1: free drive's bridge ``kd`` and the free_drive node's ``free_drive_kd`` are
    one list; the composed file held it as a YAML anchor and alias and rcl refused the file
    (composed_free_drive exited 1). Read back by rcl: both are 0.4 × the motor map's kd
    (config/mit_bridge.yaml), follow_kd the motor map's."""
    from test_launch import load_launch_module
    from test_param_files import rcl_parameters

    from gravity_friction_comp.nodes.free_drive_launch import free_drive_launch_parts
    from gravity_friction_comp.param_files import node_parameters

    arm = load_launch_module(repo_root, "arm.launch.py")
    config = repo_root / "config"
    motor_map = node_parameters(config / "mit_bridge.yaml", "mit_bridge")
    friction_file = node_parameters(config / "friction_feedforward.yaml", "friction_feedforward")
    urdf = str(repo_root / "urdf" / "palletizer.urdf")
    bridge, friction, free = free_drive_launch_parts(motor_map, urdf, friction_file, 0.4, 0.0)
    path = arm.composed_parameters_file({"scale": 1.0}, friction_file | friction, motor_map | bridge, free)
    try:
        kd = [0.4 * k for k in motor_map["kd"]]
        assert rcl_parameters(path, "mit_bridge")["kd"] == pytest.approx(kd)
        got = rcl_parameters(path, "free_drive")
        assert got["free_drive_kd"] == pytest.approx(kd) and got["follow_kd"] == motor_map["kd"]
        assert rcl_parameters(path, "gravity_compensation") == {"scale": 1.0}
    finally:
        os.unlink(path)


@pytest.mark.slow  # starts the launch file's processes
def test_launch_composed_free_drive_runs_and_removes_its_file(repo_root, tmp_path, monkeypatch):
    """``composed:=true mode:=free_drive`` under the real launch: composed_free_drive starts
    (joint_states flow; before the fix it died on the aliased file) and its temporary
    parameter file is gone after Ctrl-C."""
    from test_launch import launched, require_installed_package

    require_installed_package()
    from graph_helpers import fresh_domain_id, graph_client, own_namespace
    from sensor_msgs.msg import JointState

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the launch's tempfile files land here
    domain, ns = fresh_domain_id(), own_namespace()
    args = (f"namespace:={ns.lstrip('/')}", "composed:=true", "mode:=free_drive")
    with launched(repo_root, domain, *args) as proc, graph_client(domain, ns) as client:
        states = client.subscribe(JointState, "joint_states")
        setpoints = client.subscribe(JointState, "joint_setpoint")
        ok = client.spin_until(lambda: len(states) > 20 and len(setpoints) > 20, 60.0, proc)
        assert list(tmp_path.glob("composed_chain_*.yaml")), "no composed parameter file written"
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    assert ok, f"joint_states {len(states)}, joint_setpoint {len(setpoints)}:\n{out}"
    assert "process has died" not in out, out
    assert not list(tmp_path.glob("composed_chain_*.yaml")), out


def test_the_profiles_friction_scale_goes_to_the_friction_stage():
    _, friction, _ = free_drive_overrides(
        BRIDGE, ["a", "b"], {}, kd_scale=0.4, friction_deadband=0.0, rate_hz=0.0, friction_scale=(0.5, 0.3)
    )
    assert friction["scale"] == [0.5, 0.3]
    _, friction, _ = free_drive_overrides(
        BRIDGE, ["a", "b"], {}, kd_scale=0.4, friction_deadband=0.0, rate_hz=0.0
    )
    assert "scale" not in friction  # no profile value: the friction file's scale


def test_profile_free_drive_friction_scale_by_joint_others_1(tmp_path):
    import shutil

    from gravity_friction_comp.profiles.arm_profiles import load_arm

    assert load_arm("palletizer").free_drive_friction_scale == (0.5, 0.5, 0.3)
    assert load_arm("yam_ultra").free_drive_friction_scale == (0.5, 0.5, 0.5, 0.0, 1.0, 1.0)
    assert load_arm("openarm_v10").free_drive_friction_scale == (0.5,) * 7
    assert load_arm("openarm_v10_bimanual").free_drive_friction_scale == ()
    arm = tmp_path / "arm"
    shutil.copytree(load_arm("yam_ultra").directory, arm)
    text = (arm / "profile.yaml").read_text()
    old = "friction_scale: {dof_joint1: 0.5, dof_joint2: 0.5, dof_joint3: 0.5, dof_joint4: 0.0}"
    assert old in text
    (arm / "profile.yaml").write_text(text.replace(old, "friction_scale: 0.4"))
    assert load_arm(arm).free_drive_friction_scale == (0.4,) * 6
    for bad in ("{dof_joint9: 0.5}", "1.5", "-0.1", "[0.5]", "{dof_joint1: x}", ".nan"):
        (arm / "profile.yaml").write_text(text.replace(old, f"friction_scale: {bad}"))
        with pytest.raises(ConfigError, match="friction_scale"):
            load_arm(arm)


def test_launch_free_drive_palletizer_has_the_profiles_friction_scale_and_kd(repo_root):
    nodes = _launched(repo_root, arm="palletizer", mode="free_drive")
    assert nodes["friction_feedforward_node"]["scale"] == [0.5, 0.5, 0.3]
    # free_drive_kd_scale default 0.4 × config/mit_bridge.yaml kd [0.5, 1.0, 0.3]
    assert nodes["mit_bridge_node"]["kd"] == pytest.approx([0.2, 0.4, 0.12])


def _reordered_yam_ultra(tmp_path):
    """yam_ultra with its motor map in reversed joint order (every per-joint list reversed)."""
    import shutil

    import yaml

    from gravity_friction_comp.profiles.arm_profiles import load_arm

    arm = tmp_path / "arm"
    shutil.copytree(load_arm("yam_ultra").directory, arm)
    doc = yaml.safe_load((arm / "mit_bridge.yaml").read_text())
    values = doc["/**/mit_bridge"]["ros__parameters"]
    n = len(values["joints"])
    for key, value in values.items():
        if isinstance(value, list) and len(value) == n:
            values[key] = value[::-1]
    (arm / "mit_bridge.yaml").write_text(yaml.safe_dump(doc))
    return load_arm(arm), values


def test_dither_and_scale_reach_the_friction_node_by_joint_name(tmp_path):
    """The friction node reads ``dither``/``scale`` in its own ``joints`` order (the arm YAML's,
    dof_joint1 first); the motor map here lists dof_joint6 first. Each joint gets the value
    profile.yaml names for it (dither {1: 0.7, 2: 0.5, 3: 0.6}, others 0; scale
    {1..3: 0.5, 4: 0}, others 1), not its mirror joint's (dof_joint4 would get 0.6)."""
    pytest.importorskip("pinocchio")
    from gravity_friction_comp.nodes.free_drive_launch import free_drive_launch_parts

    profile, bridge_values = _reordered_yam_ultra(tmp_path)
    assert profile.joints[0] == "dof_joint6"  # the motor map's order differs from the friction node's
    assert profile.free_drive_dither == (0.0, 0.0, 0.0, 0.6, 0.5, 0.7)  # motor-map order
    friction_joints = [f"dof_joint{i}" for i in range(1, 7)]
    _, friction, _ = free_drive_launch_parts(
        bridge_values,
        str(profile.urdf),
        {"joints": friction_joints},
        0.4,
        0.0,
        profile.free_drive_dither,
        profile.free_drive_friction_scale,
    )
    dither = dict(zip(friction_joints, friction["dither"]))
    scale = dict(zip(friction_joints, friction["scale"]))
    assert dither == {
        "dof_joint1": 0.7,
        "dof_joint2": 0.5,
        "dof_joint3": 0.6,
        "dof_joint4": 0.0,
        "dof_joint5": 0.0,
        "dof_joint6": 0.0,
    }
    assert scale == {
        "dof_joint1": 0.5,
        "dof_joint2": 0.5,
        "dof_joint3": 0.5,
        "dof_joint4": 0.0,
        "dof_joint5": 1.0,
        "dof_joint6": 1.0,
    }


def test_friction_joints_outside_the_bridge_get_no_dither_and_scale_1():
    _, friction, _ = free_drive_overrides(
        BRIDGE,
        ["a", "b", "c"],
        {"c": 0.0},
        kd_scale=0.2,
        friction_deadband=0.0,
        rate_hz=0.0,
        dither=(0.7, 0.3),
        friction_scale=(0.5, 0.25),
        friction_joints=["c", "b", "a"],
    )
    assert friction["dither"] == [0.0, 0.3, 0.7] and friction["scale"] == [1.0, 0.25, 0.5]
    # without friction joints: the bridge's order, as before
    _, friction, _ = free_drive_overrides(
        BRIDGE, ["a", "b"], {}, kd_scale=0.2, friction_deadband=0.0, rate_hz=0.0, dither=(0.7, 0.3)
    )
    assert friction["dither"] == [0.7, 0.3]


def test_dither_not_one_per_bridge_joint_is_an_error():
    from gravity_friction_comp.errors import DimensionError

    with pytest.raises(DimensionError):
        free_drive_overrides(
            BRIDGE, ["a", "b"], {}, kd_scale=0.2, friction_deadband=0.0, rate_hz=0.0, dither=(0.7,)
        )


def test_dither_scale_multiplies_the_profiles_dither_default_unchanged(repo_root):
    """``dither_scale:=`` (default 1.0: the profile's dither as before; 0 = off) scales the
    profile's free_drive.dither; out of 0..1 or not a finite number is refused by name."""
    from test_launch import load_launch_module

    from gravity_friction_comp.profiles.arm_profiles import load_arm

    arm = load_launch_module(repo_root, "arm.launch.py")
    profile = load_arm("palletizer").free_drive_dither
    assert profile == (0.8, 0.8, 0.65)
    assert arm.free_drive_dither(profile, "1.0") == profile  # the default: bit for bit
    assert arm.free_drive_dither(profile, "0") == (0.0, 0.0, 0.0)
    assert arm.free_drive_dither(profile, "0.5") == (0.4, 0.4, 0.325)
    assert arm.free_drive_dither((), "0.5") == ()  # no profile dither: the file's is kept
    _, friction, _ = free_drive_overrides(
        BRIDGE, ["a", "b"], {}, kd_scale=0.4, friction_deadband=0.0, rate_hz=0.0,
        dither=arm.free_drive_dither((0.7, 0.5), "0"),
    )  # fmt: skip
    assert friction["dither"] == [0.0, 0.0]  # off on every joint
    for bad in ("-0.1", "1.5", "nan", "inf", "x", ""):
        with pytest.raises(ConfigError, match="dither_scale") as info:
            arm.free_drive_dither(profile, bad)
        assert info.value.key == "dither_scale"


def test_dither_scale_launch_argument_defaults_to_the_profiles_dither(repo_root):
    """Declared default 1.0 (the launch file's ARGUMENTS: no ROS launch install needed)."""
    from test_launch import load_launch_module

    declared = {
        name: default for name, default, _ in load_launch_module(repo_root, "arm.launch.py").ARGUMENTS
    }
    assert declared["dither_scale"] == "1.0"
    assert "free_drive_kd_scale" in declared
