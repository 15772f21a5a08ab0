"""Tests of gravity_friction_comp.model.robot_model against independent routes.

Routes: closed-form pendulum gravity; plain Pinocchio on the *unreduced* model projected
through a coupling matrix G written by hand in this file; ``pin.buildModelFromUrdf(mimic=True)``
where it loads; the payload's frame Jacobian (gravity change = -m·J_comᵀ·a_gravity, mass
matrix change = m·JvᵀJv + JωᵀIJω); MuJoCo ``qfrc_bias`` at zero velocity.
"""

from __future__ import annotations

import math
import pathlib
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

from gravity_friction_comp.errors import ConfigError, InputError, ModelError, ModelWarning, Reason
from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.model.robot_model import RobotModel

G0 = 9.81
REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED_URDF = "urdf"  # under the shared_data fixture
ALL_SHARED = [
    "dobot_magician/magician_standalone.urdf",
    "i2rt_yam/big_yam.urdf",
    "i2rt_yam/yam.urdf",
    "i2rt_yam/yam_pro.urdf",
    "i2rt_yam/yam_ultra.urdf",
    "interbotix/wx250s.urdf",
    "openarm/openarm_v10_bimanual_hand.urdf",
    "openarm/openarm_v10_single_hand.urdf",
    "openarm/openarm_v10_single_nohand.urdf",
    "piper/piper_description.urdf",
    "piper/piper_from_xacro.urdf",
    "robotiq/robotiq_2f_140.urdf",
    "robotiq/robotiq_2f_85.urdf",
    "so101/so101_new_calib.urdf",
    "synthetic/mimic_before_master.urdf",
    "synthetic/mimic_continuous_of_revolute.urdf",
    "synthetic/mimic_defaults_and_offset.urdf",
    "synthetic/mimic_missing_master.urdf",
    "synthetic/mimic_of_mimic.urdf",
    "synthetic/palletizer_parallelogram_mimic.urdf",
    "xarm/xarm7_gripper.urdf",
]
EXPECTED_MODEL_ERROR = {"synthetic/mimic_missing_master.urdf"}
EXPECTED_MASS_WARNING = {"dobot_magician/magician_standalone.urdf", "piper/piper_from_xacro.urdf"}

INERTIA = '<inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/>'
LIMIT = '<limit lower="-3" upper="3" effort="50" velocity="2"/>'


def link(name, mass=None, com="0 0 0"):
    if mass is None:
        return f'<link name="{name}"/>'
    return (
        f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>{INERTIA}'
        "</inertial></link>"
    )


def joint(name, parent, child, jtype="revolute", xyz="0 0 0", axis="0 1 0", extra=""):
    lim = LIMIT if jtype in ("revolute", "prismatic") else ""
    return (
        f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}"/><axis xyz="{axis}"/>{lim}{extra}</joint>'
    )


def robot(*parts):
    return '<?xml version="1.0"?><robot name="t">' + "".join(parts) + "</robot>"


def random_q(model: RobotModel, seed: int, count: int = 5):
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.position_lower), model.position_lower, -math.pi)
    hi = np.where(np.isfinite(model.position_upper), model.position_upper, math.pi)
    return [rng.uniform(lo, hi) for _ in range(count)]


def pin_config(model: pin.Model, angles: dict[str, float]) -> np.ndarray:
    """Pinocchio configuration from joint angles by name (cos/sin for continuous joints)."""
    q = pin.neutral(model)
    for name, value in angles.items():
        j = model.joints[model.getJointId(name)]
        if j.nq == 2:
            q[j.idx_q], q[j.idx_q + 1] = math.cos(value), math.sin(value)
        elif j.nq == 1:
            q[j.idx_q] = value
    return q


def sym(m):
    return np.triu(m) + np.triu(m, 1).T


# ---------------------------------------------------------------- closed forms
def test_single_pendulum_closed_form():
    m, lever = 2.0, 0.3
    urdf = robot(link("base"), link("arm", m, f"{lever} 0 0"), joint("j", "base", "arm"))
    model = RobotModel.from_urdf(urdf)
    assert model.joint_names == ("j",) and model.n == 1
    for q in np.linspace(-3, 3, 7):
        # com z = -lever sin q  ->  V = -m g lever sin q  ->  g(q) = dV/dq = -m g lever cos q
        np.testing.assert_allclose(
            model.gravity([q]), [-m * G0 * lever * math.cos(q)], rtol=1e-14, atol=1e-14
        )
    # tilted gravity a: g(q) = m lever (a_x sin q + a_z cos q)
    a = (3.0, 1.0, -9.0)
    tilted = model.with_gravity(a)
    np.testing.assert_array_equal(tilted.gravity_vector, a)
    for q in (-1.0, 0.4, 2.0):
        np.testing.assert_allclose(
            tilted.gravity([q]),
            [m * lever * (a[0] * math.sin(q) + a[2] * math.cos(q))],
            rtol=1e-14,
            atol=1e-14,
        )
    np.testing.assert_allclose(
        model.gravity([0.4]), [-m * G0 * lever * math.cos(0.4)], rtol=1e-14
    )  # unchanged


