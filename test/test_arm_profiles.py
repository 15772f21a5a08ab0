"""Tests of gravity_friction_comp.profiles.arm_profiles and the shipped arms/ data.

Vendor values are written out here from the vendor files (i2rt v1.2.4 config/*.yml, i2rt
PR #37, openarm_teleop) and compared with the profiles; test/data holds copies of two of
those files and of the URDFs (checked against the originals by test_data_copies.py).
"""

from __future__ import annotations

import os
import pathlib
import runpy
import shutil

import pytest
import yaml
from conftest import REPO_ROOT, TEST_DATA

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.friction.arm_yaml import friction_params_from_arm_yaml, load_arm_yaml
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values
from gravity_friction_comp.mit.bus_load import mit_bus_load, mit_bus_loads
from gravity_friction_comp.mit.motor_table import MOTOR_TABLE
from gravity_friction_comp.profiles.arm_profiles import ArmProfile, arms_directory, list_arms, load_arm
from gravity_friction_comp.sim.config import SimConfig

ARMS = ("big_yam", "openarm_v10", "openarm_v10_bimanual", "palletizer", "yam", "yam_pro", "yam_ultra")

#: i2rt v1.2.4 config/<arm>.yml: (motor types, directions, kp, kd, gravity_comp_factor).
I2RT = {
    "yam": (["DM4340"] * 3 + ["DM4310"] * 3, [1] * 6, [80, 80, 80, 10, 10, 10], [5, 5, 5, 1.5, 1.5, 1.5]),
    "yam_pro": (["DM4340"] * 3 + ["DM4310"] * 3, [1] * 6, [80, 80, 80, 40, 10, 10], [5, 5, 5, 1.5, 1.5, 1.5]),
    "yam_ultra": (
        ["DM4340"] * 3 + ["DM4310"] * 3,
        [1] * 6,
        [80, 80, 80, 40, 10, 10],
        [5, 5, 5, 1.5, 1.5, 1.5],
    ),
    "big_yam": (
        ["DM6248", "DM6248", "DM4340", "DM4340", "DM4310", "DM4310"],
        [1, -1, 1, 1, 1, 1],
        [80, 80, 80, 40, 40, 10],
        [5, 5, 5, 3, 1.5, 1.5],
    ),
}
I2RT_GRAVITY = {
    "yam": [1.0, 1.1, 1.1, 1.2, 1.0, 1.0],
    "yam_pro": [1.0, 1.1, 1.1, 1.2, 1.0, 1.0],
    "yam_ultra": [1.0, 1.1, 1.1, 1.2, 1.0, 1.0],
    "big_yam": [1.0, 1.2, 1.0, 1.1, 1.0, 1.0],
}
#: openarm_teleop DEFAULT_MOTOR_CONFIG (arm motors).
OPENARM_TYPES = ["DM8009", "DM8009", "DM4340", "DM4340", "DM4310", "DM4310", "DM4310"]


@pytest.fixture(scope="module")
def profiles() -> dict[str, ArmProfile]:
    return {name: load_arm(name) for name in list_arms()}


def test_the_shipped_profiles_are_listed_from_the_source_tree():
    assert arms_directory() == REPO_ROOT / "arms"
    assert list_arms() == ARMS


@pytest.mark.parametrize("name", ARMS)
def test_profile_urdf_builds_a_model_with_the_motor_map_joints(name, profiles):
    from gravity_friction_comp.model.robot_model import RobotModel

    p = profiles[name]
    model = RobotModel.from_urdf(p.urdf)
    assert set(p.joints) <= set(model.joint_names)
    assert set(model.joint_names) <= set(p.urdf_joints)
    # every movable model joint without a motor is a gripper finger (prismatic), per the URDF
    unbridged = [j for j in model.joint_names if j not in p.joints]
    assert all(model.urdf_joints[j].type == "prismatic" for j in unbridged), unbridged
    assert (len(unbridged) > 0) == (name != "palletizer")


