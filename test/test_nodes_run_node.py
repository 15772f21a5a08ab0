"""run_node and the stage-node plumbing as users meet them (issue 13): ``--help``, parameter
callbacks that survive MemoryError/RecursionError, publishing guarded during shutdown."""

from __future__ import annotations

import subprocess
import sys

import pytest

rclpy = pytest.importorskip("rclpy")

from gravity_friction_comp.nodes import friction_feedforward_node, gravity_compensation_node  # noqa: E402
from gravity_friction_comp.nodes.runtime import run_node  # noqa: E402
from gravity_friction_comp.nodes.stage_node import publish_guarded  # noqa: E402


@pytest.mark.parametrize(
    "module", [gravity_compensation_node, friction_feedforward_node], ids=["gravity", "friction"]
)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_every_parameter_and_exits_0(module, flag, capsys):
    node_class = (
        module.GravityCompensationNode
        if module is gravity_compensation_node
        else module.FrictionFeedforwardNode
    )
    with pytest.raises(SystemExit) as info:
        run_node(node_class, ["prog", flag])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {node_class.NODE_NAME}_node")
    for p in module.PARAMETERS:
        assert f"  {p.name} ({p.type}, default " in out, p.name
        assert p.description in out
    if module is gravity_compensation_node:
        assert "scale (double, default 1.0, [-], range [-100, 100])" in out
    assert not rclpy.ok()  # --help never starts ROS


