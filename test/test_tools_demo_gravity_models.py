"""The demo against a simulated truth apart from the compensator's URDF (issue 16, point 3).

``true_urdf`` is checked against the simulated arm's own gravity and inertia (the
simulator scales its model by ``mass_scale`` itself). The slow test calibrates the
palletizer in simulation (calibrate_gravity --sim, the short options of
test_calib_sim.py), then runs the demo's compensated cycle on the true arm with the
calibrated, the true and the uncalibrated URDF (lockstep: deterministic): the calibrated run
is within 10 % of the true-model run (the independent route: no calibration in it), the
uncalibrated one is not.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

pytest.importorskip("pinocchio")

from gravity_friction_comp.errors import ConfigError  # noqa: E402

TRUTHS = (
    ("palletizer", "config/sim_palletizer_calib_truth.yaml"),
    ("yam_ultra", "arms/yam_ultra/sim_calib_truth.yaml"),  # mass_scale 1.05 on top of links
)


@pytest.mark.parametrize(("arm", "truth"), TRUTHS)
def test_true_urdf_is_the_simulated_arms_model(repo_root, arm, truth):
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import load_arm
    from gravity_friction_comp.sim.arm import SimulatedArm
    from gravity_friction_comp.sim.config import SimConfig
    from gravity_friction_comp.tools.demo.gravity_models import true_urdf

    model = RobotModel.from_urdf(load_arm(arm).urdf)
    config = SimConfig.from_yaml(repo_root / truth)
    sim = SimulatedArm(model, config)
    true = RobotModel.from_urdf(true_urdf(model.description.xml, config))
    rng = np.random.default_rng(3)
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    differs = 0.0
    for q in rng.uniform(lower, upper, size=(20, model.n)):
        assert np.allclose(true.gravity(q), sim.gravity(q), atol=1e-9)
        assert np.allclose(true.mass_matrix(q) + np.diag(sim.armature), sim.mass_matrix(q), atol=1e-9)
        differs = max(differs, float(np.max(np.abs(true.gravity(q) - model.gravity(q)))))
    assert differs > 0.05  # [N·m] the truth is not the URDF


def test_sim_urdf_with_other_joints_is_refused(repo_root, tmp_path):
    from gravity_friction_comp.tools.demo.options import build_setup, parse_args

    args = parse_args(
        ["--arm", "palletizer", "--sim-urdf", str(repo_root / "arms" / "yam_ultra" / "yam_ultra.urdf")]
    )
    with pytest.raises(ConfigError, match="--sim-urdf joints"):
        build_setup(args, tmp_path)


@pytest.mark.parametrize(
    ("flags", "status", "text"),
    [
        (["--realtime"], 3, "inconclusive: the machine could not keep real time ("),
        ([], 4, "the chain stopped answering: "),
    ],
)
def test_run_that_recorded_too_little_is_one_line_and_the_demos_exit(
    repo_root, tmp_path, monkeypatch, capsys, flags, status, text
):
    """A run that records too little (an overloaded machine) ends as gfc_demo's does: one
    line on stderr, exit 3 (real time) or 4 (lockstep), no RunIncomplete traceback."""
    from demo_helpers import short_recording

    from gravity_friction_comp.profiles.arm_profiles import load_arm
    from gravity_friction_comp.tools.demo import gravity_models, phase

    calls = []

    def run_phase(setup, compensate, domain, **kw):  # 3 samples: what a starved run records
        calls.append(setup.urdf)
        return short_recording(len(setup.joints), 3, setup.lockstep)

    monkeypatch.setattr(phase, "run_phase", run_phase)  # compare() imports it when it runs
    for name in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE"):  # main() sets them: restored after
        monkeypatch.setenv(name, "74" if name == "ROS_DOMAIN_ID" else "LOCALHOST")
    short = ["--move-time", "0.2", "--dwell-time", "0.2", "--start-delay", "0"]
    argv = ["--arm", "palletizer", "--calibrated", str(load_arm("palletizer").urdf), *short]
    assert gravity_models.main([*argv, *flags, "--output", str(tmp_path)]) == status
    assert len(calls) == 1  # the first run (uncalibrated) ends the comparison
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gfc_demo_gravity_models: " + text), err
    assert "too little data recorded: 3 setpoints, 3 joint_states" in err[0]
    assert not (tmp_path / "gravity_models.json").exists()  # no verdict on a run not judged


@pytest.mark.slow
def test_calibrated_urdf_tracks_within_10_percent_of_the_true_model(repo_root, tmp_path, monkeypatch):
    pytest.importorskip("rclpy")
    pytest.importorskip("can")
    from graph_helpers import fresh_domain_id

    from gravity_friction_comp.model.urdf import read_source
    from gravity_friction_comp.sim.config import SimConfig
    from gravity_friction_comp.tools import calibrate_gravity
    from gravity_friction_comp.tools.demo.gravity_models import compare, true_urdf, verdict
    from gravity_friction_comp.tools.demo.options import build_setup, parse_args

    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    truth = str(repo_root / "config" / "sim_palletizer_calib_truth.yaml")
    calib = tmp_path / "calib"
    argv = ["--sim", "--arm", "palletizer", "--sim-config", truth, "--out-dir", str(calib), "--poses", "6"]
    # dithered holds, one side (the dither slips each joint both ways; docs/gravity_calibration.md)
    argv += [
        "--approach",
        "0",
        "--dither",
        "0.02",
        "--dither-cycles",
        "1",
        "--move-time",
        "0.6",
        "--approach-time",
        "0.3",
    ]
    assert calibrate_gravity.main(argv) == 0
    demo = ["--arm", "palletizer", "--sim-config", truth, "--move-time", "0.8", "--dwell-time", "0.8"]
    setup = build_setup(parse_args([*demo, "--start-delay", "1.0"]), tmp_path)
    sim_urdf = setup.urdf  # the simulated arm: the profile's URDF with the truth's links
    true_path = tmp_path / "true.urdf"
    true_path.write_text(true_urdf(read_source(sim_urdf)[0], SimConfig.from_yaml(truth)))
    urdfs = {"calibrated": str(calib / "calibrated.urdf"), "true": str(true_path), "uncalibrated": sim_urdf}
    results = compare(setup, urdfs, sim_urdf, fresh_domain_id())
    ok, lines = verdict(setup, results)
    print("\n".join(lines), {k: (v["proximal_rms"], v["sag"], v["hold"]) for k, v in results.items()})
    assert ok, lines
    # the criterion tells a wrong model apart: the URDF's own fails it
    bad, bad_lines = verdict(setup, results, "uncalibrated")
    assert not bad, bad_lines
    assert results["true"]["proximal_rms"] > 1.0  # the runs moved the arm (mrad)
    assert pathlib.Path(urdfs["calibrated"]).read_text() != pathlib.Path(sim_urdf).read_text()
