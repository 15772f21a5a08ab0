"""calibrate_gravity: every bad input gives the one-line ``error:`` and exit 2 (no traceback)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pinocchio")

from gravity_friction_comp.calib.plan import load_plan  # noqa: E402
from gravity_friction_comp.errors import ConfigError  # noqa: E402
from gravity_friction_comp.tools import calibrate_gravity  # noqa: E402

BAD = [
    ["plan", "--dither", "nan"],
    ["plan", "--dither", "-1"],
    ["plan", "--approach", "-0.1"],
    ["plan", "--move-time", "0"],
    ["plan", "--dither-period", "0"],
    ["plan", "--dither-cycles", "0"],
    ["plan", "--margin", "nan"],
    ["--sim", "--dither-period", "0"],
    ["--sim", "--payload-mass", "nan"],
    ["record", "--plan", "p.yaml", "--rate", "0"],
    ["record", "--plan", "p.yaml", "--rate", "nan"],
    ["record", "--plan", "p.yaml", "--rate", "-5"],
]


@pytest.mark.parametrize("argv", BAD, ids=" ".join)
def test_bad_number_is_one_line_error(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert calibrate_gravity.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("calibrate_gravity: error: ")
    assert list(tmp_path.iterdir()) == []  # nothing written


def _plan_file(tmp_path, **changes):
    body = {
        "joints": ["a"],
        "home": [0.0],
        "poses": [[0.1]],
        "approach": 0.1,
        "move_time": 1.0,
        "approach_time": 0.5,
        "hold_time": 1.0,
        "settle_time": 0.5,
        "dither": 0.0,
    }
    body.update(changes)
    lines = "".join(f"  {k}: {v}\n" for k, v in body.items())
    path = tmp_path / "plan.yaml"
    path.write_text("calibration_plan:\n" + lines)
    return path


@pytest.mark.parametrize(
    "change",
    [{"dither": ".nan"}, {"dither": -1}, {"approach": ".nan"}, {"move_time": 0}, {"approach_time": -1}],
    ids=str,
)
def test_load_plan_rejects_bad_numbers(change, tmp_path):
    load_plan(_plan_file(tmp_path))  # the unedited file loads
    with pytest.raises(ConfigError):
        load_plan(_plan_file(tmp_path, **change))


def test_no_command_message_lists_payload(capsys):
    assert calibrate_gravity.main([]) == 2
    assert "plan, record, fit, payload" in capsys.readouterr().err


def test_sim_unknown_payload_parent_refused_before_recording(tmp_path, capsys):
    out = tmp_path / "calib"
    argv = ["--sim", "--payload-mass", "0.1", "--payload-parent", "nosuch", "--out-dir", str(out)]
    assert calibrate_gravity.main(argv) == 2
    err = capsys.readouterr().err
    assert "'nosuch'" in err and "links:" in err and "base_link" in err
    assert not out.exists()  # refused before the output folder or any file was written


def _peak_speeds(plan, model):
    """Peak |setpoint velocity| (n,) [rad/s] of the plan's profile, sampled every 2 ms."""
    prof = plan.profile(model.position_lower, model.position_upper)
    t = np.arange(0.0, prof.period, 0.002)
    return np.max(np.abs([prof.sample(x).velocity for x in t]), axis=0)


@pytest.mark.parametrize("dither", [0.0, 0.02])
def test_plan_respects_velocity_limits(dither, tmp_path, capsys):
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    model = RobotModel.from_urdf(load_arm("palletizer").urdf)
    out = tmp_path / "plan.yaml"
    assert calibrate_gravity.main(["plan", "--poses", "6", "--dither", str(dither), "--out", str(out)]) == 0
    plan = load_plan(out)
    assert plan.move_time > 1.2  # the default 1.2 s moved base_yaw at 5.49 rad/s (limit 3.0)
    assert "lengthened" in capsys.readouterr().out
    peak = _peak_speeds(plan, model)
    assert np.all(peak <= np.asarray(model.velocity_limits) * (1.0 + 1e-6)), (peak, model.velocity_limits)


def test_plan_refuses_dither_faster_than_limit(tmp_path, capsys):
    out = tmp_path / "plan.yaml"
    argv = ["plan", "--poses", "4", "--dither", "1.0", "--dither-period", "0.5", "--out", str(out)]
    assert calibrate_gravity.main(argv) == 2  # 2π·1/0.5 = 12.6 rad/s
    assert "12.6 rad/s" in capsys.readouterr().err and not out.exists()


