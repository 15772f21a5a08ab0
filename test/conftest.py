"""Shared test fixtures: paths to test data and ROS isolation (DDS on loopback only)."""

from __future__ import annotations

import os
import pathlib

import pytest

# Every test process keeps DDS on this machine, before rclpy is ever imported.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(10 + os.getpid() % 80))

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
TEST_DATA = REPO_ROOT / "test" / "data"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> pathlib.Path:
    """``../shared/data`` next to the repository; skips when absent (a user's clone)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA} (only in the project's CI)")
    return SHARED_DATA


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
