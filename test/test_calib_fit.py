"""calib/: regressor, plan, fit and the calibrate_gravity CLI on ideal (friction-free) recordings."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from gravity_friction_comp.calib.fit import fit_gravity, hold_averages, link_changes  # noqa: E402
from gravity_friction_comp.calib.plan import load_plan, plan_poses, write_plan  # noqa: E402
from gravity_friction_comp.calib.regressor import StaticRegressor  # noqa: E402
from gravity_friction_comp.calib.report import calibrated_urdf  # noqa: E402
from gravity_friction_comp.errors import IdentificationError  # noqa: E402
from gravity_friction_comp.ident.joint_log import JointStateLog, write_csv  # noqa: E402
from gravity_friction_comp.model.robot_model import RobotModel  # noqa: E402
from gravity_friction_comp.sim.link_truth import parse_links, true_model  # noqa: E402
from gravity_friction_comp.tools import calibrate_gravity  # noqa: E402

TRUTH = {
    "upper_arm": {"mass_scale": 1.25, "com_offset": [0.01, 0.0, -0.015]},
    "beam": {"mass_scale": 0.8, "com_offset": [0.015, 0.0, 0.01]},
    "tool": {"extra_mass": {"mass": 0.05, "position": [0.0, 0.0, -0.03]}},
}


@pytest.fixture(scope="module")
def model(repo_root):
    return RobotModel.from_urdf(repo_root / "urdf" / "palletizer.urdf")


def ideal_log(plan, model, effort_model, rate=100.0, effort_sign=1.0) -> JointStateLog:
    """The plan played perfectly: q = the profile, effort = the given model's gravity."""
    profile = plan.profile(model.position_lower, model.position_upper)
    t = np.arange(0.0, profile.period, 1.0 / rate)
    samples = [profile.sample(x) for x in t]
    q = np.array([s.position for s in samples])
    v = np.array([s.velocity for s in samples])
    tau = effort_sign * np.array([effort_model.gravity(x) for x in q])
    return JointStateLog(model.joint_names, t, q, v, tau)


def test_regressor_reproduces_gravity_on_mimic_arms(model, data):
    for m in (model, RobotModel.from_urdf(data / "urdf" / "i2rt_yam" / "yam_ultra.urdf")):
        r = StaticRegressor(m)
        rng = np.random.default_rng(0)
        for _ in range(3):
            q = rng.uniform(m.position_lower, m.position_upper)
            np.testing.assert_allclose(r.matrix(q) @ r.prior, m.gravity(q), atol=1e-12)


PENDULUM = """<robot name="pendulum"><link name="base"/>
<link name="arm"><inertial><mass value="1"/><origin xyz="0.1 0 0"/>
<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
<limit lower="-1" upper="1" effort="5" velocity="1"/></joint></robot>"""


def test_regressor_and_plan_on_a_one_joint_arm():
    # was IndexError (Pinocchio returns a one-joint regressor as a 1-D row): calibrate_gravity
    # plan --urdf <one joint> crashed. COM (0.1, 0, 0) turned about y: z = -0.1·sin q, so
    # g(q) = ∂(m·9.81·z)/∂q = -0.981·cos q [N·m]
    m = RobotModel.from_urdf(PENDULUM)
    r = StaticRegressor(m)
    for q in (-0.7, 0.0, 0.4):
        assert r.matrix([q]).shape == (1, 4)
        np.testing.assert_allclose(r.matrix([q]) @ r.prior, [-0.981 * np.cos(q)], atol=1e-12)
    plan = plan_poses(r, 4, margin=0.15)
    assert plan.poses.shape == (4, 1) and np.all(np.abs(plan.poses) <= 0.85 + 1e-12)


def test_plan_is_well_conditioned_within_limits_and_round_trips(model, tmp_path):
    r = StaticRegressor(model)
    plan = plan_poses(r, 10, margin=0.15)
    assert np.all(plan.poses >= model.position_lower + 0.15 - 1e-12)
    assert np.all(plan.poses <= model.position_upper - 0.15 + 1e-12)
    random = plan_poses(r, 10, candidates=10)  # no choice: the first 10 random candidates
    assert plan.condition < random.condition
    write_plan(tmp_path / "p.yaml", plan)
    back = load_plan(tmp_path / "p.yaml")
    np.testing.assert_allclose(back.poses, plan.poses, atol=1e-6)
    assert len(back.holds()) == 20 and {h.side for h in back.holds()} == {-1, 1}


