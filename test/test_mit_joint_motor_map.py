"""Tests of gravity_friction_comp.mit.joint_motor_map against hand-computed maps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits


def test_joint_motor_map_by_hand():
    m = JointMotorMap(direction=-1, offset=0.1, gear_ratio=2.0)
    # q = d θ / r + q0: θ = 1.0 -> -0.5 + 0.1 = -0.4
    assert m.position_from_motor(1.0) == pytest.approx(-0.4, abs=1e-15)
    assert m.position_to_motor(-0.4) == pytest.approx(1.0, abs=1e-15)
    assert m.velocity_from_motor(3.0) == -1.5
    assert m.torque_from_motor(3.0) == -6.0
    assert m.torque_to_motor(-6.0) == 3.0
    assert m.kp_to_motor(100.0) == 25.0 and m.kd_to_motor(2.0) == 0.5
    assert m.kp_from_motor(25.0) == 100.0
    assert m.torque_limit_joint(motor_limits("DM4310")) == 20.0


def test_joint_motor_map_power_and_gain_consistency():
    """Independent checks: power τ·ω is the same on both sides, and the motor's PD law with
    mapped gains gives the joint PD law with the joint gains."""
    rng = np.random.default_rng(4)
    for _ in range(50):
        m = JointMotorMap(
            direction=int(rng.choice([-1, 1])), offset=rng.uniform(-1, 1), gear_ratio=rng.uniform(0.3, 50)
        )
        qd, tau_q = rng.uniform(-3, 3, 2)
        assert tau_q * qd == pytest.approx(m.torque_to_motor(tau_q) * m.velocity_to_motor(qd), rel=1e-12)
        kp, kd, q_des, q, v_des, v = rng.uniform(0, 50), rng.uniform(0, 3), *rng.uniform(-2, 2, 4)
        tau_motor = m.kp_to_motor(kp) * (m.position_to_motor(q_des) - m.position_to_motor(q)) + m.kd_to_motor(
            kd
        ) * (m.velocity_to_motor(v_des) - m.velocity_to_motor(v))
        assert m.torque_from_motor(tau_motor) == pytest.approx(
            kp * (q_des - q) + kd * (v_des - v), rel=1e-9, abs=1e-12
        )


@pytest.mark.parametrize(
    "kwargs, key",
    [
        ({"direction": 0}, "direction"),
        ({"direction": 2}, "direction"),
        ({"direction": True}, "direction"),
        ({"gear_ratio": 0.0}, "gear_ratio"),
        ({"gear_ratio": -2.0}, "gear_ratio"),
        ({"gear_ratio": math.inf}, "gear_ratio"),
        ({"offset": math.nan}, "offset"),
    ],
)
def test_joint_motor_map_validation(kwargs, key):
    with pytest.raises(ConfigError) as err:
        JointMotorMap(**kwargs)
    assert err.value.key == key


@pytest.mark.parametrize(
    "kwargs, key, fragment",
    [
        ({"offset": 10**400}, "offset", "finite number"),  # was OverflowError
        ({"offset": True}, "offset", "got True"),
        ({"gear_ratio": 1e-200}, "gear_ratio", "plausible range"),  # kp_to_motor divided by 0.0
        ({"gear_ratio": 2e4}, "gear_ratio", "0.001..10000"),
        ({"gear_ratio": True}, "gear_ratio", "got True"),
    ],
)
def test_joint_motor_map_rejects_implausible_values(kwargs, key, fragment):
    with pytest.raises(ConfigError) as err:
        JointMotorMap(**kwargs)
    assert err.value.key == key and fragment in str(err.value)


def test_gear_ratio_range_ends_give_finite_gains():
    # kp_θ = kp_q / r² by hand at both ends of the range
    assert JointMotorMap(gear_ratio=1e-3).kp_to_motor(10.0) == pytest.approx(1e7, rel=1e-12)
    assert JointMotorMap(gear_ratio=1e4).kp_to_motor(10.0) == pytest.approx(1e-7, rel=1e-12)
