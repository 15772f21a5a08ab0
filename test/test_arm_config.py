"""Per-arm YAML: i2rt friction_comp block (+ extensions), i2rt gripper files, OpenArm tables.

OpenArm values are checked against ``Fo + Fv·v + Fc·tanh(0.1·k·v)`` computed here from the
numbers in the YAML (openarm_teleop's code), not from our conversion.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest
import yaml

from gravity_friction_comp.errors import ConfigError, DimensionError
from gravity_friction_comp.friction.arm_yaml import (
    FRICTION_BLOCK_KEYS,
    friction_params_from_arm_yaml,
    friction_params_from_openarm_yaml,
    gravity_scale_from_arm_yaml,
    load_arm_yaml,
)
from gravity_friction_comp.friction.models import FrictionModel

DATA = pathlib.Path(__file__).resolve().parent / "data"


def _write(tmp_path, data, name="arm.yml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


# -- load_arm_yaml ---------------------------------------------------------------------------
def test_load_arm_yaml_errors(tmp_path):
    with pytest.raises(ConfigError, match="cannot read") as info:
        load_arm_yaml(tmp_path / "missing.yml")
    assert info.value.key == "arm_config"
    bad = tmp_path / "bad.yml"
    bad.write_text("friction_comp: [1, 2\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_arm_yaml(bad)
    lst = tmp_path / "list.yml"
    lst.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_arm_yaml(lst)
    empty = tmp_path / "empty.yml"
    empty.write_text("")
    assert load_arm_yaml(empty) == {}


# -- i2rt friction_comp block ----------------------------------------------------------------
def test_yam_ultra_tuned_values():
    kw = friction_params_from_arm_yaml(DATA / "arms" / "i2rt_yam_ultra.yml", n_joints=6)
    assert kw == {"enabled": True, "breakaway": [1.2, 1.8, 1.6, 0.1, 0.0, 0.0], "eps": 0.005}


def test_every_i2rt_pr_file_loads(shared_data):
    files = sorted((shared_data / "arms" / "i2rt" / "config_friction_comp_pr").glob("*.yml"))
    assert len(files) == 10
    for path in files:
        raw = yaml.safe_load(path.read_text())
        kw = friction_params_from_arm_yaml(path)
        if "friction_comp" in raw:  # arms: 6 joints
            m = FrictionModel.from_yaml(path, 6)
            assert m.enabled == raw["friction_comp"]["enable"]
            np.testing.assert_array_equal(m.params.breakaway_positive, raw["friction_comp"]["breakaway"])
            np.testing.assert_array_equal(m.params.eps, [raw["friction_comp"]["eps"]] * 6)
        elif "friction_comp_breakaway" in raw:  # grippers: 1 joint
            assert kw == {"breakaway": raw["friction_comp_breakaway"]}
            assert FrictionModel.from_yaml(path, 1).is_zero
        else:
            assert kw == {}
            assert FrictionModel.from_yaml(path, 1).is_zero
        expect_zero = not (raw.get("friction_comp") or {}).get("enable", False)
        if "friction_comp" in raw:
            assert FrictionModel.from_yaml(path, 6).is_zero == expect_zero


def test_other_sections_ignored_and_extensions_read(tmp_path):
    bam_dir = tmp_path / "bam"
    bam_dir.mkdir()
    (bam_dir / "m1.json").write_text((DATA / "bam" / "mx64" / "m1.json").read_text())
    data = {
        "motor_list": [[1, "DM4340"], [2, "DM4310"]],
        "kp": [80.0, 40.0],
        "gravity_comp_factor": [1.3, 1.1],
        "friction_comp": {
            "enabled": True,
            "model": "bam",
            "breakaway": [0.0, 0.3],
            "breakaway_positive": [0.0, 0.4],
            "eps": [0.01, 0.02],
            "viscous": 0.0,
            "stribeck_breakaway": [0.0, 0.1],
            "stribeck_velocity": 0.05,
            "stribeck_exponent": 1.5,
            "offset": [0.0, -0.02],
            "bam_files": ["bam/m1.json", None],
        },
    }
    path = _write(tmp_path, data)
    kw = friction_params_from_arm_yaml(path, n_joints=2)
    assert kw["bam_files"] == [str(tmp_path.resolve() / "bam" / "m1.json"), None]
    assert kw["model"] == "bam" and kw["stribeck_exponent"] == 1.5
    m = FrictionModel.from_yaml(path, 2)
    v = np.array([1.0, 0.01])
    j0 = math.tanh(100.0) * (0.09038677246291783 + 0.011691602145974832 * 1.0)
    j1 = (0.4 + 0.1 * math.exp(-((0.01 / 0.05) ** 1.5))) * math.tanh(0.5) - 0.02
    np.testing.assert_allclose(m.torque(v), [j0, j1], rtol=1e-14)


def test_unknown_key_in_block_lists_valid_keys(tmp_path):
    path = _write(tmp_path, {"friction_comp": {"enable": True, "breakway": [1.0]}})
    with pytest.raises(ConfigError, match="valid keys") as info:
        friction_params_from_arm_yaml(path)
    assert info.value.key == "friction_comp.breakway"
    for key in FRICTION_BLOCK_KEYS:
        assert key in str(info.value)


@pytest.mark.parametrize(
    "block, match",
    [
        ({"enable": True, "enabled": True}, "either enabled or enable"),
        ({"enable": "yes"}, "true or false"),
        ({"breakaway": "strong"}, "number"),
        ({"breakaway": 10**400}, "finite"),
        ({1: 2, "foo": 3}, "keys must be names"),
        ({"breakaway": [1.0, True]}, "number"),
        ({"model": 3}, "string"),
        ({"bam_files": "m1.json"}, "one path"),
        ({"bam_files": [1, None]}, "paths or null"),
        ([1, 2], "mapping"),
    ],
)
def test_block_type_errors(tmp_path, block, match):
    path = _write(tmp_path, {"friction_comp": block})
    with pytest.raises(ConfigError, match=match):
        friction_params_from_arm_yaml(path, n_joints=2)


def test_dimension_mismatch_names_lengths(tmp_path):
    path = _write(tmp_path, {"friction_comp": {"eps": [0.01] * 5}})
    with pytest.raises(DimensionError, match="friction_comp.eps: expected 6 .* got 5"):
        friction_params_from_arm_yaml(path, n_joints=6)
    path = _write(tmp_path, {"friction_comp": {"bam_files": [None] * 3}})
    with pytest.raises(DimensionError, match="expected 2 .* got 3"):
        friction_params_from_arm_yaml(path, n_joints=2)


def test_no_block_and_empty_block(tmp_path):
    assert friction_params_from_arm_yaml({"kp": [1.0]}) == {}
    assert friction_params_from_arm_yaml(_write(tmp_path, {"friction_comp": None})) == {}
    with pytest.raises(ConfigError, match="not both"):
        friction_params_from_arm_yaml({"friction_comp": {}, "friction_comp_breakaway": 0.1})


# -- OpenArm ---------------------------------------------------------------------------------
def _openarm_by_hand(table, v):
    """openarm_teleop's code: Fo + Fv·v + Fc·tanh(0.1·k·v), per joint."""
    return np.array(
        [
            fo + fv * vi + fc * math.tanh(0.1 * k * vi)
            for fc, k, fv, fo, vi in zip(table["Fc"], table["k"], table["Fv"], table["Fo"], v)
        ]
    )