def test_continuous_and_prismatic_closed_form():
    m, lever = 1.5, 0.2
    urdf = robot(
        link("base"),
        link("wheel", m, f"{lever} 0 0"),
        link("slider", 0.7),
        joint("c", "base", "wheel", "continuous"),
        joint("p", "base", "slider", "prismatic", axis="0 0 1"),
    )
    model = RobotModel.from_urdf(urdf)
    assert set(model.joint_names) == {"c", "p"}
    ic, ip = model.joint_names.index("c"), model.joint_names.index("p")
    for angle in (-2.5, 0.0, 1.0, 4.0):  # continuous joints take an angle [rad], even > pi
        q = np.zeros(2)
        q[ic], q[ip] = angle, 0.05
        g = model.gravity(q)
        np.testing.assert_allclose(g[ic], -m * G0 * lever * math.cos(angle), rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(g[ip], 0.7 * G0, rtol=1e-14)  # vertical slider carries its weight [N]
    assert model.position_lower[ic] == -math.inf and model.position_upper[ic] == math.inf


def test_double_pendulum_closed_form():
    m1, m2, l1, c1, c2 = 1.2, 0.8, 0.4, 0.15, 0.25
    urdf = robot(
        link("base"),
        link("a", m1, f"{c1} 0 0"),
        link("b", m2, f"{c2} 0 0"),
        joint("j1", "base", "a"),
        joint("j2", "a", "b", xyz=f"{l1} 0 0"),
    )
    model = RobotModel.from_urdf(urdf)
    for q1, q2 in [(0.0, 0.0), (0.3, -1.1), (-2.0, 0.7), (1.2, 2.9)]:
        g1 = -G0 * ((m1 * c1 + m2 * l1) * math.cos(q1) + m2 * c2 * math.cos(q1 + q2))
        g2 = -G0 * m2 * c2 * math.cos(q1 + q2)
        np.testing.assert_allclose(model.gravity([q1, q2]), [g1, g2], rtol=1e-13, atol=1e-14)
    # mass matrix of two point-like rods about y (Iyy = 0.02 each) plus parallel-axis terms
    q1, q2 = 0.3, -1.1
    m22 = 0.02 + m2 * c2**2
    m12 = m22 + m2 * l1 * c2 * math.cos(q2)
    m11 = 0.02 + m1 * c1**2 + m22 + m2 * l1**2 + 2 * m2 * l1 * c2 * math.cos(q2)
    np.testing.assert_allclose(model.mass_matrix([q1, q2]), [[m11, m12], [m12, m22]], rtol=1e-13)


# ---------------------------------------------------------------- mimic projection by hand
# q_full = G q + offset, written by hand from each file's <mimic> tags
HAND_COUPLINGS = {
    "synthetic/mimic_of_mimic.urdf": (["j1"], {"j1": (1.0, 0.0), "j2": (2.0, 0.1), "j3": (-2.0, -0.1)}),
    "synthetic/mimic_before_master.urdf": (["b_master"], {"b_master": (1.0, 0.0), "a_follower": (1.0, 0.0)}),
    "synthetic/mimic_continuous_of_revolute.urdf": (["j1"], {"j1": (1.0, 0.0), "j2": (-1.0, 0.0)}),
    "synthetic/mimic_defaults_and_offset.urdf": (
        ["j1"],
        {"j1": (1.0, 0.0), "j2": (1.0, 0.0), "j3": (-0.276, -0.1)},
    ),
    "synthetic/palletizer_parallelogram_mimic.urdf": (
        ["j1", "j2", "j3", "j4"],
        {"j1": (1, 0), "j2": (1, 0), "j3": (1, 0), "j4": (1, 0), "j_lev1": (-1, 0), "j_lev2": (-1, 0)},
    ),
}


def hand_projection(full: pin.Model, masters_of, independent, q):
    """Reduced gravity Gᵀ·g_full and the G matrix, from a {joint: (master, k, offset)} map."""
    angles = {}
    g_mat = np.zeros((full.nv, len(independent)))
    for name, (master, k, off) in masters_of.items():
        angles[name] = k * q[independent.index(master)] + off
        g_mat[full.joints[full.getJointId(name)].idx_v, independent.index(master)] = k
    g_full = pin.computeGeneralizedGravity(full, full.createData(), pin_config(full, angles))
    return g_mat.T @ g_full, g_mat, angles


@pytest.mark.parametrize("rel", sorted(HAND_COUPLINGS))
def test_gravity_equals_hand_projection(shared_data, rel):
    path = shared_data / SHARED_URDF / rel
    independent, table = HAND_COUPLINGS[rel]
    master = independent[0]
    masters_of = {
        name: ((name if name in independent else master), k, off) for name, (k, off) in table.items()
    }
    if rel.startswith("synthetic/palletizer"):
        masters_of["j_lev1"] = ("j2", -1.0, 0.0)
        masters_of["j_lev2"] = ("j3", -1.0, 0.0)
    model = RobotModel.from_urdf(path)
    assert model.joint_names == tuple(independent)
    full = pin.buildModelFromUrdf(str(path))
    for q in random_q(model, seed=1):
        expected, g_mat, _ = hand_projection(full, masters_of, independent, q)
        np.testing.assert_allclose(model.gravity(q), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.coupling, g_mat, atol=0)
    # dynamics by the same projection
    q = random_q(model, seed=2, count=1)[0]
    v = np.random.default_rng(3).normal(size=model.n)
    a = np.random.default_rng(4).normal(size=model.n)
    _, g_mat, angles = hand_projection(full, masters_of, independent, q)
    data = full.createData()
    qf = pin_config(full, angles)
    np.testing.assert_allclose(model.full_configuration(q), qf, atol=1e-15)
    m_expected = g_mat.T @ sym(pin.crba(full, data, qf)) @ g_mat
    np.testing.assert_allclose(model.mass_matrix(q), m_expected, rtol=1e-12, atol=1e-14)
    tau_expected = g_mat.T @ pin.rnea(full, data, qf, g_mat @ v, g_mat @ a)
    np.testing.assert_allclose(model.inverse_dynamics(q, v, a), tau_expected, rtol=1e-12, atol=1e-12)


def test_robotiq_85_projection_from_tags(shared_data):
    """Mimic joints visited before their master (pin mimic=True refuses this file)."""
    path = shared_data / SHARED_URDF / "robotiq/robotiq_2f_85.urdf"
    with pytest.raises(Exception):  # noqa: B017 -- Pinocchio raises several types
        pin.buildModelFromUrdf(str(path), mimic=True)
    root = ET.parse(path).getroot()
    masters_of = {}
    master = "robotiq_85_left_knuckle_joint"
    for j in root.findall("joint"):
        tag = j.find("mimic")
        if tag is not None:
            assert tag.get("joint") == master
            masters_of[j.get("name")] = (master, float(tag.get("multiplier", 1)), float(tag.get("offset", 0)))
    masters_of[master] = (master, 1.0, 0.0)
    model = RobotModel.from_urdf(path)
    assert model.joint_names == (master,)
    full = pin.buildModelFromUrdf(str(path))
    for q in random_q(model, seed=5):
        expected, _, _ = hand_projection(full, masters_of, [master], q)
        np.testing.assert_allclose(model.gravity(q), expected, rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------- vs pin mimic=True
@pytest.mark.parametrize("rel", [r for r in ALL_SHARED if r not in EXPECTED_MODEL_ERROR])
def test_matches_pinocchio_mimic_parser_where_it_loads(shared_data, rel):
    path = shared_data / SHARED_URDF / rel
    try:
        ref = pin.buildModelFromUrdf(str(path), mimic=True)
    except Exception:  # noqa: BLE001 -- Pinocchio raises several types
        pytest.skip("pin.buildModelFromUrdf(mimic=True) refuses this file")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        model = RobotModel.from_urdf(path)
    ref_names = [ref.names[i] for i in range(1, ref.njoints) if ref.joints[i].nv > 0]
    assert list(model.joint_names) == ref_names
    data = ref.createData()
    rng = np.random.default_rng(11)
    for q in random_q(model, seed=7):
        qr = pin_config(ref, dict(zip(model.joint_names, q)))
        np.testing.assert_allclose(
            model.gravity(q), pin.computeGeneralizedGravity(ref, data, qr), rtol=0, atol=1e-12
        )
        v, a = rng.normal(size=model.n), rng.normal(size=model.n)
        # reference M from the mimic model's RNEA columns (unit accelerations, v = 0, no gravity):
        # pin 4.1.0's CRBA on mimic models is wrong for some trees (see the palletizer test below)
        no_grav = pin.Model(ref)
        no_grav.gravity = pin.Motion.Zero()
        ng_data = no_grav.createData()
        m_ref = np.column_stack(
            [pin.rnea(no_grav, ng_data, qr, np.zeros(model.n), e) for e in np.eye(model.n)]
        )
        np.testing.assert_allclose(model.mass_matrix(q), m_ref, rtol=1e-10, atol=1e-12)
        if rel not in PIN_MIMIC_CRBA_WRONG:
            np.testing.assert_allclose(
                model.mass_matrix(q), sym(pin.crba(ref, data, qr)), rtol=1e-10, atol=1e-12
            )
        np.testing.assert_allclose(
            model.inverse_dynamics(q, v, a), pin.rnea(ref, data, qr, v, a), rtol=1e-10, atol=1e-10
        )
        np.testing.assert_allclose(
            model.nonlinear_effects(q, v), pin.nonLinearEffects(ref, data, qr, v), rtol=1e-10, atol=1e-10
        )


PIN_MIMIC_CRBA_WRONG = {"synthetic/palletizer_parallelogram_mimic.urdf"}


def test_pinocchio_mimic_crba_bug_does_not_affect_us(shared_data):
    """pin 4.1.0 CRBA on a mimic=True model gives a different answer on a reused pin.Data.

    We never run CRBA on a mimic model (only on the full one), and agree with physics: the tool
    (com on the j4 axis, Izz 0.01 kg·m²) is kept level by the two mimic joints, so it turns about
    the vertical at q̇1 + q̇4 and never translates with q4: M[j1, j4] = M[j4, j4] = Izz at every q.
    """
    path = shared_data / SHARED_URDF / "synthetic/palletizer_parallelogram_mimic.urdf"
    model = RobotModel.from_urdf(path)
    q = np.array([0.3, 0.5, -0.4, 0.2])
    for _ in range(3):  # reused workspace
        m = model.mass_matrix(q)
        assert m[0, 3] == pytest.approx(0.01, abs=1e-15) and m[3, 3] == pytest.approx(0.01, abs=1e-15)
    ref = pin.buildModelFromUrdf(str(path), mimic=True)
    data = ref.createData()
    first = pin.crba(ref, data, q)[0, 3]
    second = pin.crba(ref, data, q)[0, 3]
    assert first == pytest.approx(0.01, abs=1e-15)
    assert abs(second - first) > 1e-3  # upstream bug; if this fails, pinocchio was fixed


def test_repeated_calls_match_fresh_models(repo_root, shared_data):
    """gravity()/dynamics reuse one pin.Data: results must not depend on earlier calls."""
    for path in (repo_root / "urdf/palletizer.urdf", shared_data / SHARED_URDF / "interbotix/wx250s.urdf"):
        model = RobotModel.from_urdf(path)
        rng = np.random.default_rng(21)
        for q in random_q(model, seed=20, count=6):
            v = rng.normal(size=model.n)
            fresh = model.copy()
            np.testing.assert_array_equal(model.gravity(q), fresh.gravity(q))
            np.testing.assert_array_equal(model.mass_matrix(q), model.copy().mass_matrix(q))
            np.testing.assert_array_equal(model.nonlinear_effects(q, v), model.copy().nonlinear_effects(q, v))


@pytest.mark.parametrize("rel", [None, "interbotix/wx250s.urdf", "xarm/xarm7_gripper.urdf"])
def test_mass_and_nonlinear_effects_is_the_two_calls_bit_for_bit(repo_root, shared_data, rel):
    """One checked call (the simulator's per step) = mass_matrix + nonlinear_effects, byte for
    byte, and = Gᵀ·crba·G + diag(A), Gᵀ·nle(q_full, G·v) on the bare Pinocchio model."""
    from gravity_friction_comp.model.actuator import ActuatorModel

    path = repo_root / "urdf/palletizer.urdf" if rel is None else shared_data / SHARED_URDF / rel
    plain = RobotModel.from_urdf(path)  # palletizer, xArm: mimic joints (G projects); wx250s: none
    rng = np.random.default_rng(7)
    for model in (plain, plain.with_actuators(ActuatorModel(plain.n, rotor_inertia=2e-5, gear_ratio=9.0))):
        full = model.full_model
        data = full.createData()
        coupling, armature = model.coupling, model.actuator_terms.reflected_inertia
        assert model is plain or armature.min() > 0  # 9² · 2e-5 kg·m² on every joint
        for q in random_q(model, seed=8, count=6):
            v = rng.normal(size=model.n)
            mass, bias = model.mass_and_nonlinear_effects(q, v)
            assert mass.tobytes() == model.mass_matrix(q).tobytes()
            assert bias.tobytes() == model.nonlinear_effects(q, v).tobytes()
            qf = model.full_configuration(q)
            bare_m = coupling.T @ sym(pin.crba(full, data, qf)) @ coupling + np.diag(armature)
            bare_b = coupling.T @ pin.nonLinearEffects(full, data, qf, coupling @ v)
            np.testing.assert_allclose(mass, bare_m, rtol=1e-13, atol=1e-15)
            np.testing.assert_allclose(bias, bare_b, rtol=1e-13, atol=1e-13)
    for bad_q, bad_v in (([0.0] * (plain.n - 1), [0.0] * plain.n), ([0.0] * plain.n, [math.nan] * plain.n)):
        with pytest.raises(InputError):
            plain.mass_and_nonlinear_effects(bad_q, bad_v)


# ---------------------------------------------------------------- every shared URDF
@pytest.mark.parametrize("rel", ALL_SHARED)
def test_every_shared_urdf_loads_or_fails_as_documented(shared_data, rel):
    path = shared_data / SHARED_URDF / rel
    if rel in EXPECTED_MODEL_ERROR:
        with pytest.raises(ModelError):
            RobotModel.from_urdf(path)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = RobotModel.from_urdf(path)
    mass_warnings = [
        w for w in caught if issubclass(w.category, ModelWarning) and "total moving mass" in str(w.message)
    ]
    assert bool(mass_warnings) == (rel in EXPECTED_MASS_WARNING)
    massless = [
        w for w in caught if issubclass(w.category, ModelWarning) and "without <inertial>" in str(w.message)
    ]
    # only the Dobot Magician has moving links without <inertial> (test/data/README.md)
    assert len(massless) == (rel == "dobot_magician/magician_standalone.urdf")
    assert model.n >= 1 and len(model.effort_limits) == model.n
    for q in random_q(model, seed=3):
        g = model.gravity(q)
        assert g.shape == (model.n,) and np.all(np.isfinite(g))
    if rel not in EXPECTED_MASS_WARNING:
        # tau = M a + b => forward dynamics inverts inverse dynamics
        q = random_q(model, seed=4, count=1)[0]
        v = np.random.default_rng(1).normal(size=model.n)
        tau = np.random.default_rng(2).normal(size=model.n)
        a = model.forward_dynamics(q, v, tau)
        np.testing.assert_allclose(model.inverse_dynamics(q, v, a), tau, rtol=1e-8, atol=1e-8)


def test_missing_master_names_joints(shared_data):
    with pytest.raises(ModelError, match="does_not_exist") as info:
        RobotModel.from_urdf(shared_data / SHARED_URDF / "synthetic/mimic_missing_master.urdf")
    assert info.value.joints == ("j2", "does_not_exist")


# ---------------------------------------------------------------- mimic edge cases inline
def three_links(m2: str, m3: str, j3type: str = "revolute"):
    return robot(
        link("base"),
        link("a", 1.0, "0.1 0 0"),
        link("b", 1.0, "0.1 0 0"),
        link("c", 1.0, "0.1 0 0"),
        joint("j1", "base", "a"),
        joint("j2", "a", "b", xyz="0.2 0 0", extra=m2),
        joint("j3", "b", "c", jtype=j3type, xyz="0.2 0 0", extra=m3),
    )


def test_mimic_cycle_names_joints():
    urdf = three_links('<mimic joint="j3"/>', '<mimic joint="j2"/>')
    with pytest.raises(ModelError, match="mimic cycle") as info:
        RobotModel.from_urdf(urdf)
    assert set(info.value.joints) == {"j2", "j3"}


def test_self_mimic_names_joint():
    with pytest.raises(ModelError, match="mimics itself") as info:
        RobotModel.from_urdf(three_links('<mimic joint="j2"/>', ""))
    assert info.value.joints == ("j2",)


def test_mimic_of_fixed_joint_is_an_error():
    urdf = three_links("", '<mimic joint="jf"/>').replace(
        "</robot>", link("d") + joint("jf", "c", "d", jtype="fixed") + "</robot>"
    )
    with pytest.raises(ModelError, match="fixed") as info:
        RobotModel.from_urdf(urdf)
    assert info.value.joints == ("j3", "jf")


def test_mimic_on_fixed_joint_warns_and_is_ignored():
    urdf = three_links("", '<mimic joint="j1" multiplier="3"/>', j3type="fixed")
    with pytest.warns(ModelWarning, match="fixed joint 'j3'"):
        model = RobotModel.from_urdf(urdf)
    assert model.joint_names == ("j1", "j2")
    # same gravity as the file without the tag
    ref = RobotModel.from_urdf(three_links("", "", j3type="fixed"))
    np.testing.assert_array_equal(model.gravity([0.3, -0.4]), ref.gravity([0.3, -0.4]))


def _palletizer_without_inertial(*links: str) -> str:
    root = ET.fromstring((REPO / "urdf" / "palletizer.urdf").read_text())
    for elem in root.findall("link"):
        if elem.get("name") in links:
            elem.remove(elem.find("inertial"))
    return ET.tostring(root, encoding="unicode")


def test_moving_link_without_inertial_warns_once_naming_it():
    """Issue 26 point 7: upper_arm without <inertial> loaded massless without a word."""
    xml = _palletizer_without_inertial("upper_arm")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = RobotModel.from_urdf(xml)
    texts = [str(w.message) for w in caught if issubclass(w.category, ModelWarning)]
    assert len(texts) == 1 and "upper_arm (joint shoulder_pitch)" in texts[0], texts
    assert all(name not in texts[0] for name in ("turret", "elbow", "beam", "wrist", "tool"))
    assert model.warnings == (texts[0],)
    # the payload/gravity/copy variants share it (a node logs the bare model's)
    assert model.with_payload(Payload.point(0.1, parent="tool")).warnings == model.warnings
    assert model.copy().warnings == model.warnings
    # what the warning says is true: the same torques as a zero-mass upper_arm
    zero = ET.fromstring((REPO / "urdf" / "palletizer.urdf").read_text())
    for elem in zero.findall("link[@name='upper_arm']/inertial"):
        elem.find("mass").set("value", "0")
        for key in elem.find("inertia").attrib:
            elem.find("inertia").set(key, "0")
    q = np.array([0.0, 0.4, 0.3])
    ref = RobotModel.from_urdf(ET.tostring(zero, encoding="unicode"))
    np.testing.assert_allclose(model.gravity(q), ref.gravity(q), rtol=0, atol=1e-12)
    full = RobotModel.from_urdf(REPO / "urdf" / "palletizer.urdf")
    assert full.warnings == ()
    assert abs(model.gravity(q)[1] / full.gravity(q)[1] - 1) > 0.2  # the 28 %


def test_link_fixed_below_a_massive_link_needs_no_inertial():
    """tool (fixed to wrist) without <inertial> is merged into wrist's body: not massless;
    wrist without one is still carried by tool's (Pinocchio merges fixed children)."""
    for missing in ("tool", "wrist"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ModelWarning)
            model = RobotModel.from_urdf(_palletizer_without_inertial(missing))
        assert model.warnings == ()
    with pytest.warns(ModelWarning, match=r"massless: wrist \(joint beam_parallel\);"):
        RobotModel.from_urdf(_palletizer_without_inertial("wrist", "tool"))


def test_massless_robot_warns():
    with pytest.warns(ModelWarning, match="gravity torque will be ~0"):
        model = RobotModel.from_urdf(robot(link("base"), link("a", 1e-5), joint("j", "base", "a")))
    assert model.total_mass == pytest.approx(1e-5)


def test_unsupported_joint_type_and_no_joints():
    floating = robot(link("base"), link("a", 1.0), joint("f", "base", "a", jtype="floating"))
    with pytest.raises(ModelError, match="not supported") as info:
        RobotModel.from_urdf(floating)
    assert info.value.joints == ("f",)
    with pytest.raises(ModelError, match="no movable"):
        RobotModel.from_urdf(robot(link("base"), link("a", 1.0), joint("f", "base", "a", jtype="fixed")))


# ---------------------------------------------------------------- payload via frame Jacobian
PAYLOAD_PARENTS = ["shoulder_pitch", "crank_parallel", "beam", "tool"]


@pytest.mark.parametrize("parent", PAYLOAD_PARENTS)
def test_payload_matches_frame_jacobian(repo_root, parent):
    path = repo_root / "urdf/palletizer.urdf"
    model = RobotModel.from_urdf(path)
    payload = Payload.box(
        0.4, (0.05, 0.08, 0.12), com=(0.03, -0.02, -0.07), parent=parent, rpy=(0.3, -0.5, 1.1)
    )
    loaded = model.with_payload(payload)
    assert loaded.payload is payload and model.payload is None
    assert loaded.total_mass == pytest.approx(model.total_mass + 0.4, rel=1e-14)
    # plain Pinocchio, model WITHOUT payload, an operational frame at the payload com
    full = pin.buildModelFromUrdf(str(path))
    if full.existJointName(parent):
        jid, place = full.getJointId(parent), pin.SE3.Identity()
    else:
        f = full.frames[full.getFrameId(parent)]
        jid, place = f.parentJoint, f.placement
    com_frame = place * pin.SE3(np.eye(3), payload.com)
    fid = full.addFrame(pin.Frame("payload_com", jid, com_frame, pin.FrameType.OP_FRAME))
    data = full.createData()
    g_mat = np.zeros((full.nv, 3))
    idx = {n: full.joints[full.getJointId(n)].idx_v for n in full.names[1:]}
    g_mat[idx["base_yaw"], 0] = 1
    g_mat[idx["shoulder_pitch"], 1], g_mat[idx["crank_parallel"], 1] = 1, -1
    g_mat[idx["beam_pitch"], 2], g_mat[idx["beam_parallel"], 2] = 1, -1
    for q in random_q(model, seed=8):
        angles = {
            "base_yaw": q[0],
            "shoulder_pitch": q[1],
            "crank_parallel": -q[1],
            "beam_pitch": q[2],
            "beam_parallel": -q[2],
        }
        qf = pin_config(full, angles)
        jac = pin.computeFrameJacobian(full, data, qf, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED) @ g_mat
        a_grav = np.array([0.0, 0.0, -G0])
        # V = -m a·p  ->  Δg = -m J_vᵀ a
        np.testing.assert_allclose(
            loaded.gravity(q) - model.gravity(q), -0.4 * jac[:3].T @ a_grav, rtol=1e-12, atol=1e-13
        )
        # kinetic energy of the payload: ΔM = m Jvᵀ Jv + Jωᵀ (R I Rᵀ) Jω, R = world rotation of the parent frame
        rot = data.oMf[fid].rotation
        i_world = rot @ payload.inertia @ rot.T
        dm = 0.4 * jac[:3].T @ jac[:3] + jac[3:].T @ i_world @ jac[3:]
        np.testing.assert_allclose(loaded.mass_matrix(q) - model.mass_matrix(q), dm, rtol=1e-10, atol=1e-14)
    # swapping payloads replaces, does not accumulate; None removes
    np.testing.assert_array_equal(loaded.with_payload(None).gravity(q), model.gravity(q))
    np.testing.assert_array_equal(
        model.with_payload(payload).with_payload(payload).gravity(q), loaded.gravity(q)
    )


def test_payload_with_tilted_gravity_keeps_both(repo_root):
    model = RobotModel.from_urdf(repo_root / "urdf/palletizer.urdf", gravity=(1.0, 0.0, -9.0))
    p = Payload.point(0.13, com=(0, 0, -0.07), parent="tool")
    a = model.with_payload(p).with_gravity((0.0, 2.0, -9.5))
    b = model.with_gravity((0.0, 2.0, -9.5)).with_payload(p)
    q = np.array([0.4, 0.6, -0.3])
    np.testing.assert_array_equal(a.gravity(q), b.gravity(q))
    assert a.payload == p


def test_unknown_payload_parent_lists_names(repo_root):
    model = RobotModel.from_urdf(repo_root / "urdf/palletizer.urdf")
    with pytest.raises(ConfigError, match="beam_parallel.*tool") as info:
        model.with_payload(Payload.point(0.1, parent="gripper"))
    assert info.value.key == "parent" and info.value.value == "gripper"


# ---------------------------------------------------------------- MuJoCo oracle
def mujoco_gravity(path, joint_names, q):
    mujoco = pytest.importorskip("mujoco")
    root = ET.parse(path).getroot()
    for lk in root.findall("link"):
        for tag in ("visual", "collision"):
            for e in lk.findall(tag):
                lk.remove(e)
    for e in list(root):
        if e.tag not in ("link", "joint"):
            root.remove(e)
    compiler = ET.SubElement(ET.SubElement(root, "mujoco"), "compiler")
    compiler.attrib.update(discardvisual="true", fusestatic="false", balanceinertia="false")
    m = mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
    d = mujoco.MjData(m)
    ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n) for n in joint_names]
    for i, value in zip(ids, q):
        d.qpos[m.jnt_qposadr[i]] = value
    mujoco.mj_forward(m, d)  # qvel = 0: qfrc_bias is the gravity torque
    return np.array([d.qfrc_bias[m.jnt_dofadr[i]] for i in ids])


