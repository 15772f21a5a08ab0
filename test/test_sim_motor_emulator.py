"""Tests for gravity_friction_comp.sim.motor_emulator: frames in, torque law and feedback bytes out."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.mit.codec import encode_command
from gravity_friction_comp.mit.cubemars_feedback import CubeMarsError, decode_feedback_cubemars
from gravity_friction_comp.mit.damiao_feedback import DamiaoState, decode_feedback_damiao
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.special_frames import (
    CLEAR_ERROR_FRAME,
    DISABLE_FRAME,
    ENABLE_FRAME,
    SET_ZERO_FRAME,
)
from gravity_friction_comp.sim.motor_emulator import EmulatedMotor


def _q(x, lo, hi, bits):
    """Quantize like a motor receiving a command: code = floor(scaled + ½), value = lo + code·LSB."""
    top = (1 << bits) - 1
    code = int((min(max(x, lo), hi) - lo) * top / (hi - lo) + 0.5)
    return lo + code * (hi - lo) / top


def _motor(kind="DM4310", **kw):
    m = EmulatedMotor(motor_limits(kind), can_id=0x01, master_id=0x11, **kw)
    m.handle_frame(ENABLE_FRAME)
    return m


def test_zero_gains_zero_tau_gives_zero_torque():
    m = _motor()
    m.set_shaft_state(0.7, -2.0)
    reply = m.handle_frame(encode_command(1.3, 4.0, 0.0, 0.0, 0.0, m.limits))
    # kp = kd = 0 exactly (code 0); τ_ff = 0 encodes to +½ LSB (code 2048 of [-10, 10]): 10/4095
    assert m.command.kp == 0.0 and m.command.kd == 0.0
    assert m.torque() == pytest.approx(10.0 / 4095, abs=1e-15)
    fb = decode_feedback_damiao(reply, m.limits)
    assert fb.torque == pytest.approx(10.0 / 4095) and fb.state is DamiaoState.ENABLED


def test_pd_law_by_hand():
    m = _motor("DM4310")  # 12.5 / 30 / 10
    m.set_shaft_state(0.8, 0.4)
    m.handle_frame(encode_command(1.0, 0.0, 10.0, 0.5, 0.2, m.limits))
    # hand: kp(p_des − p) + kd(v_des − v) + τ_ff = 10·0.2 + 0.5·(−0.4) + 0.2 = 2.0, up to quantization
    p_des = _q(1.0, -12.5, 12.5, 16)
    v_des = _q(0.0, -30.0, 30.0, 12)
    kp, kd = _q(10.0, 0, 500, 12), _q(0.5, 0, 5, 12)
    tau_ff = _q(0.2, -10.0, 10.0, 12)
    expected = kp * (p_des - 0.8) + kd * (v_des - 0.4) + tau_ff
    assert m.torque() == pytest.approx(expected, abs=1e-12)
    assert m.torque() == pytest.approx(2.0, abs=0.03)


def test_torque_saturates_at_t_max():
    m = _motor("DM4310")
    m.set_shaft_state(-3.0, 0.0)
    m.handle_frame(encode_command(3.0, 0.0, 400.0, 0.0, 5.0, m.limits))  # 2400 N·m unsaturated
    assert m.torque() == 10.0
    m.set_shaft_state(3.0, 0.0)
    m.handle_frame(encode_command(-3.0, 0.0, 400.0, 0.0, -5.0, m.limits))
    assert m.torque() == -10.0
    fb = decode_feedback_damiao(m.feedback_frame(), m.limits)
    assert fb.torque == -10.0  # code 0 decodes exactly to -T_MAX


def test_disable_and_enable():
    m = _motor()
    m.set_shaft_state(0.0, 0.0)
    m.handle_frame(encode_command(1.0, 0.0, 20.0, 0.0, 0.0, m.limits))
    assert m.torque() == 10.0  # kp·Δp = 20 N·m saturates at T_MAX = 10
    fb = decode_feedback_damiao(m.handle_frame(DISABLE_FRAME), m.limits)
    assert m.torque() == 0.0 and fb.state is DamiaoState.DISABLED
    # still disabled after new commands; the command is stored
    m.handle_frame(encode_command(1.0, 0.0, 20.0, 0.0, 0.0, m.limits))
    assert m.torque() == 0.0
    m.handle_frame(ENABLE_FRAME)
    assert m.torque() == 10.0


def test_fault_injection_feedback_and_clear():
    m = _motor("DM4340")
    m.handle_frame(encode_command(0.5, 0.0, 50.0, 1.0, 1.0, m.limits))
    m.inject_fault(DamiaoState.OVER_CURRENT)
    fb = decode_feedback_damiao(m.feedback_frame(), m.limits)
    assert fb.state is DamiaoState.OVER_CURRENT and fb.is_fault and fb.fault_reason == "over-current"
    assert fb.motor_id == 1 and fb.torque == pytest.approx(28 / 4095)  # zero torque, +½ LSB
    assert m.torque() == 0.0
    m.handle_frame(ENABLE_FRAME)  # refused while the fault is latched
    assert not m.enabled
    fb = decode_feedback_damiao(m.handle_frame(CLEAR_ERROR_FRAME), m.limits)
    assert fb.state is DamiaoState.DISABLED and not fb.is_fault
    m.handle_frame(ENABLE_FRAME)
    assert m.enabled and m.torque() != 0.0
    with pytest.raises(ConfigError) as err:
        m.inject_fault(1)  # "enabled" is not a fault
    assert "14" in str(err.value)


def test_feedback_bytes_by_hand_damiao():
    m = EmulatedMotor(motor_limits("DM4310"), can_id=0x02, master_id=0x12, t_mos=41, t_rotor=37)
    m.set_shaft_state(0.0, 0.0)
    # disabled, p 0 -> 0x8000, v 0 -> 0x800, τ 0 -> 0x800 -> bytes 02 80 00 80 08 00 29 25
    assert m.handle_frame(DISABLE_FRAME) == bytes([0x02, 0x80, 0x00, 0x80, 0x08, 0x00, 41, 37])
    assert m.reply_id == 0x12


def test_set_zero_redefines_origin():
    m = _motor()
    m.set_shaft_state(1.25, 0.0)
    fb = decode_feedback_damiao(m.handle_frame(SET_ZERO_FRAME), m.limits)
    assert m.position == 0.0 and abs(fb.position) <= 25 / 65535
    m.set_shaft_state(1.5, 0.0)
    assert m.position == pytest.approx(0.25)


def test_cubemars_emulator():
    m = EmulatedMotor(motor_limits("AK80-9"), can_id=3, master_id=0, t_rotor=44)
    m.handle_frame(ENABLE_FRAME)
    m.set_shaft_state(0.0, 0.0)
    reply = m.handle_frame(encode_command(0.0, 0.0, 0.0, 0.0, 6.0, m.limits))
    fb = decode_feedback_cubemars(reply, m.limits)
    assert len(reply) == 8 and fb.motor_id == 3 and fb.temperature == 44 and fb.error_code == 0
    assert fb.torque == pytest.approx(6.0, abs=18 / 4095)
    m.inject_fault(CubeMarsError.ENCODER)
    fb = decode_feedback_cubemars(m.feedback_frame(), m.limits)
    assert fb.error is CubeMarsError.ENCODER and fb.is_fault
    m.handle_frame(CLEAR_ERROR_FRAME)  # AK has no clear frame: ignored
    assert m.is_fault
    with pytest.raises(ConfigError):
        m.inject_fault(8)
    old = EmulatedMotor(motor_limits("AK80-9"), can_id=3, master_id=0, old_firmware=True)
    assert len(old.handle_frame(ENABLE_FRAME)) == 6


def test_emulator_input_validation():
    with pytest.raises(ConfigError):
        EmulatedMotor(motor_limits("DM4310"), can_id=0x800, master_id=0)
    m = _motor()
    with pytest.raises(InputError):
        m.set_shaft_state(float("nan"), 0.0)
    assert m.handle_frame(b"\x01\x02") is None  # wrong length ignored, no crash


@pytest.mark.parametrize("garbage", [None, 8, "ffffffffffffffff", [300] * 8])
def test_emulated_motor_ignores_non_frames(garbage):
    motor = EmulatedMotor(motor_limits("DM4310"), 0x01, 0x11)
    assert motor.handle_frame(garbage) is None
    assert motor.frames_received == 0
