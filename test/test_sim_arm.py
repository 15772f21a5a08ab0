"""Tests of gravity_friction_comp.sim.arm against closed forms and an independent pin.aba."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.model.actuator import ActuatorModel
from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.config import JointSimParams, SimConfig

G = 9.81


M_LINK, L_COM, I_YY = 0.8, 0.2, 0.004  # pendulum: mass [kg], COM distance [m], inertia [kg·m²]


PENDULUM = f"""<robot name="pendulum">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0 0 -{L_COM}"/><mass value="{M_LINK}"/>
    <inertia ixx="{I_YY}" iyy="{I_YY}" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"/>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="5"/></joint>
  <joint name="tip_joint" type="fixed"><parent link="arm"/><child link="tip"/>
    <origin xyz="0 0 -0.3"/></joint>
</robot>"""


# vertical axis: no gravity torque, inertia about z = izz + m·r²
M_YAW, R_YAW, I_ZZ = 0.5, 0.1, 0.002


TURNTABLE = f"""<robot name="turntable">
  <link name="base"/>
  <link name="plate"><inertial><origin xyz="{R_YAW} 0 0"/><mass value="{M_YAW}"/>
    <inertia ixx="0.001" iyy="0.001" izz="{I_ZZ}" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="yaw" type="revolute"><parent link="base"/><child link="plate"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
