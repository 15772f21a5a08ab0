"""A start-up value for a parameter the node never declares is an error (issue 26 point 6).

rclpy drops such values silently: a motor map with ``kpp:`` left ``kp`` at its default.
Every node now refuses them right after declaring its parameters, naming the node, the
parameter and the closest declared one; rclpy's own parameters and QoS overrides pass, and
the one-process chains accept a value that another node of the process declares (a ``-p``
reaches every node). The shipped parameter files use declared names only.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
import yaml

rclpy = pytest.importorskip("rclpy")
from conftest import REPO_ROOT  # noqa: E402
from graph_helpers import fresh_domain_id  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from gravity_friction_comp.errors import ConfigError  # noqa: E402
from gravity_friction_comp.nodes import (  # noqa: E402
    free_drive_node,
    friction_feedforward_node,
    gravity_compensation_node,
    mit_bridge_node,
    setpoint_player,
)
from gravity_friction_comp.param_files import first_node_parameters, flatten_parameters  # noqa: E402

URDF = str(REPO_ROOT / "urdf" / "palletizer.urdf")
ARM_YAML = str(REPO_ROOT / "config" / "palletizer_arm.yaml")
JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
#: Node name → what the node declares (its module's PARAMETERS, the docs' source).
DECLARED = {
    "gravity_compensation": gravity_compensation_node.PARAMETERS,
    "friction_feedforward": friction_feedforward_node.PARAMETERS,
    "mit_bridge": mit_bridge_node.PARAMETERS,
    "setpoint_player": setpoint_player.PARAMETERS,
    "free_drive": free_drive_node.PARAMETERS,
}
#: Declared by rclpy itself on every node.
RCLPY_OWN = {"use_sim_time", "start_type_description_service"}


@pytest.fixture
def context():
    ctx = Context()
    rclpy.init(args=[], context=ctx, domain_id=int(os.environ.get("ROS_DOMAIN_ID") or fresh_domain_id()))
    yield ctx
    rclpy.try_shutdown(context=ctx)


def _params(values: dict) -> list:
    return [Parameter(k, value=v) for k, v in values.items()]


def _bridge_values() -> dict:
    _, values = first_node_parameters(REPO_ROOT / "config" / "mit_bridge.yaml")
    return values | {"simulate": True, "urdf_path": URDF}


def test_gravity_node_refuses_a_misspelt_override_naming_it(context):
    with pytest.raises(ConfigError) as info:
        gravity_compensation_node.GravityCompensationNode(
            context=context,
            start_parameter_services=False,
            parameter_overrides=_params({"urdf_path": URDF, "scael": 0.5}),
        )
    text = str(info.value)
    assert "parameters of node /gravity_compensation" in text
    assert "'scael' (did you mean 'scale'?)" in text
    assert info.value.key == "scael" and info.value.value == 0.5
    assert "\n" not in text  # one line, as run_node prints it


def test_rclpy_parameters_and_qos_overrides_pass(context):
    node = gravity_compensation_node.GravityCompensationNode(
        context=context,
        start_parameter_services=False,
        parameter_overrides=_params(
            {
                "urdf_path": URDF,
                "use_sim_time": True,
                "start_type_description_service": False,
                "qos_overrides./joint_command.publisher.depth": 5,
            }
        ),
    )
    try:
        assert node.get_parameter("use_sim_time").value is True
        assert node.get_parameter("scale").value == 1.0
    finally:
        node.destroy_node()


def test_setpoint_player_refuses_a_misspelt_override(context):
    with pytest.raises(
        ConfigError, match=r"/setpoint_player: unknown key\(s\) 'rate_hzz' \(did you mean 'rate_hz'\?\)"
    ):
        setpoint_player.SetpointPlayerNode(
            context=context,
            start_parameter_services=False,
            parameter_overrides=_params({"joint_names": JOINTS, "rate_hzz": 100.0}),
        )


@pytest.mark.slow
def test_bridge_with_kpp_in_its_params_file_exits_2_before_opening_the_bus(tmp_path):
    values = _bridge_values()
    values["kpp"] = values.pop("kp")
    path = tmp_path / "mit_bridge.yaml"
    path.write_text(yaml.safe_dump({"mit_bridge": {"ros__parameters": values}}))
    env = {
        **os.environ,
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
        "ROS_DOMAIN_ID": str(fresh_domain_id()),
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gravity_friction_comp.nodes.mit_bridge_node",
            "--ros-args",
            "--params-file",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,  # before the fix the bridge ran on with kp at 0: the test fails here
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    ours = [line for line in proc.stderr.splitlines() if "invalid configuration" in line]
    assert len(ours) == 1, proc.stderr
    assert ours[0].startswith("[mit_bridge] invalid configuration: parameters of node /mit_bridge:")
    assert "'kpp' (did you mean 'kp'?)" in ours[0]
    assert "Traceback" not in proc.stderr
    assert "motors on" not in proc.stderr  # refused before the bus opened (no enable frames)


def _chain_overrides() -> dict:
    gravity = {"urdf_path": URDF}
    friction = {"joints": JOINTS, "arm_config": ARM_YAML, "effort_limit": [10.0, 28.0, 10.0]}
    return {"gravity": gravity, "friction": friction, "bridge": _bridge_values()}


def _chain(args: list[str], **values):
    from gravity_friction_comp.nodes.composed_chain import ComposedChain

    ctx = Context()
    rclpy.init(args=args, context=ctx, domain_id=int(os.environ.get("ROS_DOMAIN_ID") or fresh_domain_id()))
    try:
        chain = ComposedChain(ctx, **{k: {"parameter_overrides": _params(v)} for k, v in values.items()})
    except BaseException:
        rclpy.try_shutdown(context=ctx)
        raise
    return ctx, chain


@pytest.mark.slow
def test_composed_chain_takes_a_global_value_for_its_stages_and_refuses_a_typo():
    ctx, chain = _chain(["--ros-args", "-p", "scale:=0.5"], **_chain_overrides())
    try:  # -p reaches all three nodes; only the stages declare scale
        assert chain.gravity.get_parameter("scale").value == 0.5
        assert chain.friction.get_parameter("scale").value == 0.5
        assert not chain.bridge.has_parameter("scale")
    finally:
        chain.destroy()
        rclpy.try_shutdown(context=ctx)
    values = _chain_overrides()
    values["bridge"]["kpp"] = values["bridge"].pop("kp")
    with pytest.raises(ConfigError, match=r"/mit_bridge: unknown key\(s\) 'kpp' \(did you mean 'kp'\?\)"):
        _chain([], **values)


def _shipped_parameter_files() -> list[pathlib.Path]:
    """Every ros2 param dump file of the repository: config/ and arms/<arm>/."""
    out = []
    for path in sorted([*REPO_ROOT.glob("config/*.yaml"), *REPO_ROOT.glob("arms/*/*.yaml")]):
        data = yaml.safe_load(path.read_text())
        if isinstance(data, dict) and any(
            isinstance(v, dict) and "ros__parameters" in v for v in data.values()
        ):
            out.append(path)
    return out


def test_the_shipped_files_are_found():
    names = {str(p.relative_to(REPO_ROOT)) for p in _shipped_parameter_files()}
    assert {"config/mit_bridge.yaml", "config/gravity_compensation.yaml", "arms/yam/mit_bridge.yaml"} <= names
    assert len([n for n in names if n.startswith("arms/")]) == 6  # a motor map per arm with its own


@pytest.mark.parametrize("path", _shipped_parameter_files(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_shipped_parameter_file_uses_declared_names_only(path):
    """The motor maps (and every other shipped parameter file) name only parameters their
    node declares; the node's start-up check covers a user's own file."""
    for node, body in yaml.safe_load(path.read_text()).items():
        values = flatten_parameters(body["ros__parameters"])
        declared = {p.name for p in DECLARED[node.rsplit("/", 1)[-1]]} | RCLPY_OWN
        assert set(values) <= declared, (node, sorted(set(values) - declared))


#: Executable → node name (arm.launch.py starts each node by its executable).
EXECUTABLE_NODE = {
    "gravity_compensation_node": "gravity_compensation",
    "friction_feedforward_node": "friction_feedforward",
    "mit_bridge_node": "mit_bridge",
    "setpoint_player": "setpoint_player",
    "free_drive_node": "free_drive",
}


@pytest.mark.parametrize("mode", ["follow", "free_drive"])
def test_arm_launch_gives_each_node_declared_parameters_only(mode):
    """What ``arm.launch.py arm:=<each profile>`` hands each node (lockstep: the clock
    parameters too) is declared by that node, so the start-up check passes on every launch."""
    from test_launch import launched_parameters, load_launch_module, require_launch_ros

    from gravity_friction_comp.profiles.arm_profiles import list_arms

    require_launch_ros()
    module = load_launch_module(REPO_ROOT, "arm.launch.py")
    checked = set()
    for arm in list_arms():
        nodes = launched_parameters(module, arm=arm, mode=mode, lockstep="true", player="pick_place")
        for executable, values in nodes.items():
            declared = {p.name for p in DECLARED[EXECUTABLE_NODE[executable]]} | RCLPY_OWN
            assert set(values) <= declared, (arm, executable, sorted(set(values) - declared))
            checked.add(executable)
    assert {"gravity_compensation_node", "friction_feedforward_node", "mit_bridge_node"} <= checked


def test_calibration_recorder_takes_rclpys_own_and_refuses_a_typo(context):
    from gravity_friction_comp.nodes.calibration_recorder import CalibrationRecorder
    from gravity_friction_comp.trajectory.hold import HoldProfile

    profile = HoldProfile(JOINTS, [0.0, 0.0, 0.0])
    node = CalibrationRecorder(profile, context=context, parameter_overrides=_params({"use_sim_time": True}))
    node.destroy_node()
    with pytest.raises(ConfigError, match=r"'use_sim_tme' \(did you mean 'use_sim_time'\?\)"):
        CalibrationRecorder(profile, context=context, parameter_overrides=_params({"use_sim_tme": True}))
