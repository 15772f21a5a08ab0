"""calibrate_gravity record into a rosbag2 folder: no chain, no bag (nothing is written)."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("pinocchio")
pytest.importorskip("rclpy")
pytest.importorskip("rosbags")

from graph_helpers import fresh_domain_id, namespace_args, own_namespace  # noqa: E402


def test_record_to_a_bag_without_a_chain_writes_no_bag(short_plan, tmp_path, monkeypatch, capsys):
    from gravity_friction_comp.tools import calibrate_gravity

    monkeypatch.setenv("ROS_DOMAIN_ID", str(fresh_domain_id()))  # nobody publishes joint_states here
    # ... nor under this namespace, should a stranger join the domain (rclpy.init reads sys.argv)
    monkeypatch.setattr(sys, "argv", [sys.argv[0], *namespace_args(own_namespace())])
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    bag = tmp_path / "bag"
    assert calibrate_gravity.main(["record", "--plan", str(short_plan), "--out", str(bag)]) == 2
    assert "no joint_states" in capsys.readouterr().err
    assert not bag.exists()
