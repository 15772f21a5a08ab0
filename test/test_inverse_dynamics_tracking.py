"""Tracking of a fast small move on the simulated arm: inverse-dynamics vs gravity feedforward.

ROS-free closed loop at 1 kHz: the MIT-mode law the motors run,
τ = kp·(q_des − q) + kd·(q̇_des − q̇) + τ_ff (Damiao/MIT Cheetah MIT mode; FIELD_NOTES),
drives :class:`SimulatedArm` whose "true" rotor inertia comes from the same
:class:`ActuatorModel` the compensator uses (large gear ratio, so n²·J rivals the link
inertia). τ_ff is either the gravity torque g(q_des) (``mode:=gravity``) or
:class:`InverseDynamicsFeedforward` (``mode:=inverse_dynamics``, default 20 Hz cutoff) on the
setpoint stream. The sim has no friction and mass_scale 1 so the difference between the modes
is the inertial term alone (friction is the friction stage's job in both modes).

The move: every joint of the palletizer 0.1 rad in 0.25 s, minimum jerk (Flash & Hogan 1985:
s(τ) = 10τ³ − 15τ⁴ + 6τ⁵, peak q̈ = 10/√3·D/T² ≈ 9.2 rad/s²), then held 0.25 s.
Run with ``pytest -s`` to see the table; the numbers are also in the assertion messages.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.model.actuator import ActuatorModel
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.config import SimConfig
from gravity_friction_comp.stage.inverse_dynamics import InverseDynamicsFeedforward

DT = 1e-3  # control and physics period [s] (1 kHz)
KP, KD = 30.0, 1.0  # MIT gains [N·m/rad], [N·m·s/rad]
ROTOR_INERTIA = 4.0e-5  # [kg·m²] motor side (43xx-size gimbal rotor, illustrative)
GEAR = [36.0, 40.0, 40.0]  # θ_motor/θ_joint
Q0 = np.array([0.0, 0.3, 0.2])  # [rad] base_yaw, shoulder_pitch, beam_pitch
STEP, DURATION, HOLD = 0.1, 0.25, 0.25  # [rad], [s], [s]


@pytest.fixture(scope="module")
def palletizer():
    from conftest import REPO_ROOT

    return RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf"))


@pytest.fixture(scope="module")
def actuators(palletizer):
    return ActuatorModel(list(palletizer.joint_names), rotor_inertia=ROTOR_INERTIA, gear_ratio=GEAR)


def _minimum_jerk(t: float) -> tuple[np.ndarray, np.ndarray]:
    s = min(max(t / DURATION, 0.0), 1.0)
    pos = 10 * s**3 - 15 * s**4 + 6 * s**5
    vel = (30 * s**2 - 60 * s**3 + 30 * s**4) / DURATION
    return Q0 + STEP * pos, np.full(3, STEP * vel)


def _track(palletizer, actuators, feedforward) -> np.ndarray:
    """Run the move; returns the tracking error q_des − q (steps, 3) [rad] after each step."""
    arm = SimulatedArm(
        palletizer,
        SimConfig(
            joints={n: {"initial_position": float(q)} for n, q in zip(palletizer.joint_names, Q0)},
            physics_rate_hz=1.0 / DT,
            actuators=actuators,
        ),
    )
    errors = []
    for k in range(int(round((DURATION + HOLD) / DT))):
        t = k * DT
        q_des, v_des = _minimum_jerk(t)
        tau = KP * (q_des - arm.position) + KD * (v_des - arm.velocity) + feedforward(q_des, v_des, t)
        arm.step(tau)
        errors.append(_minimum_jerk(t + DT)[0] - arm.position)
    return np.array(errors)


def test_reflected_inertia_rivals_link_inertia(palletizer, actuators):
    # by hand: n²·J = 36²·4e-5, 40²·4e-5, 40²·4e-5
    reflected = palletizer.with_actuators(actuators).actuator_terms.reflected_inertia
    np.testing.assert_allclose(reflected, [0.05184, 0.064, 0.064], rtol=1e-12)
    links = np.diag(palletizer.mass_matrix(Q0))
    assert np.all(reflected > 0.5 * links), (reflected, links)
    # peak setpoint acceleration of the move, closed form 10/√3·D/T²
    t = np.linspace(0, DURATION, 2001)
    vel = np.array([_minimum_jerk(x)[1][0] for x in t])
    assert np.max(np.abs(np.gradient(vel, t))) == pytest.approx(
        10 / math.sqrt(3) * STEP / DURATION**2, rel=1e-3
    )


def test_inverse_dynamics_tracks_fast_move_better_than_gravity(palletizer, actuators):
    id_model = palletizer.with_actuators(actuators)  # the compensator knows the sim's truth
    with_act = InverseDynamicsFeedforward(id_model)
    without_act = InverseDynamicsFeedforward(palletizer.copy())
    modes = {
        "gravity": lambda q, v, t: palletizer.gravity(q),
        "inverse_dynamics": lambda q, v, t: with_act.update(q, v, t).effort,
        "inverse_dynamics, no actuator model": lambda q, v, t: without_act.update(q, v, t).effort,
    }
    stats = {}
    for name, feedforward in modes.items():
        err = _track(palletizer, actuators, feedforward)
        stats[name] = (np.sqrt(np.mean(err**2, axis=0)), np.max(np.abs(err), axis=0))
    names = palletizer.joint_names
    lines = [
        f"tracking error [mrad], {STEP} rad min-jerk in {DURATION} s, kp={KP:g} kd={KD:g}, "
        f"n²J={id_model.actuator_terms.reflected_inertia.round(4).tolist()} kg·m²",
        f"{'mode':<38}" + "".join(f"{n + ' rms/max':>26}" for n in names),
    ]
    for name, (rms, peak) in stats.items():
        lines.append(f"{name:<38}" + "".join(f"{1e3 * r:>17.2f} / {1e3 * p:6.2f}" for r, p in zip(rms, peak)))
    table = "\n".join(lines)
    print("\n" + table)
    rms_g, rms_id = stats["gravity"][0], stats["inverse_dynamics"][0]
    rms_bare = stats["inverse_dynamics, no actuator model"][0]
    assert np.all(rms_id < 0.25 * rms_g), table
    assert np.all(stats["inverse_dynamics"][1] < 0.25 * stats["gravity"][1]), table
    # the reflected rotor inertia is a large part of the gain
    assert np.all(rms_id < 0.5 * rms_bare), table
