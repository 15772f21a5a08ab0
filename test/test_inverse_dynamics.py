"""Tests of gravity_friction_comp.stage.inverse_dynamics (inverse-dynamics feedforward, ROS-free).

Independent routes: the closed-form steady-state response of the discrete filter
(backward difference + backward-Euler RC) to a sampled sine, the continuous first-order
low-pass response of the analytic derivative, and the torque rebuilt from plain Pinocchio on
the unreduced model with a hand-written coupling matrix plus n²J·q̈ by hand.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import pinocchio as pin
import pytest

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.model.actuator import ActuatorModel
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.stage.inverse_dynamics import InverseDynamicsFeedforward

DT = 1e-3  # [s] 1 kHz setpoints
CUTOFF = 20.0  # [Hz]
TAU_RC = 1.0 / (2.0 * math.pi * CUTOFF)
AMP = np.array([0.8, 1.5, 0.4])  # [rad/s]
OMEGA = 2.0 * math.pi * np.array([1.0, 2.0, 5.0])  # [rad/s]
# palletizer: full joints base_yaw, shoulder_pitch, crank_parallel (= -shoulder), beam_pitch,
# beam_parallel (= -beam), written by hand from urdf/palletizer.urdf
G_PALLETIZER = np.array([[1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=float)


@pytest.fixture(scope="module")
def palletizer(request):
    return RobotModel.from_urdf(request.config.rootpath / "urdf" / "palletizer.urdf")


@pytest.fixture
def geared(palletizer):
    # large gear ratios; friction values present to check they are left out
    return palletizer.with_actuators(
        ActuatorModel(
            3,
            rotor_inertia=[1.8e-5, 5.4e-5, 1.8e-5],
            gear_ratio=[10.0, 40.0, -10.0],
            viscous=[0.3, 0.5, 0.2],
            coulomb=[0.4, 0.9, 0.3],
        )
    )


def sine_setpoints(k):
    t = k * DT
    v = AMP * np.sin(OMEGA * t)
    q = AMP / OMEGA * (1.0 - np.cos(OMEGA * t))  # ∫v, so position and velocity agree
    return t, q, v


def discrete_steady_state(t):
    """Steady-state output of backward difference + backward-Euler RC for v = A sin(ωt).

    v_k = Im(A e^{iωt_k}); d_k = (v_k - v_{k-1})/Δt multiplies by (1 - e^{-iωΔt})/Δt;
    â_k = (1-α)â_{k-1} + α d_k has gain α / (1 - (1-α) e^{-iωΔt}).
    """
    alpha = DT / (DT + TAU_RC)
    out = []
    for amp, w in zip(AMP, OMEGA):
        z1 = cmath.exp(-1j * w * DT)
        gain = (1.0 - z1) / DT * alpha / (1.0 - (1.0 - alpha) * z1)
        out.append((amp * cmath.exp(1j * w * t) * gain).imag)
    return np.array(out)


def run(ff, steps, with_velocity=True):
    results = []
    for k in range(steps):
        t, q, v = sine_setpoints(k)
        results.append((t, q, v, ff.update(q, v if with_velocity else None, t)))
    return results


def test_filtered_acceleration_of_a_sine(geared):
    ff = InverseDynamicsFeedforward(geared, cutoff_hz=CUTOFF)
    results = run(ff, 1000)
    assert not np.any(results[0][3].acceleration)  # no history: q̈ = 0
    settle = 300  # transient (1-α)^k with α = 0.112: below 1e-15 after 300 samples
    for t, _, _, res in results[settle:]:
        # exact discrete response: only rounding differs
        np.testing.assert_allclose(
            res.acceleration, discrete_steady_state(t), rtol=0, atol=1e-10 * (AMP * OMEGA).max()
        )
        # continuous first-order low-pass of the analytic derivative Aω cos(ωt):
        # gain 1/√(1+(ωτ)²), lag atan(ωτ); sampling adds a lag of ~ωΔt/2 (backward difference)
        # and O((ωΔt)²) gain error, so allow 1.5·ωΔt of the amplitude per joint
        gain = 1.0 / np.sqrt(1.0 + (OMEGA * TAU_RC) ** 2)
        ideal = AMP * OMEGA * gain * np.cos(OMEGA * t - np.arctan(OMEGA * TAU_RC))
        assert np.all(np.abs(res.acceleration - ideal) <= 1.5 * OMEGA * DT * AMP * OMEGA), t


def test_effort_is_rigid_body_plus_reflected_inertia_without_friction(geared, request):
    full = pin.buildModelFromUrdf(str(request.config.rootpath / "urdf" / "palletizer.urdf"))
    data = full.createData()
    refl = np.array([100 * 1.8e-5, 1600 * 5.4e-5, 100 * 1.8e-5])  # n²J by hand
    ff = InverseDynamicsFeedforward(geared, cutoff_hz=CUTOFF)
    for _t, q, v, res in run(ff, 200)[::20]:
        a = res.acceleration
        expected = (
            G_PALLETIZER.T @ pin.rnea(full, data, G_PALLETIZER @ q, G_PALLETIZER @ v, G_PALLETIZER @ a)
            + refl * a
        )
        np.testing.assert_allclose(res.effort, expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(res.velocity, v)
        # friction is left to the friction stage: the model with friction would differ
        with_friction = geared.inverse_dynamics(q, v, a)
        if np.any(v):
            assert np.abs(with_friction - res.effort).max() > 0.1


def test_at_rest_effort_is_gravity(geared):
    ff = InverseDynamicsFeedforward(geared)
    q = np.array([0.3, 0.4, -0.2])
    for k in range(5):
        res = ff.update(q, np.zeros(3), k * DT)
    np.testing.assert_allclose(res.effort, geared.gravity(q), rtol=1e-13, atol=1e-13)
    assert not np.any(res.acceleration)


def test_setpoint_without_velocity_falls_back_to_differentiated_positions(geared):
    ff = InverseDynamicsFeedforward(geared, cutoff_hz=CUTOFF)
    assert not ff.fell_back
    results = run(ff, 600, with_velocity=False)
    assert ff.fell_back
    for t, _, _v, res in results[300:]:
        # velocity from positions: same filter, so the same closed-form lag as above
        gain = 1.0 / np.sqrt(1.0 + (OMEGA * TAU_RC) ** 2)
        ideal = AMP * gain * np.sin(OMEGA * t - np.arctan(OMEGA * TAU_RC))
        assert np.all(np.abs(res.velocity - ideal) <= 1.5 * OMEGA * DT * AMP), t


def test_time_handling_reset_and_set_model(geared, palletizer):
    ff = InverseDynamicsFeedforward(geared)
    run(ff, 50)
    t, q, v = sine_setpoints(50)
    a1 = ff.update(q, v, t).acceleration
    # repeated or older stamp: previous q̈ repeated, no division by zero
    np.testing.assert_array_equal(ff.update(q, v * 2.0, t).acceleration, a1)
    np.testing.assert_array_equal(ff.update(q, v, t - 1.0).acceleration, a1)
    # swapping the model (payload changed) keeps the filter
    ff.set_model(palletizer)
    t, q, v = sine_setpoints(51)
    res = ff.update(q, v, t)
    assert np.any(res.acceleration)
    np.testing.assert_allclose(
        res.effort, palletizer.inverse_dynamics(q, v, res.acceleration), rtol=1e-13, atol=1e-13
    )
    ff.reset()
    assert not np.any(ff.update(q, v, t + DT).acceleration)
    other = RobotModel.from_urdf(
        '<robot name="o"><link name="b"/><link name="l"><inertial><mass value="1"/>'
        '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="j" type="continuous"><parent link="b"/><child link="l"/></joint></robot>'
    )
    with pytest.raises(ConfigError):
        ff.set_model(other)


@pytest.mark.parametrize("cutoff", [0.0, -5.0, math.nan, math.inf, True, "20"])
def test_bad_cutoff(geared, cutoff):
    with pytest.raises(ConfigError) as err:
        InverseDynamicsFeedforward(geared, cutoff_hz=cutoff)
    assert err.value.key == "acceleration_cutoff_hz"


def test_bad_inputs_leave_the_filter_unchanged(geared):
    ff, ref = InverseDynamicsFeedforward(geared), InverseDynamicsFeedforward(geared)
    run(ff, 20)
    run(ref, 20)
    t, q, v = sine_setpoints(20)
    for bad_q, bad_v, bad_t, reason in (
        ([0.1, 0.2], v, t, Reason.SHAPE),
        (q, [0.0, math.nan, 0.0], t, Reason.NOT_FINITE),
        (q, v, math.inf, Reason.NOT_FINITE),
        (q, ["x", 1, 2], t, Reason.TYPE),
    ):
        with pytest.raises(InputError) as err:
            ff.update(bad_q, bad_v, bad_t)
        assert err.value.reason is reason
    with pytest.raises(ConfigError):
        InverseDynamicsFeedforward("not a model")
    np.testing.assert_array_equal(ff.update(q, v, t).effort, ref.update(q, v, t).effort)


def test_glitched_velocity_is_clamped_to_the_urdf_limit():
    """One setpoint with q̇ = 1e150 must not saturate the feedforward for long: q̇ is clamped
    to <limit velocity>, so the filtered q̈ stays bounded by limit/dt and decays."""
    from conftest import REPO_ROOT

    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.stage.inverse_dynamics import InverseDynamicsFeedforward

    model = RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf"))
    ff = InverseDynamicsFeedforward(model.copy(), 20.0)
    q = np.array([0.0, 0.4, -0.2])
    ff.update(q, np.zeros(3), 0.0)
    glitch = ff.update(q, np.array([0.0, 1e150, 0.0]), 0.001)
    assert ff.velocity_clamped and glitch.velocity[1] == model.velocity_limits[1]
    assert np.isfinite(glitch.effort).all()
    for k in range(2, 400):
        terms = ff.update(q, np.zeros(3), 0.001 * k)
    assert not ff.velocity_clamped
    # after 0.4 s (50 filter time constants at 20 Hz) the output is back to gravity
    np.testing.assert_allclose(terms.effort, model.gravity(q), atol=1e-6)
