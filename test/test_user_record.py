"""A new user's bad input to ``record`` and ``calibrate_gravity record``: one line, exit 2, nothing created.

Found by hand (pip environment): an empty or invalid ``--topic``, the same topic twice and
``--ros-args`` rclpy refuses ended in an rclpy/rosbags traceback (exit 1) and left a bag
folder behind (the next run then said "exists"); a bag ``--out`` in a folder that does not
exist was created with its parents (rosbags' mkdir); ``calibrate_gravity record --rate 1e-9``
never ticked and waited forever.
"""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy")
pytest.importorskip("rosbags")

from graph_helpers import fresh_domain_id  # noqa: E402


@pytest.fixture
def quiet_domain(monkeypatch):
    monkeypatch.setenv("ROS_DOMAIN_ID", str(fresh_domain_id()))  # nobody publishes here
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--topic", ""], "topic '': failed to resolve name: topic name must not be empty"),
        (["--topic", "bad name!"], "topic 'bad name!': failed to resolve name"),
        (["--command", "--command-topic", "joint_states"], "recorded twice (as /joint_states)"),
        (["--ros-args", "-r"], "--ros-args '-r': failed to initialize rcl"),
        (["--ros-args", "-p", "use_sim_time:=notabool"], "--ros-args '-p use_sim_time:=notabool'"),
    ],
)
def test_record_refuses_bad_topics_and_ros_args_without_a_trace(
    tmp_path, quiet_domain, capsys, extra, message
):
    from gravity_friction_comp.tools import record

    bag = tmp_path / "bag"
    assert record.main(["--out", str(bag), "--duration", "0.2", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("record: error: ") and message in err[0], err
    assert ", at /" not in err[0]  # no C source location
    assert not bag.exists()


def test_bag_in_a_missing_folder_is_refused_not_created(tmp_path):
    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.ident.joint_log import JointStateBag

    with pytest.raises(ConfigError, match="does not exist"):
        JointStateBag(tmp_path / "missing" / "bag")
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("rate", ["1e-9", "19.9"])
def test_calibrate_record_refuses_a_rate_below_the_minimum_before_the_bag(
    tmp_path, short_plan, quiet_domain, capsys, rate
):
    from gravity_friction_comp.tools import calibrate_gravity

    bag = tmp_path / "bag"
    status = calibrate_gravity.main(["record", "--plan", str(short_plan), "--out", str(bag), "--rate", rate])
    assert status == 2
    assert "rate must be ≥ 20 Hz" in capsys.readouterr().err
    assert not bag.exists()


def test_calibrate_record_bag_in_a_missing_folder_is_refused(tmp_path, short_plan, quiet_domain, capsys):
    from gravity_friction_comp.tools import calibrate_gravity

    bag = tmp_path / "missing" / "bag"
    assert calibrate_gravity.main(["record", "--plan", str(short_plan), "--out", str(bag)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "missing").exists()


def test_sim_time_without_a_clock_gives_up_and_leaves_no_bag(tmp_path, short_plan, quiet_domain):
    pytest.importorskip("pinocchio")
    from gravity_friction_comp.calib.plan import load_plan
    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.nodes.calibration_recorder import record_on_chain
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    arm = load_arm("palletizer")
    model = RobotModel.from_urdf(arm.urdf)
    profile = load_plan(short_plan).profile(model.position_lower, model.position_upper)
    bag = tmp_path / "bag"
    with pytest.raises(ConfigError, match="nothing publishes /clock"):
        record_on_chain(profile, arm.joints, bag=bag, use_sim_time=True, clock_wait=1.0)
    assert not bag.exists()
