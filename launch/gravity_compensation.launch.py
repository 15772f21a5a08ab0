"""The gravity compensation stage alone: ``joint_setpoint`` → ``joint_command`` + ``~/effort``.

For a chain of your own (another controller downstream) or to compare the gravity term with
``ros2 topic echo /gravity_compensation/effort``. Parameters from ``config/gravity_compensation.yaml``
(or ``params``); ``urdf`` sets ``urdf_path`` (default: the bundled palletizer xacro; empty
``urdf:=`` with ``use_topic:=true`` waits for the ``robot_description`` topic instead).

Example::

    ros2 launch gravity_friction_comp gravity_compensation.launch.py output:=gravity/joint_command
"""

from __future__ import annotations

import importlib.util
import pathlib

PACKAGE = "gravity_friction_comp"


def _arm_launch():
    """``arm.launch.py`` beside this file: its helpers serve both launch files."""
    spec = importlib.util.spec_from_file_location(
        "gfc_arm_launch", pathlib.Path(__file__).with_name("arm.launch.py")
    )
    arm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(arm)
    return arm


def package_share() -> pathlib.Path:
    """The installed share directory (``arm.launch.py``'s ``package_share``)."""
    return _arm_launch().package_share()


def node_parameters(params_file: str, node_name: str, namespace: str = "") -> dict:
    """``node_parameters`` of ``arm.launch.py``: the node's parameters from a ``ros2 param
    dump`` file, so that a file keyed by the bare node name applies under a namespace too.
    Raises ValueError when no section applies."""
    return _arm_launch().node_parameters(params_file, node_name, namespace)


def _setup(context, *args, **kwargs):
    from launch.actions import GroupAction
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node, PushRosNamespace

    share = package_share()
    cfg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    use_topic = cfg("use_topic").strip().lower() in ("true", "1")
    urdf = "" if use_topic else (cfg("urdf") or str(share / "urdf" / "palletizer.urdf.xacro"))
    params = cfg("params") or str(share / "config" / "gravity_compensation.yaml")
    namespace = cfg("namespace")
    actions = [PushRosNamespace(namespace)] if namespace else []
    actions.append(
        Node(
            package=PACKAGE,
            executable="gravity_compensation_node",
            name="gravity_compensation",
            output="screen",
            parameters=[node_parameters(params, "gravity_compensation", namespace) | {"urdf_path": urdf}],
            remappings=[("joint_setpoint", cfg("input")), ("joint_command", cfg("output"))],
        )
    )
    return [GroupAction(actions, scoped=True)]


def generate_launch_description():
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    from launch import LaunchDescription

    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "urdf",
                default_value="",
                description="URDF or .xacro path (default: the bundled palletizer xacro)",
            ),
            DeclareLaunchArgument(
                "use_topic",
                default_value="false",
                description="true: no urdf_path, read the robot_description topic",
            ),
            DeclareLaunchArgument(
                "params",
                default_value="",
                description="parameter file (default config/gravity_compensation.yaml)",
            ),
            DeclareLaunchArgument("namespace", default_value="", description="namespace of the node"),
            DeclareLaunchArgument("input", default_value="joint_setpoint", description="setpoint topic"),
            DeclareLaunchArgument("output", default_value="joint_command", description="command topic"),
            OpaqueFunction(function=_setup),
        ]
    )
