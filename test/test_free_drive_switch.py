"""Free drive (issue 19.2 and bad input) in lockstep: follow <-> free-drive switch, stale motor."""

from __future__ import annotations

import numpy as np
import pytest
from free_drive_helpers import free_drive_loop, release

pytestmark = pytest.mark.slow

#: [N·m] largest motor torque change over the switch tick vs. the tick before (measured
#: 2026-12-01 on the palletizer; see the test's print).
SWITCH_JUMP = 0.05


def _gains(loop):
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    config = load_arm("palletizer").bridge_config()
    return [m.kp for m in config.motors], [m.kd for m in config.motors]


def test_follow_to_free_drive_and_back_without_a_torque_jump():
    pytest.importorskip("pinocchio")
    loop = free_drive_loop("palletizer", mode="follow")
    src, core = loop.source, loop.core
    kp_follow, kd_follow = _gains(loop)
    kp_free, kd_free = core.gains
    try:
        core.set_gains(kp_follow, kd_follow)
        q0 = loop.arm.position
        names = list(loop.arm.joint_names)
        src.follow(names, q0, np.zeros(len(names)))
        a, _ = release(loop, 1.0)  # follow: kp holds the pose
        t = loop.schedule.tick_ns * 1e-9
        src.switch("free_drive", t)  # setpoint := measured, then kp 0 (the node's order)
        core.set_gains(kp_free, kd_free)
        b = loop.run(1.0)
        jump_in = np.abs(b.torque[0] - a.torque[-1]).max()
        # back to follow towards another pose: starts at the measured pose, blends over 1 s
        target = q0.copy()
        target[names.index("shoulder_pitch")] += 0.2
        src.follow(names, target, np.zeros(len(names)))
        src.switch("follow", loop.schedule.tick_ns * 1e-9)
        core.set_gains(kp_follow, kd_follow)
        c = loop.run(2.0)
        jump_out = np.abs(c.torque[0] - b.torque[-1]).max()
    finally:
        loop.close()
    print(f"torque change at the switch: follow->free {jump_in:.4f} N·m, free->follow {jump_out:.4f} N·m")
    assert jump_in <= SWITCH_JUMP and jump_out <= SWITCH_JUMP
    # the arm was held in free drive and then followed to the new pose
    assert np.abs(b.q[-1] - a.q[-1]).max() <= 2e-3
    assert abs(c.q[-1][names.index("shoulder_pitch")] - target[names.index("shoulder_pitch")]) < 0.02


def test_a_stale_motor_brings_the_timeout_behaviour_never_an_old_pose_torque():
    pytest.importorskip("pinocchio")
    loop = free_drive_loop("palletizer")
    try:
        a, _ = release(loop, 0.5)
        assert np.isfinite(a.command[-1]).all()
        loop.sim.set_muted("shoulder_pitch")  # its motor stops answering (still obeys)
        b = loop.run(1.0)
        status = loop.core.status()
    finally:
        loop.close()
    stopped = np.flatnonzero(np.isnan(b.command[:, 0]))
    assert stopped.size, "free drive kept commanding with a stale motor"
    first = int(stopped[0])
    # once its last reply is older than stale_timeout (as free_drive_node judges it), one tick
    # per exchange here: 0.05 s × 500 Hz = 25 missed replies, not the bridge's stale flag at
    # stale_cycles (10); and never again while stale
    assert loop.schedule.tick_steps == loop.schedule.exchange_steps
    limit = loop.source.config.stale_timeout * loop.config.rate_hz
    assert loop.config.stale_cycles < limit < first <= limit + 3, (first, limit)
    assert np.isnan(b.command[first:]).all()
    timeout = loop.config.timeout_behavior
    assert all(s.behavior == timeout for s in status), [(s.name, s.behavior) for s in status]
    print(f"stale motor: no setpoint from tick {first} after the mute; bridge behaviour {timeout}")


def test_a_short_reply_gap_beyond_stale_cycles_but_within_stale_timeout_keeps_free_drive():
    """15 missed replies (30 ms at 500 Hz): the bridge flags the motor stale (stale_cycles 10)
    but its last reply is younger than stale_timeout (50 ms), so free drive goes on, as
    free_drive_node does (before: the lockstep loop stopped at the flag, tick 11)."""
    pytest.importorskip("pinocchio")
    loop = free_drive_loop("palletizer")
    flagged = []  # per tick of the run: the bridge flags a motor stale

    def gap(t):  # muted for the run's first 15 ticks (one exchange each)
        loop.sim.set_muted("shoulder_pitch", len(flagged) < 15)
        flagged.append(any(s.stale for s in loop.core.status()))

    try:
        a, _ = release(loop, 0.5)
        b = loop.run(0.2, on_tick=gap)
    finally:
        loop.close()
    assert any(flagged), "the gap did not reach the bridge's stale flag"
    assert np.isfinite(b.command).all(), np.flatnonzero(np.isnan(b.command[:, 0]))
    assert np.abs(b.q[-1] - a.q[-1]).max() <= 2e-3  # still held in free drive