def test_help_of_the_executable(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "gravity_friction_comp.nodes.friction_feedforward_node", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "velocity_source (string, default 'setpoint')" in proc.stdout
    assert proc.stderr == ""


@pytest.fixture
def friction_node():
    from rclpy.context import Context
    from rclpy.parameter import Parameter

    context = Context()
    rclpy.init(context=context, domain_id=0)
    node = friction_feedforward_node.FrictionFeedforwardNode(
        context=context,
        start_parameter_services=False,
        parameter_overrides=[Parameter("joints", value=["a", "b"])],
    )
    yield node, context
    node.destroy_node()
    rclpy.try_shutdown(context=context)


@pytest.mark.parametrize("error", [MemoryError, RecursionError])
def test_parameter_callback_survives_memory_and_recursion_errors(friction_node, monkeypatch, error):
    from rclpy.parameter import Parameter

    node, _ = friction_node

    def explode(values, changed, previous):
        raise error()

    monkeypatch.setattr(node, "build_config", explode)
    (result,) = node.set_parameters([Parameter("arm_config", value="/some/file.yaml")])
    assert not result.successful
    assert error.__name__ in result.reason and "invalid value" in result.reason
    assert node.get_parameter("arm_config").value == ""
    monkeypatch.undo()
    (result,) = node.set_parameters([Parameter("velocity_deadband", value=0.01)])
    assert result.successful, result.reason


def test_publish_guarded_skips_once_the_context_is_down(friction_node):
    from sensor_msgs.msg import JointState

    node, context = friction_node
    pub = node.create_publisher(JointState, "guarded", 1)
    assert publish_guarded(node, pub, JointState()) is True
    rclpy.try_shutdown(context=context)
    assert publish_guarded(node, pub, JointState()) is False


@pytest.mark.parametrize("module_name", ["mit_bridge_node", "setpoint_player"])
def test_help_of_nodes_whose_module_holds_the_parameters(module_name, capsys):
    import importlib

    module = importlib.import_module(f"gravity_friction_comp.nodes.{module_name}")
    node_class = next(
        v
        for v in vars(module).values()
        if isinstance(v, type) and v.__module__ == module.__name__ and "NODE_NAME" in vars(v)
    )
    with pytest.raises(SystemExit) as info:
        run_node(node_class, ["prog", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert f"parameters ({len(module.PARAMETERS)}):" in out
    for p in module.PARAMETERS:
        assert f"  {p.name} (" in out


def test_files_that_never_end_are_refused_at_once(friction_node, tmp_path):
    """``arm_config:=/dev/zero`` (or a 20,000-deep YAML) is refused in ``ros2 param set``
    within a second, with a reason, and the node keeps its configuration."""
    import time

    from rclpy.parameter import Parameter

    node, _ = friction_node
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 20_000 + "]" * 20_000)
    for params, needle in (
        ([Parameter("arm_config", value="/dev/zero")], "not a regular file"),
        ([Parameter("arm_config", value=str(deep))], "nested"),
        (
            [Parameter("model", value="bam"), Parameter("bam_files", value=["/dev/zero", ""])],
            "not a regular file",
        ),
    ):
        start = time.perf_counter()
        result = node.set_parameters_atomically(params)
        assert time.perf_counter() - start < 1.0
        assert not result.successful and needle in result.reason, result.reason
    assert node.get_parameter("arm_config").value == ""


def _start(module: str, *ros_args: str):
    import os

    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    return subprocess.run(
        [sys.executable, "-m", f"gravity_friction_comp.nodes.{module}", "--ros-args", *ros_args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "ros_args", "named"),
    [
        ("friction_feedforward_node", ("-p", "scale:=abc"), "'scale'"),
        ("friction_feedforward_node", ("-p", "enable:=maybe"), "'enable'"),
        ("gravity_compensation_node", ("-p", "scale:=abc"), "'scale'"),
    ],
)
def test_wrong_typed_parameter_is_a_one_line_error_and_exit_2(module, ros_args, named):
    proc = _start(module, *ros_args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and named in proc.stderr
    ours = [line for line in proc.stderr.splitlines() if "invalid configuration" in line]
    assert len(ours) == 1, proc.stderr


@pytest.mark.slow
def test_params_file_that_is_not_a_mapping_is_a_one_line_error_and_exit_2(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n")
    proc = _start("friction_feedforward_node", "--params-file", str(path))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    ours = [line for line in proc.stderr.splitlines() if "cannot start" in line]
    assert len(ours) == 1 and str(path) in ours[0], proc.stderr


@pytest.mark.slow  # starts node processes
@pytest.mark.parametrize("gap", [0.04, 0.05, 0.06, 0.04, 0.05, 0.06])
def test_second_sigint_during_shutdown_still_exits_0(repo_root, gap):
    """Ctrl-C under ``ros2 launch`` (issue 32.4): the terminal's SIGINT, then launch's own
    SIGINT 40–60 ms later. The second arrived after run_node had put the default handlers
    back (node destroyed, interpreter exiting) and killed the process: exit code -2 (SIGINT),
    "process has died" in the launch log. Both signals: exit 0, no traceback."""
    import os
    import signal
    import time

    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "PYTHONUNBUFFERED": "1"}
    urdf = str(repo_root / "urdf" / "palletizer.urdf")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gravity_friction_comp.nodes.gravity_compensation_node"]
        + ["--ros-args", "-p", f"urdf_path:={urdf}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        lines = []
        for line in proc.stdout:  # spinning once the model is logged (handlers set before)
            lines.append(line)
            if "model:" in line:
                break
        assert proc.poll() is None, "".join(lines)
        proc.send_signal(signal.SIGINT)
        time.sleep(gap)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, "".join(lines) + out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out


@pytest.mark.parametrize(
    ("ros_args", "named", "line"),
    [
        (("-p", "thread_priority:=100"), "thread_priority", "invalid configuration"),
        (("-p", "thread_priority:=x"), "thread_priority", "invalid configuration"),
        (("-p", "thread_priority:=1.5"), "thread_priority", "invalid configuration"),
        (("--params-file", "{bad}"), "Couldn't parse params file", "cannot start"),
    ],
    ids=["out-of-range", "string", "double", "unparsable-file"],
)
def test_composed_chain_refuses_a_bad_configuration_in_one_line_and_exit_2(
    repo_root, tmp_path, capsys, ros_args, named, line
):
    """The composed executables end as every node executable does (run_node): a value rclpy
    refuses at declaration (the bridge's read-only ``thread_priority`` out of its range, a
    string, a double) or a params file rcl cannot parse is one line and exit 2; it was a
    traceback (InvalidParameterValueException, RCLError) and exit 1. Signal handlers are put
    back afterwards."""
    import signal

    from gravity_friction_comp.nodes import composed_chain

    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    handler = signal.getsignal(signal.SIGINT)
    args = [
        "composed_chain",
        "--ros-args",
        *("--params-file", str(repo_root / "config" / "friction_feedforward.yaml")),
        *("-p", f"urdf_path:={repo_root / 'urdf' / 'palletizer.urdf'}"),
        *("-p", f"arm_config:={repo_root / 'config' / 'palletizer_arm.yaml'}"),
        *(a.format(bad=bad) for a in ros_args),
    ]
    with pytest.raises(SystemExit) as info:
        composed_chain.main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    ours = [text for text in err.splitlines() if text.startswith(f"[composed_chain] {line}: ")]
    assert len(ours) == 1 and named in ours[0], err
    assert "Traceback" not in err
    assert not rclpy.ok()
    assert signal.getsignal(signal.SIGINT) is handler
