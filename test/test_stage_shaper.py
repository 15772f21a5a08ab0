"""stage/shaper.py: the jerk-limited setpoint shaper against closed forms and its limits.

Closed forms of the time-optimal rest-to-rest move of distance D under |v| ≤ v, |a| ≤ a,
|j| ≤ j (the seven-phase jerk profile): with cruise (D ≥ v·(v/a + a/j), v ≥ a²/j)
T = D/v + v/a + a/j; jerk-limited only (four phases of τ, D = 2jτ³, jτ ≤ a, jτ² ≤ v)
T = 4·(D/2j)^(1/3).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("ruckig")

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError, Reason  # noqa: E402
from gravity_friction_comp.stage.shaper import (  # noqa: E402
    STALE_INTERVALS,
    SetpointShaper,
    shaper_limits_from_arm_yaml,
)

DT = 1e-3  # [s] the chain's period (1 kHz)


def j_dt2(jerk: float) -> float:
    """[rad/s] the velocity change of one cycle at the jerk limit: j·dt²."""
    return jerk * DT**2


def _arrival(shaper: SetpointShaper, target, limit_s: float = 5.0) -> tuple[float, np.ndarray]:
    """Time of the first output at the target at rest, and the outputs (k, 3, n) on the way."""
    outputs = []
    for k in range(1, int(limit_s / DT)):
        out = shaper.step(target, k * DT)
        outputs.append(np.array(out))
        if np.allclose(out.position, target, atol=1e-12) and np.allclose(out.velocity, 0.0, atol=1e-12):
            return k * DT, np.array(outputs)
    raise AssertionError("never arrived")


def test_rest_to_rest_with_cruise_takes_the_closed_form_time():
    v, a, j, d = 1.0, 2.0, 10.0, 1.0  # D ≥ v(v/a + a/j) = 0.7, v ≥ a²/j = 0.4
    shaper = SetpointShaper(v, a, j, DT, n=1)
    shaper.reset([0.0])
    t, out = _arrival(shaper, [d])
    assert t == pytest.approx(d / v + v / a + a / j, abs=DT)  # 1.7 s
    assert np.max(out[:, 1]) == pytest.approx(v, rel=1e-9)  # cruises at the limit
    assert np.max(out[:, 2]) == pytest.approx(a, rel=1e-9)


def test_jerk_limited_short_move_takes_the_closed_form_time():
    v, a, j, d = 1.0, 2.0, 10.0, 0.002
    tau = (d / (2 * j)) ** (1 / 3)
    assert j * tau <= a and j * tau**2 <= v  # neither a nor v is reached
    shaper = SetpointShaper(v, a, j, DT, n=1)
    shaper.reset([0.0])
    t, out = _arrival(shaper, [d])
    assert t == pytest.approx(4 * tau, abs=DT)
    assert np.max(out[:, 2]) == pytest.approx(j * tau, rel=0.05)  # peak a = jτ (sampled)


def _jittered_stream(seed: int, rate: float = 60.0, jitter: float = 0.005, duration: float = 3.0):
    """Sample times of a ``rate`` stream with uniform ±``jitter`` [s], and positions (k, 2)
    of a fast, jerky motion (a sine plus steps) at those times."""
    rng = np.random.default_rng(seed)
    times = np.arange(0.0, duration, 1.0 / rate) + rng.uniform(
        -jitter, jitter, int(math.ceil(duration * rate))
    )
    times = np.sort(np.clip(times, 0.0, None))
    q = np.stack(
        [0.8 * np.sin(2 * math.pi * 1.5 * times), 0.3 * np.sign(np.sin(2 * math.pi * 0.7 * times))], 1
    )
    return times, q


def test_jittery_60_hz_stream_shaped_to_1_khz_never_violates_a_limit():
    v, a, j = np.array([2.0, 1.5]), np.array([15.0, 10.0]), np.array([300.0, 200.0])
    shaper = SetpointShaper(v, a, j, DT, joint_names=["a", "b"])
    shaper.reset([0.0, 0.0])
    times, q = _jittered_stream(seed=7)
    out, k_sample = [], -1
    for k in range(1, 3500):
        now = k * DT
        while k_sample + 1 < len(times) and times[k_sample + 1] <= now:
            k_sample += 1
        target = q[max(k_sample, 0)]
        stamp = times[max(k_sample, 0)]
        out.append(np.array(shaper.step(target, now, sample_time=stamp)))
    out = np.array(out)  # (k, 3, 2)
    tol = 1e-9
    assert np.all(np.abs(out[:, 1]) <= v * (1 + tol))
    assert np.all(np.abs(out[:, 2]) <= a * (1 + tol))
    jerk = np.diff(out[:, 2], axis=0) / DT  # a is piecewise linear in t: |Δa| ≤ j·dt
    assert np.all(np.abs(jerk) <= j * (1 + 1e-6))
    # the motion saturates the limits (the check is not vacuous)
    assert np.max(np.abs(out[:, 1, 0])) > 0.9 * v[0] and np.max(np.abs(out[:, 2, 1])) > 0.9 * a[1]
    # the velocity is the derivative of the position: trapezoid rule, error O(j·dt³)
    dq = np.diff(out[:, 0], axis=0)
    np.testing.assert_allclose(dq, 0.5 * (out[1:, 1] + out[:-1, 1]) * DT, atol=j.max() * DT**3)
    # after the stream ends the state comes to rest on the last sample
    np.testing.assert_allclose(out[-1, 0], q[-1], atol=1e-9)
    np.testing.assert_allclose(out[-1, 1], 0.0, atol=1e-9)


def test_ramp_stream_is_followed_at_its_speed_and_a_stopped_stream_comes_to_rest():
    speed, rate = 0.5, 100.0  # [rad/s], [Hz]
    shaper = SetpointShaper(2.0, 20.0, 400.0, DT, n=1)
    shaper.reset([0.0])
    last = None
    for k in range(1, 1001):  # 1 s of ramp
        now = k * DT
        stamp = math.floor(now * rate) / rate
        last = shaper.step([speed * stamp], now, sample_time=stamp)
    # on the ramp, at its speed (the difference quotient), not behind it: within the jerk
    # limit's chatter about the line (j·dt² ≈ 4e-4 rad/s)
    assert last.velocity[0] == pytest.approx(speed, abs=j_dt2(400.0))
    assert last.position[0] == pytest.approx(speed * 1.0, abs=1e-6)
    # the stream stops at 1.0 s: within STALE_INTERVALS samples the target velocity is 0
    for k in range(1001, 2500):
        last = shaper.step([speed * 1.0], k * DT, sample_time=1.0)
    assert STALE_INTERVALS * (1 / rate) < 1.5
    assert last.position[0] == pytest.approx(speed * 1.0, abs=1e-9)
    assert last.velocity[0] == pytest.approx(0.0, abs=1e-9)


def test_the_streams_own_velocity_and_implicit_sample_times():
    shaper = SetpointShaper(2.0, 20.0, 400.0, DT, n=1)
    shaper.reset([0.0])
    for k in range(1, 800):
        out = shaper.step([0.3], k * DT, target_velocity=[0.0])
    assert out.position[0] == pytest.approx(0.3, abs=1e-12)
    # without sample_time a changed position is a new sample at `now`: 0.01 rad per 10 ms;
    # after the jerk-limited start (≈ 75 mrad behind at 0.2 s) it runs on the ramp
    for k in range(800, 3000):
        out = shaper.step([0.3 + 0.01 * ((k - 800) // 10)], k * DT)
    assert out.velocity[0] == pytest.approx(1.0, abs=j_dt2(400.0))
    assert out.position[0] == pytest.approx(0.3 + 0.001 * (2999 - 800), abs=1e-6)


def test_targets_are_clipped_to_the_position_limits():
    shaper = SetpointShaper(2.0, 20.0, 400.0, DT, n=1, position_lower=-0.5, position_upper=0.5)
    shaper.reset([0.0])
    for k in range(1, 2000):
        out = shaper.step([3.0], k * DT)
    assert out.position[0] == pytest.approx(0.5, abs=1e-12)


def test_a_repeated_time_returns_the_same_output_and_bad_input_leaves_the_state():
    shaper = SetpointShaper([1.0, 1.0], 5.0, 50.0, DT)
    first = shaper.step([0.1, 0.2], 1.0)  # no start state: at rest at the first target
    np.testing.assert_array_equal(first.position, [0.1, 0.2])
    moved = shaper.step([0.5, 0.2], 1.001)
    again = shaper.step([0.9, 0.9], 1.001)
    np.testing.assert_array_equal(again.position, moved.position)
    for bad, reason in (([np.nan, 0.0], Reason.NOT_FINITE), ([0.0], Reason.SHAPE), ("x", Reason.TYPE)):
        with pytest.raises(InputError) as info:
            shaper.step(bad, 1.002)
        assert info.value.reason == reason
    with pytest.raises(InputError):
        shaper.step([0.0, 0.0], math.inf)
    np.testing.assert_array_equal(shaper.state.position, moved.position)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(max_velocity=0.0), ConfigError),
        (dict(max_acceleration=math.inf), ConfigError),
        (dict(max_jerk=[1.0, 2.0, 3.0]), DimensionError),
        (dict(period=0.0), ConfigError),
        (dict(position_lower=1.0, position_upper=0.0), ConfigError),
    ],
)
def test_invalid_limits_are_refused(kwargs, error):
    args = dict(max_velocity=1.0, max_acceleration=1.0, max_jerk=1.0, period=DT, joint_names=["a", "b"])
    with pytest.raises(error):
        SetpointShaper(**(args | kwargs))


def test_limits_from_the_per_arm_yaml_block_by_name_and_the_urdf():
    data = {
        "joints": ["b", "a", "c"],
        "setpoint_shaper": {"max_velocity": [1.0, 9.0, 2.0], "max_acceleration": 10.0, "max_jerk": [1, 2, 3]},
    }
    limits = shaper_limits_from_arm_yaml(data, ["a", "b"], urdf_velocity=[3.0, 3.0])
    np.testing.assert_array_equal(limits.velocity, [3.0, 1.0])  # a: URDF 3 < 9; b: 1
    np.testing.assert_array_equal(limits.jerk, [2.0, 1.0])
    np.testing.assert_array_equal(limits.acceleration, [10.0, 10.0])
    over = shaper_limits_from_arm_yaml(data, ["a", "b"], overrides={"max_jerk": 7.0, "max_velocity": None})
    np.testing.assert_array_equal(over.jerk, [7.0, 7.0])
    np.testing.assert_array_equal(over.velocity, [9.0, 1.0])
    shaper = SetpointShaper.from_limits(limits, DT, ["a", "b"])
    assert shaper.n == 2


def test_the_yaml_block_refuses_unknown_keys_and_missing_limits(tmp_path):
    path = tmp_path / "arm.yaml"
    path.write_text("setpoint_shaper:\n  max_jerkk: 3.0\n")
    with pytest.raises(ConfigError, match="max_jerkk.*did you mean 'max_jerk'"):
        shaper_limits_from_arm_yaml(path, ["a"])
    with pytest.raises(ConfigError, match="did you mean 'max_jerk'"):
        shaper_limits_from_arm_yaml({"setpoint_shaper": {"max_jerkk": 3.0}}, ["a"])
    with pytest.raises(ConfigError, match="no max_acceleration"):
        shaper_limits_from_arm_yaml({"setpoint_shaper": {"max_jerk": 3.0}}, ["a"], urdf_velocity=[1.0])
    with pytest.raises(ConfigError, match="no max_velocity"):
        shaper_limits_from_arm_yaml(
            {"setpoint_shaper": {"max_jerk": 3.0, "max_acceleration": 1.0}}, ["a"], urdf_velocity=[math.inf]
        )


def test_a_new_position_on_the_same_stamp_replaces_the_sample():
    shaper = SetpointShaper(2.0, 20.0, 400.0, DT, n=1)
    shaper.reset([0.0])
    shaper.step([0.1], 0.001, sample_time=0.0)
    for k in range(2, 1000):  # a source that re-sends its stamp with a corrected position
        out = shaper.step([0.2], k * DT, sample_time=0.0)
    assert out.position[0] == pytest.approx(0.2, abs=1e-12)


def test_a_sample_every_cycle_with_its_velocity_is_followed_exactly():
    # a source that gives q and q̇ at every cycle (a teleop link): the output is that line,
    # not one cycle ahead of it
    shaper = SetpointShaper(2.0, 20.0, 400.0, DT, n=1)
    shaper.reset([0.0])
    for k in range(1, 2000):
        t = k * DT
        out = shaper.step([0.5 * t], t, target_velocity=[0.5], sample_time=t)
    assert out.position[0] == pytest.approx(0.5 * t, abs=1e-9)
    assert out.velocity[0] == pytest.approx(0.5, abs=1e-9)


def test_a_start_position_beyond_the_plausible_bound_is_refused_and_the_shaper_stays_usable():
    """reset(1e308) (finite: a hostile joint_states) was taken; Ruckig then failed at every step,
    so the stream never produced a setpoint again. Refused (RANGE); a sane reset works."""
    shaper = SetpointShaper([1.0, 1.0], 5.0, 50.0, DT)
    with pytest.raises(InputError) as info:
        shaper.reset([1e308, 0.0])
    assert info.value.reason == Reason.RANGE
    shaper.reset([1e6, 0.0])  # MAX_PLAUSIBLE_POSITION itself is taken
    shaper.reset([0.0, 0.0])
    out = shaper.step([0.0, 0.0], 1.0)
    np.testing.assert_array_equal(out.position, [0.0, 0.0])


@pytest.mark.parametrize("limits", [{}, dict(position_lower=-2.6, position_upper=2.6)])
def test_an_absurd_finite_target_is_refused_naming_the_joint_and_the_state_is_kept(limits):
    """step([1e308, ...]) was taken: without position limits the output position was 1e308
    (with limits, clipped to 2.6 and followed there); the node dropped it, the core did not.
    Refused (RANGE, the joint named) by the one check the node uses too; the state is kept."""
    shaper = SetpointShaper(2.0, 20.0, 400.0, DT, joint_names=["shoulder", "elbow"], **limits)
    first = shaper.step([0.1, 0.2], 1.0)
    for absurd in (1e308, -1e308, 1.0000001e6):
        with pytest.raises(InputError, match="shoulder") as info:
            shaper.step([absurd, 0.2], 1.001)
        assert info.value.reason == Reason.RANGE
        assert isinstance(info.value, ValueError)
    with pytest.raises(InputError) as info:  # nothing to start from: refused too
        SetpointShaper(2.0, 20.0, 400.0, DT, n=1).step([1e308], 0.0)
    assert info.value.reason == Reason.RANGE
    np.testing.assert_array_equal(shaper.state.position, first.position)
    out = shaper.step([0.1, 0.2], 1.001)  # still usable: at rest on its target
    np.testing.assert_array_equal(out.position, [0.1, 0.2])
