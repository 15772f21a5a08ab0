"""Tests of gravity_friction_comp.model.actuator and its integration in RobotModel.

Independent routes: closed-form single pendulum with a geared rotor; hand-computed mimic
folding (k = -1, k = 2) and the full (unreduced) Pinocchio model with a coupling matrix G
written by hand here; bit-for-bit comparison with a model without actuators; the mass matrix
assembled column by column from RNEA against CRBA.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from gravity_friction_comp.errors import ConfigError, DimensionError
from gravity_friction_comp.friction.arm_yaml import actuator_model_from_arm_yaml
from gravity_friction_comp.model.actuator import ACTUATOR_BLOCK_KEYS, ActuatorModel
from gravity_friction_comp.model.robot_model import RobotModel

G0 = 9.81
INERTIA = '<inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/>'
LIMIT = '<limit lower="-3" upper="3" effort="50" velocity="2"/>'


def link(name, mass=None, com="0 0 0"):
    if mass is None:
        return f'<link name="{name}"/>'
    return (
        f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>'
        f"{INERTIA}</inertial></link>"
    )


def joint(name, parent, child, xyz="0 0 0", axis="0 1 0", extra=""):
    return (
        f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
        f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>{LIMIT}{extra}'
        "</joint>"
    )


def robot(*parts):
    return '<?xml version="1.0"?><robot name="t">' + "".join(parts) + "</robot>"


def mimic(master, k):
    return f'<mimic joint="{master}" multiplier="{k}" offset="0"/>'


def dynamics(damping, friction):
    return f'<dynamics damping="{damping}" friction="{friction}"/>'


# chain: j1 (master) -> j2 (mimic of j1, k=-1) -> j3 (mimic of j1, k=2) -> j4 (independent)
MIMIC_URDF = robot(
    link("base"),
    link("l1", 1.0, "0.1 0 0"),
    link("l2", 0.7, "0.15 0 0"),
    link("l3", 0.5, "0.05 0 0.1"),
    link("l4", 0.3, "0.1 0 0"),
    joint("j1", "base", "l1", extra=dynamics(0.1, 0.3)),
    joint("j2", "l1", "l2", "0.2 0 0", extra=mimic("j1", -1) + dynamics(0.2, 0.5)),
    joint("j3", "l2", "l3", "0.3 0 0", "0 0 1", extra=mimic("j1", 2) + dynamics(0.05, 0.7)),
    joint("j4", "l3", "l4", "0 0 0.2", "1 0 0", extra=dynamics(0.4, 0.11)),
)
# full-model rows j1..j4, columns (j1, j4): written by hand from the <mimic> tags above
G_HAND = np.array([[1.0, 0.0], [-1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
MIMIC_ACT = dict(
    rotor_inertia=[2e-5, 3e-5, 5e-5, 7e-5],
    gear_ratio=[10.0, -6.0, 4.0, 50.0],
    viscous=[0.01, 0.02, 0.03, 0.04],
    coulomb=[0.1, 0.2, 0.3, 0.4],
)


@pytest.fixture(scope="module")
def palletizer(request):
    root = request.config.rootpath
    return RobotModel.from_urdf(root / "urdf" / "palletizer.urdf")


def shared_models(shared_data):
    urdf = shared_data / "urdf"
    return [
        RobotModel.from_urdf(urdf / rel)
        for rel in (
            "xarm/xarm7_gripper.urdf",
            "interbotix/wx250s.urdf",
            "openarm/openarm_v10_bimanual_hand.urdf",
        )
    ]


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "key, value",
    [
        ("rotor_inertia", [1e-5, -1e-6, 0.0]),
        ("gear_ratio", [9.0, 0.0, 6.0]),
        ("gear_ratio", 0.0),
        ("viscous", [0.0, 0.0, -0.01]),
        ("coulomb", -0.1),
        ("coulomb", [0.1, math.nan, 0.1]),
        ("viscous", math.inf),
        ("rotor_inertia", "1e-5"),
        ("gear_ratio", True),
        ("coulomb", [0.1, True, 0.1]),
        ("viscous", [[0.1, 0.1, 0.1]]),
    ],
)
def test_invalid_values_raise_config_error_naming_key(key, value):
    with pytest.raises(ConfigError) as err:
        ActuatorModel(3, **{key: value})
    assert err.value.key == key and key in str(err.value)


def test_lengths_joints_and_keywords():
    with pytest.raises(DimensionError) as err:
        ActuatorModel(3, viscous=[0.1, 0.2])
    assert (err.value.key, err.value.expected, err.value.actual) == ("viscous", 3, 2)
    for bad in (0, True, "j1", [], ["a", "a"], ["a", ""]):
        with pytest.raises(ConfigError):
            ActuatorModel(bad)
    with pytest.raises(ConfigError, match="valid keywords"):
        ActuatorModel.from_urdf_dynamics(RobotModel.from_urdf(MIMIC_URDF), armature=1.0)
    act = ActuatorModel(["a", "b"], rotor_inertia=2e-5, gear_ratio=[-10.0, 3.0])
    # n² J by hand; negative gear ratio (reversed motor) reflects the same inertia
    assert act.reflected_inertia.tolist() == [100 * 2e-5, 9 * 2e-5]
    assert not act.reflected_inertia.flags.writeable and not act.gear_ratio.flags.writeable
    assert ActuatorModel(2).is_zero and not act.is_zero
    rebuilt = ActuatorModel(act.joint_names, **act.as_dict())
    assert rebuilt.as_dict() == act.as_dict()


def test_caller_arrays_are_not_aliased():
    values = np.array([1e-5, 2e-5])
    act = ActuatorModel(2, rotor_inertia=values)
    values[0] = 5.0
    assert act.rotor_inertia[0] == 1e-5


def test_with_actuators_rejects_wrong_size_and_unknown_names(palletizer):
    with pytest.raises(DimensionError):
        palletizer.with_actuators(ActuatorModel(5))
    with pytest.raises(ConfigError, match="valid names: base_yaw") as err:
        palletizer.with_actuators(ActuatorModel(["base_yaw", "elbow"], viscous=0.1))
    assert err.value.value == ["elbow"]
    with pytest.raises(ConfigError):
        palletizer.with_actuators({"viscous": 0.1})


# ---------------------------------------------------------------- bit-identical default
def _outputs(model, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(4):
        q, v, a, tau = (rng.uniform(-1.0, 1.0, model.n) for _ in range(4))
        v[0] = -0.0  # -0.0 must survive as it does without actuators
        out += [
            model.gravity(q),
            model.mass_matrix(q),
            model.inverse_dynamics(q, v, a),
            model.inverse_dynamics(q, v, a, include_friction=False),
            model.nonlinear_effects(q, v),
            model.forward_dynamics(q, v, tau),
        ]
    return out


def test_default_actuator_model_is_bit_identical(palletizer, shared_data):
    for model in [palletizer, palletizer.with_gravity((1.0, 0.5, -9.7))] + shared_models(shared_data):
        bare = _outputs(model, 3)
        for act in (
            ActuatorModel(model.n),
            ActuatorModel(model.full_joint_names),
            ActuatorModel(model.n, gear_ratio=-40.0),
        ):  # gear ratio alone reflects 0·n²
            got = _outputs(model.with_actuators(act), 3)
            for x, y in zip(bare, got):
                assert np.array_equal(x, y) and x.tobytes() == y.tobytes(), (model.name, act)
    # removing the actuator model restores the bare numbers too
    heavy = palletizer.with_actuators(ActuatorModel(3, rotor_inertia=1e-4, gear_ratio=20.0))
    assert [x.tobytes() for x in _outputs(heavy.with_actuators(None), 3)] == [
        x.tobytes() for x in _outputs(palletizer, 3)
    ]


def test_actuators_survive_payload_gravity_copy(palletizer):
    from gravity_friction_comp.model.payload import Payload

    act = ActuatorModel(3, rotor_inertia=1e-4, gear_ratio=20.0, viscous=0.1)
    model = palletizer.with_actuators(act)
    for derived in (
        model.with_payload(Payload.cylinder(0.2, 0.03, 0.1, parent="tool")),
        model.with_gravity((0.0, 0.0, -9.7)),
        model.copy(),
    ):
        assert derived.actuators is act
        assert derived.actuator_terms.reflected_inertia.tolist() == [0.04, 0.04, 0.04]
    assert palletizer.actuators is None  # original unchanged


# ---------------------------------------------------------------- reflected inertia
def test_reflected_inertia_only_on_the_diagonal(palletizer, shared_data):
    rng = np.random.default_rng(7)
    for model in [palletizer] + shared_models(shared_data):
        j = rng.uniform(1e-6, 1e-4, model.n)
        n = rng.uniform(-100.0, 100.0, model.n)
        with_act = model.with_actuators(ActuatorModel(model.n, rotor_inertia=j, gear_ratio=n))
        for _ in range(3):
            q = rng.uniform(-1.0, 1.0, model.n)
            m0, m1 = model.mass_matrix(q), with_act.mass_matrix(q)
            off = ~np.eye(model.n, dtype=bool)
            assert m0[off].tobytes() == m1[off].tobytes(), "coupling terms changed"
            # (m0 + d) - m0 == d up to one rounding of the sum
            diff = np.diag(m1) - np.diag(m0)
            np.testing.assert_allclose(diff, n * n * j, rtol=0.0, atol=np.spacing(np.diag(m1)).max())
            # gravity untouched (friction and inertia never enter it)
            assert with_act.gravity(q).tobytes() == model.gravity(q).tobytes()


def test_single_pendulum_with_geared_rotor_closed_form():
    m, length, izz_about_y = 2.0, 0.3, 0.02  # INERTIA: iyy = 0.02 about the joint axis (y)
    jr, n, b, c = 3e-5, 36.0, 0.05, 0.2
    model = RobotModel.from_urdf(
        robot(link("base"), link("arm", m, f"{length} 0 0"), joint("j", "base", "arm"))
    )
    act = model.with_actuators(ActuatorModel(1, rotor_inertia=jr, gear_ratio=n, viscous=b, coulomb=c))
    inertia = m * length * length + izz_about_y + n * n * jr  # parallel-axis + reflected rotor
    for q, v, a in ((0.3, 1.5, -4.0), (-1.2, -0.7, 2.5), (2.0, 0.0, 1.0), (0.0, -0.0, -3.0)):
        sign = (v > 0) - (v < 0)
        expected = inertia * a + b * v + c * sign - m * G0 * length * math.cos(q)
        np.testing.assert_allclose(act.inverse_dynamics([q], [v], [a]), [expected], rtol=1e-13)
        np.testing.assert_allclose(
            act.inverse_dynamics([q], [v], [a], include_friction=False),
            [inertia * a - m * G0 * length * math.cos(q)],
            rtol=1e-13,
        )
        np.testing.assert_allclose(act.mass_matrix([q]), [[inertia]], rtol=1e-14)
        # forward dynamics inverts it
        tau = act.inverse_dynamics([q], [v], [a])
        np.testing.assert_allclose(act.forward_dynamics([q], [v], tau), [a], rtol=1e-12, atol=1e-12)


def test_coulomb_at_plus_and_minus_zero_is_exactly_zero(palletizer):
    fric = palletizer.with_actuators(
        ActuatorModel(3, rotor_inertia=1e-5, gear_ratio=10.0, viscous=0.3, coulomb=0.5)
    )
    no_coulomb = palletizer.with_actuators(ActuatorModel(3, rotor_inertia=1e-5, gear_ratio=10.0, viscous=0.3))
    q, a = np.array([0.2, 0.4, -0.3]), np.array([1.0, -2.0, 0.5])
    for zero in (0.0, -0.0):
        v = np.full(3, zero)
        ref = no_coulomb.inverse_dynamics(q, v, a)
        got = fric.inverse_dynamics(q, v, a)
        assert np.array_equal(got, ref), got - ref
        terms = fric.actuator_terms.friction(v)
        assert terms.tobytes() == np.zeros(3).tobytes()  # +0.0 exactly, not -0.0
    # and a tiny velocity of either sign gives the full level
    eps = np.array([1e-300, -1e-300, 1e-300])
    np.testing.assert_allclose(fric.actuator_terms.friction(eps), [0.5, -0.5, 0.5], rtol=1e-15)


# ---------------------------------------------------------------- mimic folding
def test_mimic_folding_hand_computed():
    model = RobotModel.from_urdf(MIMIC_URDF)
    assert model.joint_names == ("j1", "j4")
    np.testing.assert_array_equal(model.coupling, G_HAND)
    act = ActuatorModel(("j1", "j2", "j3", "j4"), **MIMIC_ACT)
    terms = model.with_actuators(act).actuator_terms
    # by hand: j1 gets its own + (-1)² j2 + 2² j3 for inertia/viscous, |k| for Coulomb
    refl = [10**2 * 2e-5 + 1 * 6**2 * 3e-5 + 4 * 4**2 * 5e-5, 50**2 * 7e-5]
    np.testing.assert_allclose(terms.reflected_inertia, refl, rtol=1e-15)
    np.testing.assert_allclose(terms.viscous, [0.01 + 0.02 + 4 * 0.03, 0.04], rtol=1e-15)
    np.testing.assert_allclose(terms.coulomb, [0.1 + 0.2 + 2 * 0.3, 0.4], rtol=1e-15)
    # URDF <dynamics>: the mimic joints' damping/friction (dropped by Pinocchio) folded in
    urdf_terms = model.with_actuators(ActuatorModel.from_urdf_dynamics(model)).actuator_terms
    np.testing.assert_allclose(urdf_terms.viscous, [0.1 + 0.2 + 4 * 0.05, 0.4], rtol=1e-15)
    np.testing.assert_allclose(urdf_terms.coulomb, [0.3 + 0.5 + 2 * 0.7, 0.11], rtol=1e-15)
    assert not np.any(urdf_terms.reflected_inertia)


def test_mimic_inverse_dynamics_matches_full_model_projection():
    """τ = Gᵀ[RNEA_full + diag(n²J)·a_full + b·v_full + c·sign(v_full)] on the unreduced model."""
    model = RobotModel.from_urdf(MIMIC_URDF).with_actuators(
        ActuatorModel(("j1", "j2", "j3", "j4"), **MIMIC_ACT)
    )
    full = pin.buildModelFromXML(MIMIC_URDF)
    data = full.createData()
    jr, n = np.array(MIMIC_ACT["rotor_inertia"]), np.array(MIMIC_ACT["gear_ratio"])
    b, c = np.array(MIMIC_ACT["viscous"]), np.array(MIMIC_ACT["coulomb"])
    rng = np.random.default_rng(11)
    for _ in range(5):
        q, v, a = (rng.uniform(-1.5, 1.5, 2) for _ in range(3))
        qf, vf, af = G_HAND @ q, G_HAND @ v, G_HAND @ a
        full_tau = pin.rnea(full, data, qf, vf, af) + n * n * jr * af + b * vf + c * np.sign(vf)
        np.testing.assert_allclose(
            model.inverse_dynamics(q, v, a), G_HAND.T @ full_tau, rtol=1e-12, atol=1e-12
        )
        m_full = pin.crba(full, data, qf)
        m_full = np.triu(m_full) + np.triu(m_full, 1).T + np.diag(n * n * jr)
        np.testing.assert_allclose(model.mass_matrix(q), G_HAND.T @ m_full @ G_HAND, rtol=1e-13, atol=1e-15)


# ---------------------------------------------------------------- CRBA vs RNEA columns
def test_mass_matrix_crba_equals_rnea_columns(palletizer, shared_data):
    rng = np.random.default_rng(5)
    models = [palletizer, RobotModel.from_urdf(MIMIC_URDF)] + shared_models(shared_data)
    measured = []
    for model in models:
        act = ActuatorModel(
            model.full_joint_names,
            rotor_inertia=rng.uniform(1e-6, 1e-4, len(model.full_joint_names)),
            gear_ratio=rng.uniform(5.0, 50.0, len(model.full_joint_names)),
            viscous=0.1,
            coulomb=0.2,
        )  # friction must not leak into M
        for variant in (model, model.with_actuators(act)):
            no_gravity = variant.with_gravity((0.0, 0.0, 0.0))
            q = rng.uniform(-1.0, 1.0, model.n)
            zero = np.zeros(model.n)
            columns = np.column_stack([no_gravity.inverse_dynamics(q, zero, e) for e in np.eye(model.n)])
            crba = variant.mass_matrix(q)
            ulp = np.spacing(np.abs(crba).max())
            worst = np.abs(columns - crba).max()
            # RNEA and CRBA sum the same body terms in different orders, one rounding per body
            # each way: bound 2·nv_full ULP (measured 1-13 ULP, median 1-5, on these models)
            bound = 2 * len(model.full_joint_names)
            assert worst <= bound * ulp, (
                f"{model.name}: max |M_rnea - M_crba| = {worst:.3g} = {worst / ulp:.2f} ULP of "
                f"max |M| = {np.abs(crba).max():.3g} (bound {bound} ULP)"
            )
            measured.append(f"{model.name}: {worst / ulp:.1f} ULP")
    print("CRBA vs RNEA columns:", "; ".join(measured))


# ---------------------------------------------------------------- YAML block
def test_arm_yaml_block(palletizer, tmp_path):
    path = tmp_path / "arm.yaml"
    path.write_text(
        "joints: [base_yaw, shoulder_pitch, beam_pitch]\n"
        "actuators:\n"
        "  rotor_inertia: [1.0e-5, 4.0e-5, 2.0e-5]\n"
        "  gear_ratio: [9, 36, -10]\n"
        "  viscous: 0.02\n"
    )
    act = actuator_model_from_arm_yaml(path, palletizer)
    assert act.joint_names == ("base_yaw", "shoulder_pitch", "beam_pitch")
    assert act.reflected_inertia.tolist() == [81 * 1.0e-5, 1296 * 4.0e-5, 100 * 2.0e-5]
    assert act.viscous.tolist() == [0.02] * 3 and act.coulomb.tolist() == [0.0] * 3
    # the repository's palletizer YAML (no actuators block yet) gives an all-zero model
    assert actuator_model_from_arm_yaml(palletizer_yaml(), palletizer).is_zero
    # the file is the per-arm YAML reader's (friction layer): the model takes the mapping only
    with pytest.raises(ConfigError, match="takes the parsed per-arm YAML.*actuator_model_from_arm_yaml"):
        ActuatorModel.from_arm_yaml(path, palletizer)
    # joints inside the block, a mimic joint among them
    data = {
        "actuators": {
            "joints": ["shoulder_pitch", "crank_parallel"],
            "rotor_inertia": 1e-5,
            "gear_ratio": 10.0,
        }
    }
    terms = palletizer.with_actuators(ActuatorModel.from_arm_yaml(data, palletizer)).actuator_terms
    np.testing.assert_allclose(terms.reflected_inertia, [0.0, 2 * 100 * 1e-5, 0.0], rtol=1e-15)


def palletizer_yaml():
    import pathlib

    return pathlib.Path(__file__).resolve().parents[1] / "config" / "palletizer_arm.yaml"


def test_arm_yaml_urdf_dynamics_merge():
    model = RobotModel.from_urdf(MIMIC_URDF)
    data = {"actuators": {"joints": ["j2"], "coulomb": 0.0, "urdf_dynamics": True}}
    act = ActuatorModel.from_arm_yaml(data, model)
    assert act.joint_names == model.full_joint_names
    assert act.viscous.tolist() == [0.1, 0.2, 0.05, 0.4]  # all from URDF
    assert act.coulomb.tolist() == [0.3, 0.0, 0.7, 0.11]  # j2 overridden by the YAML


@pytest.mark.parametrize(
    "data, key",
    [
        ({"actuators": [1, 2]}, "actuators"),
        ({"actuators": {"armature": 0.1}}, "actuators.armature"),
        ({"actuators": {"urdf_dynamics": "yes"}}, "actuators.urdf_dynamics"),
        ({"actuators": {"gear_ratio": [1, 0, 1, 1]}}, "actuators.gear_ratio"),
        ({"actuators": {"joints": ["j1", "nope"]}}, "actuators.joints"),
        ({"actuators": {"joints": 4}}, "actuators.joints"),  # a count: was a TypeError
        ({"actuators": {"joints": ["j1", "j1"]}}, "actuators.joints"),
        ({"actuators": {"rotor_inertia": -1.0}}, "actuators.rotor_inertia"),
    ],
)
def test_arm_yaml_errors(data, key):
    model = RobotModel.from_urdf(MIMIC_URDF)
    with pytest.raises(ConfigError) as err:
        ActuatorModel.from_arm_yaml(data, model)
    assert err.value.key == key
    if key == "actuators.armature":
        assert all(k in str(err.value) for k in ACTUATOR_BLOCK_KEYS)


def test_arm_yaml_needs_a_joint_list():
    with pytest.raises(ConfigError, match="no joint list"):
        ActuatorModel.from_arm_yaml({"actuators": {"viscous": 0.1}})
    with pytest.raises(ConfigError, match="needs the robot model"):
        ActuatorModel.from_arm_yaml({"joints": ["a"], "actuators": {"urdf_dynamics": True}})
    with pytest.raises(DimensionError) as err:
        ActuatorModel.from_arm_yaml({"joints": ["a", "b"], "actuators": {"viscous": [0.1]}})
    assert err.value.key == "actuators.viscous"


def test_negative_urdf_damping_names_joint():
    bad = RobotModel.from_urdf(
        robot(link("base"), link("arm", 1.0, "0.1 0 0"), joint("j", "base", "arm", extra=dynamics(-0.1, 0.0)))
    )
    with pytest.raises(ConfigError, match="'j'") as err:
        ActuatorModel.from_urdf_dynamics(bad)
    assert err.value.key == "j.damping"


# ---------------------------------------------------------------- plausibility limits
@pytest.mark.parametrize(
    "key, value, fragment",
    [
        ("gear_ratio", [9.0, 1e200, 6.0], "outside the plausible range"),
        ("gear_ratio", -2e4, "1e-3..1e4"),
        ("gear_ratio", [9.0, 1e-200, 6.0], "0.001 <= |value| <= 10000"),
        ("rotor_inertia", [1e-5, 1e3, 0.0], "[0, 100] kg·m²"),
        ("viscous", 1e300, "[0, 1e+06] N·m·s/rad"),
        ("coulomb", [0.1, 0.1, 2e6], "[0, 1e+06] N·m"),
    ],
)
def test_implausible_values_raise_config_error_naming_key(key, value, fragment):
    # gear_ratio 1e200 with J = 1 gave reflected inertia inf → NaN dynamics and simulation
    with pytest.raises(ConfigError) as err:
        ActuatorModel(3, **{key: value})
    assert err.value.key == key and key in str(err.value) and fragment in str(err.value)


def test_limits_accept_extremes_and_reflect_exactly():
    act = ActuatorModel(
        3, rotor_inertia=[100.0, 1e-7, 0.0], gear_ratio=[1e4, -1e-3, 1e4], viscous=1e6, coulomb=1e6
    )
    # n²·J by hand: 1e8·100, 1e-6·1e-7, 0
    np.testing.assert_allclose(act.reflected_inertia, [1e10, 1e-13, 0.0], rtol=1e-15)


def test_arm_yaml_huge_gear_ratio_names_block_key():
    with pytest.raises(ConfigError, match="actuators.gear_ratio: .*plausible") as err:
        ActuatorModel.from_arm_yaml(
            {"actuators": {"joints": ["base_yaw"], "rotor_inertia": [1.0], "gear_ratio": [1e200]}}
        )
    assert err.value.key == "actuators.gear_ratio"


def test_fold_refuses_non_finite_terms_from_a_huge_mimic_multiplier():
    act = ActuatorModel(["a", "b"], rotor_inertia=1.0, gear_ratio=10.0, viscous=0.1)
    coupling = np.array([[1.0], [1e160]])  # b = 1e160·a: k²·n²J overflows
    with pytest.raises(ConfigError, match="not finite") as err:
        act.fold(["a", "b"], ["a"], coupling)
    assert err.value.key == "actuators.rotor_inertia"
    # a sane multiplier folds by hand: (1 + 4)·100·1, (1 + 4)·0.1
    terms = act.fold(["a", "b"], ["a"], np.array([[1.0], [2.0]]))
    assert terms.reflected_inertia.tolist() == [500.0]
    assert terms.viscous[0] == pytest.approx(0.5, rel=1e-15)