</robot>"""


J_YAW = I_ZZ + M_YAW * R_YAW**2


@pytest.fixture(scope="module")
def pendulum():
    return RobotModel.from_urdf(PENDULUM)


@pytest.fixture(scope="module")
def turntable():
    return RobotModel.from_urdf(TURNTABLE)


@pytest.fixture(scope="module")
def palletizer():
    from conftest import REPO_ROOT

    return RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf"))


def _pendulum_accel(q, scale=1.0, armature=0.0, tau=0.0):
    """Closed form: (s·(I + m l²) + A)·q̈ = τ − s·m g l sin q."""
    return (tau - scale * M_LINK * G * L_COM * math.sin(q)) / (scale * (I_YY + M_LINK * L_COM**2) + armature)


def _run(arm, tau_fn, seconds):
    steps = int(round(seconds / arm.dt))
    traj = [arm.position]
    for _ in range(steps):
        arm.step(tau_fn(arm.position))
        traj.append(arm.position)
    return np.array(traj)


def test_pendulum_falls_as_closed_form(pendulum):
    q0 = 0.7
    arm = SimulatedArm(pendulum, SimConfig(joints={"hinge": {"initial_position": q0}}, physics_rate_hz=4000))
    dt = arm.dt
    traj = _run(arm, lambda q: np.zeros(1), 0.005)
    a0 = _pendulum_accel(q0)
    t = 0.005
    # semi-implicit Euler under constant a: q_k = q0 + a·dt²·k(k+1)/2 = q0 + ½·a·t·(t + dt)
    a_est = 2 * (traj[-1, 0] - q0) / (t * (t + dt))
    assert a_est == pytest.approx(a0, rel=2e-3)
    assert traj[-1, 0] < q0  # falls toward the hanging position


def test_yam_falls_as_independent_aba(shared_data):
    path = str(shared_data / "urdf" / "i2rt_yam" / "yam.urdf")
    model = RobotModel.from_urdf(path)
    # independent route: Pinocchio ABA on the plain (mimic-free) URDF model
    pmodel = pin.buildModelFromUrdf(path)
    pdata = pmodel.createData()
    names = [pmodel.names[i] for i in range(1, pmodel.njoints)]
    rng = np.random.default_rng(3)
    lo, hi = model.position_lower, model.position_upper
    q0 = lo + (hi - lo) * rng.uniform(0.3, 0.7, model.n)
    arm = SimulatedArm(
        model,
        SimConfig(
            joints={n: {"initial_position": float(q)} for n, q in zip(model.joint_names, q0)},
            physics_rate_hz=4000,
        ),
    )
    qp = np.zeros(pmodel.nq)
    for n, q in zip(model.joint_names, q0):
        qp[pmodel.idx_qs[pmodel.getJointId(n)]] = q
    a_full = pin.aba(pmodel, pdata, qp, np.zeros(pmodel.nv), np.zeros(pmodel.nv))
    a0 = np.array([a_full[pmodel.idx_vs[pmodel.getJointId(n)]] for n in model.joint_names])
    assert set(model.joint_names) <= set(names)
    t, dt = 0.004, arm.dt
    traj = _run(arm, lambda q: np.zeros(model.n), t)
    a_est = 2 * (traj[-1] - q0) / (t * (t + dt))
    np.testing.assert_allclose(a_est, a0, rtol=0.02, atol=0.05)
    assert np.max(np.abs(a0)) > 1.0  # the check is not vacuous


def test_yam_sliding_with_friction_steps_as_independent_aba(shared_data):
    """Every joint moving (none can stick this step): q̈ = ABA(q, q̇, τ − τ_f) with the closed-form
    budget τ_f = sign(q̇)·(F_c + F_v|q̇| + F_s·exp(−(q̇/v_s)²)) (the all-sliding path of the step)."""
    path = str(shared_data / "urdf" / "i2rt_yam" / "yam.urdf")
    model = RobotModel.from_urdf(path)
    pmodel = pin.buildModelFromUrdf(path)
    pdata = pmodel.createData()
    rng = np.random.default_rng(5)
    lo, hi = model.position_lower, model.position_upper
    q0 = lo + (hi - lo) * rng.uniform(0.3, 0.7, model.n)
    v0 = rng.choice([-1.0, 1.0], model.n) * rng.uniform(0.5, 1.5, model.n)
    fc, fs, vs, fv = 0.3, 0.1, 0.05, 0.2
    joints = {
        n: {
            "coulomb": fc,
            "stribeck_breakaway": fs,
            "stribeck_velocity": vs,
            "viscous": fv,
            "initial_position": float(q),
            "initial_velocity": float(v),
        }
        for n, q, v in zip(model.joint_names, q0, v0)
    }
    arm = SimulatedArm(model, SimConfig(joints=joints, physics_rate_hz=4000))
    tau = rng.normal(0.0, 1.0, model.n)
    _, v1 = arm.step(tau)
    assert not arm.state().stuck.any()
    friction = np.sign(v0) * (fc + fv * np.abs(v0) + fs * np.exp(-((v0 / vs) ** 2)))
    np.testing.assert_allclose(arm.state().friction, friction, rtol=1e-12)
    qp, vp, tp = np.zeros(pmodel.nq), np.zeros(pmodel.nv), np.zeros(pmodel.nv)
    for k, n in enumerate(model.joint_names):
        jid = pmodel.getJointId(n)
        qp[pmodel.idx_qs[jid]], vp[pmodel.idx_vs[jid]] = q0[k], v0[k]
        tp[pmodel.idx_vs[jid]] = tau[k] - friction[k]
    a_full = pin.aba(pmodel, pdata, qp, vp, tp)
    a_ref = np.array([a_full[pmodel.idx_vs[pmodel.getJointId(n)]] for n in model.joint_names])
    np.testing.assert_allclose((v1 - v0) / arm.dt, a_ref, rtol=1e-6, atol=1e-6)
    assert np.max(np.abs(a_ref)) > 1.0  # not vacuous


def test_exact_gravity_holds_for_two_seconds(palletizer):
    q0 = {"base_yaw": 0.4, "shoulder_pitch": 0.5, "beam_pitch": -0.3}
    arm = SimulatedArm(palletizer, SimConfig(joints={n: {"initial_position": q} for n, q in q0.items()}))
    start = arm.position
    traj = _run(arm, palletizer.gravity, 2.0)
    assert np.max(np.abs(traj - start)) < 1e-3
    # and without it the same arm falls well past 1 mrad (so the test can fail)
    arm.reset(start)
    traj = _run(arm, lambda q: np.zeros(3), 0.1)
    assert np.max(np.abs(traj[-1] - start)) > 1e-2


def test_mass_scale_and_armature_closed_form(pendulum):
    q0, s, arm_j = 0.5, 1.3, 0.01
    arm = SimulatedArm(
        pendulum,
        SimConfig(
            joints={"hinge": {"initial_position": q0, "armature": arm_j}}, mass_scale=s, physics_rate_hz=4000
        ),
    )
    arm.step([0.0])
    # first step: q̇₁ = dt·a0 exactly
    assert arm.velocity[0] / arm.dt == pytest.approx(_pendulum_accel(q0, s, arm_j), rel=1e-9)
    # compensating with the unscaled model's gravity leaves (s − 1)·g: the arm falls
    arm.reset([q0])
    traj = _run(arm, pendulum.gravity, 0.2)
    assert traj[-1, 0] < q0 - 1e-3
    arm.reset([q0])
    traj = _run(arm, lambda q: s * pendulum.gravity(q), 0.2)
    assert abs(traj[-1, 0] - q0) < 1e-9


J_ROTOR, GEAR = 3.0e-5, 40.0  # motor side [kg·m²], θ_motor/θ_joint → n²J = 0.048 kg·m²


def _first_step_accel(arm, tau=0.0):
    q0 = arm.position
    arm.step([tau])
    accel = arm.velocity[0] / arm.dt  # first step from rest: q̇₁ = dt·a0 exactly
    arm.reset(q0)
    return accel


def test_actuators_from_config_closed_form(pendulum):
    q0, s = 0.5, 1.3
    act = ActuatorModel(["hinge"], rotor_inertia=J_ROTOR, gear_ratio=-GEAR)  # sign of n irrelevant
    arm = SimulatedArm(
        pendulum,
        SimConfig(
            joints={"hinge": {"initial_position": q0}}, mass_scale=s, physics_rate_hz=4000, actuators=act
        ),
    )
    # n²J is not scaled by mass_scale (the rotor is not a link)
    assert _first_step_accel(arm) == pytest.approx(_pendulum_accel(q0, s, GEAR**2 * J_ROTOR), rel=1e-9)
    assert arm.armature[0] == pytest.approx(0.048, rel=1e-12)
    assert arm.actuators is act
    np.testing.assert_allclose(arm.mass_matrix([q0]), [[s * (I_YY + M_LINK * L_COM**2) + 0.048]], rtol=1e-12)


def test_actuators_from_model_counted_once_friction_ignored(pendulum):
    q0 = 0.5
    expected = _pendulum_accel(q0, 1.0, GEAR**2 * J_ROTOR, tau=0.3)
    cfg = SimConfig(joints={"hinge": {"initial_position": q0}}, physics_rate_hz=4000)
    # the model's actuator model gives n²J; its viscous/Coulomb are not added as smooth
    # friction (the sim's friction is its sticking model: here none)
    model = pendulum.with_actuators(
        ActuatorModel(1, rotor_inertia=J_ROTOR, gear_ratio=GEAR, viscous=0.5, coulomb=0.2)
    )
    arm = SimulatedArm(model, cfg)
    assert _first_step_accel(arm, 0.3) == pytest.approx(expected, rel=1e-9)
    assert arm.state().friction[0] == 0.0
    # the same n²J from the sim config and on the model: once, not twice
    same = ActuatorModel(["hinge"], rotor_inertia=J_ROTOR, gear_ratio=GEAR)
    arm = SimulatedArm(
        pendulum.with_actuators(same), SimConfig(joints=cfg.joints, physics_rate_hz=4000, actuators=same)
    )
    assert _first_step_accel(arm, 0.3) == pytest.approx(expected, rel=1e-9)
    # the sim config's "true" actuators replace the model's (compensator's) belief
    believed = pendulum.with_actuators(ActuatorModel(1, rotor_inertia=1e-3, gear_ratio=GEAR))
    arm = SimulatedArm(believed, SimConfig(joints=cfg.joints, physics_rate_hz=4000, actuators=same))
    assert _first_step_accel(arm, 0.3) == pytest.approx(expected, rel=1e-9)
    # the model handed over is not changed
    assert believed.actuator_terms.reflected_inertia[0] == pytest.approx(1.6)


def test_armature_and_actuator_on_one_joint_rejected(pendulum):
    act = ActuatorModel(["hinge"], rotor_inertia=J_ROTOR, gear_ratio=GEAR)
    cfg = SimConfig(joints={"hinge": {"armature": 0.01}}, actuators=act)
    with pytest.raises(ConfigError, match="armature") as err:
        SimulatedArm(pendulum, cfg)
    assert err.value.key == "joints.hinge.armature"
    with pytest.raises(ConfigError, match="armature"):
        SimulatedArm(pendulum.with_actuators(act), SimConfig(joints={"hinge": {"armature": 0.01}}))


def test_sim_yaml_actuators_block(tmp_path, pendulum):
    path = tmp_path / "sim.yaml"
    path.write_text(
        "simulation:\n  actuators:\n    joints: [hinge]\n    rotor_inertia: 3.0e-5\n"
        "    gear_ratio: [40]\n  joints:\n    hinge: {initial_position: 0.5}\n"
    )
    cfg = SimConfig.from_yaml(path)
    assert cfg.actuators.joint_names == ("hinge",)
    arm = SimulatedArm(pendulum, cfg)
    assert arm.armature[0] == pytest.approx(40.0**2 * 3.0e-5, rel=1e-12)


def test_actuator_joint_not_in_model_rejected(pendulum):
    cfg = SimConfig(actuators=ActuatorModel(["elbow"], rotor_inertia=1e-5))
    with pytest.raises(ConfigError, match="hinge"):
        SimulatedArm(pendulum, cfg)


def test_payload_when_holding(pendulum):
    mp, lp = 0.3, 0.3  # point payload at the tip frame origin (0.3 m below the hinge)
    payload = Payload.point(mp, parent="tip")
    q0 = 0.6
    arm = SimulatedArm(pendulum, SimConfig(joints={"hinge": {"initial_position": q0}}), payload=payload)
    g_loaded = (M_LINK * L_COM + mp * lp) * G * math.sin(q0)
    j_loaded = I_YY + M_LINK * L_COM**2 + mp * lp**2
    arm.set_holding(True)
    arm.step([0.0])
    assert arm.velocity[0] / arm.dt == pytest.approx(-g_loaded / j_loaded, rel=1e-9)
    arm.reset([q0])
    traj = _run(arm, lambda q: [g_loaded if abs(q[0] - q0) < 1 else 0.0], 0.5)
    assert abs(traj[-1, 0] - q0) < 1e-9
    arm.set_holding(False)
    arm.step([g_loaded])  # the bare arm is pushed up by the extra torque
    assert arm.velocity[0] > 0


FRICTION = dict(
    coulomb=0.2, stribeck_breakaway=0.1, stribeck_velocity=0.05, stribeck_exponent=2.0, viscous=0.05
)


@pytest.mark.parametrize("direction", [1.0, -1.0])
def test_sticks_below_breakaway_moves_above(turntable, direction):
    arm = SimulatedArm(turntable, SimConfig(joints={"yaw": FRICTION}))
    breakaway = FRICTION["coulomb"] + FRICTION["stribeck_breakaway"]
    traj = _run(arm, lambda q: [direction * 0.98 * breakaway], 0.5)
    assert np.all(traj == 0.0)  # stuck exactly, no creep
    tau = direction * 1.2 * breakaway
    arm.step([tau])
    # at rest the budget is the breakaway: a = (τ − sign·breakaway)/J
    assert arm.velocity[0] / arm.dt == pytest.approx((tau - direction * breakaway) / J_YAW, rel=1e-9)
    traj = _run(arm, lambda q: [tau], 0.3)
    assert direction * traj[-1, 0] > 1e-3


def test_steady_sliding_velocity_closed_form(turntable):
    # τ = F_c + F_v·v + F_s·exp(−(v/v_s)²) at steady state; v ≫ v_s so the Stribeck term vanishes
    arm = SimulatedArm(turntable, SimConfig(joints={"yaw": FRICTION}))
    tau = 0.25
    v_ss = (tau - FRICTION["coulomb"]) / FRICTION["viscous"]
    arm.reset([-2.9], [v_ss * 0.5])
    traj = _run(arm, lambda q: [tau], 3.0)
    assert arm.velocity[0] == pytest.approx(v_ss, rel=1e-3)
    assert np.all(np.diff(traj[:, 0]) > 0)


def test_moving_joint_stops_and_sticks_when_torque_removed(turntable):
    arm = SimulatedArm(turntable, SimConfig(joints={"yaw": FRICTION}))
    arm.reset([0.0], [0.5])
    # decelerates at (F_c + F_v v + …)/J ≥ 0.2/J: stops within 0.5·J/0.2 s
    _run(arm, lambda q: [0.0], 0.5 * J_YAW / 0.2 + 0.01)
    stopped_at = arm.position[0]
    assert arm.velocity[0] == 0.0
    traj = _run(arm, lambda q: [0.0], 0.2)
    assert np.all(traj[:, 0] == stopped_at)


def test_coupled_arm_sticks_below_breakaway(palletizer):
    friction = {n: dict(FRICTION, coulomb=0.3) for n in palletizer.joint_names}
    q0 = {"base_yaw": 0.2, "shoulder_pitch": 0.4, "beam_pitch": 0.3}
    for n, q in q0.items():
        friction[n]["initial_position"] = q
    arm = SimulatedArm(palletizer, SimConfig(joints=friction))
    start = arm.position
    rng = np.random.default_rng(11)
    push = rng.uniform(-0.35, 0.35, 3)  # every |push| < 0.4 breakaway
    traj = _run(arm, lambda q: palletizer.gravity(q) + push, 0.5)
    assert np.all(traj == start)
    assert np.all(arm.state().stuck)
    traj = _run(arm, lambda q: palletizer.gravity(q) + np.array([0.0, 0.6, 0.0]), 0.2)
    assert traj[-1, 1] > start[1] + 1e-3  # shoulder pushed past breakaway moves forward


def test_joint_limit_clamps_with_zero_velocity(pendulum):
    arm = SimulatedArm(pendulum, SimConfig(joints={"hinge": {"initial_position": 1.9}}))
    _run(arm, lambda q: [5.0], 0.3)
    assert arm.position[0] == 2.0
    assert arm.velocity[0] == 0.0


def test_sim_yaml_of_the_example_arm(repo_root, palletizer):
    cfg = SimConfig.from_yaml(repo_root / "config" / "sim_palletizer.yaml")
    assert cfg.physics_rate_hz >= 1000
    arm = SimulatedArm(palletizer, cfg)
    assert set(cfg.joints) == set(palletizer.joint_names)
    assert np.all(arm.friction_budget(np.zeros(3)) > 0)
    # actuators block: n²·J by hand = 10²·2e-5, 40²·7.5e-6, 10²·2e-5 [kg·m²]
    assert arm.joint_names == ("base_yaw", "shoulder_pitch", "beam_pitch")
    np.testing.assert_allclose(arm.armature, [0.002, 0.012, 0.002], rtol=1e-12)
    q = [0.1, 0.3, 0.2]
    np.testing.assert_allclose(
        arm.mass_matrix(q), 1.05 * palletizer.mass_matrix(q) + np.diag([0.002, 0.012, 0.002]), rtol=1e-12
    )


def test_config_errors_name_key(tmp_path, pendulum):
    with pytest.raises(ConfigError, match="valid keys") as err:
        SimConfig.from_mapping({"simulation": {"joints": {"hinge": {"colomb": 0.1}}}})
    assert err.value.key == "joints.hinge.colomb"
    with pytest.raises(ConfigError, match="unknown key"):
        SimConfig.from_mapping({"simulation": {"mass": 1.0}})
    with pytest.raises(ConfigError) as err:
        SimConfig(joints={"hinge": {"viscous": -1.0}})
    assert "viscous" in err.value.key
    with pytest.raises(ConfigError):
        SimConfig(mass_scale=0.0)
    with pytest.raises(ConfigError, match="physics_rate_hz"):
        SimConfig(physics_rate_hz=500.0)
    with pytest.raises(ConfigError, match="not in the model"):
        SimulatedArm(pendulum, SimConfig(joints={"elbow": {}}))
    with pytest.raises(ConfigError, match="outside its limits"):
        SimulatedArm(pendulum, SimConfig(joints={"hinge": {"initial_position": 3.0}}))
    bad = tmp_path / "bad.yaml"
    bad.write_text("simulation: [1, 2")
    with pytest.raises(ConfigError) as err:
        SimConfig.from_yaml(bad)
    assert err.value.key == "sim_config"
    with pytest.raises(ConfigError):
        JointSimParams(stribeck_velocity=0.0)


def test_step_input_errors_keep_state(pendulum):
    arm = SimulatedArm(pendulum, SimConfig(joints={"hinge": {"initial_position": 0.3}}))
    with pytest.raises(InputError):
        arm.step([math.nan])
    with pytest.raises(InputError, match=r"shape \(1,\)"):
        arm.step([0.0, 0.0])
    with pytest.raises(InputError):
        arm.step([0.0], dt=0.01)
    assert arm.position[0] == 0.3 and arm.time == 0.0
    tau = np.array([0.0])
    arm.step(tau)
    assert tau[0] == 0.0  # caller's array untouched


def test_step_checks_q_and_v_once_in_one_dynamics_call(palletizer, monkeypatch):
    """step() gets M and b from one checked call (mass_and_nonlinear_effects), not two; the
    state it reaches is the one the two separate calls give (same values bit for bit)."""
    arm = SimulatedArm(palletizer, SimConfig())
    twin = SimulatedArm(palletizer, SimConfig())
    calls = []
    model = arm._model
    original = model.mass_and_nonlinear_effects
    monkeypatch.setattr(model, "mass_and_nonlinear_effects", lambda q, v: calls.append(1) or original(q, v))
    for name in ("mass_matrix", "nonlinear_effects"):
        monkeypatch.setattr(model, name, lambda *a, name=name: pytest.fail(f"step() called {name}"))
    tau = np.array([0.05, -0.2, 0.1])
    for _ in range(50):  # 50 steps
        state = arm.step(tau)
    assert len(calls) == 50
    monkeypatch.undo()

    def separate(q, v):  # the two calls step() made before
        return twin._model.mass_matrix(q), twin._model.nonlinear_effects(q, v)

    monkeypatch.setattr(twin._model, "mass_and_nonlinear_effects", separate)
    for _ in range(50):
        other = twin.step(tau)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(state, other))
    assert np.abs(state[0] - SimulatedArm(palletizer, SimConfig()).position).max() > 1e-4  # it moved
