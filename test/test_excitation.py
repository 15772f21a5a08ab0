"""Tests of gravity_friction_comp.ident.excitation (limits from urdf/palletizer.urdf, read by hand:
base_yaw [-2.6, 2.6] rad, 3.0 rad/s; shoulder_pitch [-0.6, 1.3], 2.5; beam_pitch [-1, 1], 2.5)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO_ROOT

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.ident.excitation import ExcitationConfig, JointLimits, excitation_profile
from gravity_friction_comp.model.robot_model import RobotModel

NAMES = ("base_yaw", "shoulder_pitch", "beam_pitch")
LIMITS = JointLimits(
    NAMES, np.array([-2.6, -0.6, -1.0]), np.array([2.6, 1.3, 1.0]), np.array([3.0, 2.5, 2.5])
)


def test_limits_from_model_match_urdf_text():
    model = RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf"))
    lim = JointLimits.from_model(model)
    assert lim.joint_names == NAMES
    np.testing.assert_array_equal(lim.lower, LIMITS.lower)
    np.testing.assert_array_equal(lim.upper, LIMITS.upper)
    np.testing.assert_array_equal(lim.velocity, LIMITS.velocity)


def test_sweeps_one_joint_at_a_time_both_directions_at_each_speed():
    cfg = ExcitationConfig(
        joints=("shoulder_pitch",),
        speeds=(0.1, 0.4),
        amplitude=0.4,
        chirp=False,
        rate_hz=500.0,
        max_sweep_duration=10.0,
    )
    prof = excitation_profile(LIMITS, [0.0, 0.3, 0.2], cfg)
    # other joints held exactly at the start
    np.testing.assert_array_equal(prof.position[:, 0], 0.0)
    np.testing.assert_array_equal(prof.position[:, 2], 0.2)
    v = prof.velocity[:, 1]
    for speed in (0.1, 0.4):
        assert np.sum(np.isclose(v, speed)) > 10
        assert np.sum(np.isclose(v, -speed)) > 10
    # velocity column is the derivative of the position column (finite differences)
    fd = np.diff(prof.position[:, 1]) * 500.0
    assert np.max(np.abs(fd - v[1:])) <= cfg.acceleration / 500.0 + 1e-9  # ≤ a·dt
    # sweep range: 0.3 ± 0.2 ; ends at the start position
    assert prof.position[:, 1].min() == pytest.approx(0.1)
    assert prof.position[:, 1].max() == pytest.approx(0.5)
    assert prof.position[-1, 1] == pytest.approx(0.3)
    labels = [s[1] for s in prof.segments]
    assert "sweep 0.1" in labels and "sweep 0.4" in labels
    np.testing.assert_allclose(np.diff(prof.time), 1 / 500.0)


def test_clipped_to_velocity_and_position_limits():
    cfg = ExcitationConfig(
        speeds=(0.5, 5.0),
        amplitude=10.0,
        velocity_scale=0.5,
        margin=0.05,
        chirp=True,
        chirp_duration=4.0,
        chirp_f1=2.0,
        rate_hz=200.0,
    )
    prof = excitation_profile(LIMITS, [0.0, 1.3, -1.0], cfg)
    lo, hi = LIMITS.lower + 0.05, LIMITS.upper - 0.05
    assert np.all(prof.position >= lo - 1e-12) and np.all(prof.position <= hi + 1e-12)
    fd = np.abs(np.diff(prof.position, axis=0)) * 200.0  # independent of the velocity column
    assert np.all(fd.max(axis=0) <= 0.5 * LIMITS.velocity + 1e-9)
    assert np.all(np.abs(prof.velocity).max(axis=0) <= 0.5 * LIMITS.velocity + 1e-6)
    # each joint reaches its speed cap somewhere (5.0 requested, clipped to 1.5 / 1.25)
    assert np.abs(prof.velocity[:, 0]).max() == pytest.approx(1.5)


def test_bad_config():
    with pytest.raises(ConfigError, match="elbow.*valid joints") as err:
        excitation_profile(LIMITS, [0, 0, 0], ExcitationConfig(joints=("elbow",)))
    assert err.value.key == "joints"
    with pytest.raises(ConfigError) as err:
        ExcitationConfig(speeds=(0.1, -1.0))
    assert err.value.key == "speeds"
    with pytest.raises(ConfigError) as err:
        ExcitationConfig(velocity_scale=1.5)
    assert err.value.key == "velocity_scale"
    with pytest.raises(ConfigError) as err:
        excitation_profile(LIMITS, [0, np.nan, 0])
    assert err.value.key == "start_position"


def test_setpoint_player_csv_and_replay(tmp_path):
    from gravity_friction_comp.ident.excitation import write_setpoint_csv
    from gravity_friction_comp.trajectory.replay import load_csv

    cfg = ExcitationConfig(joints=("beam_pitch",), speeds=(0.2,), amplitude=0.2, chirp=False, rate_hz=100.0)
    prof = excitation_profile(LIMITS, [0.0, 0.3, 0.2], cfg)
    path = tmp_path / "exc.csv"
    write_setpoint_csv(prof, path)
    replay = load_csv(path, loop=False)  # the setpoint_player's own reader
    assert replay.joint_names == NAMES
    k = prof.time.size // 2
    s = replay.sample(float(prof.time[k]))
    np.testing.assert_allclose(s.position, prof.position[k], atol=1e-12)
    np.testing.assert_allclose(s.velocity, prof.velocity[k], atol=1e-12)


def test_module_cli(tmp_path, capsys):
    from gravity_friction_comp.tools.excite import main

    out = tmp_path / "e.csv"
    urdf = str(REPO_ROOT / "urdf" / "palletizer.urdf")
    assert (
        main(
            [
                "--urdf",
                urdf,
                "--start",
                "0",
                "0.3",
                "0.2",
                "--joints",
                "beam_pitch",
                "--no-chirp",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert out.read_text().splitlines()[0].startswith("time,base_yaw/position,base_yaw/velocity")
    assert main(["--urdf", urdf, "--start", "0", "0.3", "--out", str(out)]) == 2
    assert "start_position" in capsys.readouterr().err
