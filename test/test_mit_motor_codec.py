"""Tests of gravity_friction_comp.mit.motor_codec: the bridge's one-pass per-motor codec.

Independent routes: the reference codec (``encode_command`` of ``JointMotorMap``'s motor-side
values; ``decode_feedback`` mapped back to the joint), compared bit for bit over random
sweeps; and a hash of the core's frames and joint states over a command/reply sweep,
computed with the tree before the one-pass codec (main 199874c) and kept here.
"""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pytest

from gravity_friction_comp.errors import InputError
from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.codec import encode_command
from gravity_friction_comp.mit.cubemars_feedback import encode_feedback_cubemars
from gravity_friction_comp.mit.damiao_feedback import encode_feedback_damiao
from gravity_friction_comp.mit.feedback import decode_feedback
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_codec import MotorCodec
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.robstride_feedback import encode_feedback_robstride

MAPS = (
    JointMotorMap(),
    JointMotorMap(direction=-1, offset=0.1, gear_ratio=2.0),
    JointMotorMap(direction=1, offset=-0.37, gear_ratio=9.0),
    JointMotorMap(direction=-1, offset=1e-3, gear_ratio=0.3),
)
TYPES = ("DM4310", "DM8009", "AK80-9", "RS03")


def _bits(values) -> bytes:
    return struct.pack(f"<{len(values)}d", *values)


@pytest.mark.parametrize("motor_type", TYPES)
@pytest.mark.parametrize("mapping", MAPS)
def test_command_bytes_equal_the_reference_encoder_over_a_random_sweep(motor_type, mapping):
    limits = motor_limits(motor_type)
    codec = MotorCodec(limits, mapping)
    rng = np.random.default_rng(11)
    span = np.array([limits.p_max, limits.v_max, limits.kp_max, limits.kd_max, limits.t_max])
    # within and beyond the ranges (clamps), negative gains, zero and both signs of zero
    values = rng.uniform(-1.5, 1.5, size=(3000, 5)) * span * mapping.gear_ratio
    values[:20] = 0.0
    values[20:40] = -0.0
    values[40] = [limits.p_max / mapping.gear_ratio + mapping.offset, 0, 0, 0, 0]  # +P_MAX: code 0xFFFE
    for q, qd, kp, kd, tau in values.tolist():
        ref = encode_command(
            mapping.position_to_motor(q),
            mapping.velocity_to_motor(qd),
            mapping.kp_to_motor(kp),
            mapping.kd_to_motor(kd),
            mapping.torque_to_motor(tau),
            limits,
        )
        assert codec.command(q, qd, kp, kd, tau) == ref, (q, qd, kp, kd, tau)


def test_a_command_not_finite_on_the_motor_side_raises_as_the_encoder():
    codec = MotorCodec(motor_limits("DM4310"), JointMotorMap(gear_ratio=2.0))
    with pytest.raises(InputError, match="velocity"):
        codec.command(0.0, 1e308, 1.0, 1.0, 0.0)  # 2e308: inf once mapped
    with pytest.raises(InputError):
        codec.command(float("nan"), 0.0, 1.0, 1.0, 0.0)


def _reply(family_type: str, rng, limits) -> bytes:
    p, v, t = (rng.uniform(-1.2, 1.2) * x for x in (limits.p_max, limits.v_max, limits.t_max))
    if limits.family == "damiao":
        state = int(rng.choice([0, 1, 1, 1, 0xA, 0xC, 0x5]))
        return encode_feedback_damiao(3, state, p, v, t, rng.integers(20, 90), rng.integers(20, 90), limits)
    if limits.family == "cubemars":
        if rng.random() < 0.3:
            return encode_feedback_cubemars(3, p, v, t, limits)  # 6 bytes: old firmware
        return encode_feedback_cubemars(
            3, p, v, t, limits, rng.integers(20, 90), int(rng.choice([0, 0, 2, 9]))
        )
    return encode_feedback_robstride(3, p, v, t, limits, float(rng.uniform(20, 90)))


