"""Tests of gravity_friction_comp.ident.joint_log: the one CSV layout (and the older one it
still reads), the rosbag2 reader's rules, and the friction samples computed from a log.

Expected values are written by hand in the tests (CSV text, bag messages) or injected into a
synthetic log (conftest.sweep_log), never taken from the reader itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import sweep_log

from gravity_friction_comp.errors import ConfigError, IdentificationError, Reason
from gravity_friction_comp.ident.identify import FrictionSamples, friction_samples
from gravity_friction_comp.ident.joint_log import (
    JointStateLog,
    load_csv,
    load_rosbag,
    write_csv,
)
from gravity_friction_comp.trajectory.replay import load_csv as replay_csv


def _write(tmp_path, text, name="log.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_older_player_layout_reads_as_the_written_one(tmp_path):
    old = _write(
        tmp_path,
        "time,position.a,velocity.a,effort.a,position.b,velocity.b,effort.b\n"
        "0,1,2,3,4,5,6\n0.5,7,8,9,10,11,12\n",
        "old.csv",
    )
    new = _write(
        tmp_path,
        "time,a/position,a/velocity,a/effort,b/position,b/velocity,b/effort\n"
        "0,1,2,3,4,5,6\n0.5,7,8,9,10,11,12\n",
        "new.csv",
    )
    for log in (load_csv(old), load_csv(new)):
        assert log.joint_names == ("a", "b")
        np.testing.assert_array_equal(log.time, [0.0, 0.5])
        np.testing.assert_array_equal(log.position, [[1, 4], [7, 10]])
        np.testing.assert_array_equal(log.velocity, [[2, 5], [8, 11]])
        np.testing.assert_array_equal(log.effort, [[3, 6], [9, 12]])


def test_setpoint_stream_has_no_effort_columns_and_replays(tmp_path):
    t = np.array([0.0, 1.0, 2.0])
    q = np.array([[0.0, 1.0], [2.0, 1.5], [4.0, 2.0]])
    v = np.array([[2.0, 0.5], [2.0, 0.5], [2.0, 0.5]])
    path = tmp_path / "setpoints.csv"
    write_csv(path, JointStateLog(("a", "b"), t, q, v, None))
    assert path.read_text().splitlines()[0] == "time,a/position,a/velocity,b/position,b/velocity"
    back = load_csv(path, require=("position",))
    assert back.effort is None
    np.testing.assert_array_equal(back.velocity, v)
    # identification needs the effort: the same file is refused there, naming the column
    with pytest.raises(IdentificationError, match="joint 'a' has no column 'a/effort'") as err:
        load_csv(path)
    assert err.value.reason is Reason.FORMAT
    # the player replays it: halfway between samples 0 and 1
    s = replay_csv(path, loop=False).sample(0.5)
    np.testing.assert_allclose(s.position, [1.0, 1.25])
    np.testing.assert_allclose(s.velocity, [2.0, 0.5])


def test_leading_blank_lines_and_empty_files(tmp_path):
    # blank lines before the header are skipped; errors give the file's own line numbers
    with pytest.raises(IdentificationError, match="line 6, column 'a/position': not a number: 'x'"):
        load_csv(_write(tmp_path, "\n\ntime,a/position\n0,1\n\n1,x\n"), require=("position",))
    log = load_csv(_write(tmp_path, "\n\ntime,a/position\n0,1\n1,2\n", "ok.csv"), require=("position",))
    np.testing.assert_array_equal(log.position[:, 0], [1.0, 2.0])
    assert log.velocity is None and log.effort is None
    with pytest.raises(IdentificationError, match="is empty"):
        load_csv(_write(tmp_path, "\n \n", "empty.csv"))


def test_optional_field_for_some_joints_only_is_refused(tmp_path):
    path = _write(tmp_path, "time,a/position,a/velocity,b/position\n0,1,2,3\n")
    with pytest.raises(IdentificationError, match=r"velocity columns for some joints only; none for \['b'\]"):
        load_csv(path, require=("position",))


def _bag(folder, messages, topic="/joint_states"):
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header = store.types["std_msgs/msg/Header"]
    Time = store.types["builtin_interfaces/msg/Time"]
    with Writer(folder, version=8) as writer:
        conn = writer.add_connection(topic, JointState.__msgtype__, typestore=store)
        for k, (stamp, names, q, v, e) in enumerate(messages):
            ns = int(round(stamp * 1e9))
            msg = JointState(
                Header(Time(ns // 10**9, ns % 10**9), ""),
                list(names),
                np.array(q, dtype=float),
                np.array(v, dtype=float),
                np.array(e, dtype=float),
            )
            writer.write(conn, 1000 + k, store.serialize_cdr(msg, JointState.__msgtype__))


def test_rosbag_skips_messages_lacking_a_joint_and_drops_partial_optional_fields(tmp_path):
    bag = tmp_path / "bag"
    _bag(
        bag,
        [
            (10.0, ["a", "b"], [1, 2], [3, 4], [5, 6]),
            (10.1, ["g"], [9], [9], [9]),  # a gripper publishing on the same topic
            (10.2, ["b", "a"], [7, 8], [9, 10], []),  # by name; no effort in this one
        ],
    )
    log = load_rosbag(bag, "joint_states", require=("position", "velocity"))
    assert log.joint_names == ("a", "b")
    np.testing.assert_allclose(log.time, [0.0, 0.2], atol=1e-9)
    np.testing.assert_array_equal(log.position, [[1, 2], [8, 7]])
    np.testing.assert_array_equal(log.velocity, [[3, 4], [10, 9]])
    assert log.effort is None  # not in every message
    # identification requires the effort in every message: the short one is named
    with pytest.raises(IdentificationError, match="message 2 .* 2 joint names but 0 effort values"):
        load_rosbag(bag)


def test_friction_samples_recover_the_injected_friction():
    """On base_yaw (vertical axis, no gravity torque) at constant speed the friction sample
    is the injected friction 0.2·sign(v) + 0.05·v, within 5σ of the 1e-4 N·m noise."""
    model, log = sweep_log(lambda v: 0.2 * np.sign(v) + 0.05 * v, noise=1e-4)
    samples = friction_samples(log, model)
    assert isinstance(samples, FrictionSamples)
    assert all(getattr(samples, f).shape == log.position.shape for f in FrictionSamples._fields)
    v = log.velocity[:, 0]
    # away from the speed steps (the filter window spans 0.05 s around each)
    steady = np.ones(v.size, dtype=bool)
    for k in np.flatnonzero(np.diff(v)):
        steady[max(k - 20, 0) : k + 21] = False
    expected = 0.2 * np.sign(v[steady]) + 0.05 * v[steady]
    np.testing.assert_allclose(samples.friction[steady, 0], expected, atol=5e-4)
    np.testing.assert_allclose(samples.velocity[steady, 0], v[steady], atol=1e-9)
    np.testing.assert_array_equal(samples.tau_m, log.effort)
    np.testing.assert_allclose(
        samples.tau_e[:, 1], -log.effort[:, 1], atol=1e-12
    )  # held joint: effort = g(q)


@pytest.mark.parametrize(
    ("row2", "column"),
    [("0.1,nan", "a/position"), ("0.1,inf", "a/position"), ("0.1,1e400", "a/position"), ("nan,2", "time")],
)
def test_csv_non_finite_cell_names_file_line_and_column(tmp_path, row2, column):
    from gravity_friction_comp.ident.joint_log import load_csv

    path = tmp_path / "log.csv"
    path.write_text(f"time,a/position\n0,1\n{row2}\n0.2,3\n")
    with pytest.raises(
        IdentificationError, match=rf"log.csv.*line 3 \(sample 1\), column '{column}': not finite"
    ) as err:
        load_csv(path, require=("position",))
    assert err.value.reason is Reason.NOT_FINITE


@pytest.mark.parametrize("times", [(0, 0.2, 0.1), (0, 0.1, 0.1)], ids=["backwards", "repeated"])
def test_csv_time_must_increase(tmp_path, times):
    from gravity_friction_comp.ident.joint_log import load_csv

    path = tmp_path / "log.csv"
    path.write_text("time,a/position\n\n" + "".join(f"{t},{k}\n" for k, t in enumerate(times)))
    with pytest.raises(IdentificationError, match=r"line 5, column 'time': 0.1 does not increase"):
        load_csv(path, require=("position",))


@pytest.mark.parametrize("require", [("torque",), "position", ("position", "velocity", "torque"), None])
def test_unknown_require_fields_are_config_errors_listing_the_valid_ones(tmp_path, require):
    from gravity_friction_comp.ident.joint_log import load_csv

    path = tmp_path / "log.csv"
    path.write_text("time,a/position\n0,1\n0.1,2\n")
    with pytest.raises(ConfigError, match="position.*velocity.*effort") as err:
        load_csv(path, require=require)
    assert err.value.key == "require"
