"""FrictionModel: Coulomb tanh, asymmetric, viscous, Stribeck, offset, BAM joints, validation.

Expected values are hand computations from the equations in the module docstring (written
out here), finite differences, and BAM's implicit equation checked with an independent budget.
"""

from __future__ import annotations

import math
import pathlib
import warnings

import numpy as np
import pytest
import yaml

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError, Reason
from gravity_friction_comp.friction.bam import BamParameters
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.friction.params import FRICTION_KEYWORDS
from gravity_friction_comp.validation import MAX_PLAUSIBLE_VELOCITY

MX64 = pathlib.Path(__file__).resolve().parent / "data" / "bam" / "mx64"


# -- Coulomb ---------------------------------------------------------------------------------
def test_zero_breakaway_gives_zero_for_any_velocity():
    m = FrictionModel(4, breakaway=0.0, eps=0.01)
    assert m.is_zero
    rng = np.random.default_rng(0)
    for _ in range(5):
        out = m.torque(rng.uniform(-10, 10, 4))
        assert np.array_equal(out, np.zeros(4)) and not np.any(np.signbit(out))


def test_sign_flips_across_zero_and_saturates():
    m = FrictionModel(2, breakaway=[1.5, 0.2], eps=0.01)
    assert np.all(m.torque([1e-4, 1e-4]) > 0) and np.all(m.torque([-1e-4, -1e-4]) < 0)
    # |v| = 1 rad/s ≫ eps: tanh(100) == 1.0 in double precision
    np.testing.assert_array_equal(m.torque([1.0, 1.0]), [1.5, 0.2])
    np.testing.assert_array_equal(m.torque([-1.0, -1.0]), [-1.5, -0.2])
    # hand value inside the tanh region: 1.5·tanh(0.005/0.01)
    assert m.torque([0.005, 0.0])[0] == pytest.approx(1.5 * math.tanh(0.5), rel=1e-15)


def test_derivative_continuous_through_zero():
    f_c, eps, h = 0.8, 0.02, 1e-9
    m = FrictionModel(1, breakaway=f_c, eps=eps)
    f = lambda v: m.torque([v])[0]  # noqa: E731
    right = (f(h) - f(0.0)) / h
    left = (f(0.0) - f(-h)) / h
    assert right == pytest.approx(f_c / eps, rel=1e-6)
    assert left == pytest.approx(f_c / eps, rel=1e-6)


def test_signed_zero_velocity_gives_positive_zero():
    models = [
        FrictionModel(3, breakaway=[1.0, 2.0, 0.5]),
        FrictionModel(3, breakaway_positive=1.0, breakaway_negative=0.3),
        FrictionModel(3, breakaway=0.4, viscous=0.1, stribeck_breakaway=0.3),
    ]
    for m in models:
        for v in ([0.0, -0.0, -0.0], [-0.0, 0.0, -0.0]):
            out = m.torque(np.array(v))
            assert np.all(out == 0.0)
            assert not np.any(np.signbit(out)), out


def test_asymmetric_breakaway_per_direction():
    m = FrictionModel(2, breakaway_positive=[1.2, 0.0], breakaway_negative=[0.4, 0.9], eps=0.01)
    np.testing.assert_array_equal(m.torque([1.0, 1.0]), [1.2, 0.0])
    np.testing.assert_array_equal(m.torque([-1.0, -1.0]), [-0.4, -0.9])
    # continuous at 0, one-sided slopes F+/eps and F-/eps
    h = 1e-9
    assert m.torque([h, h])[0] / h == pytest.approx(1.2 / 0.01, rel=1e-6)
    assert m.torque([-h, -h])[0] / -h == pytest.approx(0.4 / 0.01, rel=1e-6)


def test_breakaway_direction_override():
    m = FrictionModel(2, breakaway=1.0, breakaway_negative=0.25)
    np.testing.assert_array_equal(m.torque([-1.0, 1.0]), [-0.25, 1.0])


def test_per_joint_eps():
    m = FrictionModel(2, breakaway=1.0, eps=[0.01, 0.1])
    v = 0.02
    np.testing.assert_allclose(m.torque([v, v]), [math.tanh(2.0), math.tanh(0.2)], rtol=1e-15)


