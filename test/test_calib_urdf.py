"""model/urdf_inertial.py and sim/link_truth.py: in-place inertial edits, the simulator's per-link truth."""

from __future__ import annotations

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, ModelError
from gravity_friction_comp.model.urdf_inertial import edit_inertials, read_inertials, rpy_matrix
from gravity_friction_comp.sim.config import SimConfig
from gravity_friction_comp.sim.link_truth import LinkTruth, apply_link_truth, parse_links

BEAM = """  <link name="beam">
    <inertial>
      <origin rpy="0 0 0" xyz="0.125 0 0"/>
      <mass value="0.4"/>"""


def test_edit_changes_only_the_mass_and_origin_spans(repo_root):
    xml = (repo_root / "urdf" / "palletizer.urdf").read_text()
    out = edit_inertials(xml, {"beam": {"mass": 0.5, "xyz": [0.13, 0.0, 0.01]}})
    # hand-written expectation: the same text with those two attribute values replaced
    expected = xml.replace(
        BEAM, BEAM.replace('xyz="0.125 0 0"', 'xyz="0.13 0 0.01"').replace('"0.4"', '"0.5"')
    )
    assert xml.count(BEAM) == 1 and out == expected
    beam = read_inertials(out)["beam"]
    assert beam.mass == 0.5 and np.allclose(beam.xyz, [0.13, 0.0, 0.01])


SMALL = """<robot name="r">
  <!-- <link name="a"><inertial><mass value="9"/></inertial></link> -->
  <link name='a'>
    <inertial>
      <mass value='1.0'/>
      <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>
    </inertial>
  </link>
</robot>
"""


def test_comment_is_not_edited_and_a_missing_origin_is_inserted():
    out = edit_inertials(SMALL, {"a": {"mass": 2.0, "xyz": [0.0, 0.0, 0.1]}})
    assert '<mass value="9"/>' in out  # the comment kept as is
    assert out == SMALL.replace("<inertial>\n", '<inertial><origin xyz="0 0 0.1" rpy="0 0 0"/>\n').replace(
        "value='1.0'", "value='2'"
    )
    with pytest.raises(ModelError, match="link 'b'"):
        edit_inertials(SMALL, {"b": {"mass": 1.0}})


def test_written_numbers_drop_float_noise_and_keep_real_values():
    """A fit's rounding residue (-1.98e-32 m, 1.6312199999874157 kg for a prior of 1.63122)
    is written as 0 / 1.63122; a real small inertia keeps its 9 significant digits."""
    inertia = np.diag([5.44941234e-07, 0.0162876, 1.0])
    inertia[0, 1] = inertia[1, 0] = -1.22884e-08
    out = edit_inertials(
        SMALL, {"a": {"mass": 1.6312199999874157, "xyz": [-1.98e-32, 0.0274792, 3e-13], "inertia": inertia}}
    )
    assert 'xyz="0 0.0274792 0"' in out and "value='1.63122'" in out
    assert 'ixx="5.44941234e-07"' in out and 'ixy="-1.22884e-08"' in out and 'ixz="0"' in out
    a = read_inertials(out)["a"]
    assert a.mass == 1.63122 and a.xyz[0] == 0.0
    assert abs(a.inertia[0, 0] - 5.44941234e-07) < 1e-16


def test_link_truth_matches_pinocchio_inertia_algebra(repo_root):
    """The true model's gravity equals the URDF's with each body's pin.Inertia changed by hand."""
    pin = pytest.importorskip("pinocchio")
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.sim.link_truth import true_model

    model = RobotModel.from_urdf(repo_root / "urdf" / "palletizer.urdf")
    links = parse_links(
        {
            "upper_arm": {"mass_scale": 1.25, "com_offset": [0.01, 0.0, -0.015]},
            "elbow": {"mass_scale": 0.7, "com_offset": [0.0, 0.02, 0.0]},  # rotated inertia frame
            "tool": {"extra_mass": {"mass": 0.05, "position": [0.0, 0.0, -0.03]}},
        }
    )
    truth = true_model(model, links)
    full = pin.buildModelFromUrdf(str(repo_root / "urdf" / "palletizer.urdf"))
    base = read_inertials(model.description.xml)
    for link, t in (("upper_arm", links["upper_arm"]), ("elbow", links["elbow"])):
        jid = full.frames[full.getFrameId(link)].parentJoint
        b = base[link]
        rot = rpy_matrix(b.rpy)
        old = pin.Inertia(b.mass, b.xyz, rot @ b.inertia @ rot.T)
        new = pin.Inertia(
            t.mass_scale * b.mass, b.xyz + np.array(t.com_offset), t.mass_scale * rot @ b.inertia @ rot.T
        )
        full.inertias[jid] = full.inertias[jid] - old + new
    frame = full.frames[full.getFrameId("tool")]
    full.inertias[frame.parentJoint] += frame.placement.act(
        pin.Inertia(0.05, np.array([0.0, 0.0, -0.03]), np.zeros((3, 3)))
    )
    data = full.createData()
    g_mat = np.array(model.coupling)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.uniform(model.position_lower, model.position_upper)
        ref = g_mat.T @ pin.computeGeneralizedGravity(full, data, model.full_configuration(q))
        np.testing.assert_allclose(truth.gravity(q), ref, atol=1e-12)
    assert not np.allclose(truth.gravity(q), model.gravity(q), atol=1e-3)


def test_sim_config_links_block(repo_root):
    cfg = SimConfig.from_mapping(
        {
            "simulation": {
                "links": {"beam": {"mass_scale": 1.2, "extra_mass": {"mass": 0.1, "position": [0, 0, 0]}}}
            }
        }
    )
    assert cfg.links["beam"] == LinkTruth(1.2, (0.0, 0.0, 0.0), 0.1, (0.0, 0.0, 0.0))
    with pytest.raises(ConfigError, match="unknown key"):
        SimConfig.from_mapping({"simulation": {"links": {"beam": {"scale": 1.2}}}})
    with pytest.raises(ConfigError, match="mass_scale"):
        SimConfig.from_mapping({"simulation": {"links": {"beam": {"mass_scale": -1}}}})
    with pytest.raises(ConfigError, match="links.nope"):
        apply_link_truth((repo_root / "urdf" / "palletizer.urdf").read_text(), parse_links({"nope": {}}))


def test_simulated_arm_uses_the_link_truth(repo_root):
    pytest.importorskip("pinocchio")
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.sim.arm import SimulatedArm

    model = RobotModel.from_urdf(repo_root / "urdf" / "palletizer.urdf")
    cfg = SimConfig.from_yaml(repo_root / "config" / "sim_palletizer_calib_truth.yaml")
    q = np.array([0.1, 0.4, 0.3])
    base = SimulatedArm(model).gravity(q)
    true = SimulatedArm(model, cfg).gravity(q)
    assert abs(true[1] - base[1]) > 0.05  # the truth differs from the URDF