def test_fit_recovers_the_truth_from_an_ideal_recording(model):
    truth = true_model(model, parse_links(TRUTH))
    r = StaticRegressor(model)
    plan = plan_poses(r, 12)
    holds = hold_averages(ideal_log(plan, model, truth), plan, model.joint_names)
    fit = fit_gravity(r, holds, regularization=1e-4)
    calibrated = RobotModel.from_urdf(calibrated_urdf(r, fit))
    rng = np.random.default_rng(1)
    worst_before = worst_after = 0.0
    for _ in range(50):
        q = rng.uniform(model.position_lower, model.position_upper)
        worst_before = max(worst_before, np.abs(model.gravity(q) - truth.gravity(q)).max())
        worst_after = max(worst_after, np.abs(calibrated.gravity(q) - truth.gravity(q)).max())
    assert worst_before > 0.05
    assert worst_after < 2e-3 * worst_before
    assert fit.rank == 4 and fit.rms_after.max() < 1e-3 < fit.rms_before.max()


def test_bad_input_is_refused_by_name(model):
    r = StaticRegressor(model)
    plan = plan_poses(r, 6)
    alike = plan.__class__(**{**plan.__dict__, "poses": np.repeat(plan.poses[:1], 6, axis=0)})
    with pytest.raises(IdentificationError, match="alike"):
        fit_gravity(r, hold_averages(ideal_log(alike, model, model), alike, model.joint_names))
    log = ideal_log(plan, model, model)
    moving = log._replace(velocity=np.full_like(log.velocity, 0.5))
    with pytest.raises(IdentificationError, match="no settled hold"):
        hold_averages(moving, plan, model.joint_names)
    flipped = ideal_log(plan, model, model, effort_sign=-1.0)
    with pytest.raises(IdentificationError, match="shoulder_pitch: measured efforts contradict"):
        fit_gravity(r, hold_averages(flipped, plan, model.joint_names))
    theta = r.prior.copy()
    theta[r.names.index("beam.m")] = -0.1
    with pytest.raises(IdentificationError, match="link beam: the fit drives its mass"):
        link_changes(r, theta)


def test_cli_fit_writes_nothing_on_bad_input(model, tmp_path, repo_root, capsys):
    r = StaticRegressor(model)
    plan = plan_poses(r, 6)
    write_plan(tmp_path / "plan.yaml", plan)
    write_csv(tmp_path / "flipped.csv", ideal_log(plan, model, model, effort_sign=-1.0))
    out = tmp_path / "out"
    argv = ["fit", "--plan", str(tmp_path / "plan.yaml"), "--log", str(tmp_path / "flipped.csv")]
    assert calibrate_gravity.main([*argv, "--out-dir", str(out)]) == 2
    assert "contradict" in capsys.readouterr().err and not (out / "calibrated.urdf").exists()
    truth = true_model(model, parse_links(TRUTH))
    write_csv(tmp_path / "good.csv", ideal_log(plan, model, truth))
    argv[-1] = str(tmp_path / "good.csv")
    assert calibrate_gravity.main([*argv, "--out-dir", str(out)]) == 0
    assert {p.name for p in out.iterdir()} >= {"calibrated.urdf", "report.yaml", "report.txt", "report.png"}


def test_payload_fit_recovers_a_point_payload_and_writes_params(model, tmp_path):
    import yaml

    from gravity_friction_comp.calib.payload_fit import fit_payload, write_payload_params
    from gravity_friction_comp.model.payload import Payload

    r = StaticRegressor(model)
    plan = plan_poses(r, 8)
    held = model.with_payload(Payload.point(0.13, com=[0.01, 0.0, -0.07], parent="tool"))
    holds = hold_averages(ideal_log(plan, model, held), plan, model.joint_names)
    fit = fit_payload(r, holds, "tool")
    assert fit.mass == pytest.approx(0.13, abs=1e-6)
    # the 4-bar keeps the tool level: a COM offset never changes its moment arm (z of the
    # point moves with the tool's), so the COM is not seen and keeps the prior (0)
    assert fit.identifiable == ("mass",) and np.allclose(fit.com, 0.0, atol=1e-9)
    write_payload_params(tmp_path / "payload.yaml", fit)
    params = yaml.safe_load((tmp_path / "payload.yaml").read_text())["/**/gravity_compensation"][
        "ros__parameters"
    ]
    again = Payload.from_params(params["payload"])
    assert again.mass == pytest.approx(0.13, abs=1e-5) and again.parent == "tool"
    with pytest.raises(IdentificationError, match="payload mass"):
        arm = np.array([(r.matrix(q) @ r.prior)[list(holds.measured)] for q in holds.position])
        fit_payload(
            r, dataclasses.replace(holds, effort=2 * arm - holds.effort), "tool"
        )  # a "negative" payload


