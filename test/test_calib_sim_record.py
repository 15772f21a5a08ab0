"""record_in_simulation: ``sim_model=`` (a true URDF behind a believed one) and
``hold_undriven`` (the fingers held as their motor would), measured against the truth.

The holds of a dithered plan measure the simulated arm's gravity (friction averages out
over whole cycles): each hold's mean effort is compared with the true model's gravity
averaged over the same window's measured positions. Short runs (2 poses, one cycle).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytestmark = pytest.mark.slow

pytest.importorskip("pinocchio")
pytest.importorskip("can")

from gravity_friction_comp.calib.fit import hold_averages  # noqa: E402
from gravity_friction_comp.calib.plan import plan_poses  # noqa: E402
from gravity_friction_comp.calib.regressor import StaticRegressor  # noqa: E402
from gravity_friction_comp.calib.sim_record import record_in_simulation  # noqa: E402
from gravity_friction_comp.model.robot_model import RobotModel  # noqa: E402
from gravity_friction_comp.profiles.arm_profiles import load_arm  # noqa: E402
from gravity_friction_comp.sim.arm import SimulatedArm  # noqa: E402
from gravity_friction_comp.sim.config import SimConfig  # noqa: E402
from gravity_friction_comp.sim.link_truth import true_model  # noqa: E402

BRISK = dict(move_time=0.6, approach_time=0.3, dither_period=1.0, dither_cycles=1)


def _holds(arm_name, truth_yaml, dither, fixed=None, **record):
    arm = load_arm(arm_name)
    model = RobotModel.from_urdf(arm.urdf)
    plan = plan_poses(StaticRegressor(model), 2, candidates=200, dither=dither, fixed=fixed, **BRISK)
    config = SimConfig.from_yaml(truth_yaml)
    log = record_in_simulation(plan, model, record.pop("sim_config", config), arm.bridge_values(), **record)
    return model, config, hold_averages(log, plan, model.joint_names)


def _window_gravity(gravity, holds) -> np.ndarray:
    """Mean of ``gravity(q(t))`` over each hold's window samples (h, n)."""
    return np.array([np.mean([gravity(q) for q in qs], axis=0) for qs in holds.samples])


def test_sim_model_is_the_arm_that_is_simulated(repo_root):
    """The URDF compensates, the true URDF (the truth file's links applied) is simulated
    with a links-free config: the holds measure the true gravity, and the run is the same
    as the config's links applied to the URDF."""
    truth_yaml = repo_root / "config" / "sim_palletizer_calib_truth.yaml"
    config = SimConfig.from_yaml(truth_yaml)
    model = RobotModel.from_urdf(load_arm("palletizer").urdf)
    true = true_model(model, config.links)
    bare = dataclasses.replace(config, links={})
    _, _, holds = _holds("palletizer", truth_yaml, 0.02, sim_model=true, sim_config=bare)
    assert not holds.dropped
    measured = holds.effort[:, 1:]  # shoulder_pitch, beam_pitch (base_yaw: vertical axis)
    truth = _window_gravity(SimulatedArm(true, bare).gravity, holds)[:, 1:]
    urdf = _window_gravity(model.gravity, holds)[:, 1:]
    assert np.abs(urdf - truth).max() > 0.1  # the truth differs from the URDF
    assert np.abs(measured - truth).max() < 0.01
    _, _, same = _holds("palletizer", truth_yaml, 0.02)  # links in the config instead
    np.testing.assert_allclose(same.effort, holds.effort, atol=1e-9)


def test_hold_undriven_keeps_the_fingers_at_the_plan(repo_root):
    """YAM Ultra: the prismatic fingers are not on the bridge. Free, they slide and the holds
    differ from the true gravity at the plan's finger position (0) by up to 0.7 N·m; held,
    the holds measure it to within the stiction residual of one dither cycle."""
    truth_yaml = repo_root / "arms" / "yam_ultra" / "sim_calib_truth.yaml"
    fingers = {"dof_joint7": 0.0, "dof_joint8": 0.0}
    model, config, held = _holds("yam_ultra", truth_yaml, 0.05, fixed=fingers, hold_undriven=True)
    _, _, free = _holds("yam_ultra", truth_yaml, 0.05, fixed=fingers)
    gravity = SimulatedArm(model, config).gravity
    loaded = [1, 2, 3, 4]  # dof_joint2..5 (joint 1's axis is vertical, joint 6 carries ~0)

    def error(holds):  # per pose, both approach sides averaged (the fit's friction cancellation)
        e = holds.effort - _window_gravity(gravity, holds)[:, :6]
        return np.abs([e[holds.pose == k].mean(axis=0) for k in np.unique(holds.pose)])[:, loaded]

    assert not held.dropped
    # measured per joint 2..5: held 0.043, 0.036, 0.009, 0.001; free 0.70, 0.40, 0.09, 0.13 N·m
    assert error(held).max() < 0.06
    assert error(free).max() > 0.3 and error(free).max() > 10 * error(held).max()
