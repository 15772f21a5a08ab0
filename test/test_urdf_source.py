"""Tests of gravity_friction_comp.model.urdf: reading URDF/xacro/text and parsing joints.

Expected values are read off the URDF text by hand (the XML snippets are inline).
"""

from __future__ import annotations

import math

import pytest

from gravity_friction_comp.errors import ConfigError, ModelError
from gravity_friction_comp.model.urdf import (
    MimicTag,
    load_description,
    parse_urdf,
    read_source,
)

ROBOT = """<?xml version="1.0"?>
<robot name="two">
  <link name="base"/>
  <link name="l1"/>
  <link name="l2"/>
  <link name="l3"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 1 0"/><limit lower="-1.5" upper="2.0" effort="7" velocity="3"/>
    <dynamics damping="0.2" friction="0.05"/></joint>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/>
    <axis xyz="0 1 0"/><limit effort="0" velocity="0"/><mimic joint="j1"/></joint>
  <joint name="j3" type="prismatic"><parent link="l2"/><child link="l3"/>
    <axis xyz="0 0 1"/><limit lower="0" upper="0.1" effort="-40" velocity="0.5"/>
    <mimic joint="j1" multiplier="-0.5" offset="0.01"/></joint>
  <gazebo><plugin name="p"><mimicJoint>j1</mimicJoint></plugin></gazebo>
</robot>
"""


def test_parse_limits_dynamics_and_mimic_defaults():
    desc = parse_urdf(ROBOT)
    assert desc.name == "two"
    assert list(desc.joints) == ["j1", "j2", "j3"]
    assert desc.links == ("base", "l1", "l2", "l3")
    j1, j2, j3 = desc.joints["j1"], desc.joints["j2"], desc.joints["j3"]
    assert (j1.type, j1.parent, j1.child) == ("revolute", "base", "l1")
    assert (j1.lower, j1.upper, j1.effort, j1.velocity) == (-1.5, 2.0, 7.0, 3.0)
    assert (j1.damping, j1.friction) == (0.2, 0.05)
    assert j1.mimic is None
    # continuous: no position limits; effort/velocity 0 read as "no limit"
    assert (j2.lower, j2.upper, j2.effort, j2.velocity) == (-math.inf, math.inf, math.inf, math.inf)
    assert j2.mimic == MimicTag("j1", 1.0, 0.0)  # URDF defaults
    assert j3.mimic == MimicTag("j1", -0.5, 0.01)
    assert j3.effort == 40.0  # magnitude
    assert (j3.damping, j3.friction) == (0.0, 0.0)


def test_gazebo_mimic_plugin_is_not_a_mimic_tag(shared_data):
    desc = load_description(shared_data / "urdf/xarm/xarm7_gripper.urdf")
    mimics = {n: j.mimic.joint for n, j in desc.joints.items() if j.mimic}
    # 5 <mimic> tags in joints; the 5 <mimicJoint> plugin entries are not counted
    assert len(mimics) == 5 and set(mimics.values()) == {"drive_joint"}


@pytest.mark.parametrize(
    "xml, fragment",
    [
        ("<robot name='x'><link name='a'>", "malformed URDF XML"),
        ("<model name='x'/>", "expected <robot>"),
        (
            "<robot><joint name='j' type='hinge'><parent link='a'/><child link='b'/></joint></robot>",
            "unknown type 'hinge'",
        ),
        ("<robot><joint name='j' type='fixed'><parent link='a'/></joint></robot>", "lacks"),
        (
            "<robot><joint name='j' type='fixed'><parent link='a'/><child link='b'/></joint>"
            "<joint name='j' type='fixed'><parent link='b'/><child link='c'/></joint></robot>",
            "duplicate joint name 'j'",
        ),
        (
            "<robot><joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
            "<limit effort='lots'/></joint></robot>",
            "effort='lots' is not a number",
        ),
        (
            "<robot><joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
            "<mimic multiplier='2'/></joint></robot>",
            "<mimic> without a joint",
        ),
    ],
)
def test_parse_errors(xml, fragment):
    with pytest.raises(ModelError, match=fragment.replace("(", r"\(")):
        parse_urdf(xml)


