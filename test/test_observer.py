"""The momentum observer against closed forms and the simulator's exact external torque (issue 29.1).

No CAN, no quantization here (test_observer_lockstep.py has those): the simulated arm is
stepped directly and the observer reads its exact state, so the only errors are the
observer's own discretization.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import REPO_ROOT

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.model.actuator import ActuatorModel
from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.observer.momentum import MomentumObserver
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.config import SimConfig

M_LINK, L_COM, I_YY = 0.8, 0.2, 0.004  # pendulum: mass [kg], COM distance [m], inertia [kg·m²]

PENDULUM = f"""<robot name="pendulum">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0 0 -{L_COM}"/><mass value="{M_LINK}"/>
    <inertia ixx="{I_YY}" iyy="{I_YY}" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def pendulum():
    return RobotModel.from_urdf(PENDULUM)


@pytest.fixture(scope="module")
def palletizer():
    return RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf"))


def _run(arm: SimulatedArm, observer: MomentumObserver, steps: int, torque, external):
    """Step ``arm`` with motor torque ``torque(t, q, v)`` and τ_ext ``external(t)``; the
    observer takes each step's state and the torque that acts over it. Returns (t, r, τ_ext)."""
    times, estimates, truths = [], [], []
    for _ in range(steps):
        t, q, v = arm.time, arm.position, arm.velocity
        tau = torque(t, q, v)
        ext = external(t)
        estimates.append(observer.update(t, q, v, tau))
        times.append(t)
        truths.append(arm.external_effort)
        arm.set_external_effort(ext)
        arm.step(tau)
    return np.array(times), np.array(estimates), np.array(truths)


def test_pendulum_constant_push_is_the_closed_form(pendulum):
    """A free-swinging pendulum (no motor torque, no friction) pushed by a constant 0.7 N·m
    from t = 0: r(t_k) = τ_ext (1 − e^{−K t_k}) at every sample, to rounding. The sim is
    semi-implicit Euler with constant M, so the momentum balance over a step is exact and
    the zero-order-hold filter gives the continuous closed form (a forward-Euler integral
    would give (1 − K·dt)^k: 1 % off at k = 20 with K = 50, dt = 1 ms)."""
    arm = SimulatedArm(pendulum, SimConfig(joints={"hinge": {"initial_position": 0.5}}))
    k = 50.0
    observer = MomentumObserver(pendulum, gain=k)
    arm.set_external_effort([0.7])
    t, r, truth = _run(arm, observer, 400, lambda *_: np.zeros(1), lambda _: np.array([0.7]))
    closed = 0.7 * (1.0 - np.exp(-k * t))
    np.testing.assert_allclose(r[:, 0], closed, rtol=0, atol=1e-9)
    assert truth[0, 0] == 0.7
    assert abs(arm.position[0] - 0.5) > 0.05  # it really swung: M, g, q̇ all in play


def test_pendulum_armature_and_payload(pendulum):
    """The same closed form with rotor inertia on the diagonal (the model's and the sim's
    from one ActuatorModel) and a payload the observer knows about while holding."""
    rotor = ActuatorModel(1, rotor_inertia=[2e-5], gear_ratio=[20.0])
    model = pendulum.with_actuators(rotor)
    can = Payload.point(0.3, com=(0.0, 0.0, -0.3), parent="hinge")
    arm = SimulatedArm(
        model, SimConfig(joints={"hinge": {"initial_position": -0.4}}), payload=can, holding=True
    )
    k = 80.0
    observer = MomentumObserver(model, gain=k, loaded=model.with_payload(can), holding=True)
    arm.set_external_effort([-0.4])
    t, r, _ = _run(arm, observer, 300, lambda *_: np.zeros(1), lambda _: np.array([-0.4]))
    np.testing.assert_allclose(r[:, 0], -0.4 * (1.0 - np.exp(-k * t)), rtol=0, atol=1e-9)