@pytest.mark.parametrize("v", [0.0, 0.01, -0.05, 0.3, -2.0])
def test_openarm_follower_friction_by_hand(v):
    path = DATA / "arms" / "openarm_follower.yaml"
    table = yaml.safe_load(path.read_text())["FollowerArmParam"]
    velocity = np.full(8, v)
    want = _openarm_by_hand(table, velocity)
    # joint 0 written out: Fc 0.306, k 28.417, Fv 0.063, Fo 0.088
    assert want[0] == pytest.approx(0.088 + 0.063 * v + 0.306 * math.tanh(2.8417 * v), rel=1e-15)
    m = FrictionModel.from_yaml(path, 8)
    np.testing.assert_allclose(m.torque(velocity), want, rtol=1e-13, atol=1e-16)
    kw = friction_params_from_openarm_yaml(path, role="follower")
    assert kw["eps"][0] == pytest.approx(1.0 / 2.8417, rel=1e-15)


def test_openarm_leader_and_follower_shared(shared_data):
    for role in ("leader", "follower"):
        path = shared_data / "arms" / "openarm_teleop" / f"{role}.yaml"
        table = yaml.safe_load(path.read_text())[f"{role.capitalize()}ArmParam"]
        m = FrictionModel(8, **friction_params_from_openarm_yaml(path, role=role))
        rng = np.random.default_rng(5)
        v = rng.uniform(-1.0, 1.0, 8)
        np.testing.assert_allclose(m.torque(v), _openarm_by_hand(table, v), rtol=1e-13)
        with pytest.raises(ConfigError, match="not found"):
            friction_params_from_openarm_yaml(path, role="follower" if role == "leader" else "leader")


