"""free_drive_node's bridge gains (issue 19 fresh-user attack): a wrong-length, negative or NaN
``free_drive_kd`` / ``follow_kp`` / ``follow_kd`` is a one-line ConfigError at start-up
(exit 2), never silently dropped; a runtime set is refused with a reason."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

rclpy = pytest.importorskip("rclpy")

from gravity_friction_comp.errors import ConfigError, DimensionError  # noqa: E402
from gravity_friction_comp.nodes.free_drive_node import bridge_gains  # noqa: E402

UNSET = {"free_drive_kd": None, "follow_kp": None, "follow_kd": None}


def test_gains_per_joint_and_a_number_for_every_joint():
    gains = bridge_gains({"free_drive_kd": [0.1, 0.2], "follow_kp": 5.0, "follow_kd": [1, 2]}, 2)
    assert gains == {"free_drive": ([0.0, 0.0], [0.1, 0.2]), "follow": ([5.0, 5.0], [1.0, 2.0])}
    assert bridge_gains({**UNSET, "free_drive_kd": [0.1, 0.2]}, 2) == {"free_drive": ([0.0, 0.0], [0.1, 0.2])}
    assert bridge_gains(UNSET, 2) == {}


@pytest.mark.parametrize(
    ("given", "key", "error"),
    [
        ({"free_drive_kd": [0.1]}, "free_drive_kd", DimensionError),
        (
            {"free_drive_kd": [0.1, 0.1], "follow_kp": [1.0], "follow_kd": [1.0, 1.0]},
            "follow_kp",
            DimensionError,
        ),
        (
            {"free_drive_kd": [0.1, 0.1], "follow_kp": [1.0, 1.0], "follow_kd": [-0.1, math.nan]},
            "follow_kd",
            ConfigError,
        ),
        ({"free_drive_kd": [0.1, -0.1]}, "free_drive_kd", ConfigError),
        ({"free_drive_kd": [0.1, math.inf]}, "free_drive_kd", ConfigError),
        ({"free_drive_kd": ["a", "b"]}, "free_drive_kd", ConfigError),
        ({"free_drive_kd": [0.1, 0.1], "follow_kp": [1.0, 1.0]}, "follow_kd", ConfigError),
        ({"follow_kp": [1.0, 1.0], "follow_kd": [1.0, 1.0]}, "follow_kp", ConfigError),
    ],
)
def test_bad_gains_name_the_parameter(given, key, error):
    with pytest.raises(error) as info:
        bridge_gains({**UNSET, **given}, 2)
    assert info.value.key == key


@pytest.fixture
def context():
    from rclpy.context import Context

    ctx = Context()
    rclpy.init(args=[], context=ctx, domain_id=0)
    yield ctx
    rclpy.try_shutdown(context=ctx)


def _node(context, **values):
    from rclpy.parameter import Parameter

    from gravity_friction_comp.nodes.free_drive_node import FreeDriveNode

    overrides = [Parameter(k, value=v) for k, v in {"joints": ["a", "b"], **values}.items()]
    return FreeDriveNode(context=context, parameter_overrides=overrides, start_parameter_services=False)


@pytest.mark.parametrize(
    "values",
    [
        {"free_drive_kd": [0.1]},
        {"free_drive_kd": [0.1, 0.1], "follow_kp": [1.0], "follow_kd": [1.0, 1.0]},
        {"free_drive_kd": [0.1, 0.1], "follow_kp": [1.0, 1.0], "follow_kd": [-0.1, math.nan]},
    ],
)
def test_node_refuses_bad_gains_at_start_up(context, values):
    with pytest.raises(ConfigError):
        _node(context, **values)


def test_node_keeps_good_gains_and_refuses_a_runtime_set_with_a_reason(context):
    from rclpy.parameter import Parameter

    node = _node(context, free_drive_kd=[0.1, 0.2], follow_kp=[3.0, 4.0], follow_kd=[0.5, 0.6])
    try:
        assert node._gains == {"free_drive": ([0.0, 0.0], [0.1, 0.2]), "follow": ([3.0, 4.0], [0.5, 0.6])}
        (result,) = node.set_parameters([Parameter("follow_kd", value=[-0.1, math.nan])])
        assert not result.successful and result.reason
        assert list(node.get_parameter("follow_kd").value) == [0.5, 0.6]
        assert node._gains["follow"] == ([3.0, 4.0], [0.5, 0.6])
    finally:
        node.destroy_node()


def test_executable_exits_2_with_one_line(tmp_path):
    """The brief's command: ``--params-file fd.yaml`` with ``free_drive_kd: [0.1]`` for 2 joints."""
    fd = tmp_path / "fd.yaml"
    fd.write_text("free_drive:\n  ros__parameters:\n    joints: [a, b]\n    free_drive_kd: [0.1]\n")
    env = {**__import__("os").environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gravity_friction_comp.nodes.free_drive_node",
            "--ros-args",
            "--params-file",
            str(fd),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        "[free_drive] invalid configuration: free_drive_kd: expected 2 values (one per joint), got 1"
    ]
    assert "free_drive on" not in proc.stdout + proc.stderr