@pytest.mark.parametrize("name", ARMS)
def test_motor_map_passes_the_bridge_config_with_ids_unique_per_bus(name, profiles):
    p = profiles[name]
    values = p.bridge_values()
    config = bridge_config_from_values(values)
    assert config == p.bridge_config()
    assert all(t in MOTOR_TABLE for t in values["motor_type"])
    for bus in p.buses:
        ids = [m.can_id for m in config.motors if (m.bus or p.can.channel) == bus]
        assert len(ids) == len(set(ids)) == len(p.joints_on(bus))
    # every double in the file is a float, as a ROS DOUBLE_ARRAY parameter needs
    for key in ("offset", "gear_ratio", "kp", "kd", "effort_limit"):
        assert all(isinstance(x, float) for x in values[key]), key
    # the bus load the profile's rate causes fits its buses (worst-case stuffing)
    loads = mit_bus_loads(
        {b: len(p.joints_on(b)) for b in p.buses},
        p.rate_hz,
        p.can.bitrate,
        fd=p.can.fd,
        data_bitrate=p.can.data_bitrate,
    )
    assert all(0 < load < 0.85 for load in loads.values()), loads


@pytest.mark.parametrize("name", sorted(I2RT))
def test_i2rt_motor_maps_are_the_vendor_values(name, profiles):
    types, directions, kp, kd = I2RT[name]
    values = profiles[name].bridge_values()
    assert values["motor_type"] == types and values["direction"] == directions
    assert values["kp"] == kp and values["kd"] == kd
    assert values["can_id"] == [1, 2, 3, 4, 5, 6]
    assert values["master_id"] == [i + 16 for i in range(1, 7)]  # i2rt ReceiveMode.p16
    assert profiles[name].can.fd is False and profiles[name].can.bitrate == 1_000_000
    arm = load_arm_yaml(profiles[name].arm_config)
    assert arm["joints"] == list(profiles[name].joints)
    assert arm["gravity_scale"] == I2RT_GRAVITY[name]


def test_yam_ultra_friction_is_the_tuned_block():
    p = load_arm("yam_ultra")
    tuned = yaml.safe_load((TEST_DATA / "arms/i2rt_yam_ultra.yml").read_text())["friction_comp"]
    params = friction_params_from_arm_yaml(p.arm_config, n_joints=6)
    assert params == {"enabled": True, "breakaway": tuned["breakaway"], "eps": tuned["eps"]}
    assert tuned["breakaway"] == [1.2, 1.8, 1.6, 0.1, 0.0, 0.0]


@pytest.mark.parametrize("name", ["openarm_v10", "openarm_v10_bimanual"])
def test_openarm_profiles(name, profiles):
    p = profiles[name]
    values = p.bridge_values()
    arms = 2 if name.endswith("bimanual") else 1
    assert values["motor_type"] == OPENARM_TYPES * arms
    assert values["can_id"] == list(range(1, 8)) * arms
    assert values["master_id"] == list(range(0x11, 0x18)) * arms
    assert values["kp"] == [240.0, 240.0, 240.0, 240.0, 24.0, 31.0, 25.0] * arms
    assert values["kd"] == [3.0, 3.0, 3.0, 3.0, 0.2, 0.2, 0.2] * arms
    assert (p.can.fd, p.can.bitrate, p.can.data_bitrate) == (True, 1_000_000, 5_000_000)
    follower = yaml.safe_load((TEST_DATA / "arms/openarm_follower.yaml").read_text())["FollowerArmParam"]
    params = friction_params_from_arm_yaml(p.arm_config, n_joints=7 * arms)
    assert params["breakaway"] == follower["Fc"][:7] * arms
    assert params["offset"] == follower["Fo"][:7] * arms
    assert params["eps"] == pytest.approx([1 / (0.1 * k) for k in follower["k"][:7]] * arms)
    # 7 motors at 1 kHz: 1.89x a classic 1 Mbit/s bus, 79 % of an FD 1/5 Mbit/s one
    assert mit_bus_load(7, p.rate_hz, 1_000_000) > 1.8
    if arms == 2:
        assert p.buses == ("can1", "can0")
        assert p.joints_on("can1") == tuple(f"openarm_left_joint{i}" for i in range(1, 8))
        assert p.joints_on("can0") == tuple(f"openarm_right_joint{i}" for i in range(1, 8))


