"""identify_friction's warnings about the log (issue 16 point 4): gaps, velocities far beyond
the excitation's, joints left out (and left out of the YAML, not written as zeros).

Logs: conftest.sweep_log (base_yaw sweeps at ±0.1…±1 rad/s in 5 ms samples; the other
joints held), with a gap cut out or a velocity spike put in by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from conftest import REPO_ROOT, sweep_log

from gravity_friction_comp.ident.identify import identify, log_warnings
from gravity_friction_comp.ident.joint_log import JointStateLog, write_csv
from gravity_friction_comp.tools.identify_friction import main


def _truth(v):
    return 0.15 * np.sign(v) + 0.05 * v


def _cut(log: JointStateLog, keep: np.ndarray) -> JointStateLog:
    return JointStateLog(
        log.joint_names, log.time[keep], log.position[keep], log.velocity[keep], log.effort[keep]
    )


def test_clean_sweep_gives_no_log_warning():
    _, log = sweep_log(_truth)
    assert log_warnings(log, ["base_yaw"]) == ()


def test_gap_is_named_with_its_length_and_place():
    _, log = sweep_log(_truth)
    keep = np.ones(log.time.size, dtype=bool)
    keep[1000:1020] = False  # 20 samples of 5 ms dropped after t = 4.995 s
    (text,) = log_warnings(_cut(log, keep), ["base_yaw"])
    assert "1 gap(s)" in text and "0.105 s at t = 4.995 s" in text


def test_velocity_far_beyond_the_excitation_is_named():
    _, log = sweep_log(_truth)
    log.velocity[2000, 0] = 20.0  # the sweep's fastest is 1 rad/s
    (text,) = log_warnings(log, ["base_yaw", "shoulder_pitch"])
    assert "joint base_yaw: 1 velocity sample(s)" in text and "up to 20 rad/s at t = 10.000 s" in text


def test_unexcited_joints_left_out_with_a_warning_and_not_written(tmp_path, capsys):
    model, log = sweep_log(_truth)
    result = identify(log, model)  # joints not given: every joint with enough motion
    assert result.joints == ("base_yaw",)
    assert set(result.left_out) == {"shoulder_pitch", "beam_pitch"}
    assert "too little motion" in result.left_out["beam_pitch"]
    assert any("joints left out" in w for w in result.warnings)
    path = tmp_path / "log.csv"
    write_csv(path, log)
    urdf = str(REPO_ROOT / "urdf" / "palletizer.urdf")
    assert main(["--csv", str(path), "--urdf", urdf, "--out-dir", str(tmp_path / "out"), "--no-plots"]) == 0
    err = capsys.readouterr().err
    assert "warning: joints left out" in err and "shoulder_pitch: too little motion" in err
    doc = yaml.safe_load((tmp_path / "out" / "friction_identified.yaml").read_text())
    assert doc["joints"] == ["base_yaw"] and len(doc["friction_comp"]["breakaway"]) == 1
    assert doc["friction_comp"]["breakaway"][0] == pytest.approx(0.15, abs=0.01)
    assert any("joints left out" in w for w in doc["identification"]["warnings"])
