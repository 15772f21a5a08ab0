"""The stage contract (map by name, add, clamp, pass through) with hand-computed values."""

import math

import numpy as np
import pytest

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.stage.contract import (
    JointMap,
    StageSettings,
    apply_stage,
    parse_setpoint,
)
from gravity_friction_comp.throttle import Throttle

MODEL = ("a", "b", "c")


def test_map_by_name_any_order_with_extra_joints():
    sp = parse_setpoint(["gripper", "c", "a", "b"], [9.0, 3.0, 1.0, 2.0], [], [], MODEL)
    assert sp.model_position().tolist() == [1.0, 2.0, 3.0]
    assert sp.model_velocity() is None
    assert sp.effort.tolist() == [0.0, 0.0, 0.0, 0.0]


def test_apply_adds_scaled_term_and_passes_others_through():
    sp = parse_setpoint(["gripper", "c", "a", "b"], [0.0] * 4, [0.1] * 4, [7.0, 1.0, 2.0, 3.0], MODEL)
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


def test_a_limit_of_another_shape_is_broadcast_as_numpy_does():
    # the limit test runs on Python floats for (n,) limits; one limit for all still clamps all
    sp = parse_setpoint(["a", "b", "c"], [0.0] * 3, [], [0.0, 0.0, -4.0], MODEL)
    for limits in (np.array([5.0]), np.float64(5.0)):
        res = apply_stage(sp, np.array([1.0, 50.0, -3.0]), 1.0, limits)
        assert res.effort.tolist() == [1.0, 5.0, -5.0]
        assert res.clamped == ("b", "c")


def test_disabled_term_is_bit_identical_pass_through():
    eff = [0.1 + 0.2, -0.0, 1e-300]
    sp = parse_setpoint(["a", "b", "c"], [0.0] * 3, [], eff, MODEL)
    res = apply_stage(sp, None, 1.0, np.full(3, 1.0))
    assert [x.hex() for x in res.effort] == [float(x).hex() for x in eff]


@pytest.mark.parametrize(
    "names,pos,vel,eff,reason",
    [
        (["a", "b"], [0.0, 0.0], [], [], Reason.MISSING_JOINTS),
        (["a", "b", "c", "a"], [0.0] * 4, [], [], Reason.DUPLICATE_NAMES),
        (["a", "b", "c"], [0.0] * 2, [], [], Reason.SHAPE),
        (["a", "b", "c"], [0.0] * 3, [1.0], [], Reason.SHAPE),
        (["a", "b", "c"], [0.0] * 3, [], [1.0, 2.0], Reason.SHAPE),
        (["a", "b", "c"], [0.0, math.nan, 0.0], [], [], Reason.NOT_FINITE),
        (["a", "b", "c"], [0.0] * 3, [0.0, math.inf, 0.0], [], Reason.NOT_FINITE),
        (["a", "b", "c"], [0.0] * 3, [], [0.0, 0.0, -math.inf], Reason.NOT_FINITE),
    ],
)
def test_bad_setpoints_rejected_with_reason(names, pos, vel, eff, reason):
    with pytest.raises(InputError) as info:
        parse_setpoint(names, pos, vel, eff, MODEL)
    assert info.value.reason is reason


def test_non_finite_term_rejected():
    sp = parse_setpoint(["a", "b", "c"], [0.0] * 3, [], [], MODEL)
    with pytest.raises(InputError):
        apply_stage(sp, np.array([0.0, math.nan, 0.0]), 1.0, np.full(3, np.inf))


def test_joint_map_is_read_only():
    m1 = JointMap.for_names(["c", "b", "a"], MODEL)
    assert m1.index.tolist() == [2, 1, 0]
    with pytest.raises(ValueError):
        m1.index[0] = 1