@pytest.mark.parametrize("name", ARMS)
def test_arm_and_sim_yaml_load_with_the_package_readers(name, profiles):
    p = profiles[name]
    model = FrictionModel.from_yaml(p.arm_config, list(p.joints))
    assert model is not None
    sim = SimConfig.from_yaml(p.sim_config)
    assert sim.mass_scale == pytest.approx(1.05)
    params = friction_params_from_arm_yaml(p.arm_config, n_joints=len(p.joints))
    breakaway = params.get("breakaway", [0.0] * len(p.joints))
    for j, b in zip(p.joints, breakaway):
        assert j in sim.joints
        if b > 0.05:  # the simulated arm's friction is near, not equal to, the compensator's
            assert 0.5 * b <= sim.joint(j).coulomb <= 1.5 * b and sim.joint(j).breakaway != b
    if p.demo_proximal:
        assert set(p.demo_proximal) | set(p.demo_distal) == set(p.joints)


def test_urdf_copies_equal_the_shared_originals(profiles):
    """The shipped URDFs equal test/data's copies, which test_data_copies.py holds to the
    originals (their recorded SHA-256 on every clone): no skip without ``../shared``."""
    for p in profiles.values():
        if p.name == "palletizer":
            continue
        folder = "openarm" if p.name.startswith("openarm") else "i2rt_yam"
        assert p.urdf.read_bytes() == (TEST_DATA / "urdf" / folder / p.urdf.name).read_bytes(), p.name


def test_profiles_load_from_the_installed_layout(tmp_path):
    """Copy what setup.py's data_files install into a fake share; every profile loads there."""
    captured: dict = {}
    import setuptools

    original = setuptools.setup
    setuptools.setup = lambda **kw: captured.update(kw)
    cwd = os.getcwd()
    try:
        os.chdir(REPO_ROOT)
        runpy.run_path(str(REPO_ROOT / "setup.py"))
    finally:
        os.chdir(cwd)
        setuptools.setup = original
    for target, files in captured["data_files"]:
        for f in files:
            (tmp_path / target).mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO_ROOT / f, tmp_path / target)
    share_arms = tmp_path / "share" / "gravity_friction_comp" / "arms"
    assert list_arms(share_arms) == ARMS
    for name in ARMS:
        p = load_arm(name, root=share_arms)
        assert p.urdf.is_relative_to(tmp_path) and p.motor_map.is_relative_to(tmp_path)


# --- bad input -----------------------------------------------------------------------------------


def test_unknown_profile_lists_the_valid_ones():
    with pytest.raises(ConfigError) as err:
        load_arm("yam_ultraa")
    assert (err.value.key, err.value.value) == ("arm", "yam_ultraa")
    for name in ARMS:
        assert name in str(err.value)
    with pytest.raises(ConfigError, match="valid arms"):
        load_arm("../arms/yam")  # a path must hold a profile.yaml


def _copy_profile(tmp_path: pathlib.Path, name: str = "openarm_v10_bimanual") -> pathlib.Path:
    target = tmp_path / "arms" / f"my_{name}"
    shutil.copytree(REPO_ROOT / "arms" / name, target)
    return target


