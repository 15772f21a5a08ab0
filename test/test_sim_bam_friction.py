"""Tests of gravity_friction_comp.sim.bam_friction: BAM M1–M6 as the simulated arm's friction.

Independent route: Rhoban BAM's reference simulator step (``bam/simulate.py``,
``Simulator.step``) and its friction budget (``bam/model.py``, ``Model.compute_frictions``),
both at Rhoban/bam commit 1b5a1cee2e6dcd2ab8c12b013f1e05482b16cb96, re-implemented below from
the published code (scalar, one joint), on a pendulum whose gravity and inertia are closed
forms (not Pinocchio). BAM JSONs: test/data/bam (Rhoban/bam ``bam/params/``).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.friction.bam import BAM_MODELS
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.config import JointSimParams, SimConfig

G = 9.81
M_LINK, L_COM, I_YY = 20.0, 0.5, 0.3  # heavy pendulum: m g L = 98 N·m, above eRob's friction

PENDULUM = f"""<robot name="pendulum">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0 0 -{L_COM}"/><mass value="{M_LINK}"/>
    <inertia ixx="{I_YY}" iyy="{I_YY}" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="300" velocity="5"/></joint>
</robot>"""

SLIDER = """<robot name="slider">
  <link name="base"/>
  <link name="cart"><inertial><mass value="2"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="rail" type="prismatic"><parent link="base"/><child link="cart"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="100" velocity="1"/></joint>
</robot>"""


def bam_json(data, name: str) -> dict:
    return json.loads((data / "bam" / "erob80_100" / f"{name}.json").read_text())


def reference_frictions(p: dict, motor_torque: float, external_torque: float, dtheta: float):
    """BAM ``Model.compute_frictions`` (bam/model.py @1b5a1ce), scalar: (frictionloss, damping)."""
    model = p["model"]
    load_dependent = model in ("m3", "m4", "m5", "m6")
    directional = model in ("m5", "m6")
    stribeck = model in ("m2", "m4", "m5", "m6")
    quadratic = model == "m6"
    if directional:
        gearbox = abs(external_torque * p["load_friction_external"] - motor_torque * p["load_friction_motor"])
        if stribeck:
            gearbox_s = abs(
                external_torque * p["load_friction_external_stribeck"]
                - motor_torque * p["load_friction_motor_stribeck"]
            )
    else:
        gearbox = abs(external_torque - motor_torque)
    if stribeck:
        coeff = math.exp(-(abs(dtheta / p["dtheta_stribeck"]) ** p["alpha"]))
    loss = p["friction_base"]
    if load_dependent:
        loss += gearbox if directional else p["load_friction_base"] * gearbox
    if stribeck:
        loss += coeff * p["friction_stribeck"]
        if load_dependent:
            if directional:
                loss += gearbox_s * coeff
            else:
                loss += p["load_friction_stribeck"] * gearbox * coeff
            if quadratic:
                enable = np.sign(external_torque) != np.sign(motor_torque)
                direction_motor = abs(external_torque) < abs(motor_torque)
                direction_external = abs(external_torque) > abs(motor_torque)
                q_motor = p["load_friction_external_quad"] * abs(external_torque) ** 2
                q_external = p["load_friction_motor_quad"] * abs(motor_torque) ** 2
                loss += coeff * (direction_motor * q_motor + direction_external * q_external) * enable
    return loss, p["friction_viscous"]


def reference_step(p, q, dq, motor_torque, inertia, dt, integrator):
    """BAM ``Simulator.step`` (bam/simulate.py @1b5a1ce) for a pendulum, position rule chosen:
    ``bam`` as published, ``semi_implicit_euler`` = ``q += dq·dt`` after the velocity update."""
    bias_torque = -M_LINK * G * L_COM * math.sin(q)  # torque gravity applies to the hinge
    frictionloss, damping = reference_frictions(p, motor_torque, bias_torque, dq)
    net_torque = motor_torque + bias_torque
    tau_stop = (inertia / dt) * dq + net_torque
    static_friction = -np.sign(tau_stop) * min(abs(tau_stop), frictionloss + damping * abs(dq))
    net_torque += static_friction
    acc = net_torque / inertia
    dq = float(np.clip(dq + acc * dt, -100.0, 100.0))
    if integrator == "bam":
        q = q + dq * dt + 0.5 * acc * dt**2
    else:
        q = q + dq * dt
    return q, dq


def pd_torque(t: float, q: float, dq: float) -> float:
    """The same motor law for both simulators: PD to a sine, then a hold (sticks)."""
    goal = 0.6 * math.sin(2.0 * math.pi * t / 1.5) if t < 1.5 else 0.2
    return 400.0 * (goal - q) - 80.0 * dq


@pytest.mark.parametrize("integrator", ["bam", "semi_implicit_euler"])
@pytest.mark.parametrize("model", BAM_MODELS)
def test_pendulum_reproduces_bam_reference_simulator_step_by_step(data, model, integrator):
    p = bam_json(data, model)
    armature = p["armature"]
    sim = SimConfig(
        joints={"hinge": JointSimParams(bam=p, armature=armature, initial_position=0.1)},
        physics_rate_hz=1000.0,
        integrator=integrator,
    )
    arm = SimulatedArm(RobotModel.from_urdf(PENDULUM), sim)
    inertia = I_YY + M_LINK * L_COM**2 + armature
    assert arm.mass_matrix([0.3])[0, 0] == pytest.approx(inertia, rel=1e-14)
    q_ref, dq_ref, dt = 0.1, 0.0, arm.dt
    worst = 0.0
    stuck_steps = 0
    for k in range(2500):
        t = k * dt
        tau_ref = pd_torque(t, q_ref, dq_ref)
        tau = pd_torque(t, arm.position[0], arm.velocity[0])
        q_ref, dq_ref = reference_step(p, q_ref, dq_ref, tau_ref, inertia, dt, integrator)
        q, dq = arm.step([tau])
        stuck_steps += int(arm.state().stuck[0])
        worst = max(worst, abs(q[0] - q_ref), abs(dq[0] - dq_ref) * dt)
    print(f"{model} {integrator}: max |Δq| {worst:.2e} rad over 2500 steps, {stuck_steps} stuck")
    assert worst < 1e-12
    # the run exercises both branches of the clipping: sliding and stuck
    assert 100 < stuck_steps < 2400


def test_integrators_differ_by_half_a_dt2_per_step(data):
    """One step from the same state: the BAM rule adds exactly ½·dt²·q̈ to the position."""
    p = bam_json(data, "m4")
    model = RobotModel.from_urdf(PENDULUM)
    arms = {
        i: SimulatedArm(
            model, SimConfig(joints={"hinge": JointSimParams(bam=p, initial_position=0.5)}, integrator=i)
        )
        for i in ("bam", "semi_implicit_euler")
    }
    out = {i: a.step([10.0]) for i, a in arms.items()}
    v0 = 0.0
    accel = (out["bam"][1][0] - v0) / arms["bam"].dt
    assert accel != 0.0 and out["bam"][1][0] == out["semi_implicit_euler"][1][0]
    diff = out["bam"][0][0] - out["semi_implicit_euler"][0][0]
    assert diff == pytest.approx(0.5 * accel * arms["bam"].dt ** 2, rel=1e-9)


def test_budget_uses_the_joints_own_motor_and_external_torques(data):
    """friction_budget of a BAM joint equals BAM's compute_frictions budget (+ damping·|v|)."""
    for name in BAM_MODELS:
        p = bam_json(data, name)
        arm = SimulatedArm(RobotModel.from_urdf(PENDULUM), SimConfig(joints={"hinge": JointSimParams(bam=p)}))
        for v, tau_m, tau_e in ((0.0, 30.0, -20.0), (0.7, -5.0, 40.0), (-2.5, 60.0, 60.0), (0.1, -3.0, 8.0)):
            loss, damping = reference_frictions(p, tau_m, tau_e, v)
            got = arm.friction_budget([v], [tau_m], [tau_e])[0]
            assert got == pytest.approx(loss + damping * abs(v), rel=1e-14, abs=1e-15)