def test_openarm_errors(tmp_path):
    table = {"Fc": [0.3, 0.1], "k": [28.0, 0.0], "Fv": [0.06, 0.0], "Fo": [0.0, 0.01]}
    kw = friction_params_from_openarm_yaml({"LeaderArmParam": table})
    assert kw["breakaway"] == [0.3, 0.0]  # k = 0: tanh(0·v) = 0
    with pytest.raises(ConfigError, match="leader, follower"):
        friction_params_from_openarm_yaml({"LeaderArmParam": table}, role="left")
    with pytest.raises(ConfigError, match="exactly one"):
        friction_params_from_openarm_yaml({"LeaderArmParam": table, "FollowerArmParam": table})
    with pytest.raises(ConfigError, match="exactly one"):
        friction_params_from_arm_yaml({"LeaderArmParam": table, "FollowerArmParam": table})
    with pytest.raises(ConfigError, match="missing Fo"):
        friction_params_from_openarm_yaml({"LeaderArmParam": {k: table[k] for k in ("Fc", "k", "Fv")}})
    with pytest.raises(ConfigError, match=">= 0"):
        friction_params_from_openarm_yaml({"LeaderArmParam": {**table, "k": [-1.0, 1.0]}})
    with pytest.raises(DimensionError, match="expected 2 .* got 1"):
        friction_params_from_openarm_yaml({"LeaderArmParam": {**table, "Fv": [0.1]}})
    with pytest.raises(DimensionError, match="expected 7 .* got 2"):
        friction_params_from_openarm_yaml({"LeaderArmParam": table}, n_joints=7)


def test_yaml_exponents_without_a_dot_are_numbers(tmp_path):
    """YAML 1.1 (PyYAML) reads ``5e-3`` as a string; the arm file takes it as 0.005 like the
    simulator's YAML does."""
    path = tmp_path / "arm.yaml"
    path.write_text("friction_comp:\n  breakaway: [1e-1, 2.0]\n  eps: 5e-3\n")
    assert yaml.safe_load(path.read_text())["friction_comp"]["eps"] == "5e-3"  # the quirk
    params = friction_params_from_arm_yaml(path, n_joints=2)
    assert params["eps"] == 0.005 and params["breakaway"] == [0.1, 2.0]


def test_openarm_nan_is_refused_not_read_as_no_friction(tmp_path):
    for table in (
        {"Fc": [1.0], "k": [".nan"], "Fv": [0.1], "Fo": [0.0]},
        {"Fc": [".nan"], "k": [0.0], "Fv": [0.1], "Fo": [0.0]},
    ):
        path = tmp_path / "leader.yaml"
        body = ", ".join(f"{k}: [{v[0]}]" for k, v in table.items())
        path.write_text(f"LeaderArmParam: {{{body}}}\n")
        with pytest.raises(ConfigError, match="finite"):
            friction_params_from_openarm_yaml(path)


def test_non_utf8_arm_file_is_a_config_error(tmp_path):
    path = tmp_path / "arm.yaml"
    path.write_bytes(b"friction_comp:\n  model: caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8") as info:
        friction_params_from_arm_yaml(path)
    assert info.value.key == "arm_config"


# -- gravity_scale (i2rt gravity_comp_factor) -------------------------------------------------
#: i2rt v1.2.4 config/yam_ultra.yml gravity_comp_factor, by joint (arms/README.md).
YAM_ULTRA_FACTOR = {"dof_joint2": 1.1, "dof_joint3": 1.1, "dof_joint4": 1.2}


def test_gravity_scale_of_the_yam_ultra_profile_by_joint_name(repo_root):
    import xml.etree.ElementTree as ET

    path = repo_root / "arms" / "yam_ultra" / "arm.yaml"
    urdf = ET.parse(repo_root / "arms" / "yam_ultra" / "yam_ultra.urdf")
    movable = [j.get("name") for j in urdf.iter("joint") if j.get("type") != "fixed"]
    assert {f"dof_joint{i}" for i in range(1, 7)} <= set(movable)
    scale = gravity_scale_from_arm_yaml(path, movable)
    assert scale.shape == (len(movable),)
    for name, factor in zip(movable, scale):
        assert factor == YAM_ULTRA_FACTOR.get(name, 1.0), name  # unlisted joints (gripper): 1
    # mapped by name, not position: a shuffled model order moves the values with the names
    shuffled = [
        "dof_joint4",
        "gripper_extra",
        "dof_joint1",
        "dof_joint3",
        "dof_joint2",
        "dof_joint6",
        "dof_joint5",
    ]
    assert gravity_scale_from_arm_yaml(path, shuffled).tolist() == [1.2, 1.0, 1.0, 1.1, 1.1, 1.0, 1.0]