def test_payload_com_is_identified_on_a_serial_arm(data):
    from gravity_friction_comp.calib.payload_fit import fit_payload
    from gravity_friction_comp.model.payload import Payload

    arm = RobotModel.from_urdf(data / "urdf" / "i2rt_yam" / "yam_ultra.urdf")
    r = StaticRegressor(arm)
    plan = plan_poses(r, 10, candidates=300)
    held = arm.with_payload(Payload.point(0.3, com=[0.02, -0.01, 0.05], parent="gripper"))
    fit = fit_payload(r, hold_averages(ideal_log(plan, arm, held), plan, arm.joint_names), "gripper")
    assert fit.identifiable == ("mass", "com.x", "com.y", "com.z")
    assert fit.mass == pytest.approx(0.3, abs=1e-6)
    np.testing.assert_allclose(fit.com, [0.02, -0.01, 0.05], atol=1e-6)


def test_written_recordings_are_decimated_and_fit_the_same(model):
    r = StaticRegressor(model)
    plan = plan_poses(r, 6)
    log = ideal_log(plan, model, true_model(model, parse_links(TRUTH)), rate=500.0)
    small = calibrate_gravity.decimated(log)
    assert abs(small.time.size - log.time.size / 5) <= 1 and np.all(np.diff(small.time) > 0.007)
    a = fit_gravity(r, hold_averages(log, plan, model.joint_names)).theta
    b = fit_gravity(r, hold_averages(small, plan, model.joint_names)).theta
    np.testing.assert_allclose(a, b, atol=1e-9)


def test_dithered_holds_average_out_coulomb_friction_exactly(model):
    """A dithered plan: whole sine cycles per hold, continuous setpoint; with an effort of
    true gravity + Coulomb friction sign(q̇) (odd in velocity, 0.1 N·m), the window means
    of τ and of Y(q(t)) recover the truth; rows at the mean pose, Y(q̄), are off by O(A²)."""
    truth = true_model(model, parse_links(TRUTH))
    r = StaticRegressor(model)
    plan = plan_poses(r, 12, dither=0.03, dither_period=0.5, dither_cycles=2)
    assert plan.hold_time == pytest.approx(1.5) and plan.settle_time == pytest.approx(0.5)
    profile = plan.profile(model.position_lower, model.position_upper)
    for w in plan.holds()[:3]:  # the setpoint is continuous where each dithered hold ends
        end = w.end + 1e-9
        np.testing.assert_allclose(
            profile.sample(end).position, profile.sample(end - 2e-6).position, atol=1e-4
        )
    rate = 400.0
    t = np.arange(0.0, profile.period, 1.0 / rate)
    samples = [profile.sample(x) for x in t]
    q = np.array([s.position for s in samples])
    v = np.array([s.velocity for s in samples])
    tau = np.array([truth.gravity(x) for x in q]) + 0.1 * np.sign(np.round(v, 9))
    log = JointStateLog(model.joint_names, t, q, v, tau)
    holds = hold_averages(log, plan, model.joint_names)
    assert holds.samples is not None and not holds.dropped
    fit = fit_gravity(r, holds, regularization=1e-4)
    calibrated = RobotModel.from_urdf(calibrated_urdf(r, fit))
    qs = np.random.default_rng(1).uniform(model.position_lower, model.position_upper, size=(50, model.n))
    err = np.array([calibrated.gravity(x) - truth.gravity(x) for x in qs])
    before = np.array([model.gravity(x) - truth.gravity(x) for x in qs])
    assert np.abs(before).max() > 0.05
    assert np.abs(err).max() < 5e-3 * np.abs(before).max()
    nominal = fit_gravity(r, dataclasses.replace(holds, samples=None), regularization=1e-4)
    approx = RobotModel.from_urdf(calibrated_urdf(r, nominal))  # Y(q̄): O(A²) off
    err_nominal = np.array([approx.gravity(x) - truth.gravity(x) for x in qs])
    assert np.abs(err).max() < 0.5 * np.abs(err_nominal).max()  # measured 1.0e-4 vs 5.1e-4 N·m
