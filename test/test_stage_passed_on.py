"""A stage's validated output handed to the next stage without a second parse (issue 28 point 2).

:meth:`Setpoint.passed_on` must give exactly what :func:`parse_setpoint` gives for the same
fields, and a stage fed ``parsed=`` must compute and refuse exactly what it computes and
refuses from the fields: the reference is the route the separate nodes take (each stage
parses the message's lists), compared as float64 bit patterns.
"""

from __future__ import annotations

import numpy as np
import pytest

from gravity_friction_comp import (
    FrictionConfig,
    FrictionModel,
    FrictionStage,
    GravityConfig,
    GravityStage,
    RobotModel,
)
from gravity_friction_comp.errors import InputError, Reason
from gravity_friction_comp.stage.contract import parse_setpoint

JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
NAMES = ["shoulder_pitch", "gripper", "beam_pitch", "base_yaw"]  # shuffled + a joint no stage has
FRICTION_LIMITS = [10.0, 28.0, 10.0]


def _bits(values) -> list[str]:
    return [float(x).hex() for x in values]


@pytest.fixture(scope="module")
def make_stages(repo_root):
    bare = RobotModel.from_urdf(repo_root / "urdf" / "palletizer.urdf")
    friction_model = FrictionModel.from_yaml(str(repo_root / "config" / "palletizer_arm.yaml"), JOINTS)

    def make():
        gravity = GravityStage(GravityConfig(bare))
        friction = FrictionStage(FrictionConfig(friction_model, JOINTS, effort_limit=FRICTION_LIMITS))
        return gravity, friction

    return make


def _random_setpoints(n: int, seed: int = 28):
    rng = np.random.default_rng(seed)
    for k in range(n):
        q = rng.uniform(-1.0, 1.0, 4).tolist()
        v = rng.uniform(-2.0, 2.0, 4).tolist() if k % 3 else []  # some without velocity
        effort = rng.uniform(-40.0, 40.0, 4).tolist() if k % 4 else []  # beyond the limits: clamped
        yield q, v, effort, 10.0 + 0.002 * k


def test_passed_on_is_what_the_parse_of_the_same_fields_gives(make_stages):
    gravity, friction = make_stages()
    for q, v, effort, t in _random_setpoints(40):
        result = gravity.update(NAMES, q, v, effort, t)
        passed = result.setpoint.passed_on(result.effort, friction.joint_names)
        parsed = parse_setpoint(NAMES, q, v, result.effort.tolist(), friction.joint_names)
        assert passed.names == parsed.names
        assert passed.joint_map is parsed.joint_map  # the one cached map for these names
        assert passed.has_effort is parsed.has_effort is True
        for field in ("position", "effort"):
            assert _bits(getattr(passed, field)) == _bits(getattr(parsed, field))
        if v:
            assert _bits(passed.velocity) == _bits(parsed.velocity)
        else:
            assert passed.velocity is None and parsed.velocity is None


def test_two_stages_through_passed_on_equal_the_parse_route_bit_for_bit(make_stages):
    handed, reference = make_stages(), make_stages()
    clamped = 0
    for q, v, effort, t in _random_setpoints(200):
        # the separate nodes' route: each stage parses the previous one's message lists
        g_ref = reference[0].update(NAMES, q, v, effort, t)
        f_ref = reference[1].update(NAMES, q, v, g_ref.effort.tolist(), t)
        # the composed chain's: the friction stage takes the gravity stage's parsed setpoint
        g = handed[0].update(NAMES, q, v, effort, t)
        parsed = g.setpoint.passed_on(g.effort, handed[1].joint_names)
        f = handed[1].update(NAMES, q, v, g.effort, t, parsed=parsed)
        assert _bits(f.effort) == _bits(f_ref.effort)
        assert _bits(f.term) == _bits(f_ref.term)
        assert f.clamped == f_ref.clamped
        clamped += bool(f.clamped)
        # the friction limit holds on every model joint (message order: NAMES)
        out = dict(zip(NAMES, f.effort.tolist()))
        assert all(abs(out[j]) <= lim for j, lim in zip(JOINTS, FRICTION_LIMITS))
    assert clamped > 20  # the sweep did reach the limits
    # and the repeat (a parameter change) from what each kept
    for stages in (handed, reference):
        stages[1].set_scale(0.5)
    assert _bits(handed[1].repeat().effort) == _bits(reference[1].repeat().effort)


def test_a_hand_off_is_refused_as_the_parse_refuses_it(make_stages):
    gravity, friction = make_stages()
    result = gravity.update(NAMES, [0.1] * 4, [0.0] * 4, [], 1.0)
    friction.update(NAMES, [0.1] * 4, [0.0] * 4, result.effort, 1.0)
    kept = friction.kept
    # a next stage with a joint the setpoint lacks: the same reason and text as the parse
    with pytest.raises(InputError) as parse_error:
        parse_setpoint(NAMES, [0.1] * 4, [0.0] * 4, result.effort.tolist(), ["base_yaw", "wrist"])
    with pytest.raises(InputError) as passed_error:
        result.setpoint.passed_on(result.effort, ["base_yaw", "wrist"])
    assert passed_error.value.reason == parse_error.value.reason == Reason.MISSING_JOINTS
    assert str(passed_error.value) == str(parse_error.value)
    # an implausible velocity passes the gravity stage and is refused by the friction stage,
    # with the reason of the parse route; the previous setpoint stays kept
    fast = [1e6, 0.0, 0.0, 0.0]  # shoulder_pitch
    g = gravity.update(NAMES, [0.1] * 4, fast, [], 1.2)
    _, reference = make_stages()
    with pytest.raises(InputError) as ref_error:
        reference.update(NAMES, [0.1] * 4, fast, g.effort.tolist(), 1.2)
    with pytest.raises(InputError) as error:
        friction.update(
            NAMES, [0.1] * 4, fast, g.effort, 1.2, parsed=g.setpoint.passed_on(g.effort, friction.joint_names)
        )
    assert error.value.reason == ref_error.value.reason == Reason.RANGE
    assert str(error.value) == str(ref_error.value)
    assert friction.kept is kept


def test_a_setpoint_parsed_for_other_joints_is_a_programming_error(make_stages):
    gravity, friction = make_stages()
    result = gravity.update(NAMES, [0.1] * 4, [], [], 1.0)
    other = result.setpoint.passed_on(result.effort, ["base_yaw"])  # another stage's joints
    with pytest.raises(ValueError, match="mapped for"):
        friction.update(NAMES, [0.1] * 4, [], result.effort, 1.0, parsed=other)
    assert friction.kept is None