def test_gravity_scale_absent_scalar_and_without_joints(tmp_path):
    names = ["a", "b", "c"]
    assert gravity_scale_from_arm_yaml(_write(tmp_path, {"friction_comp": {}}), names) is None
    assert gravity_scale_from_arm_yaml({"gravity_scale": None}, names) is None
    assert gravity_scale_from_arm_yaml({"gravity_scale": 1.5}, names).tolist() == [1.5] * 3
    assert gravity_scale_from_arm_yaml({"gravity_scale": [1, "2e-1", 3]}, names).tolist() == [1.0, 0.2, 3.0]
    listed = {"joints": ["c", "a"], "gravity_scale": [0.5, 2]}
    assert gravity_scale_from_arm_yaml(listed, names).tolist() == [2.0, 1.0, 0.5]


@pytest.mark.parametrize(
    "data,error,needle",
    [
        ({"joints": ["a", "z"], "gravity_scale": [1.0, 1.0]}, ConfigError, "['z'] are not in the model"),
        ({"joints": ["a", "b"], "gravity_scale": [1.0, 1.0, 1.0]}, DimensionError, "expected 2 values"),
        ({"gravity_scale": [1.0, 1.0]}, DimensionError, "expected 3 values"),
        ({"gravity_scale": []}, DimensionError, "expected 3 values"),
        ({"joints": "a", "gravity_scale": [1.0]}, ConfigError, "list of joint names"),
        ({"joints": ["a", "a"], "gravity_scale": [1.0, 1.0]}, ConfigError, "repeats"),
        ({"gravity_scale": [1.0, float("nan"), 1.0]}, ConfigError, "gravity_scale"),
        ({"gravity_scale": [1.0, True, 1.0]}, ConfigError, "gravity_scale"),
        ({"gravity_scale": [1.0, "x", 1.0]}, ConfigError, "gravity_scale"),
        ({"gravity_scale": [1.0, 101.0, 1.0]}, ConfigError, "within [-100, 100]"),
    ],
)
def test_gravity_scale_errors_name_the_key(data, error, needle):
    with pytest.raises(error) as info:
        gravity_scale_from_arm_yaml(data, ["a", "b", "c"])
    assert needle in str(info.value)
    assert info.value.key in ("gravity_scale", "joints")


def _joints_file(tmp_path, joints, **block):
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump({"joints": joints, "friction_comp": block}))
    return path


def test_top_level_joints_map_the_lists_by_name(tmp_path):
    path = _joints_file(
        tmp_path, ["a", "b", "c", "gripper"], breakaway=[0.1, 0.2, 0.3, 0.9], viscous=0.05, eps=[1, 2, 3, 4]
    )
    out = friction_params_from_arm_yaml(path, 3, joint_names=["c", "a", "b"])
    assert out["breakaway"] == [0.3, 0.1, 0.2] and out["eps"] == [3.0, 1.0, 2.0] and out["viscous"] == 0.05
    model = FrictionModel.from_yaml(path, ["c", "a", "b"])
    np.testing.assert_array_equal(model.params.breakaway_positive, [0.3, 0.1, 0.2])
    # without names (a joint count) the lists keep the file's order, checked against n
    with pytest.raises(DimensionError):
        friction_params_from_arm_yaml(path, 3)


@pytest.mark.parametrize(
    ("joints", "match"),
    [
        (["a", "b", "x"], r"\['c'\] not in the file's joints"),
        (["x", "y", "z"], "not in the file's joints"),
        (["a", "a", "b"], "duplicate"),
        ("abc", "list of joint names"),
        ([1, 2, 3], "non-empty strings"),
    ],
)
def test_top_level_joints_that_do_not_fit_are_config_errors(tmp_path, joints, match):
    path = _joints_file(tmp_path, joints, breakaway=[0.1, 0.2, 0.3])
    with pytest.raises(ConfigError, match=match) as err:
        FrictionModel.from_yaml(path, ["a", "b", "c"])
    assert err.value.key == "joints"