def test_wrong_holding_flag_is_off_by_the_payload_weight(pendulum):
    """The observer is only as good as the model: holding a 0.3 kg payload the observer
    does not know about, at rest, it reports the payload's weight as an external torque,
    −m·g·l·sin q (it pulls the arm down; the motor torque that holds the arm carries it)."""
    can = Payload.point(0.3, com=(0.0, 0.0, -0.3), parent="hinge")
    q0 = 0.6
    arm = SimulatedArm(
        pendulum, SimConfig(joints={"hinge": {"initial_position": q0}}), payload=can, holding=True
    )
    loaded = pendulum.with_payload(can)
    observer = MomentumObserver(pendulum, gain=100.0, loaded=loaded, holding=False)
    hold = loaded.gravity([q0])  # what holds the loaded arm still: it stays at q0
    _, r, _ = _run(arm, observer, 200, lambda *_: hold, lambda _: np.zeros(1))
    payload_torque = 0.3 * 9.81 * 0.3 * math.sin(q0)
    assert arm.position[0] == pytest.approx(q0, abs=1e-12)
    assert r[-1, 0] == pytest.approx(-payload_torque, rel=1e-6)
    observer.set_holding(True)  # the right flag: the estimate goes back to 0
    for _ in range(200):
        r_now = observer.update(arm.time, arm.position, arm.velocity, hold)
        arm.step(hold)
    assert abs(r_now[0]) < 1e-6 * payload_torque


def test_coriolis_matrix_is_the_bias_and_the_mass_derivative(palletizer):
    """C(q, v)·v + g(q) = b(q, v) (RNEA) and dM/dt = C + Cᵀ (finite difference of CRBA) on
    the palletizer's mimic-reduced model: the two properties the observer relies on."""
    q = np.array([0.3, 0.4, -0.2])
    v = np.array([0.7, -1.1, 0.9])
    c = palletizer.coriolis_matrix(q, v)
    np.testing.assert_allclose(c @ v + palletizer.gravity(q), palletizer.nonlinear_effects(q, v), atol=1e-12)
    h = 1e-6
    m_dot = (palletizer.mass_matrix(q + h * v) - palletizer.mass_matrix(q - h * v)) / (2 * h)
    np.testing.assert_allclose(m_dot, c + c.T, atol=1e-7)
    assert np.abs(c).max() > 1e-3  # the test is not on a C that vanishes


def test_palletizer_moving_push_within_discretization(palletizer):
    """The palletizer (parallelogram by mimic joints, M(q) varying, Coriolis) driven through a
    fast motion by its motors and pushed by a constant τ_ext on every joint: after 5/K the
    estimate is τ_ext within the O(dt) error of the sim's Euler step (4 kHz), far below the
    Cᵀq̇ term the observer adds (without it the estimate would be off by that much)."""
    cfg = SimConfig(
        joints={
            "base_yaw": {"initial_position": 0.0},
            "shoulder_pitch": {"initial_position": 0.3},
            "beam_pitch": {"initial_position": 0.2},
        },
        physics_rate_hz=4000.0,
    )
    arm = SimulatedArm(palletizer, cfg)
    k = 60.0
    observer = MomentumObserver(palletizer, gain=k)
    push = np.array([0.5, -1.0, 0.8])
    centre = np.array([0.0, 0.3, 0.2])

    def torque(t, q, v):  # a stiff PD on a 1 Hz sine plus the model gravity
        target = centre + np.array([1.0, 0.4, 0.4]) * math.sin(2 * math.pi * t)
        target_v = np.array([1.0, 0.4, 0.4]) * 2 * math.pi * math.cos(2 * math.pi * t)
        return palletizer.gravity(q) + 60.0 * (target - q) + 4.0 * (target_v - v)

    t, r, truth = _run(arm, observer, 4000, torque, lambda _: push)
    after = t > 5.0 / k + 1e-3
    error = np.abs(r[after] - truth[after]).max(axis=0)
    assert np.all(error < 0.01), error
    speeds = []
    arm2 = SimulatedArm(palletizer, cfg)
    for _ in range(2000):  # the Cᵀq̇ term along the same motion: large against the error
        q, v = arm2.position, arm2.velocity
        speeds.append(np.abs(palletizer.coriolis_matrix(q, v).T @ v))
        arm2.set_external_effort(push)
        arm2.step(torque(arm2.time, q, v))
    assert np.max(speeds) > 20 * error.max(), (np.max(speeds), error)