def test_read_source_text_path_and_xacro(tmp_path, repo_root):
    text, origin = read_source("  \n" + ROBOT)
    assert origin == "<URDF text>" and text.lstrip().startswith("<?xml")
    path = tmp_path / "two.urdf"
    path.write_text(ROBOT)
    assert read_source(path) == (ROBOT, str(path))
    assert read_source(str(path)) == (ROBOT, str(path))
    xml, origin = read_source(repo_root / "urdf/palletizer.urdf.xacro", {"prefix": "r_"})
    assert origin.endswith("palletizer.urdf.xacro")
    assert set(parse_urdf(xml).joints) == {
        "r_base_yaw",
        "r_shoulder_pitch",
        "r_crank_parallel",
        "r_beam_pitch",
        "r_beam_parallel",
        "r_tool_joint",
    }


def test_read_source_errors(tmp_path):
    with pytest.raises(ModelError, match="URDF file not found"):
        read_source(tmp_path / "nope.urdf")
    # a robot_description message that is not XML is taken as a path; 600 characters were an
    # OSError (File name too long) that killed gravity_compensation_node
    with pytest.raises(
        ModelError,
        match=r"neither URDF XML .* nor a file: '\\x01\\x02.*\(\d+ characters\): File name too long$",
    ):
        read_source("\x01\x02<<>>" * 100)
    bad = tmp_path / "bad.urdf.xacro"
    bad.write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="${undefined_thing}"/></robot>'
    )
    with pytest.raises(ModelError, match="xacro expansion"):
        read_source(bad)
    plain = tmp_path / "plain.urdf"
    plain.write_text(ROBOT)
    with pytest.raises(ConfigError) as info:
        read_source(plain, {"prefix": "x"})
    assert info.value.key == "xacro_args"
    with pytest.raises(ConfigError):
        read_source(ROBOT, {"prefix": "x"})
    with pytest.raises(ModelError, match="path or URDF XML text"):
        read_source(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "mass,inertia,needle",
    [
        ("nan", 'ixx="0.01" iyy="0.01" izz="0.01"', "mass"),
        ("inf", 'ixx="0.01" iyy="0.01" izz="0.01"', "mass"),
        ("-1", 'ixx="0.01" iyy="0.01" izz="0.01"', "mass"),
        ("1", 'ixx="nan" iyy="0.01" izz="0.01"', "ixx"),
        ("1", 'ixx="0.01" iyy="-0.01" izz="0.01"', "iyy"),
    ],
)
def test_bad_inertial_values_rejected_naming_the_link(mass, inertia, needle):
    # urdfdom silently drops a NaN inertial (a massless link) and accepts a negative mass.
    from gravity_friction_comp.errors import ModelError
    from gravity_friction_comp.model.urdf import parse_urdf

    xml = f"""<robot name="r"><link name="base"/>
      <link name="arm"><inertial><mass value="{mass}"/><inertia {inertia} ixy="0" ixz="0" iyz="0"/>
      </inertial></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
      <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""
    with pytest.raises(ModelError, match=needle) as info:
        parse_urdf(xml)
    assert "'arm'" in str(info.value)


def _one_link(inertial: str = "", joint_origin: str = "0 0 0", axis: str = "0 1 0") -> str:
    return f"""<robot name="p"><link name="base"/>
      <link name="l1"><inertial>{inertial or '<mass value="1"/><origin xyz="0.1 0 0"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>'}</inertial></link>
      <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
        <origin xyz="{joint_origin}"/><axis xyz="{axis}"/>
        <limit effort="10" lower="-1" upper="1" velocity="1"/></joint></robot>"""


@pytest.mark.parametrize(
    "inertial, text",
    [
        # |ixy| > ixx: eigenvalues 0.001 ± 5 → a negative principal moment
        (
            '<mass value="1"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="5" ixz="0" iyz="0"/>',
            "not positive semi-definite",
        ),
        ('<mass value="2e6"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>', "<= 1e\\+06"),
        ('<mass value="1"/><inertia ixx="1e10" iyy="1e10" izz="1e10" ixy="0" ixz="0" iyz="0"/>', "within"),
        (
            '<mass value="1"/><origin xyz="1e200 0 0"/><inertia ixx="1" iyy="1" izz="1" ixy="0" '
            'ixz="0" iyz="0"/>',
            "beyond 1000 m",
        ),
        (
            '<mass value="1"/><origin xyz="0 0 0" rpy="0 inf 0"/><inertia ixx="1" iyy="1" izz="1" '
            'ixy="0" ixz="0" iyz="0"/>',
            "three finite numbers",
        ),
    ],
)
def test_implausible_or_indefinite_inertials_are_refused(inertial, text):
    with pytest.raises(ModelError, match=text):
        parse_urdf(_one_link(inertial))


def test_indefinite_inertia_is_refused_where_pinocchio_gives_negative_mass():
    """Why the check exists: Pinocchio alone builds the link and its 1×1 mass matrix is
    uᵀIu = (ixx + iyy)/2 - ixy < 0 about u = (1, -1, 0)/√2 (hand route)."""
    import numpy as np
    import pinocchio as pin

    inertial = '<mass value="1"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="5" ixz="0" iyz="0"/>'
    xml = _one_link(inertial, axis="0.7071067811865476 -0.7071067811865476 0")
    model = pin.buildModelFromXML(xml)
    mass = pin.crba(model, model.createData(), np.zeros(1))
    assert mass[0, 0] == pytest.approx(0.001 - 5.0, rel=1e-9)
    with pytest.raises(ModelError, match="not positive semi-definite"):
        parse_urdf(xml)


def test_triangle_inequality_breaking_but_definite_inertia_loads():
    # OpenArm's finger (openarm_v10 URDFs): principal moments 1.3e-7, 1.4e-6, 4.0e-6 kg·m²
    # break I1 + I2 >= I3 yet are positive: the dynamics stay well posed
    inertial = (
        '<mass value="0.0317"/><inertia ixx="1.375e-06" iyy="1.33081e-07" '
        'izz="3.99192e-06" ixy="0" ixz="0" iyz="0"/>'
    )
    assert "j1" in parse_urdf(_one_link(inertial)).joints


@pytest.mark.parametrize(
    "origin, axis, text",
    [
        ("1e200 0 0", "0 1 0", "beyond 1000 m"),
        ("0 0", "0 1 0", "three finite numbers"),
        ("0 0 0", "0 0 0", "non-zero direction"),
        ("0 0 0", "0 1e300 0", "non-zero direction"),
        ("0 0 0", "0 1 nan", "three finite numbers"),
    ],
)
def test_bad_joint_origin_or_axis_is_refused(origin, axis, text):
    with pytest.raises(ModelError, match=text) as info:
        parse_urdf(_one_link(joint_origin=origin, axis=axis))
    assert "j1" in str(info.value)


def test_xacro_args_must_be_a_mapping(tmp_path):
    src = tmp_path / "r.urdf.xacro"
    src.write_text(_one_link())
    with pytest.raises(ConfigError, match="xacro_args must be a mapping") as info:
        read_source(src, "mass:=1")
    assert info.value.key == "xacro_args"


@pytest.mark.parametrize("mimic", ['multiplier="1e300"', 'multiplier="-2e3"', 'offset="5e3"'])
def test_implausible_mimic_coupling_is_refused(mimic):
    xml = ROBOT.replace('<mimic joint="j1"/>', f'<mimic joint="j1" {mimic}/>')
    with pytest.raises(ModelError, match="beyond ±1000") as info:
        parse_urdf(xml)
    assert "j2" in str(info.value)
    # the limit itself loads: a 1000:1 multiplier
    ok = parse_urdf(ROBOT.replace('<mimic joint="j1"/>', '<mimic joint="j1" multiplier="1e3"/>'))
    assert ok.joints["j2"].mimic.multiplier == 1e3


def test_xacro_args_parameter_entries_need_a_name():
    """``ros2 param set /gravity_compensation xacro_args '[":=x"]'`` was accepted (a mapping of
    no argument); an entry without a name before ``:=`` is refused with the entry named."""
    from gravity_friction_comp.nodes.robot_params import _xacro_mappings

    assert _xacro_mappings(["prefix:=left_", "", " side := r"]) == {"prefix": "left_", "side": " r"}
    for bad in (":=x", " :=x", "prefix"):
        with pytest.raises(ConfigError, match="xacro_args entry") as info:
            _xacro_mappings([bad])
        assert info.value.key == "xacro_args"