@pytest.mark.parametrize("rel", ["openarm/openarm_v10_single_nohand.urdf", "i2rt_yam/yam.urdf"])
def test_gravity_matches_mujoco(shared_data, rel):
    path = shared_data / SHARED_URDF / rel
    model = RobotModel.from_urdf(path)
    for q in random_q(model, seed=9, count=3):
        np.testing.assert_allclose(
            model.gravity(q), mujoco_gravity(path, model.joint_names, q), rtol=0, atol=1e-12
        )


# ---------------------------------------------------------------- sources
def test_sources_text_xacro_args_and_errors(repo_root, tmp_path):
    xacro_path = repo_root / "urdf/palletizer.urdf.xacro"
    urdf_path = repo_root / "urdf/palletizer.urdf"
    from_file = RobotModel.from_urdf(urdf_path)
    from_text = RobotModel.from_urdf(urdf_path.read_text())
    prefixed = RobotModel.from_urdf(xacro_path, xacro_args={"prefix": "left_"})
    assert prefixed.joint_names == ("left_base_yaw", "left_shoulder_pitch", "left_beam_pitch")
    for q in random_q(from_file, seed=10):
        np.testing.assert_array_equal(from_text.gravity(q), from_file.gravity(q))
        np.testing.assert_array_equal(prefixed.gravity(q), from_file.gravity(q))
    with pytest.raises(ModelError, match="not found"):
        RobotModel.from_urdf(tmp_path / "missing.urdf")
    with pytest.raises(ModelError, match="malformed"):
        RobotModel.from_urdf("<robot name='x'><link name='a'></robot>")
    with pytest.raises(ModelError, match="Pinocchio cannot build"):  # revolute without <limit>
        RobotModel.from_urdf(
            robot(
                link("base"),
                link("a", 1.0),
                '<joint name="j" type="revolute"><parent link="base"/><child link="a"/></joint>',
            )
        )
    with pytest.raises(ConfigError) as info:
        RobotModel.from_urdf(urdf_path, gravity=(0, 0, float("nan")))
    assert info.value.key == "gravity"


