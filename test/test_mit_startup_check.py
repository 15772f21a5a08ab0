"""StartupCheck's first-reading check (issue 26 point 4): a Damiao motor re-reads its
position within ±π of its saved zero after a power cycle, so a shaft parked more than π from
it reads a whole motor turn off; the bridge names it once instead of shifting the offset."""

from __future__ import annotations

import math
from types import SimpleNamespace

from gravity_friction_comp.mit.bridge_config import BridgeConfig, MotorConfig
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.startup_check import StartupCheck, wrapped_reading_message

DM = motor_limits("DM4340")


def _motor(gear=1.0, lower=-1.0, upper=1.0, name="j"):
    return MotorConfig(
        name, 1, 0x11, DM, mapping=JointMotorMap(gear_ratio=gear), position_lower=lower, position_upper=upper
    )


def test_a_reading_one_motor_turn_off_is_named_with_the_reading_that_would_be_inside():
    # -5.8 rad at gear 1: -5.8 + 2π = 0.4832 lies in [-1, 1]
    text = wrapped_reading_message(_motor(), -5.8)
    assert text.startswith("j: first reading -5.800 rad is outside its position limits [-1, 1]")
    assert f"{-5.8 + 2 * math.pi:.3f} rad (one motor turn away) would be inside" in text
    assert wrapped_reading_message(_motor(), 0.5) is None
    assert wrapped_reading_message(_motor(), 1.0) is None  # the bound itself is inside
    # 3.0 rad: 3.0 ± 2π are both outside: a map error, not a turn
    assert "no whole motor turn brings it inside" in wrapped_reading_message(_motor(), 3.0)
    # gear 4: one motor turn is π/2 at the joint; 2.2 - π/2 = 0.6292 is inside
    assert f"{2.2 - math.pi / 2:.3f} rad (one motor turn away)" in wrapped_reading_message(_motor(4.0), 2.2)
    # unbounded joints are never judged
    assert wrapped_reading_message(_motor(lower=-math.inf, upper=math.inf), 100.0) is None


def test_poll_checks_each_motor_once_at_its_first_reply():
    config = BridgeConfig((_motor(name="a"), MotorConfig("b", 2, 0x12, DM)), rate_hz=500.0)
    check = StartupCheck(config, "can0")

    def status(replies):
        return SimpleNamespace(replies=replies, total_missed_replies=0)

    assert check.poll([status(0), status(0)], [-5.8, 0.0]) == []  # no reply yet: nothing read
    (text,) = check.poll([status(1), status(1)], [-5.8, 50.0])  # b is unbounded
    assert text.startswith("a: first reading -5.800 rad")
    assert check.poll([status(2), status(2)], [-5.8, 50.0]) == []  # once
    assert check.poll([status(3), status(3)]) == []  # without positions: silent motors only
