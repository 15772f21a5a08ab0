"""calib fit robustness: the recording must be the plan's run, the condition number is the
identifiable subspace's, and a failed run leaves the output folder as it was."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("pinocchio")

from gravity_friction_comp.calib.fit import fit_gravity, hold_averages  # noqa: E402
from gravity_friction_comp.calib.plan import parameter_scale, plan_poses, write_plan  # noqa: E402
from gravity_friction_comp.calib.regressor import StaticRegressor  # noqa: E402
from gravity_friction_comp.errors import IdentificationError  # noqa: E402
from gravity_friction_comp.ident.joint_log import JointStateLog, write_csv  # noqa: E402
from gravity_friction_comp.model.robot_model import RobotModel  # noqa: E402
from gravity_friction_comp.tools import calibrate_gravity  # noqa: E402


@pytest.fixture(scope="module")
def model(repo_root):
    return RobotModel.from_urdf(repo_root / "urdf" / "palletizer.urdf")


def _ideal(plan, model, rate=100.0, end=None) -> JointStateLog:
    """The plan played perfectly (q = the profile, effort = the URDF's gravity) until ``end``."""
    profile = plan.profile(model.position_lower, model.position_upper)
    t = np.arange(0.0, profile.period if end is None else end, 1.0 / rate)
    samples = [profile.sample(x) for x in t]
    q = np.array([s.position for s in samples])
    v = np.array([s.velocity for s in samples])
    return JointStateLog(model.joint_names, t, q, v, np.array([model.gravity(x) for x in q]))


def test_plan_duration_is_the_profile_period(model):
    plan = plan_poses(StaticRegressor(model), 5, candidates=50)
    period = plan.profile(model.position_lower, model.position_upper).period
    assert plan.duration() == pytest.approx(period, abs=1e-9)


def test_recording_of_another_plan_is_refused(model):
    r = StaticRegressor(model)
    plan = plan_poses(r, 6, candidates=100)
    log = _ideal(plan, model)
    hold_averages(log, plan, model.joint_names)  # the plan's own run: accepted
    longer = plan_poses(r, 8, candidates=100)
    with pytest.raises(
        IdentificationError, match=r"lasts .* s but the plan's 8 poses \(16 holds\).*covers 12 holds"
    ):
        hold_averages(log, longer, model.joint_names)
    shorter = dataclasses.replace(plan, poses=plan.poses[:4])
    with pytest.raises(IdentificationError, match="recorded with another plan"):
        hold_averages(log, shorter, model.joint_names)
    cut = _ideal(plan, model, end=plan.holds()[7].end + 0.1)
    with pytest.raises(
        IdentificationError, match="covers 8 holds; is it the plan's run, or was it cut short"
    ):
        hold_averages(cut, plan, model.joint_names)
    foreign = log._replace(joint_names=("base_yaw", "shoulder_pitch", "elbow"))
    with pytest.raises(IdentificationError, match=r"joints the plan does not: \['elbow'\]"):
        hold_averages(foreign, plan, model.joint_names)


def test_most_holds_unsettled_is_refused(model):
    plan = plan_poses(StaticRegressor(model), 6, candidates=100)
    log = _ideal(plan, model)
    moving = log.velocity.copy()
    for w in plan.holds()[:7]:  # 7 of 12 holds still move
        moving[(log.time >= w.start) & (log.time <= w.end), 1] = 0.1
    with pytest.raises(IdentificationError, match="only 5 of the plan's 12 holds settled"):
        hold_averages(log._replace(velocity=moving), plan, model.joint_names)
    holds = hold_averages(
        log._replace(velocity=np.where(log.time[:, None] > plan.holds()[2].start, log.velocity, moving)),
        plan,
        model.joint_names,
    )
    assert holds.planned_holds == 12 and len(holds.pose) == 10  # two dropped: reported
    assert fit_gravity(StaticRegressor(model), holds, holdout=0).holds_dropped == 2


def test_condition_number_is_over_the_identifiable_subspace(model, data):
    """σ_max/σ_r of the scaled stacked regressor, r = singular values above 1e-3·σ_max,
    computed here by numpy's SVD; the plan reports the same figure (same threshold)."""
    yam = RobotModel.from_urdf(data / "urdf" / "i2rt_yam" / "yam_ultra.urdf")
    for m in (model, yam):
        r = StaticRegressor(m)
        plan = plan_poses(r, 8, candidates=200)
        holds = hold_averages(_ideal(plan, m, rate=50.0), plan, m.joint_names)
        fit = fit_gravity(r, holds, holdout=0)
        y = np.vstack([r.matrix(q) for q in holds.position]) * parameter_scale(r)
        s = np.linalg.svd(y, compute_uv=False)
        rank = int((s > 1e-3 * s[0]).sum())
        assert rank < r.n_params  # rank-deficient: the full condition number is infinite
        assert fit.rank == rank and fit.condition == pytest.approx(s[0] / s[rank - 1], rel=1e-9)
        assert plan.condition == pytest.approx(fit.condition, rel=1e-6)  # poses twice: same ratio
        from gravity_friction_comp.calib.report import report_dict, report_text

        report = report_dict(r, fit)
        assert f"{r.n_params - rank} directions are unidentifiable" in report["condition_number_scope"]
        assert "identifiable subspace" in report_text(report)


def test_failed_fit_and_sim_leave_the_out_dir_as_it_was(model, tmp_path, monkeypatch, capsys):
    r = StaticRegressor(model)
    plan = plan_poses(r, 6, candidates=100)
    write_plan(tmp_path / "plan.yaml", plan)
    write_csv(tmp_path / "log.csv", _ideal(plan, model))
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("the user's")
    import gravity_friction_comp.calib.report as report

    def broken(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(report, "write_plot", broken)
    argv = ["fit", "--plan", str(tmp_path / "plan.yaml"), "--log", str(tmp_path / "log.csv")]
    assert calibrate_gravity.main([*argv, "--out-dir", str(out)]) == 2
    assert "disk full" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]  # no calibrated.urdf without its report
    monkeypatch.undo()
    assert calibrate_gravity.main([*argv, "--out-dir", str(out)]) == 0
    assert {p.name for p in out.iterdir()} == {
        "notes.txt",
        "calibrated.urdf",
        "report.yaml",
        "report.txt",
        "report.png",
    }

    import gravity_friction_comp.calib.sim_record as sim_record

    def no_holds(plan, model, *_a, **_k):  # a recording in which the arm never settles
        log = _ideal(plan, model)
        return log._replace(velocity=np.full_like(log.velocity, 0.5))

    monkeypatch.setattr(sim_record, "record_in_simulation", no_holds)
    sim_out = tmp_path / "sim"
    sim_out.mkdir()
    (sim_out / "plan.yaml").write_text("the user's own plan")
    assert calibrate_gravity.main(["--sim", "--poses", "4", "--out-dir", str(sim_out)]) == 2
    assert "no settled hold" in capsys.readouterr().err
    assert [p.name for p in sim_out.iterdir()] == ["plan.yaml"]
    assert (sim_out / "plan.yaml").read_text() == "the user's own plan"
    assert calibrate_gravity.main(["--sim", "--poses", "4", "--out-dir", str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()


def test_acceptance_verdict_per_joint():
    """Issue 16's rule: ratio ≤ 0.1 and ≤ 0.02 N·m; below the 0.02 N·m floor of uncalibrated
    error the absolute bound only; a joint without recorded effort is not judged."""
    verdict = calibrate_gravity.acceptance(
        ["a", "b", "c", "d", "e", "f"],
        ("a", "b", "c", "d", "e"),
        [0.5, 0.5, 0.3, 0.015, 0.0003, 0.02],
        [0.04, 0.01, 0.03, 0.0019, 0.0025, 0.014],
    )
    assert verdict["a"].startswith("FAIL ratio 0.080")  # within the ratio, beyond 0.02 N·m
    assert verdict["b"].startswith("pass ratio 0.020")
    assert verdict["c"].startswith("FAIL ratio 0.100")  # 0.03 > 0.02 N·m
    assert verdict["d"].startswith("pass absolute only") and "ratio 0.127" in verdict["d"]
    assert verdict["e"].startswith("pass absolute only")
    assert verdict["f"].startswith("not judged")
