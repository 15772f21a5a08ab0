"""Hostile input for the ROS-free bridge core: finite but extreme commands and gains never kill
it, and the command timeout switches on the first tick after the timeout (issue 13, 6/7/10)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.codec import decode_command
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.special_frames import classify_special_frame

RATE = 500.0
PERIOD = 1.0 / RATE


def _core(gear: float, timeout: float = 0.1, behavior: str = "damp") -> MitBridgeCore:
    motors = tuple(
        MotorConfig(
            f"j{i}",
            i + 1,
            0x11 + i,
            motor_limits(model),
            mapping=JointMotorMap(direction=d, offset=0.1 * i, gear_ratio=gear),
            kp=10.0,
            kd=0.5,
            damp_kd=0.3 if i == 1 else None,
        )
        for i, (model, d) in enumerate((("DM4340", 1), ("DM4310", -1), ("AK80-9", 1)))
    )
    return MitBridgeCore(
        BridgeConfig(motors, rate_hz=RATE, command_timeout=timeout, timeout_behavior=behavior, stale_cycles=5)
    )


_EXTREMES = (1e308, -1e308, 1.7976931348623157e308, 5e-324, -5e-324, 2.2e-308, 0.0, -0.0, 1e154, 1e-300)


def _value(rng: random.Random) -> float:
    roll = rng.random()
    if roll < 0.4:
        return rng.choice(_EXTREMES)
    if roll < 0.7:
        return rng.uniform(-10.0, 10.0)
    return math.copysign(10.0 ** rng.uniform(-320.0, 308.0), rng.random() - 0.5)


def _check_frames(core: MitBridgeCore, frames) -> None:
    for (can_id, data), m in zip(frames, core.config.motors):
        assert can_id == m.can_id
        assert len(data) == 8
        assert classify_special_frame(data) is None, "a command frame equal to a special frame"
        cmd = decode_command(data, m.limits)
        lim = m.limits
        for value, bound in (
            (cmd.position, lim.p_max),
            (cmd.velocity, lim.v_max),
            (cmd.tau_ff, lim.t_max),
        ):
            assert math.isfinite(value) and abs(value) <= bound * (1 + 1e-12)
        assert 0.0 <= cmd.kp <= lim.kp_max * (1 + 1e-12)
        assert 0.0 <= cmd.kd <= lim.kd_max * (1 + 1e-12)


@pytest.mark.parametrize("gear", [0.5, 2.0, 10.0])
def test_random_finite_commands_and_gains_never_kill_the_core(gear):
    rng = random.Random(1300 + int(gear * 10))
    core = _core(gear, timeout=10.0)  # no timeout during the run: every step sends the command
    now = 0.0
    accepted = refused = 0
    for _ in range(3000):
        now += PERIOD
        values = [[_value(rng) for _ in range(3)] for _ in range(3)]
        before = (core._cmd_q.copy(), core._cmd_qd.copy(), core._cmd_tau.copy())
        try:
            core.set_command(*values, now)
            accepted += 1
        except InputError:
            refused += 1
            # the motors keep the last safe command
            for kept, old in zip((core._cmd_q, core._cmd_qd, core._cmd_tau), before):
                assert np.array_equal(kept, old)
        if rng.random() < 0.2:
            gains = core.gains
            try:
                core.set_gains(
                    kp=[abs(_value(rng)) for _ in range(3)], kd=[abs(_value(rng)) for _ in range(3)]
                )
            except (InputError, ConfigError):
                assert all(np.array_equal(a, b) for a, b in zip(core.gains, gains))
        frames = core.step(now)
        assert len(frames) == 3
        assert all(s.behavior == "command" for s in core.status())
        _check_frames(core, frames)
    assert accepted > 100 and refused > 100, (accepted, refused)


@pytest.mark.parametrize("gear", [2.0, 10.0])
@pytest.mark.parametrize("velocity", [1e308, -1e308])
def test_velocity_that_overflows_at_the_motor_is_refused(gear, velocity):
    core = _core(gear)
    core.set_command([0.1, 0.2, 0.3], [0.5, 0.5, 0.5], [1.0, 1.0, 1.0], 0.0)
    kept = core.step(0.001)
    with pytest.raises(InputError) as info:
        core.set_command([0.1, 0.2, 0.3], [velocity, 0.0, 0.0], [1.0, 1.0, 1.0], 0.002)
    assert info.value.reason == "range"
    assert "j0" in str(info.value) and "velocity" in str(info.value)
    assert core.rejected_commands == 1
    # the last safe command still goes out (same frames as before)
    assert core.step(0.003) == kept


def test_runtime_kp_that_overflows_at_the_motor_is_refused():
    core = _core(0.5)
    with pytest.raises(ConfigError) as info:
        core.checked_gains(kp=[1e308, 10.0, 10.0])
    assert info.value.key == "kp"
    with pytest.raises(ConfigError) as info:
        core.set_gains(kd=[1.0, 1e308, 1.0])
    assert info.value.key == "kd"
    assert core.gains[0].tolist() == [10.0, 10.0, 10.0]
    assert core.gains[1].tolist() == [0.5, 0.5, 0.5]
    # 1e307 / 0.25 is finite but beyond the motor's range (issue 32 point 3: the codec
    # would cap it at kp_max silently): refused, the range at the joint 500 · 0.5² = 125 named
    with pytest.raises(ConfigError, match=r"kp 1e\+307 is beyond the motor's range 0\.\.125 at the joint"):
        core.set_gains(kp=[1e307, 10.0, 10.0])
    core.set_gains(kp=[125.0, 10.0, 10.0])  # the top of the range is accepted


def test_config_gains_that_overflow_at_the_motor_are_refused():
    motor = MotorConfig("j", 1, 0x11, motor_limits("DM4340"), mapping=JointMotorMap(gear_ratio=0.5), kp=1e308)
    with pytest.raises(ConfigError):
        MitBridgeCore(BridgeConfig((motor,), rate_hz=RATE))


@pytest.mark.parametrize("gains", [[True, True, True], [1.0, False, 1.0], np.array([True, True, True]), True])
def test_boolean_gains_are_refused(gains):
    core = _core(1.0)
    for key in ("kp", "kd"):
        with pytest.raises(InputError) as info:
            core.checked_gains(**{key: gains})
        assert info.value.reason == "type"
    assert core.gains[0].tolist() == [10.0, 10.0, 10.0]


@pytest.mark.parametrize("timeout", [0.1, 0.05, 0.02, 0.014])
def test_timeout_switches_on_the_first_tick_after_the_timeout(timeout):
    """Ticks at exactly the period on a ROS-like clock (integer nanoseconds → seconds): the
    switch is at the first tick whose elapsed time exceeds the timeout, every time."""
    period_ns = 2_000_000  # 500 Hz
    timeout_ns = round(timeout * 1e9)
    rng = random.Random(10)
    for trial in range(300):
        core = _core(1.0, timeout=timeout)
        start_ns = rng.randrange(0, 10**18) // period_ns * period_ns + rng.choice((0, 1, 999_999))
        tick = 0

        def now(k: int) -> float:
            return (start_ns + k * period_ns) * 1e-9

        command_tick = 3
        while True:
            if tick == command_tick:
                core.set_command([0.0] * 3, None, None, now(tick))
            core.step(now(tick))
            behavior = core.status()[0].behavior
            if tick > command_tick and behavior != "command":
                break
            tick += 1
            assert tick < 10_000
        expected = command_tick + timeout_ns // period_ns + 1  # elapsed > timeout
        assert tick == expected, (trial, start_ns, tick, expected)


def test_command_finite_on_the_motor_side_whose_motor_side_sum_overflows_is_accepted():
    """The motor-side overflow check is screened by the sum of the motor-side values: at
    gear 1, θ + θ̇ = 1e308 + 1e308 overflows the sum, not a value, so the check of each
    value behind it accepts (the frames are the clamped ones; a value that does overflow is
    refused: test_velocity_that_overflows_at_the_motor_is_refused)."""
    core = _core(1.0)
    core.set_command([1e308, 0.0, 0.0], [1e308, 0.0, 0.0], None, 0.0)
    _check_frames(core, core.step(0.0))
    assert [s.behavior for s in core.status()] == ["command"] * 3
    assert core.rejected_commands == 0


def test_finite_command_whose_sum_overflows_is_accepted_and_inf_is_not():
    """set_command screens finiteness with a sum: 1e308 + 1e308 overflows it, and the
    element-wise check behind it must still accept; inf - inf (NaN sum) and a lone NaN
    are refused with the previous command kept."""
    core = _core(gear=1.0)
    core.set_command([1e308, 1e308, 0.0], None, [1e308, 0.0, 1e308], 0.0)
    _check_frames(core, core.step(0.0))
    assert [s.behavior for s in core.status()] == ["command"] * 3  # refused: "no command yet"
    for q, tau in (([math.inf, -math.inf, 0.0], None), ([0.0, 0.0, 0.0], [0.0, math.nan, 0.0])):
        with pytest.raises(InputError):
            core.set_command(q, None, tau, 0.001)
    assert core.rejected_commands == 2