# -- viscous, Stribeck, offset ---------------------------------------------------------------
def test_viscous_stribeck_offset_hand_computed():
    m = FrictionModel(
        2,
        breakaway=[0.5, 0.2],
        eps=[0.01, 0.02],
        viscous=[0.1, 0.3],
        stribeck_breakaway=[0.4, 0.1],
        stribeck_velocity=[0.1, 0.05],
        stribeck_exponent=[2.0, 1.0],
        offset=[0.05, -0.02],
    )
    v = np.array([0.05, -0.03])
    j0 = (0.5 + 0.4 * math.exp(-((0.05 / 0.1) ** 2))) * math.tanh(0.05 / 0.01) + 0.1 * 0.05 + 0.05
    j1 = (0.2 + 0.1 * math.exp(-(0.03 / 0.05))) * math.tanh(-0.03 / 0.02) + 0.3 * -0.03 - 0.02
    np.testing.assert_allclose(m.torque(v), [j0, j1], rtol=1e-14)
    # offset applies at rest too (OpenArm's Fo)
    np.testing.assert_array_equal(m.torque([0.0, -0.0]), [0.05, -0.02])


def test_stribeck_peak_above_coulomb_near_zero_speed():
    m = FrictionModel(1, breakaway=0.5, stribeck_breakaway=0.3, stribeck_velocity=0.2, eps=1e-4)
    # just above eps: level ≈ F_c + F_s; far above v_s: level → F_c
    assert m.torque([0.002])[0] == pytest.approx(0.8, abs=1e-3)
    assert m.torque([5.0])[0] == pytest.approx(0.5, abs=1e-12)


# -- switching off ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(enabled=False, breakaway=1.0, viscous=0.2, offset=0.1),
        dict(breakaway=[]),
        dict(),
        dict(breakaway=[0.0, 0.0, 0.0], viscous=0.0, offset=[0.0, 0.0, 0.0]),
    ],
)
def test_is_zero_gives_exact_zeros(kwargs):
    m = FrictionModel(3, **kwargs)
    assert m.is_zero
    out = m.torque([1.0, -2.0, 0.0])
    assert np.array_equal(out, np.zeros(3)) and not np.any(np.signbit(out))


def test_offset_alone_is_not_zero():
    assert not FrictionModel(2, offset=[0.0, -0.1]).is_zero


# -- validation ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, key",
    [
        (dict(breakaway=-0.1), "breakaway"),
        (dict(breakaway_negative=[0.1, -0.2, 0.0]), "breakaway_negative"),
        (dict(viscous=[0.1, float("nan"), 0.0]), "viscous"),
        (dict(breakaway=float("inf")), "breakaway"),
        (dict(eps=0.0), "eps"),
        (dict(eps=[0.01, -0.01, 0.01]), "eps"),
        (dict(stribeck_velocity=0.0), "stribeck_velocity"),
        (dict(stribeck_exponent=-1.0), "stribeck_exponent"),
        (dict(offset=float("nan")), "offset"),
        (dict(breakaway="1.0"), "breakaway"),
        (dict(breakaway=[[1.0, 2.0, 3.0]]), "breakaway"),
        (dict(enabled="yes"), "enabled"),
    ],
)
def test_invalid_values_rejected_with_key(kwargs, key):
    with pytest.raises(ConfigError) as info:
        FrictionModel(3, **kwargs)
    assert info.value.key == key
    assert key in str(info.value)


def test_unknown_model_lists_choices():
    with pytest.raises(ConfigError, match="coulomb, bam") as info:
        FrictionModel(3, model="lugre")
    assert info.value.key == "model" and info.value.value == "lugre"


def test_wrong_length_names_expected_and_actual():
    with pytest.raises(DimensionError, match="expected 6 .* got 5") as info:
        FrictionModel(6, breakaway=[1.0] * 5)
    assert (info.value.key, info.value.expected, info.value.actual) == ("breakaway", 6, 5)
    with pytest.raises(DimensionError):
        FrictionModel(["a", "b"], eps=[0.1, 0.1, 0.1])


def test_negative_offset_allowed():
    m = FrictionModel(1, offset=-0.3)
    assert m.torque([0.0])[0] == -0.3


def test_joint_names_validated():
    assert FrictionModel(["j1", "j2"]).joint_names == ("j1", "j2")
    for bad in (["j1", "j1"], [], ["j1", ""], 0, True, "j1"):
        with pytest.raises(ConfigError):
            FrictionModel(bad)


def test_torque_input_errors():
    m = FrictionModel(3, breakaway=1.0)
    with pytest.raises(InputError) as info:
        m.torque([1.0, 2.0])
    assert info.value.reason is Reason.SHAPE
    with pytest.raises(InputError) as info:
        m.torque([1.0, float("nan"), 0.0])
    assert info.value.reason is Reason.NOT_FINITE