def test_friction_model_and_deadband(pendulum):
    """The arm's friction model is subtracted at the measured q̇ past the deadband: a joint
    sliding against true viscous + Coulomb friction equal to the model reads τ_ext; at rest
    (inside the deadband) the model gives no friction."""
    friction = FrictionModel(["hinge"], breakaway=0.0, viscous=0.05)
    observer = MomentumObserver(pendulum, gain=100.0, friction=friction, velocity_deadband=0.01)
    np.testing.assert_array_equal(observer.friction_torque(np.array([0.005]), np.zeros(1)), [0.0])
    assert observer.friction_torque(np.array([2.0]), np.zeros(1))[0] == pytest.approx(0.1)
    cfg = SimConfig(joints={"hinge": {"initial_position": 0.0, "viscous": 0.05}})
    arm = SimulatedArm(pendulum, cfg)
    t, r, truth = _run(
        arm, observer, 700, lambda t, q, v: pendulum.gravity(q) + np.array([0.1]), lambda _: np.array([0.2])
    )
    after = t > 0.1
    assert np.abs(arm.velocity[0]) > 0.5  # sliding the whole time, viscous friction large
    np.testing.assert_allclose(r[after, 0], 0.2, atol=2e-3)


def test_bad_input_and_restarts(pendulum):
    observer = MomentumObserver(pendulum, gain=50.0, max_gap=0.05)
    observer.update(0.0, [0.1], [0.0], [0.0])
    r = observer.update(0.001, [0.1], [0.0], [1.0])
    for bad in ([float("nan")], [0.0, 0.0], "x"):
        with pytest.raises(InputError):
            observer.update(0.002, bad, [0.0], [0.0])
    with pytest.raises(InputError):
        observer.update(float("inf"), [0.1], [0.0], [0.0])
    np.testing.assert_array_equal(observer.estimate, r)  # unchanged by the refusals
    np.testing.assert_array_equal(observer.update(0.001, [0.1], [0.0], [0.0]), r)  # repeated stamp
    observer.update(0.2, [0.1], [0.0], [0.0])  # a gap beyond max_gap: restart, r = 0
    assert observer.restarts == 1 and np.all(observer.estimate == 0.0)
    observer.update(0.1, [0.1], [0.0], [0.0])  # time went back: restart too
    assert observer.restarts == 2
    for gain in (0.0, -1.0, float("nan"), 1e4, [1.0, 2.0], True):
        with pytest.raises((ConfigError, ValueError)):
            observer.set_gain(gain)
    assert observer.gain.tolist() == [50.0]
    with pytest.raises(ConfigError):
        MomentumObserver(pendulum, friction=FrictionModel(2))
    with pytest.raises(ConfigError):
        MomentumObserver("pendulum")  # type: ignore[arg-type]


def test_an_implausible_effort_is_refused_and_leaves_the_estimate_alone(pendulum):
    """A hostile effort of ±1e308 N·m (finite, so not caught as NaN) used to be integrated:
    an estimate of ~1e307 N·m published, a contact latched on it and the state poisoned for
    seconds (±1.7e308 overflowed r to inf, then NaN for good). Beyond the largest joint
    torque a bridge can report (MIT t_max override × the largest gear ratio) it is refused
    with the state unchanged: the samples after it give what an observer that never saw it
    gives, the closed form."""
    from gravity_friction_comp.errors import Reason
    from gravity_friction_comp.mit.joint_motor_map import GEAR_RATIO_RANGE
    from gravity_friction_comp.mit.motor_table import MAX_OVERRIDE
    from gravity_friction_comp.observer.momentum import MAX_PLAUSIBLE_EFFORT

    assert MAX_PLAUSIBLE_EFFORT == MAX_OVERRIDE * GEAR_RATIO_RANGE[1] == 1e8
    q = np.array([0.1])
    g = pendulum.gravity(q)
    hostile, clean = MomentumObserver(pendulum, gain=50.0), MomentumObserver(pendulum, gain=50.0)
    for k in range(5):
        for observer in (hostile, clean):
            observer.update(0.002 * k, q, [0.0], g + 0.3)  # held still, 0.3 N·m beyond gravity
        for bad in (1e308, -1e308, 1.7e308, -2e8):
            with pytest.raises(InputError) as info:
                hostile.update(0.002 * k + 0.001, q, [0.0], [bad])
            assert info.value.reason == Reason.RANGE and "effort" in str(info.value)
    np.testing.assert_array_equal(hostile.estimate, clean.estimate)
    # at rest: β = τ_m − g = 0.3, τ̂ = −0.3, so r = −0.3 (1 − e^{−K t}) at t = 4 samples of 2 ms
    np.testing.assert_allclose(clean.estimate, -0.3 * (1.0 - math.exp(-50.0 * 0.008)), rtol=0, atol=1e-12)
    hostile.update(0.01, q, [0.0], [-1e8])  # the bound itself: a torque a bridge could report


