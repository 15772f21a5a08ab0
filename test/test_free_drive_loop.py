"""Free-drive acceptance (issue 19.4) in lockstep: sim/free_drive_loop.py with the nodes' stages.

Per arm (palletizer, YAM Ultra, OpenArm v10 with the leader's friction): released at rest in
20 seeded poses over the workspace (each bridged joint uniform in the middle 70 % of its
range): drift ≤ 2 mrad over 10 s and joint speed RMS ≤ 0.01 rad/s with gravity + measured-
velocity friction compensation and the profile's stiction dither (free_drive.dither); the
uncompensated arm falls; the same bound holding the payload; the torque that starts a resting
joint is halved by the dither. Deterministic (lockstep), so the figures are the same on any
machine.
"""

from __future__ import annotations

import numpy as np
import pytest
from free_drive_helpers import free_drive_loop, release, released_drift, seeded_poses

pytestmark = pytest.mark.slow

DRIFT = 2e-3  # [rad]
RMS = 0.01  # [rad/s]
#: arm -> (friction file relative to the repo or None for the profile's, gravity scale).
#: Scale 1 is the URDF; the simulated arms' true masses are 1.05 × the URDF (sim.yaml). On
#: OpenArm that 5 % (0.43 N·m on joint2) exceeds the joint's stiction (0.32 N·m) and the
#: released arm slides (measured: 705 mrad in 3 s at the first pose), so OpenArm runs with
#: the calibrated scale 1.05, as a leader must be calibrated on hardware (docs/free_drive.md).
ARMS = {
    "palletizer": (None, 1.0),
    "yam_ultra": (None, 1.0),
    "openarm_v10": ("arms/openarm_v10/leader_arm.yaml", 1.05),
}


def _poses(arm: str, n: int, seed: int = 19):
    poses, bridged, _ = seeded_poses(arm, n, seed)
    return poses, bridged


def _loop(arm, q, repo_root, **kw):
    file, scale = ARMS[arm]
    # not the vendor's gravity_comp_factor: YAM Ultra's (up to 1.35) lifts a kp-0 arm
    return free_drive_loop(
        arm, q, gravity_scale=scale, friction_file=repo_root / file if file else None, **kw
    )


@pytest.mark.parametrize("arm", list(ARMS))
def test_released_in_20_poses_the_arm_stays(arm, repo_root):
    pytest.importorskip("pinocchio")
    poses, bridged = _poses(arm, 20)
    worst_drift, worst_rms = 0.0, 0.0
    for k, q in enumerate(poses):
        loop = _loop(arm, q, repo_root)
        try:
            drift, rms, _ = released_drift(loop, 10.0)
        finally:
            loop.close()
        worst_drift = max(worst_drift, float(drift[bridged].max()))
        worst_rms = max(worst_rms, float(rms[bridged].max()))
        assert drift[bridged].max() <= DRIFT, (arm, k, drift * 1e3)
        assert rms[bridged].max() <= RMS, (arm, k, rms)
    print(f"{arm}: 20 poses, worst drift {worst_drift * 1e3:.3f} mrad, worst speed RMS {worst_rms:.4f} rad/s")


@pytest.mark.parametrize("arm", list(ARMS))
def test_uncompensated_the_arm_falls(arm, repo_root):
    pytest.importorskip("pinocchio")
    poses, bridged = _poses(arm, 3)
    falls = []
    for q in poses:
        loop = _loop(arm, q, repo_root, gravity_on=False, friction_on=False)
        try:
            drift, _, _ = released_drift(loop, 2.0)
        finally:
            loop.close()
        falls.append(float(drift[bridged].max()))
    print(
        f"{arm}: uncompensated, largest joint fall in 2 s per pose {np.round(np.array(falls) * 1e3, 1)} mrad"
    )
    assert min(falls) > 50 * DRIFT  # every pose falls far beyond the bound


@pytest.mark.parametrize("arm", list(ARMS))
def test_holding_the_payload_the_arm_stays(arm, repo_root):
    pytest.importorskip("pinocchio")
    poses, bridged = _poses(arm, 5, seed=23)
    for k, q in enumerate(poses):
        loop = _loop(arm, q, repo_root, holding=True)
        try:
            assert loop.arm.holding and loop.gravity.holding
            drift, rms, _ = released_drift(loop, 10.0)
        finally:
            loop.close()
        assert drift[bridged].max() <= DRIFT, (arm, k, drift * 1e3)
        assert rms[bridged].max() <= RMS, (arm, k, rms)


def _start_torque(arm, joint, friction_on, repo_root):
    """The smallest constant external torque (bisection to 1/128 of the range 0 … 1.5 × the
    simulated joint's breakaway F_c + F_s) that moves ``joint`` more than 5 mrad within 1 s
    of being applied at rest."""
    from gravity_friction_comp.profiles.arm_profiles import load_arm
    from gravity_friction_comp.sim.config import SimConfig

    true = SimConfig.from_yaml(load_arm(arm).sim_config).joint(joint)

    def moves(tau):
        loop = _loop(arm, None, repo_root, friction_on=friction_on)
        j = loop.arm.joint_names.index(joint)
        try:
            rec, start = release(loop, 1.2, extra=[(0.2, [joint], [tau])])
        finally:
            loop.close()
        return abs(rec.q[-1, j] - rec.q[start, j]) > 5e-3

    lo, hi = 0.0, 1.5 * (true.coulomb + true.stribeck_breakaway)
    for _ in range(7):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if moves(mid) else (mid, hi)
    return hi, hi - lo


@pytest.mark.parametrize(
    "arm, joint", [("palletizer", "base_yaw"), ("yam_ultra", "dof_joint1"), ("openarm_v10", "openarm_joint1")]
)
def test_friction_compensation_halves_the_start_torque(arm, joint, repo_root):
    """With the profile's stiction dither (free_drive.dither) the torque that starts a resting
    joint is ≥ 50 % lower than with the friction stage off (issue 19.4); friction from the
    measured velocity alone cannot lower it (q̇ = 0 at rest: 0.148 N·m with and without on
    palletizer base_yaw, before the dither)."""
    pytest.importorskip("pinocchio")
    from gravity_friction_comp.profiles.arm_profiles import load_arm
    from gravity_friction_comp.sim.config import SimConfig
    from gravity_friction_comp.stage.dither import breakaway_at_rest

    without, step = _start_torque(arm, joint, False, repo_root)
    with_, _ = _start_torque(arm, joint, True, repo_root)
    # the creep rule (stage/dither.py): a constant torque below B_true − d·B_model cannot
    # start the joint, since in the pushing half-period it feels at most τ + d·B_model
    profile = load_arm(arm)
    true = SimConfig.from_yaml(profile.sim_config).joint(joint)
    loop = _loop(arm, None, repo_root)
    k = loop.friction.joint_names.index(joint)
    model = loop.friction.config.model
    d, b_model = loop.friction.config.dither[k], breakaway_at_rest(model)[0][k]
    # the compensation's own term at rest (a model offset, OpenArm's leader Fo) is a residual r
    r = abs(float(model.torque(np.zeros(len(loop.friction.joint_names)))[k]))
    loop.close()
    rule = true.coulomb + true.stribeck_breakaway - d * b_model - r
    print(
        f"{arm} {joint}: start torque {without:.4f} N·m without, {with_:.4f} N·m with friction "
        f"compensation + dither {d:g} ({1 - with_ / without:.0%} lower; rule B_true − d·B_model − |r| "
        f"= {rule:.4f}, r {r:.4f})"
    )
    assert with_ <= 0.5 * without
    assert with_ >= rule - step