def test_caller_arrays_not_mutated():
    breakaway = np.array([1.0, 2.0])
    v = np.array([0.5, -0.5])
    m = FrictionModel(2, breakaway=breakaway, offset=[0.1, 0.1])
    out = m.torque(v)
    out[:] = 99.0
    np.testing.assert_array_equal(v, [0.5, -0.5])
    np.testing.assert_array_equal(breakaway, [1.0, 2.0])
    assert not m.params.breakaway_positive.flags.writeable


# -- runtime updates -------------------------------------------------------------------------
def test_with_updates_returns_new_validated_model():
    m = FrictionModel(["a", "b"], breakaway_positive=1.0, breakaway_negative=0.5)
    m2 = m.with_updates(breakaway=0.2, eps=0.05)
    np.testing.assert_array_equal(m2.torque([1.0, -1.0]), [0.2, -0.2])
    np.testing.assert_array_equal(m.torque([1.0, -1.0]), [1.0, -0.5])  # unchanged
    assert m2.joint_names == ("a", "b")
    assert m.with_updates(viscous=None) is m
    assert m.with_updates(enabled=False).is_zero
    with pytest.raises(ConfigError) as info:
        m.with_updates(eps=-1.0)
    assert info.value.key == "eps"
    with pytest.raises(ConfigError, match="valid keywords") as info:
        m.with_updates(breakway=1.0)
    assert info.value.key == "breakway"


def test_keywords_constant_lists_constructor_arguments():
    import inspect

    params = inspect.signature(FrictionModel.__init__).parameters
    assert set(FRICTION_KEYWORDS) == set(params) - {"self", "n_joints_or_joint_names"}


def test_coefficient_keywords_are_the_parameter_arrays_and_what_identification_writes():
    # issue 27.4: the keyword list was written five times; each use now reads the one list
    import dataclasses

    from gravity_friction_comp.friction.params import COEFFICIENT_KEYWORDS, SYMMETRIC_KEYWORDS, FrictionParams

    arrays = tuple(f.name for f in dataclasses.fields(FrictionParams) if f.type == "np.ndarray")
    assert COEFFICIENT_KEYWORDS == arrays
    p = FrictionModel(2, breakaway_positive=[0.5, 0.2], breakaway_negative=[0.4, 0.2]).params
    assert tuple(p.as_dict()) == ("enabled", "model", *arrays, "bam")
    assert set(SYMMETRIC_KEYWORDS) == set(arrays) - {"breakaway_positive", "breakaway_negative"} | {
        "breakaway"
    }
    assert set(SYMMETRIC_KEYWORDS) <= set(FRICTION_KEYWORDS)


