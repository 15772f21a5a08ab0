"""Bimanual free drive in lockstep (issue 19.3): OpenArm v10 bimanual, both arms on their own bus
(one virtual channel per bus, repeated CAN ids kept apart), one bridge core serving both
buses, one free-drive source for all 14 motor joints (arm.launch.py mode:=free_drive starts
one bridge on both buses for this). Released in 5 seeded poses of both arms: drift ≤ 2 mrad
and speed RMS ≤ 0.01 rad/s over 10 s; without compensation both arms fall."""

from __future__ import annotations

import pytest
from free_drive_helpers import free_drive_loop, released_drift, seeded_poses

pytestmark = pytest.mark.slow

ARM = "openarm_v10_bimanual"
SCALE = 1.05  # the calibrated gravity scale, as for the single OpenArm (test_free_drive_loop.py)


def test_bimanual_released_in_5_poses_both_arms_stay_and_fall_without():
    pytest.importorskip("pinocchio")
    poses, bridged, buses = seeded_poses(ARM, 5)
    assert len(buses) == 2  # two buses, one core, one source
    worst = 0.0
    for k, q in enumerate(poses):
        loop = free_drive_loop(ARM, q, gravity_scale=SCALE)
        try:
            assert len(loop.ios) == 2
            drift, rms, _ = released_drift(loop, 10.0)
        finally:
            loop.close()
        worst = max(worst, float(drift[bridged].max()))
        assert drift[bridged].max() <= 2e-3, (k, drift * 1e3)
        assert rms[bridged].max() <= 0.01, (k, rms)
    loop = free_drive_loop(ARM, poses[0], gravity_scale=SCALE, gravity_on=False, friction_on=False)
    try:
        drift, _, _ = released_drift(loop, 2.0)
    finally:
        loop.close()
    names = loop.arm.joint_names
    falls = {
        side: max(drift[i] for i, n in enumerate(names) if side in n and bridged[i])
        for side in ("left", "right")
    }
    print(
        f"bimanual: 5 poses, worst drift {worst * 1e3:.3f} mrad; uncompensated falls (mrad, 2 s) "
        f"{ {s: round(v * 1e3, 1) for s, v in falls.items()} }"
    )
    assert min(falls.values()) > 0.1  # each arm falls far beyond the bound without compensation
