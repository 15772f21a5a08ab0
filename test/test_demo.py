"""The end-to-end demo (README command 1) on the palletizer and on the i2rt YAM Ultra.

Each run composes the real nodes with the config files, runs compensation off then on
against the simulated arm in lockstep (~20 s), and must meet issue 14's acceptance; the
test re-derives the criteria from the per-joint numbers in summary.json rather than
trusting the verdict. No rerun: lockstep makes the figures a function of the inputs, which
test_demo_reproducible_under_load checks with every core kept busy.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml

pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # runs the demo chain in real time (fast tier: -m "not slow")

from demo_helpers import check_acceptance, run_demo  # noqa: E402

#: One code of the 16-bit MIT position feedback of a direct drive at P_MAX 12.5 rad [mrad].
DIRECT_DRIVE_LSB = 2e3 * 12.5 / 65535


def test_demo_palletizer(repo_root, tmp_path):
    proc, summary = run_demo(repo_root, tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert summary["joints"] == ["base_yaw", "shoulder_pitch", "beam_pitch"]
    assert "ACCEPTED" in proc.stdout and "RMS on" in proc.stdout
    # the thresholds are printed with the verdict
    assert (
        "thresholds (tools/demo/metrics.py): proximal RMS drop ≥ 70%, sag while holding ≤ 1 mrad"
        in proc.stdout
    )
    assert summary["timing"]["lockstep"] is True
    # issue 14 point 7: ~20 s on this 2-core machine when idle (≤ 30 s asked), slower under
    # load by design (lockstep waits for the chain), so the speed is reported, not asserted
    assert "x real time (lockstep)" in proc.stdout
    assert summary["timing"]["sim_s"] >= 2 * 14.5 - 0.1  # both runs simulated the whole cycle
    check_acceptance(summary, tmp_path, lsb_mrad=DIRECT_DRIVE_LSB)


@contextlib.contextmanager
def busy_cores():
    """One busy-loop process per core for the duration (killed, by pid, in any case)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait(timeout=10)


def test_demo_reproducible_under_load(repo_root, tmp_path):
    """Two lockstep runs, the second with every core busy: the same positions (≤ 1e-12 rad)
    and the same summary figures."""
    proc_a, a = run_demo(repo_root, tmp_path / "a")
    with busy_cores() as procs:
        proc_b, b = run_demo(repo_root, tmp_path / "b")
        assert all(p.poll() is None for p in procs)  # the load was there the whole run
    assert proc_a.returncode == 0 and proc_b.returncode == 0, (proc_a.stdout[-2000:], proc_b.stdout[-2000:])
    assert a["off"] == b["off"] and a["on"] == b["on"] and a["criteria"] == b["criteria"]
    for run in ("off", "on"):
        ra = np.load(tmp_path / "a" / f"recording_{run}.npz")
        rb = np.load(tmp_path / "b" / f"recording_{run}.npz")
        n = min(len(ra["state_q"]), len(rb["state_q"]))
        assert n > 5000 and abs(len(ra["state_q"]) - len(rb["state_q"])) <= 10
        assert np.array_equal(ra["state_t"][:n], rb["state_t"][:n])
        assert np.max(np.abs(ra["state_q"][:n] - rb["state_q"][:n])) <= 1e-12
    # both ran the whole cycle
    assert b["timing"]["sim_s"] == pytest.approx(a["timing"]["sim_s"], abs=0.05)


def test_demo_realtime_reports_its_timing(repo_root, tmp_path):
    """--realtime: the verdict is ACCEPTED, NOT ACCEPTED or, when the machine could not keep
    real time, inconclusive with exit 3; the timing figures are in summary.json."""
    proc, summary = run_demo(repo_root, tmp_path, "--realtime")
    timing = summary["timing"]
    assert timing["lockstep"] is False
    assert {"off.max_lateness_ms", "on.max_setpoint_gap_ms", "on.late_command_fraction"} <= set(timing)
    verdict = summary["verdict"]
    if proc.returncode == 3:
        assert verdict.startswith("inconclusive: the machine could not keep real time (")
        assert verdict in proc.stdout
    else:
        assert proc.returncode == (0 if summary["passed"] else 1), proc.stdout[-3000:]
        assert verdict == ("ACCEPTED" if summary["passed"] else "NOT ACCEPTED")


def test_demo_yam_ultra(repo_root, tmp_path, shared_data):
    arm = shared_data / "arms/i2rt/config_friction_comp_pr/yam_ultra.yml"
    data = yaml.safe_load(arm.read_text())
    motors = data["motor_list"]
    joints = [f"dof_joint{i + 1}" for i in range(len(motors))]
    limits = {"DM4340": 28.0, "DM4310": 10.0}  # T_MAX [N·m] (FIELD_NOTES)
    motor_map = tmp_path / "yam_bridge.yaml"
    motor_map.write_text(
        yaml.safe_dump(
            {
                "mit_bridge": {
                    "ros__parameters": {
                        "joints": joints,
                        "can_id": [int(m[0]) for m in motors],
                        "master_id": [0x10 + int(m[0]) for m in motors],
                        "motor_type": [m[1] for m in motors],
                        "direction": [int(d) for d in data["directions"]],
                        "kp": [float(k) for k in data["kp"]],
                        "kd": [float(k) for k in data["kd"]],
                        "effort_limit": [limits[m[1]] for m in motors],
                        "rate_hz": 500.0,
                    }
                }
            }
        )
    )
    out = tmp_path / "out"
    proc, summary = run_demo(
        repo_root,
        out,
        "--urdf",
        str(shared_data / "urdf/i2rt_yam/yam_ultra.urdf"),
        "--arm-config",
        str(arm),
        "--motor-map",
        str(motor_map),
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert summary["joints"] == joints
    check_acceptance(summary, out, lsb_mrad=DIRECT_DRIVE_LSB)


def test_demo_bad_file_is_a_clear_error(repo_root, tmp_path):
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gravity_friction_comp.tools.demo",
            "--output",
            str(tmp_path),
            "--urdf",
            str(tmp_path / "missing.urdf"),
        ],
        cwd=repo_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "missing.urdf" in proc.stderr
