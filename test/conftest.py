"""Shared test fixtures: paths to test data and ROS isolation (DDS on loopback only)."""

from __future__ import annotations

import os
import pathlib

import pytest
from domain_helpers import fresh_domain_id

# Every test process keeps DDS on this machine, before rclpy is ever imported, on a domain that
# nobody on it uses now (never the shell's: that may be a real arm's or another run's).
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(fresh_domain_id())

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
#: URDFs, arm YAMLs, BAM JSONs and codec vectors copied from the project's shared data, with
#: their sources and licenses in ``test/data/README.md``; in every clone, so no test skips for them.
TEST_DATA = REPO_ROOT / "test" / "data"


@pytest.fixture(scope="session")
def data() -> pathlib.Path:
    """``test/data``: ``urdf/<vendor>/*.urdf``, ``arms/…``, ``bam/<actuator>/m*.json``."""
    return TEST_DATA


@pytest.fixture(scope="session")
def shared_data(data: pathlib.Path) -> pathlib.Path:
    """The old name of :func:`data` (the files used to be read from ``../shared/data``, whose
    layout ``test/data`` keeps), so test bodies read the copies unchanged."""
    return data


@pytest.fixture(scope="session")
def repo_root() -> pathlib.Path:
    return REPO_ROOT


def sweep_log(friction, *, moving: bool = True, noise: float = 2e-3, seed: int = 7):
    """A synthetic identification log of ``urdf/palletizer.urdf``: base_yaw (vertical axis,
    no gravity torque) sweeps at ±0.1…±1 rad/s (or rests when ``moving`` is false), the
    other joints are held at (0.3, 0.2) rad; effort = g(q), plus ``friction(v)`` [N·m] and
    seeded Gaussian noise of ``noise`` [N·m] on base_yaw. 5 ms samples over 16 s.

    Returns:
        ``(RobotModel, JointStateLog)``.
    """
    import numpy as np

    from gravity_friction_comp.ident.joint_log import JointStateLog
    from gravity_friction_comp.model.robot_model import RobotModel

    model = RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf"))
    dt = 0.005
    t = np.arange(int(16 / dt)) * dt
    speeds = np.array([0.1, -0.1, 0.3, -0.3, 0.6, -0.6, 1.0, -1.0])
    v = np.repeat(speeds, t.size // speeds.size) if moving else np.zeros(t.size)
    q = np.zeros((t.size, 3))
    q[:, 0] = np.cumsum(v) * dt
    q[:, 1], q[:, 2] = 0.3, 0.2
    vel = np.zeros((t.size, 3))
    vel[:, 0] = v
    eff = np.array([model.gravity(x) for x in q])
    eff[:, 0] += friction(v) + np.random.default_rng(seed).normal(0, noise, t.size)
    return model, JointStateLog(model.joint_names, t, q, vel, eff)


@pytest.fixture
def short_plan(tmp_path):
    """A one-pose palletizer calibration plan of about 1.5 s (``tmp_path/plan.yaml``)."""
    import dataclasses

    pytest.importorskip("pinocchio")
    from gravity_friction_comp.calib.plan import plan_poses, within_velocity_limits, write_plan
    from gravity_friction_comp.calib.regressor import StaticRegressor
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    model = RobotModel.from_urdf(load_arm("palletizer").urdf)
    plan = plan_poses(StaticRegressor(model), 2, approach=0.0, candidates=50)
    plan = dataclasses.replace(
        plan, poses=plan.poses[:1], move_time=0.3, approach_time=0.2, hold_time=0.3, settle_time=0.1
    )
    plan = within_velocity_limits(plan, model.position_lower, model.position_upper, model.velocity_limits)
    path = tmp_path / "plan.yaml"
    write_plan(path, plan)
    return path
