"""calibrate_gravity record: no overwrite, nothing written without joint_states, clean stop on signals."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("pinocchio")
pytest.importorskip("rclpy")

from gravity_friction_comp.tools import calibrate_gravity  # noqa: E402


def test_record_refuses_to_overwrite(short_plan, tmp_path, capsys):
    out = tmp_path / "log.csv"
    out.write_text("keep me\n")
    assert calibrate_gravity.main(["record", "--plan", str(short_plan), "--out", str(out)]) == 2
    assert "exists" in capsys.readouterr().err
    assert out.read_text() == "keep me\n"


def _run(args, tmp_path, after=None):
    root = str(pathlib.Path(__file__).resolve().parents[1])
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONPATH=root)
    env.setdefault("ROS_DOMAIN_ID", "51")
    cmd = [sys.executable, "-m", "gravity_friction_comp.tools.calibrate_gravity", *args]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    if after is not None:
        after(proc)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_record_refuses_a_missing_output_folder_before_recording(short_plan, tmp_path, capsys):
    out = tmp_path / "missing" / "log.csv"
    assert calibrate_gravity.main(["record", "--plan", str(short_plan), "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not out.parent.exists()


def test_record_without_joint_states_writes_nothing(short_plan, tmp_path):
    rc, err = _run(["record", "--plan", str(short_plan), "--out", "log.csv"], tmp_path)
    assert rc == 2, err
    assert "Traceback" not in err and "no joint_states" in err
    assert not (tmp_path / "log.csv").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_record_stops_cleanly_on_signal(sig, short_plan, tmp_path):
    plan = short_plan.read_text().replace("hold_time: 0.3", "hold_time: 60.0")
    short_plan.write_text(plan)  # long enough to be interrupted while spinning

    seen = []

    def interrupt(proc):
        # the signal goes once the tool says it records (its handlers are in place): a fixed
        # sleep raced the imports and rclpy start-up on a loaded machine
        seen.append(proc.stderr.readline())
        time.sleep(0.3)
        proc.send_signal(sig)

    rc, err = _run(["record", "--plan", str(short_plan), "--out", "log.csv"], tmp_path, interrupt)
    assert "recording" in seen[0] and "Ctrl-C stops" in seen[0], seen
    assert "Traceback" not in err, err
    assert rc == 1 and "stopped by signal" in err
    assert not (tmp_path / "log.csv").exists()


def test_record_refuses_a_plan_faster_than_the_velocity_limits(short_plan, tmp_path, capsys):
    text = short_plan.read_text()
    fast = "\n".join(
        "  move_time: 0.01" if ln.strip().startswith("move_time:") else ln for ln in text.splitlines()
    )
    short_plan.write_text(fast + "\n")
    assert (
        calibrate_gravity.main(["record", "--plan", str(short_plan), "--out", str(tmp_path / "log.csv")]) == 2
    )
    assert "velocity limits" in capsys.readouterr().err
    assert not (tmp_path / "log.csv").exists()
