"""Issue 26 point 6: an unknown key at any level of any file the package reads is an error
naming the key, the file and the valid keys (with the closest valid key)."""

from __future__ import annotations

import pathlib
import shutil

import pytest
import yaml

from gravity_friction_comp.calib.plan import load_plan
from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.friction.arm_yaml import (
    actuator_model_from_arm_yaml,
    gravity_scale_from_arm_yaml,
    load_arm_yaml,
)
from gravity_friction_comp.friction.bam import BamParameters
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.profiles.arm_profiles import load_arm
from gravity_friction_comp.sim.config import SimConfig

ROOT = pathlib.Path(__file__).resolve().parents[1]
PALLETIZER_ARM = ROOT / "config" / "palletizer_arm.yaml"
JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]


def _check(error: ConfigError, path: pathlib.Path, key: str, hint: str, valid: list[str]) -> None:
    text = str(error)
    assert str(path) in text, text
    assert f"'{key.rsplit('.', 1)[-1]}' (did you mean '{hint}'?)" in text, text
    assert "valid keys: " + ", ".join(valid) in text, text
    assert error.key == key


def _arm_yaml(tmp_path: pathlib.Path, edit) -> pathlib.Path:
    data = yaml.safe_load(PALLETIZER_ARM.read_text())
    edit(data)
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_mistyped_friction_section_is_an_error_not_zero_friction(tmp_path):
    path = _arm_yaml(tmp_path, lambda d: d.update(friction_cmp=d.pop("friction_comp")))
    # every reader of the file refuses it: friction node, gravity node (scale, actuators)
    for read in (
        lambda: FrictionModel.from_yaml(path, JOINTS),
        lambda: gravity_scale_from_arm_yaml(path, JOINTS),
        lambda: actuator_model_from_arm_yaml(path),
    ):
        with pytest.raises(ConfigError) as info:
            read()
        _check(
            info.value,
            path,
            "friction_cmp",
            "friction_comp",
            ["joints", "gravity_scale", "friction_comp", "friction_comp_breakaway", "actuators"],
        )
        assert "also accepted and not read: motor_list" in str(info.value)


@pytest.mark.parametrize(
    ("section", "typo", "hint", "first_valid"),
    [
        ("friction_comp", "viscuos", "viscous", ["enabled", "enable", "model"]),
        ("actuators", "gear_ration", "gear_ratio", ["joints", "rotor_inertia", "gear_ratio"]),
        ("FollowerArmParam", "Fcc", "Fc", ["Fc", "k", "Fv", "Fo"]),
    ],
)
def test_mistyped_key_inside_an_arm_yaml_section(tmp_path, section, typo, hint, first_valid):
    def edit(data):
        if section == "FollowerArmParam":
            data.pop("friction_comp")
            data[section] = {"Fc": [0.1] * 3, "k": [10.0] * 3, "Fv": [0.0] * 3, "Fo": [0.0] * 3}
        data.setdefault(section, {})[typo] = 1.0

    path = _arm_yaml(tmp_path, edit)
    with pytest.raises(ConfigError) as info:
        load_arm_yaml(path)
    _check(info.value, path, f"{section}.{typo}", hint, first_valid)


def test_vendor_sections_are_accepted_and_their_gains_ignored():
    """The i2rt and OpenArm files are read unchanged: their foreign sections (motor_list,
    kp, limiter, Kp/Kd ...) are the documented exception."""
    data = ROOT / "test" / "data" / "arms"
    assert "motor_list" in load_arm_yaml(data / "i2rt" / "config_friction_comp_pr" / "yam_ultra.yml")
    assert "limiter" in load_arm_yaml(data / "i2rt" / "config_friction_comp_pr" / "crank_4310.yml")
    assert "Kp" in load_arm_yaml(data / "openarm_teleop" / "follower.yaml")["FollowerArmParam"]


@pytest.mark.parametrize(
    ("edit", "key", "hint", "valid"),
    [
        (lambda s: s.update(mass_scael=1.0), "mass_scael", "mass_scale", ["version", "physics_rate_hz"]),
        (
            lambda s: s["joints"]["shoulder_pitch"].update(coulmb=0.1),
            "joints.shoulder_pitch.coulmb",
            "coulomb",
            ["coulomb", "stribeck_breakaway"],
        ),
        (
            lambda s: s.update(links={"upper_arm": {"mass_scale": 1.1, "com_ofset": [0, 0, 0]}}),
            "links.upper_arm.com_ofset",
            "com_offset",
            ["mass_scale", "com_offset", "extra_mass"],
        ),
    ],
)
def test_mistyped_key_in_a_sim_yaml(tmp_path, edit, key, hint, valid):
    data = yaml.safe_load((ROOT / "config" / "sim_palletizer.yaml").read_text())
    edit(data["simulation"])
    path = tmp_path / "sim.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as info:
        SimConfig.from_yaml(path)
    _check(info.value, path, key, hint, valid)


@pytest.mark.parametrize(
    ("edit", "key", "hint", "valid"),
    [
        (lambda d: d.update(arm_profil={}), "arm_profil", "arm_profile", ["arm_profile"]),
        (
            lambda d: d["arm_profile"].update(sim_confg="sim.yaml"),
            "arm_profile.sim_confg",
            "sim_config",
            ["version", "description", "source", "urdf"],
        ),
        (
            lambda d: d["arm_profile"].update(demo={"proximl": ["joint1"]}),
            "arm_profile.demo.proximl",
            "proximal",
            ["proximal", "exempt"],
        ),
        (
            lambda d: d["arm_profile"].update(free_drive={"dithr": 0.1}),
            "arm_profile.free_drive.dithr",
            "dither",
            ["dither", "friction_scale"],
        ),
    ],
)
def test_mistyped_key_in_a_profile(tmp_path, edit, key, hint, valid):
    directory = tmp_path / "yam"
    shutil.copytree(ROOT / "arms" / "yam", directory)
    path = directory / "profile.yaml"
    data = yaml.safe_load(path.read_text())
    edit(data)
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as info:
        load_arm(directory)
    _check(info.value, path, key, hint, valid)
    assert str(info.value).startswith("arm profile 'yam': ")


@pytest.mark.parametrize(
    ("text", "key", "hint", "valid"),
    [
        (
            "calibration_plan: {joints: [a], home: [0.0], poses: [[0.1]], hold_tme: 2.0}\n",
            "hold_tme",
            "hold_time",
            ["version", "joints", "home", "approach"],
        ),
        (
            "calibration_plan: {joints: [a], home: [0.0], poses: [[0.1]]}\ncalibration_pln: {}\n",
            "calibration_pln",
            "calibration_plan",
            ["calibration_plan"],
        ),
    ],
)
def test_mistyped_key_in_a_plan(tmp_path, text, key, hint, valid):
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_plan(path)
    _check(info.value, path, key, hint, valid)


def test_mistyped_key_in_a_bam_file(tmp_path):
    source = ROOT / "test" / "data" / "bam" / "mx64" / "m1.json"
    path = tmp_path / "m1.json"
    path.write_text(source.read_text().replace('"friction_viscous"', '"friction_viscos"'))
    with pytest.raises(ConfigError) as info:
        BamParameters.from_json(path)
    _check(info.value, path, "friction_viscos", "friction_viscous", ["model", "actuator", "kt", "R"])