# ---------------------------------------------------------------- example robot
def test_committed_urdf_equals_xacro_expansion(repo_root):
    a = RobotModel.from_urdf(repo_root / "urdf/palletizer.urdf")
    b = RobotModel.from_urdf(repo_root / "urdf/palletizer.urdf.xacro")
    assert a.joint_names == b.joint_names and a.full_joint_names == b.full_joint_names
    assert a.urdf_joints == b.urdf_joints
    np.testing.assert_array_equal(a.effort_limits, b.effort_limits)
    for q in random_q(a, seed=12):
        np.testing.assert_array_equal(a.gravity(q), b.gravity(q))
        np.testing.assert_array_equal(a.mass_matrix(q), b.mass_matrix(q))


def test_palletizer_design(repo_root):
    path = repo_root / "urdf/palletizer.urdf"
    model = RobotModel.from_urdf(path)
    assert model.joint_names == ("base_yaw", "shoulder_pitch", "beam_pitch")
    assert {n: (c.master, c.multiplier, c.offset) for n, c in model.mimic_joints.items()} == {
        "crank_parallel": ("shoulder_pitch", -1.0, 0.0),
        "beam_parallel": ("beam_pitch", -1.0, 0.0),
    }
    root = ET.parse(path).getroot()
    total = sum(float(lk.find("inertial/mass").get("value")) for lk in root.findall("link"))
    assert 3.0 <= total <= 6.0
    np.testing.assert_array_equal(model.effort_limits, [10.0, 28.0, 10.0])  # DM4310, DM4340, DM4310
    assert np.all(np.isfinite(model.velocity_limits)) and np.all(model.velocity_limits > 0)
    # every inertia tensor is physical (positive, triangle inequality)
    full = model.full_model
    for y in full.inertias[1:]:
        ev = np.linalg.eigvalsh(y.inertia)
        assert ev[0] > 0 and ev[2] <= ev[0] + ev[1]
    # the tool keeps its orientation: world rotation = Rz(base_yaw) (checked with pin mimic=True)
    ref = pin.buildModelFromUrdf(str(path), mimic=True)
    data = ref.createData()
    fid = ref.getFrameId("tool")
    for q in random_q(model, seed=13):
        pin.framesForwardKinematics(ref, data, pin_config(ref, dict(zip(model.joint_names, q))))
        c, s = math.cos(q[0]), math.sin(q[0])
        np.testing.assert_allclose(data.oMf[fid].rotation, [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-14)
        np.testing.assert_allclose(
            model.frame_placement(q, "tool").homogeneous, data.oMf[fid].homogeneous, atol=1e-14
        )
    # effort limits leave >= 5x margin over gravity with the default 0.13 kg can 7 cm below the tool
    loaded = model.with_payload(Payload.cylinder(0.13, 0.033, 0.12, com=(0, 0, -0.07), parent="tool"))
    grid = np.stack(np.meshgrid(np.linspace(-0.6, 1.3, 20), np.linspace(-1, 1, 20)), -1).reshape(-1, 2)
    worst = max(np.max(np.abs(loaded.gravity([0.0, a, b])) / model.effort_limits) for a, b in grid)
    assert 0.05 < worst < 0.2


# ---------------------------------------------------------------- inputs
def test_bad_inputs_raise_input_error(repo_root):
    model = RobotModel.from_urdf(repo_root / "urdf/palletizer.urdf")
    with pytest.raises(InputError, match="shape") as info:
        model.gravity([0.0, 0.0])
    assert info.value.reason is Reason.SHAPE
    for bad in ([0.0, float("nan"), 0.0], [float("inf"), 0.0, 0.0]):
        with pytest.raises(InputError) as info:
            model.gravity(bad)
        assert info.value.reason is Reason.NOT_FINITE
    with pytest.raises(InputError):
        model.inverse_dynamics([0, 0, 0], [0, 0], [0, 0, 0])
    with pytest.raises(InputError):
        model.forward_dynamics([0, 0, 0], [0, 0, 0], [0, float("nan"), 0])
    q = np.array([0.1, 0.2, 0.3])
    model.gravity(q)
    np.testing.assert_array_equal(q, [0.1, 0.2, 0.3])  # caller's array untouched
    with pytest.raises(ValueError):
        model.effort_limits[0] = 1.0  # read-only
    with pytest.raises(ConfigError):
        model.frame_placement(q, "nowhere")


def test_frame_jacobian_matches_finite_difference(repo_root):
    model = RobotModel.from_urdf(repo_root / "urdf/palletizer.urdf")
    q = np.array([0.3, 0.5, -0.2])
    jac = model.frame_jacobian(q, "tool")
    eps = 1e-6
    for i in range(3):
        dq = np.zeros(3)
        dq[i] = eps
        dp = (
            model.frame_placement(q + dq, "tool").translation
            - model.frame_placement(q - dq, "tool").translation
        ) / (2 * eps)
        np.testing.assert_allclose(jac[:3, i], dp, atol=1e-8)


@pytest.mark.parametrize("bad", [{"a": 1.0}, "abc", [1.0, "x", 2.0], None, [[0.0, 0.0, 0.0]]])
def test_gravity_non_numeric_input_raises_the_package_error(bad, repo_root):
    from gravity_friction_comp.errors import InputError

    model = RobotModel.from_urdf(str(repo_root / "urdf" / "palletizer.urdf"))
    with pytest.raises(InputError) as info:
        model.gravity(bad)
    assert info.value.reason is Reason.SHAPE


# ---------------------------------------------------------------- closed forms
def test_double_pendulum_stretched_out_horizontally():
    # joint 1 carries m1·c1 + m2·(l1 + c2), joint 2 m2·c2, when stretched out horizontally
    m1, m2, l1, c1, c2 = 1.2, 0.8, 0.4, 0.15, 0.25
    double = RobotModel.from_urdf(
        robot(
            link("base"),
            link("a", m1, f"{c1} 0 0"),
            link("b", m2, f"{c2} 0 0"),
            joint("j1", "base", "a"),
            joint("j2", "a", "b", xyz=f"{l1} 0 0"),
        )
    )
    expected = [G0 * (m1 * c1 + m2 * (l1 + c2)), G0 * m2 * c2]
    np.testing.assert_allclose(np.abs(double.gravity([0.0, 0.0])), expected, rtol=1e-12)


@pytest.mark.parametrize("big", [1e200, -1e308, 1e101])
def test_an_absurd_input_is_refused_before_computing_without_overflow(repo_root, big):
    """q·q, the magnitude screen, overflowed (``RuntimeWarning: overflow encountered in dot``
    for |q| ≥ ~1e154) before the input was refused, and |v| = 1e150 was taken (v² = 1e300
    in the dynamics). Every input beyond ±MAX_MODEL_INPUT is refused (RANGE, the joint named)
    with no warning; the bound itself is taken and gives finite torques."""
    from gravity_friction_comp.validation import MAX_MODEL_INPUT

    model = RobotModel.from_urdf(repo_root / "urdf/palletizer.urdf")
    x, z = np.array([0.0, big, 0.0]), np.zeros(3)
    calls = {
        "q": [model.gravity, lambda q: model.mass_matrix(q), lambda q: model.inverse_dynamics(q, z, z)],
        "v": [lambda v: model.nonlinear_effects(z, v), lambda v: model.coriolis_matrix(z, v)],
        "a": [lambda a: model.inverse_dynamics(z, z, a)],
        "tau": [lambda t: model.forward_dynamics(z, z, t)],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow may happen on the way to the refusal
        for what, funcs in calls.items():
            for f in funcs:
                with pytest.raises(InputError, match=rf"{what} beyond .*\['shoulder_pitch'\]") as info:
                    f(x)
                assert info.value.reason is Reason.RANGE
        edge = np.array([0.0, MAX_MODEL_INPUT, 0.0])
        assert np.isfinite(model.inverse_dynamics(edge, edge, edge)).all()


def _ndarray_method_calls(call) -> int:
    """Calls of ndarray methods (``max``, ``dot``, ``tolist`` …) made from Python code in ``call()``."""
    import sys

    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "c_call" and isinstance(getattr(arg, "__self__", None), np.ndarray):
            count += 1

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return count


def test_the_input_screen_costs_one_numpy_call(repo_root):
    """The screen before computing runs for every checked call (the observer's three per bridge
    exchange, inverse dynamics' three per setpoint): ``q·q`` was one numpy call; its
    replacement by ``max(initial=…)`` and ``min(initial=…)`` cost ~2.2 µs more per vector.
    The screen (``validation.within_bound``) is one ``tolist`` and Python's sum/max/min."""
    model = RobotModel.from_urdf(repo_root / "urdf/palletizer.urdf")
    q = np.array([0.1, 0.4, -0.3])
    checked = _ndarray_method_calls(lambda: model.gravity(q))
    unchecked = _ndarray_method_calls(lambda: model.gravity(q, checked=False))
    assert checked - unchecked <= 1
    assert (
        _ndarray_method_calls(lambda: model.full_configuration(q))
        - _ndarray_method_calls(
            lambda: model._full_config(q)  # noqa: SLF001 - the same without the screen
        )
        <= 1
    )
