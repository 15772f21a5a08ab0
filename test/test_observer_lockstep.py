"""The observer in lockstep against the simulator's external effort input (issue 29 points 3–5).

The chain of each arm profile (bridge core, virtual CAN with the codec's quantized feedback,
emulated motors, the simulated arm with its sim-YAML truth: 5 % heavier links, its own
friction) through :class:`~gravity_friction_comp.sim.observer_loop.ObserverLoop`; the truth is
the hand's torque the simulator applies. The same cases as
``python -m gravity_friction_comp.tools.observer_check`` (60 s quiet runs there), shorter.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO_ROOT

from gravity_friction_comp.tools import observer_check as oc
from gravity_friction_comp.trajectory.hold import HoldProfile

pytestmark = pytest.mark.filterwarnings("ignore::gravity_friction_comp.errors.ModelWarning")

SHORT_END = oc.STEP_END  # [s] the step window: 5/K = 50 ms after the step to here


@pytest.mark.parametrize(
    "arm, joint",
    [
        ("palletizer", "base_yaw"),
        ("yam_ultra", "dof_joint1"),
        pytest.param("openarm_v10", "openarm_joint1", marks=pytest.mark.slow),  # 1 kHz: 2× the others
    ],
)
def test_one_newton_metre_step_is_seen_within_ten_percent(arm, joint):
    """A 1 N·m step on a proximal joint while it ramps at 0.3 rad/s: from 5/K on, the estimate
    minus the same run's estimate without the step is the step within 10 %, and the estimate
    is the truth within 10 % + the noise floor (the no-push run's largest |estimate|)."""
    case = oc.step_case(arm, joint, end=SHORT_END)
    assert abs(case["step_seen"] - 1.0) <= 0.1, case
    assert abs(case["mean_error"]) <= 0.1 + case["noise_floor"], case
    assert case["noise_floor"] < 0.5  # the floor is not what makes it pass
    pushed, reference = case["records"]
    before = pushed.t <= oc.STEP_AT  # lockstep: the two runs are the same run until the step
    np.testing.assert_array_equal(pushed.estimate[before], reference.estimate[before])
    assert np.any(pushed.estimate[pushed.t > oc.STEP_AT] != reference.estimate[pushed.t > oc.STEP_AT])


def test_at_rest_static_friction_hides_a_push_below_the_breakaway():
    """What it cannot see (docs/observer.md): the YAM Ultra's dof_joint1 held still (true
    breakaway 1.08 + 0.16 N·m) and pushed by 1 N·m does not move, so its motor torque does not
    change and the estimate stays at its no-push value while the truth is 1 N·m."""
    loop = oc._loop("yam_ultra", threshold=1e6, rest_band=0.0)
    try:
        loop.push(0.5, ["dof_joint1"], [1.0])
        rec = loop.run(HoldProfile(loop.model.joint_names, loop.home), 1.0)
    finally:
        loop.close()
    c = rec.column("dof_joint1")
    after = rec.t > 0.6
    assert np.all(rec.truth[after, c] == 1.0)
    assert np.abs(rec.estimate[after, c] - rec.estimate[rec.t < 0.5, c][-1]).max() < 0.02


def test_two_newton_metre_contact_detected_within_20_ms_then_held():
    """A 2 N·m contact against the palletizer's base_yaw mid-move of the pick-and-place cycle:
    detected on that joint within 20 ms of its start (none before), and the bridge core then
    holds every motor (reaction ``hold``) whatever the cycle commands."""
    case = oc.contact_case("palletizer", duration=1.3)
    assert case["detected_on"] == "base_yaw" and not case["early"], case
    assert 0.0 <= case["latency"] <= oc.MAX_LATENCY, case
    assert case["reaction_held"] and case["accepted"]
    rec = case["record"]
    assert not rec.reacting[rec.t < oc.CONTACT_AT].any()


def test_the_observer_reads_the_codecs_quantized_feedback():
    """Point 5: what the observer reads is the motors' quantized feedback: every measured
    velocity of the palletizer's DM4310/DM4340 joints is a code of the 12-bit field
    (−V_MAX + code·2V_MAX/4095), not the simulator's exact velocity."""
    from gravity_friction_comp.mit.codec import velocity_step
    from gravity_friction_comp.mit.motor_table import motor_limits

    case = oc.contact_case("palletizer", duration=1.1)
    rec = case["record"]
    assert np.abs(rec.velocity).max() > 0.1  # moving: many codes visited
    for j, motor in enumerate(("DM4310", "DM4340", "DM4310")):
        limits = motor_limits(motor)
        codes = (rec.velocity[:, j] + limits.v_max) / velocity_step(limits)
        np.testing.assert_allclose(codes, np.round(codes), atol=1e-6)
        assert len(np.unique(np.round(codes))) > 20


def test_no_false_detection_in_a_pick_and_place_cycle_with_the_payload():
    """The palletizer's pick-and-place with its payload picked up (the observer's model
    switches with it) for 6 s: no detection with the acceptance thresholds (60 s and the
    BAM truth: tools/observer_check.py, slow test below)."""
    case = oc.quiet_case("palletizer", 6.0)
    assert case["holding_changes"] >= 1, case
    assert case["detections"] == 0 and case["worst_ratio"] < 1.0, case


def test_wrong_payload_flag_is_off_by_the_payload_torque():
    """Holding the 0.3 kg payload at home while the observer's model says nothing is held:
    the estimate is the payload's gravity torque (the loaded model's minus the bare one's,
    an independent Pinocchio route), sign of a load pulling the arm, within 10 % + 0.05 N·m."""
    case = oc.payload_case("palletizer")
    expected, estimate = case["expected"], case["estimate"]
    assert abs(expected["beam_pitch"]) > 0.5  # a torque worth seeing
    for joint in ("shoulder_pitch", "beam_pitch"):
        assert estimate[joint] == pytest.approx(expected[joint], abs=0.1 * abs(expected[joint]) + 0.05)
    assert case["accepted"]


@pytest.mark.slow
def test_observer_check_on_every_arm(tmp_path):
    """The whole acceptance (every proximal joint, every arm, BAM truth) with 15 s quiet runs."""
    code = oc.main(
        ["--duration", "15", "--output", str(tmp_path), "--bam-dir", str(REPO_ROOT / "test" / "data" / "bam")]
    )
    assert code == 0
    assert (tmp_path / "observer_check.json").is_file()