def test_plan_with_all_poses_alike_is_refused(tmp_path, capsys):
    out = tmp_path / "plan.yaml"
    assert calibrate_gravity.main(["plan", "--poses", "6", "--margin", "10", "--out", str(out)]) == 2
    assert "alike" in capsys.readouterr().err and not out.exists()


def test_fit_alike_check_uses_the_commanded_poses():
    """One commanded pose, measured 5 mrad apart by side (stuck joints), efforts of the wrong
    sign: the diagnosis is 'alike', not the sign contradiction."""
    from gravity_friction_comp.calib.fit import Holds, fit_gravity
    from gravity_friction_comp.calib.regressor import StaticRegressor
    from gravity_friction_comp.errors import IdentificationError
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    model = RobotModel.from_urdf(load_arm("palletizer").urdf)
    q0 = 0.5 * (np.asarray(model.position_lower) + np.asarray(model.position_upper)) + 0.3
    side = np.array([-1, 1] * 6)
    planned = np.repeat(q0[None, :], len(side), axis=0)
    measured = planned + 0.005 * side[:, None]
    effort = -np.array([model.gravity(q) for q in measured])  # wrong sign everywhere
    holds = Holds(np.repeat(np.arange(6), 2), side, measured, effort, tuple(range(model.n)), planned=planned)
    with pytest.raises(IdentificationError, match="alike"):
        fit_gravity(StaticRegressor(model), holds)


@pytest.mark.parametrize("validation", [0, 4])
def test_report_says_when_nothing_is_held_out(validation):
    from gravity_friction_comp.calib.report import report_text

    report = {
        "rank": 3,
        "parameters": 8,
        "condition_number": 2.0,
        "identifiable": ["m1"],
        "holds_fit": 12,
        "holds_validation": validation,
        "joints": ["a"],
        "heldout_rms_before": [0.5],
        "heldout_rms_after": [0.1],
        "links": {},
    }
    text = report_text(report)
    assert ("no hold-out" in text) == (validation == 0)
    assert ("held-out RMS" in text) == (validation > 0)


YAM_URDF = "arms/yam_ultra/yam_ultra.urdf"


def test_plan_urdf_without_arm_uses_the_urdfs_joints(tmp_path):
    """``plan --urdf X`` without ``--arm``: every movable joint of X varies within X's limits
    (paired with the palletizer profile, none of X's joints was a bridge joint: all fixed,
    "all poses alike")."""
    from gravity_friction_comp.model.robot_model import RobotModel

    model = RobotModel.from_urdf(YAM_URDF)
    out = tmp_path / "plan.yaml"
    assert calibrate_gravity.main(["plan", "--urdf", YAM_URDF, "--poses", "4", "--out", str(out)]) == 0
    plan = load_plan(out)
    assert plan.joints == tuple(model.joint_names)
    lo, hi = np.asarray(model.position_lower), np.asarray(model.position_upper)
    wide = hi - lo > 0.3  # 2·margin: the fingers' 47 mm range is narrower and held at its middle
    assert np.all(np.ptp(plan.poses, axis=0)[wide] > 0.0)
    assert np.all(plan.poses >= lo - 1e-9) and np.all(plan.poses <= hi + 1e-9)


def test_sim_urdf_without_arm_refuses_a_foreign_urdf(tmp_path, capsys):
    out = tmp_path / "calib"
    assert calibrate_gravity.main(["--sim", "--urdf", YAM_URDF, "--poses", "4", "--out-dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert "joints of profile palletizer" in err and "pass --arm" in err and YAM_URDF in err
    assert not out.exists()


def test_help_shows_every_default(capsys):
    """Every option with a default says it in ``--help`` (top level and each command)."""
    parser = calibrate_gravity._parser()
    subs = next(a for a in parser._actions if isinstance(a, __import__("argparse")._SubParsersAction))
    for p in [parser, *subs.choices.values()]:
        text = " ".join(p.format_help().split())
        for action in p._actions:
            if (
                action.default not in (None, "==SUPPRESS==")
                and action.option_strings
                and action.dest != "help"
            ):
                assert f"(default: {action.default})" in text, (p.prog, action.dest)
