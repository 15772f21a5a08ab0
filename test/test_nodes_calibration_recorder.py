"""calibrate_gravity record into a rosbag2 folder: no chain, no bag (nothing is written)."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("pinocchio")
pytest.importorskip("rclpy")
pytest.importorskip("rosbags")

from graph_helpers import fresh_domain_id  # noqa: E402


def test_record_to_a_bag_without_a_chain_writes_no_bag(tmp_path, monkeypatch, capsys):
    from gravity_friction_comp.arm_profiles import load_arm
    from gravity_friction_comp.calib.plan import plan_poses, within_velocity_limits, write_plan
    from gravity_friction_comp.calib.regressor import StaticRegressor
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.tools import calibrate_gravity

    model = RobotModel.from_urdf(load_arm("palletizer").urdf)
    plan = plan_poses(StaticRegressor(model), 2, approach=0.0, candidates=50)
    plan = dataclasses.replace(
        plan, poses=plan.poses[:1], move_time=0.3, approach_time=0.2, hold_time=0.3, settle_time=0.1
    )
    plan = within_velocity_limits(plan, model.position_lower, model.position_upper, model.velocity_limits)
    write_plan(tmp_path / "plan.yaml", plan)
    monkeypatch.setenv("ROS_DOMAIN_ID", str(fresh_domain_id()))  # nobody publishes joint_states here
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    bag = tmp_path / "bag"
    assert calibrate_gravity.main(["record", "--plan", str(tmp_path / "plan.yaml"), "--out", str(bag)]) == 2
    assert "no joint_states" in capsys.readouterr().err
    assert not bag.exists()
