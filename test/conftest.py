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