def _edit(path: pathlib.Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_colliding_can_ids_on_one_bus_refused_with_joint_and_value(tmp_path):
    d = _copy_profile(tmp_path)
    assert load_arm(str(d)).name == "my_openarm_v10_bimanual"  # a user's profile, by path
    assert load_arm("my_openarm_v10_bimanual", root=tmp_path / "arms").buses == ("can1", "can0")
    _edit(
        d / "mit_bridge.yaml",
        "bus: [can1, can1, can1, can1, can1, can1, can1,",
        "bus: [can0, can0, can0, can0, can0, can0, can0,",
    )
    with pytest.raises(
        ConfigError,
        match="my_openarm_v10_bimanual.*duplicate can_id 0x1 on bus 'can0': joints "
        "openarm_left_joint1 and openarm_right_joint1",
    ) as err:
        load_arm(d)
    assert (err.value.key, err.value.value) == ("can_id", 1)


def test_fd_data_bitrate_below_nominal_refused(tmp_path):
    d = _copy_profile(tmp_path, "openarm_v10")
    _edit(d / "mit_bridge.yaml", "can.data_bitrate: 5000000", "can.data_bitrate: 500000")
    with pytest.raises(ConfigError, match="500000 bit/s is below the nominal") as err:
        load_arm(d)
    assert (err.value.key, err.value.value) == ("can.data_bitrate", 500_000)


def test_unknown_motor_type_refused_with_the_joint(tmp_path):
    d = _copy_profile(tmp_path, "yam_ultra")
    _edit(
        d / "mit_bridge.yaml",
        "motor_type: [DM4340, DM4340, DM4340, DM4310",
        "motor_type: [DM4340, DM4340, DM4341, DM4310",
    )
    with pytest.raises(ConfigError, match="joint dof_joint3: unknown motor_type 'DM4341'") as err:
        load_arm(d)
    assert (err.value.key, err.value.value) == ("motor_type", "DM4341")


def test_profile_file_errors(tmp_path):
    d = _copy_profile(tmp_path, "yam")
    (d / "sim.yaml").unlink()
    with pytest.raises(ConfigError, match="sim_config file .* does not exist") as err:
        load_arm(d)
    assert err.value.key == "sim_config"
    d = _copy_profile(tmp_path, "yam_pro")
    _edit(d / "profile.yaml", "  version: 1", "  version: 1\n  urdf_path: x.urdf")
    with pytest.raises(ConfigError, match="unknown key.*urdf_path"):
        load_arm(d)
    d = _copy_profile(tmp_path, "big_yam")
    _edit(d / "profile.yaml", "proximal: [joint1, joint2, joint3]", "proximal: [joint1, joint9]")
    with pytest.raises(ConfigError, match="demo.proximal") as err:
        load_arm(d)
    assert err.value.key == "demo.proximal"
    d = _copy_profile(tmp_path, "openarm_v10")
    _edit(d / "mit_bridge.yaml", "joints: [openarm_joint1,", "joints: [openarm_jointX,")
    with pytest.raises(ConfigError, match="openarm_jointX"):
        load_arm(d)


def test_demo_exempt_is_read_and_validated(tmp_path):
    """demo.exempt maps bridge joints to a reason; anything else is refused naming the key."""
    import shutil

    src = arms_directory() / "yam_ultra"
    mine = tmp_path / "mine"
    shutil.copytree(src, mine)
    text = (mine / "profile.yaml").read_text()
    assert load_arm(mine).demo_exempt == dict(load_arm("yam_ultra").demo_exempt)
    reason = "vertical yaw axis: no gravity load, friction only"
    (mine / "profile.yaml").write_text(
        text.replace("demo:\n", f'demo:\n    exempt: {{dof_joint1: "{reason}"}}\n')
    )
    assert dict(load_arm(mine).demo_exempt) == {"dof_joint1": reason}
    for bad in ('{nope: "x"}', '{dof_joint1: ""}', "[dof_joint1]"):
        (mine / "profile.yaml").write_text(text.replace("demo:\n", f"demo:\n    exempt: {bad}\n"))
        with pytest.raises(ConfigError, match="demo.exempt") as info:
            load_arm(mine)
        assert info.value.key == "demo.exempt"
