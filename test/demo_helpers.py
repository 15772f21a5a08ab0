"""Running the demo as a subprocess and re-deriving its acceptance from summary.json; the
recording of a run that recorded too little (:func:`short_recording`).

Shared by test_demo.py (palletizer, explicit files) and test_demo_arms.py (one test per arm
profile). The criteria are recomputed from the per-joint figures with the thresholds of
``tools/demo/metrics.py``, not read from the verdict.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

from graph_helpers import fresh_domain_id

from gravity_friction_comp.tools.demo.metrics import MAX_DISTAL_GROWTH, MAX_SAG_MRAD, MIN_PROXIMAL_DROP


def short_recording(n_joints: int, samples: int, lockstep: bool):
    """A :class:`~gravity_friction_comp.tools.demo.phase.Recording` of ``samples`` setpoints
    and joint_states at 250 Hz (what an overloaded machine records; below 10 it is too little)."""
    from gravity_friction_comp.tools.demo.phase import Recording

    rec = Recording(timing={"lockstep": lockstep, "sim_s": 0.01 * samples, "wall_s": 1.0})
    for k in range(samples):
        rec.setpoint_t.append(0.004 * k)
        rec.setpoint_q.append([0.0] * n_joints)
        rec.state_t.append(0.004 * k)
        rec.state_q.append([0.0] * n_joints)
    return rec


def run_demo(repo_root, out, *extra):
    """Run the demo (lockstep unless ``extra`` says otherwise) into ``out``; returns
    ``(completed process, summary.json as a dict)``."""
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
    cmd = [
        sys.executable,
        "-m",
        "gravity_friction_comp.tools.demo",
        "--output",
        str(out),
        "--domain-id",
        str(fresh_domain_id()),
        *extra,
    ]
    proc = subprocess.run(cmd, cwd=repo_root, env=env, capture_output=True, text=True, timeout=600)
    summary_path = out / "summary.json"
    assert summary_path.is_file(), (
        f"no summary (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc, json.loads(summary_path.read_text())


def check_acceptance(summary, out, *, lsb_mrad=None):
    """Assert the demo's three criteria from the per-joint numbers of ``summary``.

    Joints in ``summary["exempt"]`` (an arm profile's ``demo.exempt``) are left out of the
    criteria, each with its reason; every other joint meets the unchanged thresholds.
    ``lsb_mrad``: the expected position feedback code of every distal joint (``None``: any
    positive value, as the motor map's gear ratios give).
    """
    off, on = summary["off"], summary["on"]
    exempt = summary.get("exempt") or {}
    assert all(isinstance(r, str) and r for r in exempt.values()), exempt
    prox = [j for j in summary["proximal"] if j not in exempt]
    assert prox, "every proximal joint exempt: nothing left to accept"
    rms = lambda run: math.sqrt(sum(run[j]["rms"] ** 2 for j in prox))  # noqa: E731
    assert rms(on) <= (1.0 - MIN_PROXIMAL_DROP) * rms(off), (rms(off), rms(on))  # -70 % or better
    for j in summary["joints"]:
        if j not in exempt:
            assert on[j]["sag"] <= MAX_SAG_MRAD, (j, on[j])
    for j in summary["distal"]:
        if j in exempt:
            continue
        # +10 %, beyond one code of the 16-bit MIT position feedback
        lsb = summary["position_lsb_mrad"][j]
        if lsb_mrad is None:
            assert lsb > 0, (j, lsb)
        else:
            assert math.isclose(lsb, lsb_mrad, rel_tol=1e-9), (j, lsb, lsb_mrad)
        assert on[j]["rms"] <= (1.0 + MAX_DISTAL_GROWTH) * off[j]["rms"] + lsb, (j, off[j], on[j])
    # compensation off really is off: the payload or gravity pulls a proximal joint away
    assert max(off[j]["hold_error"] for j in prox) > 10.0
    png = out / "demo.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert summary["passed"] is True