@pytest.mark.parametrize("motor_type", TYPES)
@pytest.mark.parametrize("mapping", MAPS)
def test_reply_decodes_as_the_family_decoder_mapped_to_the_joint(motor_type, mapping):
    """p|v|τ bit for bit; fault, reason, temperatures and state as the family decoder says,
    also when only a temperature changes between replies (the status is cached)."""
    limits = motor_limits(motor_type)
    codec = MotorCodec(limits, mapping)
    rng = np.random.default_rng(5)
    for _ in range(1500):
        raw = _reply(motor_type, rng, limits)
        fb = decode_feedback(raw, limits)
        ref = (
            mapping.position_from_motor(fb.position),
            mapping.velocity_from_motor(fb.velocity),
            mapping.torque_from_motor(fb.torque),
        )
        state = codec.joint_state(raw)
        assert state is not None and _bits(state) == _bits(ref)
        enabled = fb.is_enabled if limits.family == "damiao" else None
        assert codec.reply_status(raw) == (fb.is_fault, fb.fault_reason, fb.temperatures, enabled)


def test_reply_of_a_length_the_family_does_not_send_is_refused():
    assert MotorCodec(motor_limits("DM4310"), JointMotorMap()).joint_state(bytes(6)) is None
    assert MotorCodec(motor_limits("AK80-9"), JointMotorMap()).joint_state(bytes(7)) is None
    assert MotorCodec(motor_limits("AK80-9"), JointMotorMap()).joint_state(bytes(6)) is not None


def _sweep_config():
    motors = tuple(
        MotorConfig(
            f"j{k}",
            k + 1,
            0x11 + k,
            motor_limits(TYPES[k % len(TYPES)]),
            mapping=MAPS[k % len(MAPS)],
            kp=[0.0, 12.0, 40.0, 3.0][k % 4],
            kd=[0.5, 1.0, 2.0, 0.1][k % 4],
            damp_kd=0.8 if k == 2 else None,
            effort_limit=[5.0, 20.0, 50.0, 8.0][k % 4],
        )
        for k in range(8)
    )
    return BridgeConfig(motors, rate_hz=1000.0, command_timeout=0.02, timeout_behavior="hold", stale_cycles=3)


def sweep_digest(steps: int = 4000) -> str:
    """sha256 of every frame and measured state of a core driven by random commands (with
    gaps: timeouts and holds) and random replies of every family."""
    cfg = _sweep_config()
    core = MitBridgeCore(cfg, startup_behavior="hold")
    rng = np.random.default_rng(2026)
    digest = hashlib.sha256()
    n = len(cfg.motors)
    for k in range(steps):
        now = k * 1e-3
        if k % 97 < 80:  # commands, then a gap of 17 periods: timeout behaviour
            q, qd, tau = rng.uniform(-3, 3, n), rng.uniform(-20, 20, n), rng.uniform(-60, 60, n)
            core.set_command(q, qd, tau, now)
        for can_id, data in core.step(now):
            digest.update(can_id.to_bytes(2, "big") + data)
        for i, m in enumerate(cfg.motors):
            if rng.random() < 0.9:
                raw = bytearray(_reply(TYPES[i % len(TYPES)], rng, m.limits))
                raw[0] = m.can_id if m.limits.family != "damiao" else (raw[0] & 0xF0) | m.can_id
                core.ingest_feedback(m.master_id, bytes(raw), now)
        if k % 500 == 499:
            core.request_clear_fault()
        state = core.joint_state()
        digest.update(_bits(np.concatenate([state.position, state.velocity, state.effort]).tolist()))
    return digest.hexdigest()


#: ``sweep_digest()`` computed with main 199874c (before MotorCodec): encode_command and
#: decode_feedback per frame.
SWEEP_DIGEST = "aa111a53c5b5d0efa5d7d2810ab3f51f9ec6873986389b6c8d6e9c53b908873e"


def test_core_frames_and_states_hash_as_before_the_one_pass_codec():
    assert sweep_digest() == SWEEP_DIGEST