def test_sim_yaml_reads_bam_path_relative_to_the_yaml_and_inline(data, tmp_path):
    src = data / "bam" / "erob80_100" / "m6.json"
    (tmp_path / "bam").mkdir()
    (tmp_path / "bam" / "m6.json").write_text(src.read_text())
    yaml_path = tmp_path / "sim.yaml"
    yaml_path.write_text(
        "simulation:\n  integrator: bam\n  joints:\n    hinge: {bam: bam/m6.json, initial_position: 0.2}\n"
    )
    cfg = SimConfig.from_yaml(yaml_path)
    assert cfg.integrator == "bam"
    assert cfg.joint("hinge").bam.model == "m6"
    assert cfg.joint("hinge").bam.load_friction_motor == bam_json(data, "m6")["load_friction_motor"]
    inline = SimConfig.from_mapping({"joints": {"hinge": {"bam": bam_json(data, "m6")}}})
    assert inline.joint("hinge").bam == cfg.joint("hinge").bam


def test_bad_bam_input_is_refused_with_the_reason(data, tmp_path):
    p = bam_json(data, "m4")
    with pytest.raises(ConfigError, match="counted twice"):
        SimConfig.from_mapping({"joints": {"hinge": {"bam": p, "coulomb": 0.5}}})
    with pytest.raises(ConfigError, match="integrator.*semi_implicit_euler, bam"):
        SimConfig(integrator="rk4")
    with pytest.raises(ConfigError, match="joints.hinge.bam"):
        SimConfig.from_mapping({"joints": {"hinge": {"bam": str(tmp_path / "missing.json")}}})
    with pytest.raises(ConfigError, match="joints.hinge.bam"):
        SimConfig.from_mapping({"joints": {"hinge": {"bam": 3.0}}})
    # a prismatic joint: the simulator's load is a force, BAM's a gearbox torque
    with pytest.raises(ConfigError, match="prismatic") as err:
        SimulatedArm(RobotModel.from_urdf(SLIDER), SimConfig(joints={"rail": {"bam": p}}))
    assert err.value.key == "joints.rail.bam"


def test_load_dependent_bam_on_a_mimic_master_is_refused(data):
    urdf = data / "urdf" / "synthetic" / "mimic_defaults_and_offset.urdf"
    model = RobotModel.from_urdf(str(urdf))
    master = next(iter(model.mimic_joints.values())).master
    with pytest.raises(ConfigError, match="drives mimic joint") as err:
        SimulatedArm(model, SimConfig(joints={master: {"bam": bam_json(data, "m4")}}))
    assert err.value.key == f"joints.{master}.bam"
    # a model without load term needs no load: accepted
    SimulatedArm(model, SimConfig(joints={master: {"bam": bam_json(data, "m2")}}))
