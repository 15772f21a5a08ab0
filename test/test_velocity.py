"""VelocityEstimator and deadband against closed forms."""

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.stage.velocity import VelocityEstimator, apply_deadband


def test_ramp_converges_as_first_order_lag():
    # Constant velocity v0: the finite difference is exactly v0 every step, so the filter
    # output follows v_k = v0 (1 - (1 - alpha)^k) in closed form.
    dt, fc, v0 = 0.001, 20.0, np.array([0.5, -1.25])
    alpha = dt / (dt + 1.0 / (2 * math.pi * fc))
    est = VelocityEstimator(2, fc)
    assert np.array_equal(est.update(np.zeros(2), 0.0), np.zeros(2))
    for k in range(1, 200):
        v = est.update(v0 * k * dt, k * dt)
        np.testing.assert_allclose(v, v0 * (1 - (1 - alpha) ** k), rtol=1e-9, atol=1e-12)


def test_repeated_stamp_is_ignored_not_divided_by_zero():
    est = VelocityEstimator(1, 10.0)
    est.update([0.0], 1.0)
    v1 = est.update([0.01], 1.01)
    assert np.array_equal(est.update([5.0], 1.01), v1)  # same stamp: no update
    assert np.array_equal(est.update([5.0], 1.0), v1)  # earlier stamp: no update
    assert np.isfinite(v1).all() and v1[0] > 0


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, True])
def test_cutoff_validation(bad):
    with pytest.raises(ConfigError, match="velocity_cutoff_hz"):
        VelocityEstimator(1, bad)


def test_deadband_zeroes_half_lsb_of_dm4340():
    half_lsb = 2 * 10.0 / 4095 / 2  # DM4340 V_MAX = 10 rad/s, 12-bit field
    v = np.array([half_lsb, -half_lsb, 0.01, -0.01])
    out = apply_deadband(v, 0.003)
    assert out.tolist() == [0.0, 0.0, 0.01, -0.01]
    assert np.array_equal(apply_deadband(v, 0.0), v)


def test_selector_sources_and_fallback():
    from gravity_friction_comp.stage.velocity import VelocitySelector

    sel = VelocitySelector(2, "setpoint", 1000.0, 0.001)
    assert sel.velocity(np.zeros(2), np.array([0.5, 0.0005]), 0.0).tolist() == [0.5, 0.0]
    assert not sel.fell_back
    out = sel.velocity(np.array([0.01, -0.01]), None, 0.01)  # no velocity: differentiated
    assert sel.fell_back
    alpha = 0.01 / (0.01 + 1.0 / (2 * math.pi * 1000.0))
    np.testing.assert_allclose(out, alpha * np.array([1.0, -1.0]), rtol=1e-12)
    meas = VelocitySelector(2, "measured", 10.0, 0.0)
    assert meas.velocity(np.zeros(2), np.ones(2), 0.0).tolist() == [0.0, 0.0]
    meas.update_measured(np.array([0.2, -0.3]))
    assert meas.velocity(np.zeros(2), np.ones(2), 0.1).tolist() == [0.2, -0.3]
    with pytest.raises(ConfigError, match="valid choices"):
        VelocitySelector(2, "magic", 10.0, 0.0)
    with pytest.raises(ConfigError, match="velocity_deadband"):
        VelocitySelector(2, "setpoint", 10.0, -1.0)


def test_a_position_jump_restarts_the_filter_instead_of_ringing():
    """One absurd sample (1e300 rad) must not leave seconds of huge velocity behind."""
    from gravity_friction_comp.stage.velocity import VelocityEstimator

    dt, fc = 1e-3, 20.0
    est = VelocityEstimator(2, fc, detect_jumps=True)
    alpha = dt / (dt + 1.0 / (2 * math.pi * fc))
    ramp = np.array([0.5, -0.2])  # rad/s
    v = None
    for k in range(200):
        v = est.update(ramp * k * dt, k * dt)
    np.testing.assert_allclose(v, ramp, rtol=1e-6)  # converged before the glitch
    assert est.update(np.array([1e300, 0.0]), 200 * dt).tolist() == [0.0, 0.0]
    back = est.update(ramp * 201 * dt, 201 * dt)  # the jump back is a jump too
    assert back.tolist() == [0.0, 0.0] and est.jumps == 2
    # then the first-order lag from 0 again: v_k = (1 - (1-α)^k)·ramp, nothing huge
    for k in range(1, 40):
        v = est.update(ramp * (201 + k) * dt, (201 + k) * dt)
        np.testing.assert_allclose(v, (1 - (1 - alpha) ** k) * ramp, rtol=1e-9)


def test_bunched_samples_and_fast_real_motion_are_not_jumps():
    """A jump must be both large (> MIN_JUMP) and fast (> MAX_PLAUSIBLE_VELOCITY)."""
    from gravity_friction_comp.stage.velocity import MAX_PLAUSIBLE_VELOCITY, MIN_JUMP, VelocityEstimator

    fc, speed = 20.0, 2.0  # rad/s, real motion
    bunched = VelocityEstimator(1, fc, detect_jumps=True)
    plain = VelocityEstimator(1, fc)
    t = 0.0
    for k in range(1000):  # 1 kHz, every second sample handled 15 µs after the previous one
        t = (k - 1) * 1e-3 + 15e-6 if k % 2 else k * 1e-3
        q = np.array([speed * k * 1e-3])  # 2 mrad in 15 µs: a quotient of 133 rad/s
        assert bunched.update(q, t).tolist() == plain.update(q, t).tolist()
    assert bunched.jumps == 0
    # a large but slow step (1 rad over 1 s) and a fast but small one are not jumps either
    est = VelocityEstimator(1, fc, detect_jumps=True)
    est.update(np.array([0.0]), 0.0)
    est.update(np.array([1.0]), 1.0)
    est.update(np.array([1.0 + 0.9 * MIN_JUMP]), 1.0 + 1e-4)
    assert est.jumps == 0
    est.update(np.array([1.0 + 0.9 * MIN_JUMP + 1.1 * MAX_PLAUSIBLE_VELOCITY * 0.01]), 1.01)
    assert est.jumps == 1


def test_acceleration_filter_keeps_large_accelerations():
    """The inverse-dynamics q̈ filter differentiates velocities: no jump threshold there."""
    from gravity_friction_comp.stage.velocity import VelocityEstimator

    dt, fc, w, amp = 1e-3, 20.0, 2 * math.pi * 12.0, 0.025  # peak q̈ = amp·w² ≈ 142 rad/s²
    accel = VelocityEstimator(1, fc)
    peak = 0.0
    for k in range(2000):
        v = amp * w * math.cos(w * k * dt)
        peak = max(peak, abs(accel.update(np.array([v]), k * dt)[0]))
    assert accel.jumps == 0
    # a 20 Hz first-order lag at 12 Hz passes |H| = 1/sqrt(1 + (12/20)²) ≈ 0.857 of the peak
    assert peak == pytest.approx(amp * w**2 / math.sqrt(1 + (12 / 20) ** 2), rel=0.02)


def test_deadband_keeps_any_shape_with_one_number():
    """A (k, n) batch with one deadband: as numpy's elementwise rule (the scalar route once
    raised TypeError on rows)."""
    v = np.array([[0.001, -0.01, 0.0029], [-0.003, 0.5, 0.0031]])
    expected = np.where(np.abs(v) <= 0.003, 0.0, v)
    assert np.array_equal(apply_deadband(v, 0.003), expected)
    assert np.array_equal(apply_deadband(v[0], 0.003), expected[0])
