"""sim/external_effort.py and SimulatedArm.set_external_effort: the simulated hand."""

from __future__ import annotations

import numpy as np
import pytest

from gravity_friction_comp.errors import DimensionError, InputError
from gravity_friction_comp.sim.external_effort import ExternalEffortSchedule


def test_schedule_newest_stamp_at_or_before_t_by_name():
    s = ExternalEffortSchedule(("a", "b", "c"))
    np.testing.assert_array_equal(s.at(5.0), [0, 0, 0])
    s.add(2.0, ["b"], [1.5])
    s.add(1.0, ["a", "c"], [0.5, -0.5])  # out of order: sorted by stamp
    np.testing.assert_array_equal(s.at(0.99), [0, 0, 0])
    np.testing.assert_array_equal(s.at(1.0), [0.5, 0, -0.5])
    np.testing.assert_array_equal(s.at(2.0), [0, 1.5, 0])  # replaces, does not add
    s.add(2.0, ["b"], [2.5])  # the same stamp replaces that entry
    np.testing.assert_array_equal(s.at(3.0), [0, 2.5, 0])


def test_schedule_rejects_bad_input():
    s = ExternalEffortSchedule(("a",))
    with pytest.raises(InputError, match="not in the simulated arm"):
        s.add(0.0, ["z"], [1.0])
    with pytest.raises(InputError, match="not finite"):
        s.add(0.0, ["a"], [float("nan")])
    with pytest.raises(DimensionError):
        s.add(0.0, ["a"], [1.0, 2.0])


def test_external_effort_acts_as_a_motor_torque(repo_root):
    """τ_ext enters the dynamics exactly where τ_m does: the same step either way (bitwise)."""
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.sim.arm import SimulatedArm
    from gravity_friction_comp.sim.config import SimConfig

    pytest.importorskip("pinocchio")
    palletizer_model = RobotModel.from_urdf(repo_root / "urdf" / "palletizer.urdf")

    a = SimulatedArm(palletizer_model, SimConfig())
    b = SimulatedArm(palletizer_model, SimConfig())
    tau = np.array([0.3, 1.0, -0.2])
    ext = np.array([0.1, -0.4, 0.05])
    a.set_external_effort(ext)
    for _ in range(50):
        a.step(tau)
        b.step(tau + ext)
    np.testing.assert_array_equal(a.position, b.position)
    np.testing.assert_array_equal(a.external_effort, ext)
    with pytest.raises(InputError):
        a.set_external_effort([0.0, float("inf"), 0.0])