# -- from_yaml -------------------------------------------------------------------------------
def _write(tmp_path, data, name="arm.yml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def test_from_yaml_round_trip_with_block(tmp_path):
    block = {
        "enable": True,
        "breakaway": [1.2, 1.8, 0.0],
        "eps": 0.005,
        "viscous": [0.1, 0.0, 0.0],
        "offset": 0.01,
    }
    path = _write(tmp_path, {"kp": [1, 2, 3], "friction_comp": block})
    m = FrictionModel.from_yaml(path, 3)
    v = np.array([0.002, -1.0, 0.5])
    want = [1.2 * math.tanh(0.4) + 0.1 * 0.002 + 0.01, -1.8 + 0.01, 0.01]
    np.testing.assert_allclose(m.torque(v), want, rtol=1e-15)


def test_from_yaml_without_block_is_zero(tmp_path):
    path = _write(tmp_path, {"kp": [1.0, 2.0]})
    m = FrictionModel.from_yaml(path, ["a", "b"])
    assert m.is_zero and np.array_equal(m.torque([1.0, -1.0]), [0.0, 0.0])


@pytest.mark.parametrize(
    "block",
    [
        {"enabled": False, "breakaway": [1.0, 1.0]},
        {"enable": True, "breakaway": [0.0, 0.0]},
        {"enable": True, "breakaway": []},
        None,
    ],
)
def test_from_yaml_disabled_or_zero_block(tmp_path, block):
    path = _write(tmp_path, {"friction_comp": block})
    m = FrictionModel.from_yaml(path, 2)
    assert m.is_zero
    out = m.torque([0.3, -0.3])
    assert np.array_equal(out, [0.0, 0.0]) and not np.any(np.signbit(out))


def test_explicit_keywords_override_yaml(tmp_path):
    path = _write(
        tmp_path,
        {
            "friction_comp": {
                "enable": False,
                "breakaway": [1.0, 2.0],
                "breakaway_negative": [0.1, 0.1],
                "eps": 0.01,
            }
        },
    )
    m = FrictionModel.from_yaml(path, 2, enabled=True, eps=None)
    np.testing.assert_array_equal(m.torque([1.0, -1.0]), [1.0, -0.1])  # YAML values kept
    m = FrictionModel.from_yaml(path, 2, enabled=True, breakaway=0.5)
    np.testing.assert_array_equal(m.torque([1.0, -1.0]), [0.5, -0.5])  # both directions
    m = FrictionModel.from_yaml(path, 2, enabled=True, eps=1.0)
    np.testing.assert_allclose(m.torque([0.5, 0.5]), [math.tanh(0.5), 2 * math.tanh(0.5)])
    with pytest.raises(ConfigError, match="valid keywords"):
        FrictionModel.from_yaml(path, 2, kp=1.0)


def test_from_yaml_length_mismatch(tmp_path):
    path = _write(tmp_path, {"friction_comp": {"breakaway": [1.0, 2.0, 3.0]}})
    with pytest.raises(DimensionError, match="expected 6 .* got 3") as info:
        FrictionModel.from_yaml(path, 6)
    assert info.value.key == "friction_comp.breakaway"


def test_from_yaml_i2rt_yam_ultra():
    path = pathlib.Path(__file__).parent / "data" / "arms" / "i2rt_yam_ultra.yml"
    m = FrictionModel.from_yaml(path, 6)
    assert m.enabled and not m.is_zero
    np.testing.assert_array_equal(m.params.breakaway_positive, [1.2, 1.8, 1.6, 0.1, 0.0, 0.0])
    np.testing.assert_array_equal(m.params.eps, [0.005] * 6)
    np.testing.assert_allclose(
        m.torque([0.0025] * 6), np.array([1.2, 1.8, 1.6, 0.1, 0.0, 0.0]) * math.tanh(0.5), rtol=1e-15
    )


# -- BAM joints ------------------------------------------------------------------------------
def _ref_m3(v, tau_m, tau_e):
    # mx64 m3.json: K_c + K_v·|v| + K_l·|tau_e - tau_m|
    return 0.10216727649779266 + 0.0006300275797440622 * abs(v) + 0.07580074806755707 * abs(tau_e - tau_m)


def test_bam_joints_with_gravity_load(tmp_path):
    m3 = BamParameters.from_json(MX64 / "m3.json")
    m1 = BamParameters.from_json(MX64 / "m1.json")
    m = FrictionModel(
        3, model="bam", bam=[m3, None, m1], breakaway=[0.0, 0.7, 0.0], offset=[0.01, 0.0, 0.0], eps=0.01
    )
    assert m.uses_load
    v = np.array([0.004, -1.0, -0.5])
    load = np.array([2.0, 5.0, -1.0])  # gravity torque the motor applies
    out = m.torque(v, load)
    # joint 0: tau_e = -2, tau_m = 2 + x, x = tanh(0.4)·budget → check the implicit equation
    x = out[0] - 0.01
    tau_m = 2.0 + x
    assert abs(x - math.tanh(0.4) * _ref_m3(0.004, tau_m, -2.0)) <= 1e-9
    assert out[1] == -0.7  # Coulomb joint, saturated
    assert out[2] == pytest.approx(-(0.09038677246291783 + 0.011691602145974832 * 0.5), rel=1e-14)
    # load None → tau_e = 0: same equation with tau_m = x
    x0 = m.torque(v)[0] - 0.01
    assert abs(x0 - math.tanh(0.4) * _ref_m3(0.004, x0, 0.0)) <= 1e-9
    # model='coulomb' ignores the BAM parameters
    assert m.with_updates(model="coulomb").torque(v, load)[0] == 0.01


def test_bam_files_keyword_and_tanh_terms_on_bam_joint_rejected():
    m = FrictionModel(2, model="bam", bam_files=[str(MX64 / "m6.json"), ""])
    assert m.params.bam[1] is None and m.params.bam[0].model == "m6"
    assert m.params.bam_files == (str(MX64 / "m6.json"), None)
    with pytest.raises(ConfigError, match="uses a BAM model") as info:
        FrictionModel(2, model="bam", bam_files=[str(MX64 / "m6.json"), None], breakaway=0.1)
    assert info.value.key == "breakaway_positive"
    with pytest.raises(DimensionError):
        FrictionModel(2, model="bam", bam_files=[str(MX64 / "m6.json")])
    with pytest.raises(ConfigError, match="malformed|cannot read"):
        FrictionModel(1, model="bam", bam_files=["/nonexistent/m1.json"])


def test_all_bam_joints_solve_their_equation():
    m3 = BamParameters.from_json(MX64 / "m3.json")
    m = FrictionModel(["a", "b"], model="bam", bam=[m3, m3], eps=[0.01, 0.05])
    v, load = np.array([0.03, -0.2]), np.array([-4.0, 1.5])
    out = m.torque(v, load)
    for vi, li, eps, x in zip(v, load, (0.01, 0.05), out):
        tau_e, tau_m = -li, li + x
        assert abs(x - math.tanh(vi / eps) * _ref_m3(vi, tau_m, tau_e)) <= 1e-9
    # velocity-only BAM (M1) ignores the load
    m1 = BamParameters.from_json(MX64 / "m1.json")
    m = FrictionModel(2, model="bam", bam=[m1, m1])
    assert not m.uses_load
    np.testing.assert_array_equal(m.torque(v, load), m.torque(v))


def test_empty_overrides_keep_yaml_and_current_values(tmp_path):
    path = _write(tmp_path, {"friction_comp": {"enabled": True, "breakaway": [1.0, 2.0], "eps": 0.01}})
    m = FrictionModel.from_yaml(path, 2, breakaway=[], viscous=[], bam_files=[])
    np.testing.assert_array_equal(m.torque([1.0, -1.0]), [1.0, -2.0])
    np.testing.assert_array_equal(m.with_updates(breakaway=[]).torque([1.0, -1.0]), [1.0, -2.0])


def test_ros_array_values_accepted():
    import array

    m = FrictionModel(2, breakaway=array.array("d", [0.5, 0.25]), viscous=array.array("d"))
    np.testing.assert_array_equal(m.torque([1.0, -1.0]), [0.5, -0.25])
    m2 = m.with_updates(breakaway_negative=array.array("d", [0.1, 0.1]))
    np.testing.assert_array_equal(m2.torque([1.0, -1.0]), [0.5, -0.1])


def test_bam_model_without_any_bam_file_is_rejected():
    # it would silently give no BAM friction at all
    with pytest.raises(ConfigError, match="bam_files") as info:
        FrictionModel(2, model="bam", breakaway=0.1)
    assert info.value.key == "bam_files"


@pytest.mark.parametrize(
    "kwargs, key",
    [
        (dict(breakaway=1e308, stribeck_breakaway=1e308), "breakaway"),  # their sum was inf → NaN
        (dict(viscous=1e308), "viscous"),
        (dict(stribeck_breakaway=2e6), "stribeck_breakaway"),
        (dict(offset=-2e6), "offset"),
        (dict(breakaway_negative=[1.0, 1e7]), "breakaway_negative"),
    ],
)
def test_implausible_coefficients_are_refused(kwargs, key):
    from gravity_friction_comp.friction.params import MAX_COEFFICIENT

    with pytest.raises(ConfigError, match="within") as info:
        FrictionModel(2, **kwargs)
    assert info.value.key == key
    # the limit itself is accepted and gives finite torque at any plausible velocity
    # (beyond MAX_PLAUSIBLE_VELOCITY the velocity is refused, below)
    top = FrictionModel(
        2,
        breakaway=MAX_COEFFICIENT,
        stribeck_breakaway=MAX_COEFFICIENT,
        viscous=MAX_COEFFICIENT,
        offset=-MAX_COEFFICIENT,
    )
    for v in (0.0, 1e-3, -5.0, MAX_PLAUSIBLE_VELOCITY):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow either
            tau = top.torque([v, -v])
        assert np.all(np.isfinite(tau)), (v, tau)
    with pytest.raises(InputError) as refused:
        top.torque([0.0, 1e300])
    assert refused.value.reason is Reason.RANGE
    np.testing.assert_allclose(top.torque([0.0, 0.0]), [-MAX_COEFFICIENT] * 2)


@pytest.mark.parametrize("model_kw", [{}, {"model": "bam", "bam_files": [str(MX64 / "m6.json")] * 2}])
def test_implausible_velocity_is_refused_without_overflow(model_kw):
    kw = model_kw or {"breakaway": 0.1, "viscous": 0.04}
    m = FrictionModel(2, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning (overflow) may escape
        for v in (1e300, -MAX_PLAUSIBLE_VELOCITY * 1.001):
            with pytest.raises(InputError, match="plausible") as err:
                m.torque([0.0, v])
            assert err.value.reason is Reason.RANGE
        tau = m.torque([0.0, MAX_PLAUSIBLE_VELOCITY])  # the bound itself is plausible
    assert np.all(np.isfinite(tau)) and abs(tau[1]) < 1e3


def test_a_misspelt_keyword_is_a_config_error_listing_the_valid_ones():
    with pytest.raises(
        ConfigError, match="unknown friction keywords \\['breakway'\\]; valid keywords: .*breakaway"
    ) as err:
        FrictionModel(3, breakway=1)
    assert err.value.key == "breakway" and err.value.value == 1
