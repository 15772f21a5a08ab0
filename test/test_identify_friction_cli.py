"""Tests of the identify_friction command-line tool (gravity_friction_comp.tools).

Logs are synthetic: base_yaw of urdf/palletizer.urdf (vertical axis, so no gravity torque)
sweeps at constant speeds; its effort is the closed-form friction
``F_c·sign(v) + F_v·v`` plus noise; the other joints are held, their effort is g(q).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from conftest import REPO_ROOT, sweep_log

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.ident.joint_log import JointStateLog, write_csv
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.tools.identify_friction import main

URDF = str(REPO_ROOT / "urdf" / "palletizer.urdf")
FC, FV = 0.15, 0.05


def _log(moving: bool = True, friction=None) -> JointStateLog:
    """The sweep log (conftest.sweep_log); ``friction(v)`` [N·m] replaces the closed-form
    truth ``F_c·sign(v) + F_v·v`` if given."""
    truth = (lambda v: FC * np.sign(v) + FV * v) if friction is None else friction
    return sweep_log(truth, moving=moving)[1]


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "log.csv"
    write_csv(path, _log())
    return path


def test_identifies_and_writes_loadable_yaml(csv_path, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(
        ["--csv", str(csv_path), "--urdf", URDF, "--joints", "base_yaw", "--out-dir", str(out), "--no-plots"]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert "<- selected" in captured.out and "base_yaw" in captured.out
    assert "[" in captured.err and "]" in captured.err  # progress bar on stderr
    model = FrictionModel.from_yaml(out / "friction_identified.yaml", ["base_yaw"])
    tau = model.torque(np.array([0.5]))
    assert tau[0] == pytest.approx(FC + FV * 0.5, abs=0.005)  # closed form of the truth
    # not identified → left out of the YAML (issue 16: no zeros written), with a warning
    assert yaml.safe_load((out / "friction_identified.yaml").read_text())["joints"] == ["base_yaw"]
    assert "joints left out" in captured.err and "shoulder_pitch: not requested" in captured.err
    with pytest.raises(ConfigError, match="not in the file's joints"):
        FrictionModel.from_yaml(out / "friction_identified.yaml", ["base_yaw", "shoulder_pitch"])
    assert (out / "base_yaw_m1.json").exists()


def test_others_from_keeps_the_arm_yaml_for_joints_not_identified(csv_path, tmp_path, capsys):
    """--others-from config/palletizer_arm.yaml: base_yaw identified (F_c + F_v·v of the
    sweep), shoulder_pitch and beam_pitch (not moved) keep that file's values (breakaway
    0.20/0.10, viscous 0.04/0.02, eps 0.02, read off the file), so the YAML loads for all
    three joints (the demo's friction node takes all of them)."""
    arm_yaml = REPO_ROOT / "config" / "palletizer_arm.yaml"
    out = tmp_path / "out"
    argv = ["--csv", str(csv_path), "--urdf", URDF, "--out-dir", str(out), "--no-plots"]
    assert main([*argv, "--others-from", str(arm_yaml)]) == 0
    assert "kept from" in capsys.readouterr().err
    written = yaml.safe_load((out / "friction_identified.yaml").read_text())
    joints = ["base_yaw", "shoulder_pitch", "beam_pitch"]
    assert written["joints"] == joints
    assert written["identification"]["kept"] == ["shoulder_pitch", "beam_pitch"]
    model = FrictionModel.from_yaml(out / "friction_identified.yaml", joints)
    v = np.array([0.5, 0.5, -0.5])
    tau = model.torque(v)
    assert tau[0] == pytest.approx(FC + FV * 0.5, abs=0.005)
    # the kept joints: 0.20·tanh(0.5/0.02) + 0.04·0.5 and −(0.10·tanh(25) + 0.02·0.5), by hand
    assert tau[1] == pytest.approx(0.20 * np.tanh(25.0) + 0.04 * 0.5, abs=1e-6)
    assert tau[2] == pytest.approx(-(0.10 * np.tanh(25.0) + 0.02 * 0.5), abs=1e-6)


def _run_err(argv, capsys):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    return err


def test_missing_joint(csv_path, tmp_path, capsys):
    err = _run_err(
        ["--csv", str(csv_path), "--urdf", URDF, "--joints", "elbow", "--out-dir", str(tmp_path)], capsys
    )
    assert "elbow" in err and "base_yaw" in err  # names the valid joints


def test_log_lacks_model_joint(tmp_path, capsys):
    log = _log().select(["base_yaw", "shoulder_pitch"])
    path = tmp_path / "two.csv"
    write_csv(path, log)
    err = _run_err(["--csv", str(path), "--urdf", URDF, "--out-dir", str(tmp_path)], capsys)
    assert "beam_pitch" in err and "not in the log" in err


def test_too_little_motion(tmp_path, capsys):
    path = tmp_path / "still.csv"
    write_csv(path, _log(moving=False))
    err = _run_err(
        ["--csv", str(path), "--urdf", URDF, "--joints", "base_yaw", "--out-dir", str(tmp_path)], capsys
    )
    assert "too little motion" in err and "base_yaw" in err


def test_missing_files_and_topic(tmp_path, capsys):
    err = _run_err(["--csv", str(tmp_path / "nope.csv"), "--urdf", URDF], capsys)
    assert "nope.csv" in err
    err = _run_err(["--bag", str(tmp_path / "nobag"), "--urdf", URDF], capsys)
    assert "nobag" in err
    from test_ident_identify import _write_bag

    bag = tmp_path / "bag"
    _write_bag(
        bag,
        ["base_yaw"],
        np.arange(3) * 0.1,
        np.zeros((3, 1)),
        np.zeros((3, 1)),
        np.zeros((3, 1)),
        topic="/arm/joint_states",
    )
    err = _run_err(["--bag", str(bag), "--urdf", URDF], capsys)
    assert "/joint_states" in err and "/arm/joint_states" in err


def test_nan_data_exit_code_2_in_a_subprocess(tmp_path):
    log = _log()
    eff = log.effort.copy()
    eff[50, 0] = np.nan
    path = tmp_path / "nan.csv"
    write_csv(path, log._replace(effort=eff))
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gravity_friction_comp.tools.identify_friction",
            "--csv",
            str(path),
            "--urdf",
            URDF,
            "--out-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "NaN" in proc.stderr and "sample 50" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_reversed_sign_convention_exits_2(tmp_path, capsys):
    # effort logged with the opposite sign: friction pushes along the motion
    path = tmp_path / "neg.csv"
    write_csv(path, _log(friction=lambda v: -FC * np.sign(v) - FV * v))
    out = tmp_path / "out"
    err = _run_err(
        ["--csv", str(path), "--urdf", URDF, "--joints", "base_yaw", "--out-dir", str(out), "--no-plots"],
        capsys,
    )
    assert "base_yaw" in err and "sign convention" in err and "reversed" in err
    assert not (out / "friction_identified.yaml").exists()
    assert err.count("\n") == 2  # the progress bar's line is ended, then one error line


def test_friction_above_effort_limit_warns(tmp_path, capsys):
    # 100 N·m of Coulomb friction on base_yaw, whose URDF effort limit is 10 N·m
    assert RobotModel.from_urdf(URDF).effort_limits[0] == 10.0
    path = tmp_path / "scaled.csv"
    write_csv(path, _log(friction=lambda v: 100.0 * np.sign(v)))
    out = tmp_path / "out"
    code = main(
        ["--csv", str(path), "--urdf", URDF, "--joints", "base_yaw", "--out-dir", str(out), "--no-plots"]
    )
    err = capsys.readouterr().err
    assert code == 0
    assert "warning: joint base_yaw" in err and "effort limit 10 N·m" in err
    assert "units" in err
    import yaml

    doc = yaml.safe_load((out / "friction_identified.yaml").read_text())
    assert "effort limit" in doc["identification"]["joints"]["base_yaw"]["warnings"][0]


def test_friction_beyond_friction_yaml_range_exits_2(tmp_path, capsys):
    # 1e7 N·m: friction.py refuses coefficients beyond ±1e6, so no YAML may be left
    path = tmp_path / "huge.csv"
    write_csv(path, _log(friction=lambda v: 1e7 * np.sign(v)))
    out = tmp_path / "out"
    err = _run_err(
        ["--csv", str(path), "--urdf", URDF, "--joints", "base_yaw", "--out-dir", str(out), "--no-plots"],
        capsys,
    )
    assert "warning: joint base_yaw" in err  # the effort-limit warning comes first
    assert "not a valid friction_comp block" in err and "breakaway" in err
    assert not (out / "friction_identified.yaml").exists()


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("payload: {1: 2}\n", "keys must be names"),
        ("other: 1\n", "no 'payload:' mapping"),
        ("payload: [\n", "invalid YAML"),
    ],
)
def test_bad_payload_yaml(csv_path, tmp_path, capsys, text, fragment):
    pl = tmp_path / "payload.yaml"
    pl.write_text(text)
    err = _run_err(
        [
            "--csv",
            str(csv_path),
            "--urdf",
            URDF,
            "--joints",
            "base_yaw",
            "--payload-attached",
            str(pl),
            "--out-dir",
            str(tmp_path / "o"),
            "--no-plots",
        ],
        capsys,
    )
    assert fragment in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "name, body, fragment",
    [
        (
            "short.csv",
            "time,a/position,a/velocity,a/effort\n0,0,0\n1,0,0\n",
            "line 2 has 3 cells, the header has 4",
        ),
        ("tiny_dt.csv", None, "median time step 1e-320 s is below 1e-06 s"),
    ],
)
def test_bad_csv_exits_2(tmp_path, capsys, name, body, fragment):
    path = tmp_path / name
    if body is None:  # time steps of 1e-320 s used to overflow the savgol window
        log = _log()
        write_csv(path, log._replace(time=np.arange(log.time.size) * 1e-320))
    else:
        path.write_text(body)
    err = _run_err(
        ["--csv", str(path), "--urdf", URDF, "--out-dir", str(tmp_path / "o"), "--no-plots"], capsys
    )
    assert fragment in err
