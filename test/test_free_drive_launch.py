"""nodes/free_drive_launch.py: what arm.launch.py mode:=free_drive overrides."""

from __future__ import annotations

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.nodes.free_drive_launch import MIN_FREE_DRIVE_DEADBAND, free_drive_overrides

BRIDGE = {"joints": ["a", "b"], "kp": [80.0, 10.0], "kd": [5.0, 1.5]}


def test_overrides_kp_zero_kd_scaled_measured_friction_and_both_gain_sets():
    bridge, friction, node = free_drive_overrides(
        BRIDGE, ["a", "b", "finger"], {"finger": 0.01}, kd_scale=0.2, friction_deadband=0.003, rate_hz=0.0
    )
    assert bridge == {"kp": [0.0, 0.0], "kd": [1.0, 0.30000000000000004]}
    assert friction == {"velocity_source": "measured", "velocity_deadband": MIN_FREE_DRIVE_DEADBAND}
    assert node["joints"] == ["a", "b"] and node["fixed_joints"] == ["finger"]
    assert node["fixed_positions"] == [0.01]
    assert node["free_drive_kd"] == bridge["kd"]
    assert (node["follow_kp"], node["follow_kd"]) == (BRIDGE["kp"], BRIDGE["kd"])


def test_no_fixed_joint_and_a_larger_deadband_kept():
    _, friction, node = free_drive_overrides(
        BRIDGE, ["a", "b"], {}, kd_scale=1.0, friction_deadband=0.05, rate_hz=250.0
    )
    assert friction["velocity_deadband"] == 0.05
    assert node["fixed_joints"] == [""] and node["rate_hz"] == 250.0


@pytest.mark.parametrize("scale", [0.0, 1.5, float("nan")])
def test_kd_scale_out_of_range(scale):
    with pytest.raises(ConfigError) as info:
        free_drive_overrides(BRIDGE, ["a", "b"], {}, kd_scale=scale, friction_deadband=0.0, rate_hz=0.0)
    assert info.value.key == "free_drive_kd_scale"