@pytest.mark.parametrize(
    "kwargs,key",
    [
        ({"scale": math.nan}, "scale"),
        ({"scale": "1"}, "scale"),
        ({"scale": 1.5e6}, "scale"),
        ({"scale": -math.inf}, "scale"),
        ({"enabled": 1}, "enable"),
    ],
)
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
    from gravity_friction_comp.errors import DimensionError
    from gravity_friction_comp.stage.contract import effort_limits_from

    assert effort_limits_from(None, 2).tolist() == [math.inf, math.inf]
    assert effort_limits_from(None, 2, np.array([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert effort_limits_from(5.0, 3).tolist() == [5.0, 5.0, 5.0]
    assert effort_limits_from([1, 2], 2).tolist() == [1.0, 2.0]
    with pytest.raises(DimensionError, match="expected 3"):
        effort_limits_from([1.0, 2.0], 3)
    for bad in (0.0, -1.0, math.nan, [1.0, math.nan], "x"):
        with pytest.raises(ConfigError):
            effort_limits_from(bad, 2)


def _hex(values):
    return [float(x).hex() for x in values]


@pytest.mark.parametrize("names", [["a", "b", "c"], ["c", "gripper", "a", "b"]])
@pytest.mark.parametrize("scale", [1.0, -0.5])
def test_no_incoming_effort_gives_scaled_term_bits(names, scale):
    """Without incoming effort: effort == term == 0 + scale·term, scattered by name, never -0.0."""
    import array

    rng = np.random.default_rng(4)
    limits = np.array([3.0, 4.0, 5.0])
    for _ in range(50):
        pos = array.array("d", rng.uniform(-1, 1, len(names)))
        sp = parse_setpoint(names, pos, [], [], MODEL)
        term = rng.uniform(-1, 1, 3) * limits / abs(scale)
        term[rng.integers(3)] = -0.0  # IEEE: the absent incoming 0 + -0.0 is +0.0
        res = apply_stage(sp, term, scale, limits)
        assert _hex(res.effort) == _hex(res.term)
        expected = np.zeros(len(names))  # hand route: scatter 0 + scale·term by name
        for i, name in enumerate(MODEL):
            expected[names.index(name)] = 0.0 + scale * term[i]
        assert _hex(res.effort) == _hex(expected)
        assert "-0x0.0p+0" not in _hex(res.effort)


def test_clamp_of_incoming_effort():
    sp = parse_setpoint(["a", "b", "c"], [0.0] * 3, [], [9.0, 0.0, 0.0], MODEL)
    res = apply_stage(sp, np.array([2.0, 0.0, 0.0]), 1.0, np.full(3, 10.0))
    assert res.effort.tolist() == [10.0, 0.0, 0.0] and res.clamped == ("a",)
    assert res.term.tolist() == [1.0, 0.0, 0.0]


def test_term_alone_is_clamped_without_incoming_effort():
    sp = parse_setpoint(["c", "x", "a", "b"], [0.0] * 4, [], [], MODEL)
    res = apply_stage(sp, np.array([2.0, -20.0, 7.0]), 1.0, np.array([10.0, 10.0, 5.0]))
    assert res.effort.tolist() == [5.0, 0.0, 2.0, -10.0] and res.clamped == ("b", "c")


def test_rclpy_arrays_are_viewed_and_lists_copied():
    import array

    pos = array.array("d", [1.0, 2.0, 3.0])
    sp = parse_setpoint(["a", "b", "c"], pos, [], [], MODEL)
    assert np.shares_memory(sp.position, np.frombuffer(pos))
    assert sp.model_position() is sp.position  # message order == model order: no gather
    assert sp.has_effort is False and sp.effort.tolist() == [0.0] * 3
    listed = [1.0, 2.0, 3.0]
    sp2 = parse_setpoint(["a", "b", "c"], listed, listed, listed, MODEL)
    listed[0] = 99.0
    assert sp2.position[0] == 1.0 and sp2.has_effort is True
    # reordered names still gather by name
    sp3 = parse_setpoint(["b", "c", "a"], array.array("d", [2.0, 3.0, 1.0]), [], [], MODEL)
    assert sp3.model_position().tolist() == [1.0, 2.0, 3.0]


def test_mapping_follows_a_changed_list():
    names = ["c", "b", "a"]
    assert parse_setpoint(names, [3.0, 2.0, 1.0], [], [], MODEL).model_position().tolist() == [1, 2, 3]
    names[0], names[2] = "a", "c"  # the same list object, mutated in place
    assert parse_setpoint(names, [1.0, 2.0, 3.0], [], [], MODEL).model_position().tolist() == [1, 2, 3]


def test_overflowing_finite_values_are_accepted_and_inf_is_not():
    # the sum screen overflows to inf for 1e308 + 1e308; the element check then accepts
    sp = parse_setpoint(["a", "b", "c"], [1e308, 1e308, 0.0], [], [], MODEL)
    assert sp.position[0] == 1e308
    with pytest.raises(InputError):
        parse_setpoint(["a", "b", "c"], [math.inf, -math.inf, 0.0], [], [], MODEL)


def test_non_finite_term_refused_with_reason():
    """NaN/inf from the model is dropped, with or without incoming effort, in any layout."""
    for names in (["a", "b", "c"], ["c", "x", "a", "b"]):
        for eff in ([], [1.0] * len(names)):
            sp = parse_setpoint(names, [0.0] * len(names), [], eff, MODEL)
            for bad in (math.nan, math.inf):
                with pytest.raises(InputError) as info:
                    apply_stage(sp, np.array([0.0, bad, 0.0]), 1.0, np.full(3, 10.0))
                assert info.value.reason is Reason.NOT_FINITE


def test_joint_map_takes_any_sequence_of_names():
    seen = parse_setpoint(["c", "b", "a"], [3.0, 2.0, 1.0], [], [], MODEL)
    assert seen.model_position().tolist() == [1.0, 2.0, 3.0]
    for names in (np.array(["c", "b", "a"]), ("c", "b", "a"), ["c", "b", "a"]):
        assert JointMap.for_names(names, MODEL).index.tolist() == [2, 1, 0]


def test_apply_stage_with_a_per_joint_scale():
    # message order c, a, b; model order a, b, c
    sp = parse_setpoint(["c", "a", "b", "x"], [0.0] * 4, [], [1.0, 2.0, 3.0, 4.0], MODEL)
    term = np.array([1.0, -2.0, 4.0])  # model order
    scale = np.array([0.5, 3.0, -0.25])
    res = apply_stage(sp, term, scale, np.array([np.inf, 5.0, np.inf]))
    # by hand: a = 2 + 0.5·1, b = clip(3 + 3·(-2)) = -3 (limit 5: not clamped), c = 1 - 0.25·4
    assert res.effort.tolist() == [0.0, 2.5, -3.0, 4.0] and res.clamped == ()
    # b's term -6 (beyond its limit 5, against the incoming 3) is output - incoming as it is
    assert res.term.tolist() == [-1.0, 0.5, -6.0, 0.0]
    clamped = apply_stage(sp, term, np.array([0.5, 10.0, -0.25]), np.array([np.inf, 5.0, np.inf]))
    # b = 3 + 10·(-2) = -17, clamped to -5
    assert clamped.effort.tolist() == [0.0, 2.5, -5.0, 4.0] and clamped.clamped == ("b",)
    # a per-joint zero is a zero term for that joint only (no shortcut for arrays)
    zero = apply_stage(sp, term, np.array([0.0, 1.0, 0.0]), np.full(3, np.inf))
    assert zero.effort.tolist() == [1.0, 2.0, 1.0, 4.0]


@pytest.mark.parametrize(
    ("field", "bad", "reason"),
    [
        ("position", ["a", 0, 0], Reason.TYPE),
        ("position", None, Reason.TYPE),
        ("position", [[0, 0], 0, 0], Reason.TYPE),
        ("position", [1j, 0, 0], Reason.TYPE),
        ("position", np.zeros((3, 1)), Reason.SHAPE),
        ("velocity", ["a", 0, 0], Reason.TYPE),
        ("velocity", [[0.0], [0.0], [0.0]], Reason.SHAPE),
        ("effort", [None, 0, 0], Reason.TYPE),
        ("effort", "abc", Reason.TYPE),
        ("effort", [10**400, 0, 0], Reason.NOT_FINITE),
    ],
)
def test_non_numeric_setpoint_fields_are_input_errors(field, bad, reason):
    fields = {"position": [0.0] * 3, "velocity": [], "effort": []}
    fields[field] = bad
    with pytest.raises(InputError) as err:
        parse_setpoint(["a", "b", "c"], fields["position"], fields["velocity"], fields["effort"], MODEL)
    assert err.value.reason is reason


def test_numeric_setpoint_kinds_still_accepted():
    sp = parse_setpoint(["a", "b", "c"], (1, 2, 3), np.array([0.5, 0, 0], dtype=np.float32), [], MODEL)
    assert sp.model_position().tolist() == [1.0, 2.0, 3.0] and sp.model_velocity().tolist() == [0.5, 0, 0]


def test_joint_map_is_built_once_per_names_and_refusals_are_not_kept():
    first = JointMap.for_names(["c", "b", "a"], MODEL)
    again = JointMap.for_names(("c", "b", "a"), list(MODEL))  # equal names, other containers
    assert again is first and first.index.tolist() == [2, 1, 0]
    assert JointMap.for_names(["a", "b", "c"], MODEL) is not first  # other names, own map
    for _ in range(2):  # an error is raised again, never remembered as a map
        with pytest.raises(InputError) as info:
            JointMap.for_names(["a", "b"], MODEL)
        assert info.value.reason is Reason.MISSING_JOINTS


def test_an_incoming_effort_beyond_the_limit_keeps_the_output_rule_and_bounds_the_term():
    # the output stays clip(in + term); the term (~/effort) is counted from the incoming
    # effort taken at the limit. a: 1e30 in, term -3 → 10, term 10 - 10 = 0 (was -1e30);
    # b: 50 in, term -45 → 5 (inside: not clamped), term 5 - 10 = -5; c: a term beyond the
    # limit against an incoming effort within it: -8 + 15 = 7, term 15 as it is
    sp = parse_setpoint(["x", "a", "b", "c"], [0.0] * 4, [], [1e30, 1e30, 50.0, -8.0], MODEL)
    res = apply_stage(sp, np.array([-3.0, -45.0, 15.0]), 1.0, np.full(3, 10.0))
    assert res.effort.tolist() == [1e30, 10.0, 5.0, 7.0]  # x is not the stage's: passed on
    assert res.term.tolist() == [0.0, 0.0, -5.0, 15.0]
    assert res.clamped == ("a",)
    sp = parse_setpoint(["a", "b", "c"], [0.0] * 3, [], [-1e30, 0.0, 0.0], MODEL)  # model order
    res = apply_stage(sp, np.array([2.0, 0.0, 0.0]), 1.0, np.full(3, 10.0))
    assert res.effort.tolist() == [-10.0, 0.0, 0.0] and res.term.tolist() == [0.0, 0.0, 0.0]
    # a legitimate incoming effort above this stage's lower limit (friction's effort_limit
    # below gravity's output): the sum is clipped, not the incoming effort first (12 - 1 → 10)
    sp = parse_setpoint(["a", "b", "c"], [0.0] * 3, [], [12.0, 0.0, 0.0], MODEL)
    res = apply_stage(sp, np.array([-1.0, 0.0, 0.0]), 1.0, np.full(3, 10.0))
    assert res.effort.tolist() == [10.0, 0.0, 0.0] and res.clamped == ("a",)


def test_within_the_limits_the_term_is_output_minus_incoming_bit_for_bit():
    """For an incoming effort within the limits, ``apply_stage`` is the contract's formula as
    it was before an incoming effort beyond them was taken at the limit: effort =
    clip(incoming + s·term) and the published term = effort − incoming, bit for bit (what
    makes chained stages' terms add up to the final command), whatever the term's size."""
    rng = np.random.default_rng(28)
    orders = (["a", "b", "c"], ["c", "x", "a", "b"], ["b", "a", "c", "y", "z"])
    for k in range(600):
        names = orders[k % 3]
        limits = rng.uniform(0.5, 10.0, 3)
        if k % 5 == 0:
            limits[k % 3] = np.inf
        by_name = dict(zip(MODEL, limits))
        incoming = np.array([rng.uniform(-1, 1) * min(by_name.get(n, 50.0), 50.0) for n in names])
        term = rng.normal(size=3) * (0.1, 1.0, 5.0, 30.0)[k % 4]  # up to several limits
        scale = (1.0, float(rng.uniform(-2, 2)), rng.uniform(-2, 2, 3))[k % 3]
        sp = parse_setpoint(names, [0.0] * len(names), [], incoming.tolist(), MODEL)
        res = apply_stage(sp, term, scale, limits)
        index = [names.index(n) for n in MODEL]
        summed = incoming[index] + (scale * term if isinstance(scale, np.ndarray) or scale != 1.0 else term)
        expected = incoming.copy()
        expected[index] = np.minimum(np.maximum(summed, -limits), limits)
        assert res.effort.tobytes() == expected.tobytes()
        assert res.term.tobytes() == (expected - incoming).tobytes()
