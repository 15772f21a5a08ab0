"""The stage contract (map by name, add, clamp, pass through) with hand-computed values."""

import math

import numpy as np
import pytest

from gravity_friction_comp.exceptions import ConfigError, InputError
from gravity_friction_comp.stage import (JointMap, StageSettings, Throttle, apply_stage,
                                         parse_setpoint)

MODEL = ("a", "b", "c")


def test_map_by_name_any_order_with_extra_joints():
    sp = parse_setpoint(["gripper", "c", "a", "b"], [9.0, 3.0, 1.0, 2.0], [], [], MODEL)
    assert sp.model_position().tolist() == [1.0, 2.0, 3.0]
    assert sp.model_velocity() is None
    assert sp.effort.tolist() == [0.0, 0.0, 0.0, 0.0]


def test_apply_adds_scaled_term_and_passes_others_through():
    sp = parse_setpoint(["gripper", "c", "a", "b"], [0.0] * 4, [0.1] * 4, [7.0, 1.0, 2.0, 3.0],
                        MODEL)
    res = apply_stage(sp, np.array([10.0, 20.0, 30.0]), 0.5, np.full(3, np.inf))
    # gripper keeps 7; c = 1 + 0.5*30; a = 2 + 0.5*10; b = 3 + 0.5*20
    assert res.effort.tolist() == [7.0, 16.0, 7.0, 13.0]
    assert res.term.tolist() == [0.0, 15.0, 5.0, 10.0]
    assert res.clamped == ()


def test_clamp_to_effort_limit_reports_joint():
    sp = parse_setpoint(["a", "b", "c"], [0.0] * 3, [], [0.0, 0.0, -4.0], MODEL)
    res = apply_stage(sp, np.array([1.0, 50.0, -3.0]), 1.0, np.array([10.0, 10.0, 5.0]))
    assert res.effort.tolist() == [1.0, 10.0, -5.0]
    assert res.clamped == ("b", "c")


def test_disabled_term_is_bit_identical_pass_through():
    eff = [0.1 + 0.2, -0.0, 1e-300]
    sp = parse_setpoint(["a", "b", "c"], [0.0] * 3, [], eff, MODEL)
    res = apply_stage(sp, None, 1.0, np.full(3, 1.0))
    assert [x.hex() for x in res.effort] == [float(x).hex() for x in eff]


@pytest.mark.parametrize("names,pos,vel,eff,reason", [
    (["a", "b"], [0.0, 0.0], [], [], "missing_joints"),
    (["a", "b", "c", "a"], [0.0] * 4, [], [], "duplicate_names"),
    (["a", "b", "c"], [0.0] * 2, [], [], "length_mismatch"),
    (["a", "b", "c"], [0.0] * 3, [1.0], [], "length_mismatch"),
    (["a", "b", "c"], [0.0] * 3, [], [1.0, 2.0], "length_mismatch"),
    (["a", "b", "c"], [0.0, math.nan, 0.0], [], [], "not_finite"),
    (["a", "b", "c"], [0.0] * 3, [0.0, math.inf, 0.0], [], "not_finite"),
    (["a", "b", "c"], [0.0] * 3, [], [0.0, 0.0, -math.inf], "not_finite"),
])
def test_bad_setpoints_rejected_with_reason(names, pos, vel, eff, reason):
    with pytest.raises(InputError) as info:
        parse_setpoint(names, pos, vel, eff, MODEL)
    assert info.value.reason == reason


def test_non_finite_term_rejected():
    sp = parse_setpoint(["a", "b", "c"], [0.0] * 3, [], [], MODEL)
    with pytest.raises(InputError):
        apply_stage(sp, np.array([0.0, math.nan, 0.0]), 1.0, np.full(3, np.inf))


def test_joint_map_is_cached_and_read_only():
    m1 = JointMap.for_names(["c", "b", "a"], MODEL)
    assert m1 is JointMap.for_names(["c", "b", "a"], MODEL)
    assert m1.index.tolist() == [2, 1, 0]
    with pytest.raises(ValueError):
        m1.index[0] = 1


@pytest.mark.parametrize("kwargs,key", [({"scale": math.nan}, "scale"),
                                        ({"scale": "1"}, "scale"),
                                        ({"enabled": 1}, "enable")])
def test_settings_validation(kwargs, key):
    with pytest.raises(ConfigError) as info:
        StageSettings(**kwargs)
    assert info.value.key == key


def test_throttle_per_key():
    now = [0.0]
    t = Throttle(2.0, clock=lambda: now[0])
    assert t.ready("x") and not t.ready("x") and t.ready("y")
    now[0] = 2.0
    assert t.ready("x")


def test_effort_limits_from_parameter():
    from gravity_friction_comp.exceptions import DimensionError
    from gravity_friction_comp.stage import effort_limits_from

    assert effort_limits_from(None, 2).tolist() == [math.inf, math.inf]
    assert effort_limits_from(None, 2, np.array([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert effort_limits_from(5.0, 3).tolist() == [5.0, 5.0, 5.0]
    assert effort_limits_from([1, 2], 2).tolist() == [1.0, 2.0]
    with pytest.raises(DimensionError, match="expected 3"):
        effort_limits_from([1.0, 2.0], 3)
    for bad in (0.0, -1.0, math.nan, [1.0, math.nan], "x"):
        with pytest.raises(ConfigError):
            effort_limits_from(bad, 2)