def test_no_detection_before_the_observer_has_settled(pendulum):
    """The first interval after a (re)start may not carry the torque that acted (a bridge's
    first reply from before its hold caught the falling arm, read late): the real-time
    simulated palletizer's quiet start-up latched 3–4.6 N·m on beam_pitch, so a reaction
    would have fired at every start. No contact is detected until 5 time constants (5/K)
    after the observer (re)started, when such an error has decayed below e^{−5}; a push that
    lasts is detected then, and later ones as before."""
    from gravity_friction_comp.observer.contact import ContactDetector
    from gravity_friction_comp.observer.guard import ContactGuard
    from gravity_friction_comp.observer.momentum import SETTLE_TIME_CONSTANTS

    assert SETTLE_TIME_CONSTANTS == 5.0
    k, dt = 100.0, 2.0**-9  # dt exact in binary: no sample sits on the 5/K = 50 ms boundary
    q = np.array([0.1])
    g = pendulum.gravity(q)
    stale = g - 1.0 / (1.0 - math.exp(-k * dt))  # the first sample's torque: r_1 = 1.0 N·m exactly

    def guard() -> ContactGuard:
        return ContactGuard(MomentumObserver(pendulum, gain=k), ContactDetector(("hinge",), 0.5))

    quiet = guard()
    assert quiet.update(0.0, ["hinge"], q, [0.0], stale) is None
    for n in range(1, 60):  # held still (τ_m = g) from the second sample on: r_n = e^{−K(n−1)dt}
        assert quiet.update(n * dt, ["hinge"], q, [0.0], g) is None, n
        if n == 1:
            assert quiet.estimate[0] == pytest.approx(1.0, abs=1e-12)  # twice the threshold
    assert quiet.estimate[0] == pytest.approx(math.exp(-k * 58 * dt), abs=1e-12)
    # a push from then on (the motor holds 0.8 N·m less): r = 0.8 (1 − e^{−K m dt}) after m
    # samples of it (the first carries β of the push) crosses 0.5 at m = 6 (0.4988 at 5, 0.5513 at 6)
    contacts = [quiet.update((60 + m) * dt, ["hinge"], q, [0.0], g - 0.8) for m in range(8)]
    assert math.ceil(math.log(1.0 - 0.5 / 0.8) / (-k * dt)) == 6
    assert [c is not None for c in contacts] == [False] * 6 + [True, False]
    # a push from the start crosses at 10 ms but is detected at the first sample at or after
    # 5/K: n = ceil(0.05 / dt) = 26
    early = guard()
    first = next(n for n in range(60) if early.update(n * dt, ["hinge"], q, [0.0], g - 0.8) is not None)
    assert first == math.ceil(0.05 / dt) == 26
    # a restart (a gap beyond max_gap) settles again
    quiet.clear()
    assert quiet.update(1.0, ["hinge"], q, [0.0], stale) is None and quiet.observer.restarts == 1
    assert quiet.update(1.0 + dt, ["hinge"], q, [0.0], g) is None
    assert quiet.estimate[0] == pytest.approx(1.0, abs=1e-12) and quiet.detector.latched is None
