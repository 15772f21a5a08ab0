"""GravityStage in inverse-dynamics mode with the setpoint's own acceleration (issue 30 point 1:
a trajectory's or the shaper's q̈ reaches the inverse dynamics without the filter's lag)."""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from test_stage_gravity import NAMES, _in_model_order, _pin_id  # noqa: E402

from gravity_friction_comp.errors import InputError, Reason  # noqa: E402
from gravity_friction_comp.model.robot_model import RobotModel  # noqa: E402
from gravity_friction_comp.stage.gravity import GravityConfig, GravityStage  # noqa: E402


@pytest.fixture(scope="module")
def bare(repo_root):
    return RobotModel.from_urdf(repo_root / "urdf" / "palletizer.urdf")


def test_a_given_acceleration_is_used_as_is_in_message_order(bare):
    stage = GravityStage(GravityConfig(bare, mode="inverse_dynamics"))
    q_msg = np.array([0.0, 0.2, -0.3, 0.4])  # gripper (not modelled), beam, base, shoulder
    v_msg = np.array([0.0, 0.5, -0.2, 0.1])
    a_msg = np.array([9.0, 3.0, -2.0, 1.0])
    # the first setpoint: the filter alone would give q̈ = 0; the given one is used as is
    res = stage.update(NAMES, q_msg, v_msg, [], 1.0, acceleration=a_msg)
    q, v, a = (_in_model_order(x) for x in (q_msg, v_msg, a_msg))
    np.testing.assert_allclose(_in_model_order(res.term), _pin_id(bare, q, v, a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_in_model_order(stage.repeat().term), _pin_id(bare, q, v, a), atol=1e-12)
    # without one the filtered estimate again (0 after one setpoint at the same velocity)
    res = stage.update(NAMES, q_msg, v_msg, [], 1.004)
    np.testing.assert_allclose(_in_model_order(res.term), _pin_id(bare, q, v, np.zeros(3)), atol=1e-12)


def test_a_bad_acceleration_is_refused_and_nothing_kept(bare):
    stage = GravityStage(GravityConfig(bare, mode="inverse_dynamics"))
    for bad, reason in (([1.0, 2.0], Reason.SHAPE), ([0.0, np.nan, 0.0, 0.0], Reason.NOT_FINITE)):
        with pytest.raises(InputError) as info:
            stage.update(NAMES, [0.0, 0.1, 0.2, 0.3], [0.0] * 4, [], 1.0, acceleration=bad)
        assert info.value.reason == reason
    assert stage.kept is None
