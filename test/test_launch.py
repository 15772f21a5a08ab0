"""Launch files: compile, reference only what exists, wire the chain; run where launch_ros is.

``launch``/``launch_ros``/``launch_testing`` come with a ROS 2 install, not from PyPI: the
tests that need them skip with that reason in the pip environment.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import os
import pathlib
import py_compile
import re
import signal
import subprocess
import sys

import numpy as np
import pytest
import yaml

LAUNCH_FILES = ("arm.launch.py", "gravity_compensation.launch.py")


def load_launch_module(repo_root, name):
    spec = importlib.util.spec_from_file_location(name.replace(".", "_"), repo_root / "launch" / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def require_launch_ros():
    """Skip unless the real launch and launch_ros are importable (a ROS 2 install)."""
    try:
        import launch_ros.actions  # noqa: F401

        from launch import LaunchDescription  # noqa: F401  (not the repo's launch/ folder)
    except ImportError as error:
        pytest.skip(
            f"launch/launch_ros not importable ({error}): they come with a ROS 2 install, not from PyPI"
        )


def console_scripts(repo_root) -> set[str]:
    text = (repo_root / "setup.py").read_text()
    return set(re.findall(r'f?"(\w+) = \{PACKAGE\}\.[\w.]+:main"', text))


def node_calls(path):
    """(executable, name, parameter-file default) of every ``Node(...)`` in a launch file."""
    tree = ast.parse(path.read_text())
    found = []
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "Node":
            kw = {k.arg: k.value for k in call.keywords}
            # composed_chain has no name: a process-wide __node rename would rename its three nodes
            name = ast.literal_eval(kw["name"]) if "name" in kw else None
            found.append((ast.literal_eval(kw["executable"]), name))
    return found


@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_launch_file_compiles(repo_root, name, tmp_path):
    py_compile.compile(str(repo_root / "launch" / name), cfile=str(tmp_path / "x.pyc"), doraise=True)


@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_executables_and_parameter_files_exist(repo_root, name):
    scripts = console_scripts(repo_root)
    assert {
        "gravity_compensation_node",
        "friction_feedforward_node",
        "mit_bridge_node",
        "setpoint_player",
    } <= scripts
    source = (repo_root / "launch" / name).read_text()
    calls = node_calls(repo_root / "launch" / name)
    assert calls
    for executable, _node_name in calls:
        assert executable in scripts, f"{executable} is not a console script in setup.py"
    # every config file the launch file names exists and is keyed /**/<node name> (any namespace)
    config_names = re.findall(r'"config" / "([\w.]+)"', source)
    assert config_names
    node_names = {n for _, n in calls}
    for file_name in config_names:
        path = repo_root / "config" / file_name
        assert path.is_file(), f"config/{file_name} missing"
        data = yaml.safe_load(path.read_text())
        if "ros__parameters" in str(data):
            ((key, body),) = data.items()
            assert key.startswith("/**/") and key[4:] in node_names and "ros__parameters" in body, file_name
    for urdf in re.findall(r'"urdf" / "([\w.]+)"', source):
        assert (repo_root / "urdf" / urdf).is_file()


def test_chain_wiring_by_remapping(repo_root):
    arm = load_launch_module(repo_root, "arm.launch.py")
    full = arm.chain_topics(True, True)
    assert full["gravity"] == {"joint_setpoint": "joint_setpoint", "joint_command": "gravity/joint_command"}
    assert full["friction"] == {"joint_setpoint": "gravity/joint_command", "joint_command": "joint_command"}
    assert full["bridge"] == {}
    no_friction = arm.chain_topics(True, False)
    assert no_friction["gravity"]["joint_command"] == "joint_command" and "friction" not in no_friction
    no_gravity = arm.chain_topics(False, True)
    assert no_gravity["friction"] == {"joint_setpoint": "joint_setpoint", "joint_command": "joint_command"}
    assert "gravity" not in no_gravity
    assert arm.chain_topics(False, False) == {"bridge": {"joint_command": "joint_setpoint"}}


def test_simulator_gets_the_gravity_nodes_payload(repo_root):
    arm = load_launch_module(repo_root, "arm.launch.py")
    params = arm.robot_parameters(str(repo_root / "config" / "gravity_compensation.yaml"))
    # values written in config/gravity_compensation.yaml (0.13 kg cylinder under the tool)
    assert params["payload.mass"] == 0.13
    assert params["payload.shape"] == "cylinder"
    assert params["payload.parent"] == "tool"
    assert params["payload.com"] == [0.0, 0.0, -0.07]
    assert params["gravity"] == [0.0, 0.0, -9.81]
    assert not any(k in params for k in ("enable", "scale"))


def test_parameter_files_apply_under_a_namespace(repo_root, tmp_path):
    """A file keyed by the bare node name must still reach ``/left/gravity_compensation``
    (ROS itself would match it only to ``/gravity_compensation``)."""
    arm = load_launch_module(repo_root, "arm.launch.py")
    params = arm.node_parameters(
        str(repo_root / "config" / "gravity_compensation.yaml"), "gravity_compensation", "left"
    )
    # values written in config/gravity_compensation.yaml
    assert params["payload.mass"] == 0.13 and params["enable"] is True
    assert params["gravity"] == [0.0, 0.0, -9.81]
    assert (
        arm.robot_parameters(str(repo_root / "config" / "gravity_compensation.yaml"), "left")[
            "payload.parent"
        ]
        == "tool"
    )
    path = tmp_path / "p.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "/**": {"ros__parameters": {"scale": 0.5, "enable": True}},
                "/left/gravity_compensation": {"ros__parameters": {"scale": 0.8}},
                "/right/gravity_compensation": {"ros__parameters": {"scale": 0.2}},
            }
        )
    )
    assert arm.node_parameters(str(path), "gravity_compensation", "left") == {"scale": 0.8, "enable": True}
    assert arm.node_parameters(str(path), "gravity_compensation", "") == {"scale": 0.5, "enable": True}
    with pytest.raises(ValueError, match="friction_feedforward"):
        arm.node_parameters(str(repo_root / "config" / "gravity_compensation.yaml"), "friction_feedforward")


def test_default_player_parameters_build_a_profile(repo_root):
    pytest.importorskip("rclpy")
    from gravity_friction_comp.nodes.setpoint_player import PLAYER_PARAMETERS, profile_from_parameters

    data = yaml.safe_load((repo_root / "config" / "setpoint_player.yaml").read_text())
    values = {k: v[0] for k, v in PLAYER_PARAMETERS.items()}
    values.update(data["/**/setpoint_player"]["ros__parameters"])
    for profile in ("sine", "ramp", "pick_place"):
        values["profile"] = profile
        p = profile_from_parameters(values)
        assert p.joint_names == ("base_yaw", "shoulder_pitch", "beam_pitch")
        # the home pose lies inside the palletizer's joint limits (urdf/palletizer.urdf.xacro)
        lower, upper = [-2.6, -0.6, -1.0], [2.6, 1.3, 1.0]
        for t in (0.0, 1.0, 2.5, 5.0):
            q = p.sample(t).position
            assert all(lo <= x <= hi for lo, x, hi in zip(lower, q, upper))


def test_lockstep_time_parameters(repo_root):
    """lockstep:=true gives every node use_sim_time and the bridge sim_lockstep at the player's
    rate; without it nothing changes; lockstep on hardware is refused."""
    arm = load_launch_module(repo_root, "arm.launch.py")
    assert arm.time_parameters(False, True, 250.0) == ({}, {})
    assert arm.time_parameters(False, False, 250.0) == ({}, {})
    every, bridge = arm.time_parameters(True, True, 500)
    assert every == {"use_sim_time": True}
    assert bridge == {"sim_lockstep": True, "sim_setpoint_rate_hz": 500.0}
    # the names are the bridge's declared parameters (a typo would be ignored by launch)
    pytest.importorskip("rclpy")
    from gravity_friction_comp.nodes.mit_bridge_node import PARAMETERS

    assert set(bridge) <= {p.name for p in PARAMETERS}
    with pytest.raises(ValueError, match="simulate"):
        arm.time_parameters(True, False, 250.0)


def test_player_checks_trajectories_against_the_chains_urdf(repo_root):
    """The player gets the chain's URDF (before: none, so ``ros2 topic pub /joint_trajectory`` to
    1e30 rad in 2 s was followed; the friction stage dropped the 5e29 rad/s setpoints and the
    bridge fell into its timeout damp): with those values a trajectory faster than the URDF's
    ``<limit velocity>`` (3.0 rad/s on base_yaw, read from urdf/palletizer.urdf) is refused; a
    player file naming its own description keeps it."""
    pytest.importorskip("rclpy")
    import xml.etree.ElementTree as ElementTree

    from gravity_friction_comp.errors import InputError
    from gravity_friction_comp.nodes.setpoint_player import PLAYER_PARAMETERS, _urdf_joint_limits
    from gravity_friction_comp.trajectory.joint_trajectory import TrajectoryFollower, TrajectoryPoint

    arm = load_launch_module(repo_root, "arm.launch.py")
    xacro = str(repo_root / "urdf" / "palletizer.urdf.xacro")
    assert arm.player_velocity_limits({"urdf_path": "/my/arm.urdf"}, xacro) == {}
    assert arm.player_velocity_limits({"robot_description": "<robot/>"}, xacro) == {}
    file_values = arm.node_parameters(str(repo_root / "config" / "setpoint_player.yaml"), "setpoint_player")
    values = {k: v[0] for k, v in PLAYER_PARAMETERS.items()} | file_values
    values |= arm.player_velocity_limits(values, xacro)
    assert values["urdf_path"] == xacro
    urdf = ElementTree.parse(repo_root / "urdf" / "palletizer.urdf").getroot()
    joints = ["base_yaw", "shoulder_pitch", "beam_pitch"]
    want = {
        j.get("name"): float(j.find("limit").get("velocity"))
        for j in urdf.iter("joint")
        if j.find("limit") is not None
    }
    limits = _urdf_joint_limits(values)
    assert limits is not None
    assert [limits[j][2] for j in joints] == [want[j] for j in joints] == [3.0, 2.5, 2.5]
    follower = TrajectoryFollower(joints, [0.0, 0.3, 0.2], [limits[j][2] for j in joints])
    with pytest.raises(InputError, match="velocity"):
        follower.set_trajectory(joints, [TrajectoryPoint(2.0, [1e30, 0.3, 0.2])], 0.0, 100.0)
    with pytest.raises(InputError, match="velocity"):  # 6.2 rad in 2 s: 3.1 rad/s > 3.0
        follower.set_trajectory(joints, [TrajectoryPoint(2.0, [6.2, 0.3, 0.2])], 0.0, 100.0)
    follower.set_trajectory(joints, [TrajectoryPoint(2.0, [5.8, 0.3, 0.2])], 0.0, 100.0)  # 2.9 rad/s


def test_launched_player_gets_the_urdf(repo_root):
    """Launch-description level: the player's ``urdf_path`` is the chain's (palletizer and an
    arm profile), so its joint_trajectory check is on."""
    require_launch_ros()
    arm = load_launch_module(repo_root, "arm.launch.py")
    nodes = launched_parameters(arm)
    assert nodes["setpoint_player"]["urdf_path"] == nodes["gravity_compensation_node"]["urdf_path"]
    assert nodes["setpoint_player"]["urdf_path"].endswith("palletizer.urdf.xacro")
    nodes = launched_parameters(arm, arm="yam_ultra", player="pick_place")
    assert nodes["setpoint_player"]["urdf_path"] == nodes["gravity_compensation_node"]["urdf_path"]
    assert nodes["setpoint_player"]["urdf_path"].endswith("yam_ultra.urdf")


def test_launch_description_builds(repo_root):
    require_launch_ros()
    from launch.actions import DeclareLaunchArgument

    from launch import LaunchContext, LaunchDescription

    arm = load_launch_module(repo_root, "arm.launch.py")
    description = arm.generate_launch_description()
    assert isinstance(description, LaunchDescription)
    names = {a.name for a in description.entities if isinstance(a, DeclareLaunchArgument)}
    assert {
        "urdf",
        "arm_config",
        "simulate",
        "use_gravity",
        "use_friction",
        "namespace",
        "can_interface",
        "can_channel",
        "player",
        "lockstep",
    } <= names
    context = LaunchContext()
    for entity in description.entities:
        entity.visit(context)
    context.launch_configurations.update(use_friction="false", namespace="left", player="sine")
    groups = arm._setup(context)
    nodes = [a for a in groups[0].get_sub_entities() if type(a).__name__ == "Node"]
    assert [n.node_executable for n in nodes] == [
        "gravity_compensation_node",
        "mit_bridge_node",
        "setpoint_player",
    ]
    gravity_module = load_launch_module(repo_root, "gravity_compensation.launch.py")
    assert isinstance(gravity_module.generate_launch_description(), LaunchDescription)


def require_installed_package():
    """Skip unless launch_ros is importable and the package is in an ament index."""
    require_launch_ros()
    try:
        from ament_index_python.packages import get_package_prefix

        get_package_prefix("gravity_friction_comp")
    except Exception as error:  # noqa: BLE001 - any lookup failure means not installed
        pytest.skip(
            f"gravity_friction_comp is not installed in an ament index ({error}); run under colcon test"
        )


#: LaunchService must run in a main thread: run it as `ros2 launch` does, in a process of its
#: own (own process group, stopped with SIGINT to the group like Ctrl-C).
LAUNCH_SCRIPT = (
    "import signal, sys\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "from launch import LaunchDescription, LaunchService\n"
    "from launch.actions import IncludeLaunchDescription\n"
    "from launch.launch_description_sources import PythonLaunchDescriptionSource\n"
    "service = LaunchService()\n"
    "args = [tuple(a.split(':=', 1)) for a in sys.argv[2:]]\n"
    "service.include_launch_description(LaunchDescription([IncludeLaunchDescription(\n"
    "    PythonLaunchDescriptionSource(sys.argv[1]), launch_arguments=args)]))\n"
    "sys.exit(service.run())\n"
)


@contextlib.contextmanager
def launched(repo_root, domain: int, *arguments: str):
    """``arm.launch.py`` with ``arguments`` (``name:=value``) in its own process group;
    SIGINT to the group at the end (Ctrl-C). Yields the process (stdout: the launch log)."""
    env = dict(
        os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH_SCRIPT, str(repo_root / "launch" / "arm.launch.py"), *arguments],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.mark.slow  # starts the launch file's processes
def test_launch_runs_and_data_flows(repo_root):
    """Start arm.launch.py (simulated arm, sine player) and see joint_command and joint_states."""
    require_installed_package()
    from graph_helpers import fresh_domain_id, graph_client, own_namespace
    from sensor_msgs.msg import JointState

    domain, ns = fresh_domain_id(), own_namespace()
    with (
        launched(repo_root, domain, f"namespace:={ns.lstrip('/')}", "player:=sine") as proc,
        graph_client(domain, ns) as client,
    ):
        commands = client.subscribe(JointState, "joint_command")
        states = client.subscribe(JointState, "joint_states")
        ok = client.spin_until(lambda: len(commands) > 20 and len(states) > 20, 60.0, proc)
        assert ok, f"joint_command {len(commands)}, joint_states {len(states)}"
        assert list(commands[-1].name) == ["base_yaw", "shoulder_pitch", "beam_pitch"]
        # gravity on shoulder_pitch and beam_pitch: a few N·m at the sine's poses
        # (config/gravity_compensation.yaml and the palletizer URDF); 0 if a stage were missing
        assert any(abs(e) > 0.1 for e in commands[-1].effort)


@pytest.mark.slow  # starts the launch file's processes
@pytest.mark.parametrize("lockstep", ["false", "true"])
def test_launch_without_player_holds_the_arm(repo_root, lockstep):
    """Default player:=none (issue 13 point 4): joint_command flows (the hold player's pose
    plus the gravity term) and the simulated palletizer stays at its initial pose
    (config/sim_palletizer.yaml: 0.0, 0.3, 0.2 rad) within 10 mrad over the last second of
    3 s of joint_states after the chain answers (bridge hold on kp alone: 0.26 rad); on the
    wall clock, over some second within 20 s more (load can stall a stage past the bridge's
    command timeout)."""
    require_installed_package()
    from graph_helpers import fresh_domain_id, graph_client, own_namespace
    from sensor_msgs.msg import JointState

    q0 = np.array([0.0, 0.3, 0.2])
    domain, ns = fresh_domain_id(), own_namespace()
    with (
        launched(repo_root, domain, f"namespace:={ns.lstrip('/')}", f"lockstep:={lockstep}") as proc,
        graph_client(domain, ns) as client,
    ):
        commands = client.subscribe(JointState, "joint_command")
        states = client.subscribe(JointState, "joint_states")
        assert client.spin_until(lambda: len(commands) > 0, 60.0, proc), "no joint_command without a player"
        states.clear()
        # 3 s of the arm's time (sim time in lockstep: joint_states at 500 Hz)
        assert client.spin_until(lambda: len(states) >= 1500, 60.0, proc), len(states)
        if lockstep == "false":
            # wall clock: a stage stalled > command_timeout by the machine's load makes the bridge
            # damp for a moment; the hold must bring the arm back within 20 s
            def settled():
                q = np.array([m.position for m in states[-500:]])
                return len(q) == 500 and bool(np.all(np.abs(q - q0) < 0.01))

            client.spin_until(settled, 20.0, proc)
        last = np.array([m.position for m in states[-500:]])
        assert list(commands[-1].name) == ["base_yaw", "shoulder_pitch", "beam_pitch"]
        assert list(commands[-1].position) == list(q0) and commands[-1].effort[1] < -0.1
        if lockstep == "true":  # the absolute /clock the nodes tick on: the bridge's alone
            assert client.publishers_of("/clock") == [f"{ns}/mit_bridge"]
    sag = np.abs(last - q0).max(axis=0)
    log = proc.stdout.read()
    assert np.all(sag < 0.01), f"sag {sag} [rad]:\n{log}"
    assert "no setpoint source (profile hold): holding the home pose" in log, log


def test_arm_profile_supplies_the_file_arguments(repo_root):
    """arm:=NAME fills the file arguments from arms/NAME; an explicit one wins; none: as given."""
    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    arm = load_launch_module(repo_root, "arm.launch.py")
    profile = load_arm("yam_ultra")
    files = arm.profile_arguments("yam_ultra", {"urdf": "", "sim_config": "/my/sim.yaml"})
    assert files["urdf"] == str(profile.urdf) and files["urdf"].endswith("arms/yam_ultra/yam_ultra.urdf")
    assert files["bridge_params"] == str(profile.motor_map)
    assert files["arm_config"] == str(profile.arm_config)
    assert files["sim_config"] == "/my/sim.yaml"  # explicit overrides the profile's
    # no gravity/friction files in the profile: the launch file's defaults apply
    assert files["gravity_params"] == "" and files["friction_params"] == ""
    pallet = arm.profile_arguments("palletizer", {})
    assert pallet["gravity_params"].endswith("config/gravity_compensation.yaml")
    assert arm.profile_arguments("", {"urdf": "x.urdf"}) == {
        **dict.fromkeys(arm.PROFILE_FILES, ""),
        "urdf": "x.urdf",
    }
    with pytest.raises(ConfigError, match="valid arms: .*yam_ultra"):
        arm.profile_arguments("no_such_arm", {})


def test_profile_gravity_scale_reaches_the_node(repo_root):
    """With a profile, the gravity file's scale is dropped so the arm YAML's gravity_scale
    applies; with the user's own gravity file, its scale stays."""
    arm = load_launch_module(repo_root, "arm.launch.py")
    file_params = {"scale": 1.0, "enable": True}
    assert arm.gravity_parameters(file_params, "arm.yaml", True) == {"enable": True, "arm_config": "arm.yaml"}
    assert arm.gravity_parameters(file_params, "arm.yaml", False) == file_params


def test_read_motor_limits_argument(repo_root):
    """read_motor_limits:=true reaches the bridge on a real arm, never on the simulated one;
    both new arguments are declared."""
    arm = load_launch_module(repo_root, "arm.launch.py")
    assert arm.motor_limit_parameters(True, False) == {"read_motor_limits": True}
    assert arm.motor_limit_parameters(True, True) == {"read_motor_limits": False}
    assert arm.motor_limit_parameters(False, False) == {"read_motor_limits": False}
    declared = {name for name, _, _ in arm.ARGUMENTS}  # what launch_arguments() declares
    assert {"arm", "read_motor_limits"} <= declared
    pytest.importorskip("rclpy")
    from gravity_friction_comp.nodes.mit_bridge_node import PARAMETERS

    assert "read_motor_limits" in {p.name for p in PARAMETERS}


def test_bimanual_profile_gets_one_bridge_per_bus(repo_root):
    """openarm_v10_bimanual: two bridges, left on can1 and right on can0, each with its own
    7 joints and their motor-map columns (cut from the profile, compared column by column);
    a single-bus map is one bridge, unchanged."""
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    arm = load_launch_module(repo_root, "arm.launch.py")
    profile = load_arm("openarm_v10_bimanual")
    values = profile.bridge_values()
    bridges = arm.bus_bridges(values)
    assert [(ns, bus) for ns, bus, _ in bridges] == [("left", "can1"), ("right", "can0")]
    for ns, bus, part in bridges:
        assert part["joints"] == list(profile.joints_on(bus))
        assert all(f"_{ns}_" in j for j in part["joints"])
        assert part["can.channel"] == bus and "bus" not in part
        rows = [values["joints"].index(j) for j in part["joints"]]
        for key in ("can_id", "master_id", "motor_type", "kp", "kd", "effort_limit"):
            assert part[key] == [values[key][i] for i in rows], key
        assert part["can.fd"] is True and part["can.data_bitrate"] == 5_000_000
    single = load_arm("yam_ultra").bridge_values()
    assert arm.bus_bridges(single) == [("", "can0", single)]


@pytest.mark.slow  # loads the launch module
def test_bimanual_profile_simulated_is_one_bridge_per_bus_in_one_lockstep(repo_root):
    """simulate:=true with a multi-bus map: one bridge per bus as on the real arm (issue 28.3);
    in lockstep the left one owns /clock and waits for the right one's joint_states, the right
    one follows; both read the chain's topics. The composed chain and free drive (one
    consumer of joint_states) keep one bridge with the whole map (its ``bus`` column kept)."""
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    arm = load_launch_module(repo_root, "arm.launch.py")
    values = load_arm("openarm_v10_bimanual").bridge_values()
    bridges = arm.launch_bridges(values, True)
    assert bridges == arm.bus_bridges(values) == arm.launch_bridges(values, False)
    assert arm.launch_bridges(values, True, one=True) == [("", "can0", values)]
    assert arm.launch_bridges(values, False, one=True) == arm.bus_bridges(values)  # a real arm: per bus
    assert values["bus"] == ["can1"] * 7 + ["can0"] * 7
    shared = {
        "joint_command": "/arms/joint_command",
        "joint_setpoint": "/arms/joint_setpoint",
        "gripper/holding": "/arms/gripper/holding",
        "sim/external_effort": "/arms/sim/external_effort",
    }
    assert arm.bridge_wiring(bridges, True, True, "arms", "joint_command") == [
        ({"sim_lockstep_peers": ["/arms/right/joint_states"]}, shared),
        ({"sim_lockstep_follow": True}, shared),
    ]
    assert arm.bridge_wiring(bridges, True, False, "arms", "joint_command") == [({}, shared)] * 2
    hardware = {"joint_command": "/arms/joint_command"}
    assert arm.bridge_wiring(bridges, False, False, "arms", "joint_command") == [({}, hardware)] * 2
    single = load_arm("yam_ultra").bridge_values()
    assert arm.launch_bridges(single, True) == arm.launch_bridges(single, False) == [("", "can0", single)]
    assert arm.bridge_wiring(arm.launch_bridges(single, True), True, True, "", "joint_command") == [({}, {})]


@pytest.mark.slow  # loads the launch module
def test_friction_measurement_on_a_bridge_per_bus_is_refused_not_silent(repo_root):
    """One bridge per bus publishes ``left/joint_states`` and ``right/joint_states`` (the
    teleop follower: ``/follower/left/joint_states``, ...), and the friction node listened on
    the arm's ``joint_states``, which nobody publishes: ``velocity_source: measured`` ran on
    a velocity of 0, silently. Now: such a file value is refused at launch, and the node gets
    no measurement topic, so a runtime switch to measured is refused with the reason."""
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    arm = load_launch_module(repo_root, "arm.launch.py")
    teleop = load_launch_module(repo_root, "teleop.launch.py")
    values = load_arm("openarm_v10_bimanual").bridge_values()
    bridges = arm.launch_bridges(values, False)
    published = teleop.state_topics(values, "follower", free_drive=False)  # what the bridges publish
    assert "/follower/joint_states" not in published and len(published) == len(bridges) == 2
    base = {"velocity_source": "setpoint", "drive": "velocity"}
    for bad in ({"velocity_source": "measured"}, {"drive": "position_error"}):
        with pytest.raises(ValueError, match=r"2 buses.*\(left/joint_states, right/joint_states\)"):
            arm.friction_measurement_parameters(base | bad, bridges)
    assert arm.friction_measurement_parameters(base, bridges) == {"joint_states_topic": ""}
    for one in (
        arm.launch_bridges(values, True, one=True),
        arm.bus_bridges(load_arm("yam_ultra").bridge_values()),
    ):
        assert arm.friction_measurement_parameters(base | {"velocity_source": "measured"}, one) == {}
    pytest.importorskip("rclpy")
    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.nodes.friction_feedforward_node import PARAMETERS, build_friction_config

    node_values = {p.name: p.default for p in PARAMETERS} | {"joints": ["j1"], "joint_states_topic": ""}
    with pytest.raises(ConfigError, match="no measurement source") as err:  # the node's own refusal
        build_friction_config(node_values | {"velocity_source": "measured"})
    assert err.value.key == "velocity_source"


def test_composed_chain_gets_one_parameter_section_per_node(repo_root):
    arm = load_launch_module(repo_root, "arm.launch.py")
    path = arm.composed_parameters_file({"scale": 0.5}, {"enable": False}, {"rate_hz": 1000.0})
    try:
        data = yaml.safe_load(open(path).read())
    finally:
        os.unlink(path)
    assert data == {
        "/**/gravity_compensation": {"ros__parameters": {"scale": 0.5}},
        "/**/friction_feedforward": {"ros__parameters": {"enable": False}},
        "/**/mit_bridge": {"ros__parameters": {"rate_hz": 1000.0}},
    }
    full = arm.chain_topics(True, True)
    arm.check_composed(full, [("", "can0", {})])
    with pytest.raises(ValueError, match="use_gravity and use_friction"):
        arm.check_composed(arm.chain_topics(True, False), [("", "can0", {})])
    with pytest.raises(ValueError, match="2 buses"):
        arm.check_composed(full, [("left", "can0", {}), ("right", "can1", {})])


def yam_ultra_expected(repo_root) -> dict:
    """What arm:=yam_ultra must give each node, read straight from the profile's files (XML and
    YAML, not through the package's loaders): payload on the last motor joint (the profile has
    no gravity file; the generic file's ``tool`` is the palletizer's frame), friction on the
    motor map's joints and limits, gravity effort limits = URDF's raised to the motor map's
    (the URDF says effort="1"), player poses = sim.yaml's initial positions ± 0.3 rad
    (demo.proximal) / ± 0.1 rad (other motor joints; none reaches a limit), passive at home."""
    import xml.etree.ElementTree as ElementTree

    base = repo_root / "arms" / "yam_ultra"
    motor = yaml.safe_load((base / "mit_bridge.yaml").read_text())["/**/mit_bridge"]["ros__parameters"]
    joints, effort = motor["joints"], [float(x) for x in motor["effort_limit"]]
    urdf = ElementTree.parse(base / "yam_ultra.urdf").getroot()
    movable = [j for j in urdf.iter("joint") if j.get("type") not in ("fixed", None)]
    names = [j.get("name") for j in movable]
    urdf_effort = [float(j.find("limit").get("effort")) for j in movable]
    proximal = yaml.safe_load((base / "profile.yaml").read_text())["arm_profile"]["demo"]["proximal"]
    sim = yaml.safe_load((base / "sim.yaml").read_text())["simulation"]["joints"]
    home = np.array([float(sim.get(n, {}).get("initial_position", 0.0)) for n in names])
    offset = np.array([(0.3 if n in proximal else 0.1) if n in joints else 0.0 for n in names])
    return {
        "payload.parent": joints[-1],
        "friction_joints": joints,
        "friction_effort_limit": effort,
        "gravity_effort_limit": [
            max(u, dict(zip(joints, effort)).get(n, u)) for n, u in zip(names, urdf_effort)
        ],
        "joint_names": names,
        "home": list(home),
        "pick": list(home + offset),
        "place": list(home - offset),
    }


def test_profile_values_replace_the_palletizers(repo_root, tmp_path):
    """arm:=yam_ultra (issue 15 point 1): the helpers give the profile's payload parent,
    gravity effort limits and player poses, not the palletizer's (``tool``, [base_yaw, ...]);
    the demo's --arm yam_ultra resolves to the same values (one place for each fact)."""
    from gravity_friction_comp.profiles.arm_profiles import (
        load_arm,
        motor_map_stage_values,
        profile_payload_parent,
    )
    from gravity_friction_comp.tools.demo.options import build_setup, parse_args

    arm = load_launch_module(repo_root, "arm.launch.py")
    want = yam_ultra_expected(repo_root)
    profile = load_arm("yam_ultra")
    motor = profile.bridge_values()
    parent = profile_payload_parent(profile, motor["joints"], False)
    assert parent == want["payload.parent"] == "dof_joint6"
    gravity_file = arm.node_parameters(
        str(repo_root / "config" / "gravity_compensation.yaml"), "gravity_compensation"
    )
    assert gravity_file["payload.parent"] == "tool"  # the palletizer's frame, not in this URDF
    values = arm.gravity_parameters(gravity_file, str(profile.arm_config), True, parent)
    assert values["payload.parent"] == "dof_joint6" and "scale" not in values
    robot = arm.robot_parameters(str(repo_root / "config" / "gravity_compensation.yaml"), "", parent)
    assert robot["payload.parent"] == "dof_joint6"  # the simulated arm carries the same payload
    assert arm.effort_limit_parameters(str(profile.urdf), motor) == {
        "effort_limit": want["gravity_effort_limit"]
    }
    stage = motor_map_stage_values(motor)
    assert stage == {"joints": want["friction_joints"], "effort_limit": want["friction_effort_limit"]}
    player = arm.profile_player_parameters(
        "yam_ultra", str(profile.urdf), str(profile.sim_config), motor["joints"]
    )
    assert player["joint_names"] == want["joint_names"]
    for key in ("home", "pick", "place"):
        np.testing.assert_allclose(player[key], want[key], atol=1e-12, err_msg=key)
    hold = arm.player_parameters("none", True, str(profile.sim_config), player["joint_names"])
    assert hold["joint_names"] == want["joint_names"] and hold["home"] == want["home"]  # finger joints too
    # the palletizer's own files still apply to the palletizer profile
    assert profile_payload_parent(load_arm("palletizer"), ["base_yaw"], False) == ""
    setup = build_setup(parse_args(["--arm", "yam_ultra"]), tmp_path)
    assert setup.payload_parent == parent
    assert list(setup.gravity_effort_limit) == want["gravity_effort_limit"]
    assert list(setup.all_joints) == player["joint_names"]
    for key in ("home", "pick", "place"):
        np.testing.assert_allclose(getattr(setup, key), player[key], atol=1e-12, err_msg=key)


def assert_profile_file(path: str, repo_root, arm: str, name: str) -> None:
    """``path`` is the profile's ``arms/<arm>/<name>``: the checkout's, or its installed copy in
    the package share when the package is sourced (colcon install, the real launch tools)."""
    assert pathlib.Path(path).parts[-3:] == ("arms", arm, name), path
    assert pathlib.Path(path).read_bytes() == (repo_root / "arms" / arm / name).read_bytes(), path


def launched_nodes(module, **configurations) -> dict[str, tuple[dict, list]]:
    """executable → (its evaluated parameters, its command-line arguments), from ``_setup``
    with these launch arguments."""
    from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions
    from launch_ros.utilities import evaluate_parameters

    from launch import LaunchContext

    context = LaunchContext()
    for entity in module.generate_launch_description().entities:
        entity.visit(context)
    context.launch_configurations.update(configurations)
    out = {}
    for node in module._setup(context)[0].get_sub_entities():
        if type(node).__name__ == "Node":
            values = evaluate_parameters(context, node._Node__parameters)[0]
            if not isinstance(values, dict):  # a parameter file (composed_chain's sections)
                values = {"params_file": str(values)}
            arguments = [
                perform_substitutions(context, normalize_to_list_of_substitutions(arg))
                for arg in node._Node__arguments or []
            ]
            out[node.node_executable] = (
                {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()},
                arguments,
            )
    return out


def launched_parameters(module, **configurations) -> dict[str, dict]:
    """executable → its evaluated parameters (:func:`launched_nodes`; parameters only, so a
    node's arguments are never taken for one of its parameters)."""
    return {name: values for name, (values, _) in launched_nodes(module, **configurations).items()}


def test_arm_profile_launch_gives_each_node_the_profiles_values(repo_root):
    """Launch-description level: arm:=yam_ultra player:=pick_place lockstep:=true hands every
    node the profile's values (before the fix: payload.parent ``tool`` and the palletizer's
    joints, so the gravity node, the bridge and the friction node exited 2); an explicit
    file argument still wins."""
    require_launch_ros()
    arm = load_launch_module(repo_root, "arm.launch.py")
    want = yam_ultra_expected(repo_root)
    nodes = launched_parameters(arm, arm="yam_ultra", player="pick_place", lockstep="true")
    gravity, friction = nodes["gravity_compensation_node"], nodes["friction_feedforward_node"]
    bridge, player = nodes["mit_bridge_node"], nodes["setpoint_player"]
    assert gravity["payload.parent"] == bridge["payload.parent"] == want["payload.parent"]
    assert gravity["effort_limit"] == want["gravity_effort_limit"]
    assert gravity["arm_config"] == friction["arm_config"]
    assert_profile_file(gravity["arm_config"], repo_root, "yam_ultra", "arm.yaml")
    assert (
        friction["joints"] == want["friction_joints"]
        and friction["effort_limit"] == want["friction_effort_limit"]
    )
    assert player["profile"] == "pick_place" and player["joint_names"] == want["joint_names"]
    for key in ("home", "pick", "place"):
        np.testing.assert_allclose(player[key], want[key], atol=1e-12, err_msg=key)
    assert player["move_time"] == 2.0  # timing: the generic file's
    held = launched_parameters(arm, arm="openarm_v10")["setpoint_player"]
    assert held["profile"] == "hold" and "openarm_finger_joint1" in held["joint_names"]
    mine = str(repo_root / "config" / "friction_feedforward.yaml")
    explicit = launched_parameters(arm, arm="yam_ultra", friction_params=mine)["friction_feedforward_node"]
    assert explicit["joints"] == ["base_yaw", "shoulder_pitch", "beam_pitch"]  # the user's file wins


@pytest.mark.slow  # starts the launch file's processes
def test_launch_arm_profile_follows_pick_place(repo_root):
    """``arm:=yam_ultra player:=pick_place lockstep:=true`` (issue 15 point 1) on the real
    launch: joint_command carries the model's 8 joints with a gravity term on dof_joint2/3,
    and over 4 s of simulated time the arm follows the commanded positions (RMS < 10 mrad per
    motor joint; measured 1.2–6.2 mrad) while dof_joint1 moves > 0.2 rad toward the pick pose
    (0.3 rad). Before the fix three nodes exited 2 and nothing flowed."""
    require_installed_package()
    from graph_helpers import fresh_domain_id, graph_client, own_namespace
    from sensor_msgs.msg import JointState

    want = yam_ultra_expected(repo_root)
    motors = want["friction_joints"]
    domain, ns = fresh_domain_id(), own_namespace()
    args = (f"namespace:={ns.lstrip('/')}", "arm:=yam_ultra", "player:=pick_place", "lockstep:=true")
    with launched(repo_root, domain, *args) as proc, graph_client(domain, ns) as client:
        commands = client.subscribe(JointState, "joint_command")
        states = client.subscribe(JointState, "joint_states")
        assert client.spin_until(lambda: len(commands) > 0, 60.0, proc), proc.poll()
        # joint_states at 500 Hz of sim time: 4 s
        assert client.spin_until(lambda: len(states) >= 2000, 90.0, proc), len(states)
        command_log = list(commands)
        state_log = list(states)
        assert client.publishers_of("/clock") == [f"{ns}/mit_bridge"]  # lockstep: the bridge's alone
    assert list(command_log[-1].name) == want["joint_names"]
    effort = dict(zip(command_log[-1].name, command_log[-1].effort))
    assert abs(effort["dof_joint2"]) > 0.1 and abs(effort["dof_joint3"]) > 0.1, effort

    def stamp(m):
        return m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec

    command_t = np.array([stamp(m) for m in command_log])
    command_q = np.array([[dict(zip(m.name, m.position))[j] for j in motors] for m in command_log])
    state_t = np.array([stamp(m) for m in state_log])
    state_q = np.array([[dict(zip(m.name, m.position))[j] for j in motors] for m in state_log])
    keep = state_t >= command_t[0] + 0.5  # after the chain's first answers
    last = np.clip(np.searchsorted(command_t, state_t[keep], side="right") - 1, 0, len(command_t) - 1)
    rms = np.sqrt(np.mean((state_q[keep] - command_q[last]) ** 2, axis=0))
    assert np.all(rms < 0.01), f"RMS tracking error {dict(zip(motors, rms))} [rad]"
    assert state_q[:, 0].max() > 0.2, state_q[:, 0].max()


def test_shaper_argument_puts_the_shaper_before_the_first_stage(repo_root):
    """shaper:=true (issue 30): the shaper reads joint_setpoint, the first stage (or the
    bridge when no stage runs) reads shaped/joint_setpoint; the bridge's lockstep watch stays
    on the source's joint_setpoint (its idle ticks start the clock until the shaper has a
    target); without it the wiring is the one above. Declared, default false."""
    arm = load_launch_module(repo_root, "arm.launch.py")
    assert ("shaper", "false") in {(n, d) for n, d, _ in arm.ARGUMENTS}
    assert arm.chain_topics(True, True, False) == arm.chain_topics(True, True)
    full = arm.chain_topics(True, True, True)
    assert full["gravity"] == {
        "joint_setpoint": "shaped/joint_setpoint",
        "joint_command": "gravity/joint_command",
    }
    assert full["friction"] == {"joint_setpoint": "gravity/joint_command", "joint_command": "joint_command"}
    assert full["bridge"] == {}
    assert arm.chain_topics(False, True, True)["friction"]["joint_setpoint"] == "shaped/joint_setpoint"
    assert arm.chain_topics(False, False, True)["bridge"] == {"joint_command": "shaped/joint_setpoint"}
    pytest.importorskip("rclpy")
    from gravity_friction_comp.nodes.setpoint_shaper_node import SHAPED_TOPIC

    assert SHAPED_TOPIC == "shaped/joint_setpoint"  # the node's own output topic


@pytest.mark.parametrize("arm_name", ["palletizer", "yam_ultra"])
def test_shaper_parameters_come_from_the_profiles_urdf_and_arm_yaml(repo_root, arm_name):
    """The shaper gets the profile's URDF and arm YAML (whose setpoint_shaper block gives the
    acceleration and jerk, read here as YAML), the chain's rate and the model's joints (the
    URDF's movable non-mimic joints, read as XML), and the node builds a shaper with them."""
    import xml.etree.ElementTree as ElementTree

    pytest.importorskip("rclpy")
    from gravity_friction_comp.nodes.setpoint_shaper_node import PARAMETERS, shaper_from_values
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    arm = load_launch_module(repo_root, "arm.launch.py")
    profile = load_arm(arm_name)
    values = arm.shaper_parameters(str(profile.urdf), str(profile.arm_config), 250.0)
    urdf = ElementTree.parse(profile.urdf).getroot()
    movable = [
        j for j in urdf.iter("joint") if j.get("type") not in ("fixed", None) and j.find("mimic") is None
    ]
    assert values == {
        "urdf_path": str(profile.urdf),
        "arm_config": str(profile.arm_config),
        "rate_hz": 250.0,
        "joints": [j.get("name") for j in movable],
    }
    block = yaml.safe_load(profile.arm_config.read_text())["setpoint_shaper"]
    shaper = shaper_from_values({p.name: p.default for p in PARAMETERS} | values, values["joints"])
    np.testing.assert_array_equal(shaper.limits.acceleration, block["max_acceleration"])
    np.testing.assert_array_equal(shaper.limits.jerk, block["max_jerk"])
    urdf_velocity = [float(j.find("limit").get("velocity")) for j in movable]
    np.testing.assert_array_equal(shaper.limits.velocity, urdf_velocity)


def test_every_arm_profile_has_shaper_limits(repo_root):
    """shaper:=true works with every profile: each arm YAML gives the limits the URDF lacks."""
    pytest.importorskip("rclpy")
    from gravity_friction_comp.profiles.arm_profiles import list_arms, load_arm

    arm = load_launch_module(repo_root, "arm.launch.py")
    for name in list_arms():
        profile = load_arm(name)
        assert arm.shaper_parameters(str(profile.urdf), str(profile.arm_config), 500.0)["joints"], name


def test_shaper_parameters_refuse_an_arm_yaml_without_limits(repo_root, tmp_path):
    """An arm YAML without a setpoint_shaper block: the launch fails naming the missing limit
    (before: the shaper would start and never publish)."""
    pytest.importorskip("rclpy")
    from gravity_friction_comp.errors import ConfigError

    arm = load_launch_module(repo_root, "arm.launch.py")
    bare = tmp_path / "arm.yaml"
    bare.write_text("joints: [base_yaw, shoulder_pitch, beam_pitch]\n")
    with pytest.raises(ConfigError, match="max_acceleration"):
        arm.shaper_parameters(str(repo_root / "urdf" / "palletizer.urdf"), str(bare), 500.0)


def test_composed_chain_gets_the_shaper_section_and_flag(repo_root, monkeypatch):
    """composed:=true shaper:=true: the parameter file has a setpoint_shaper section, and
    ``composed_chain --shaper`` builds the chain with its shaper stage (without the flag: none)."""
    arm = load_launch_module(repo_root, "arm.launch.py")
    path = arm.composed_parameters_file({}, {}, {}, shaper={"rate_hz": 250.0})
    try:
        data = yaml.safe_load(open(path).read())
    finally:
        os.unlink(path)
    assert data["/**/setpoint_shaper"] == {"ros__parameters": {"rate_hz": 250.0}}
    pytest.importorskip("rclpy")
    from gravity_friction_comp.nodes import composed_chain

    built = []
    monkeypatch.setattr(composed_chain, "ComposedChain", lambda **kwargs: built.append(kwargs))
    monkeypatch.setattr(composed_chain, "run_composed", lambda factory, *args: factory())
    composed_chain.main(["composed_chain", "--shaper", "--ros-args", "--params-file", "x.yaml"])
    composed_chain.main(["composed_chain", "--ros-args", "--params-file", "x.yaml"])
    assert built == [{"shaper": {}}, {"shaper": None}]


def test_shaper_launch_gives_the_shaper_node_the_chains_rate(repo_root):
    """Launch-description level: shaper:=true starts setpoint_shaper with the profile's files
    at the lockstep tick (the player's rate_hz) or the bridge's rate; composed:=true runs it
    inside composed_chain (--shaper); mode:=free_drive is refused."""
    require_launch_ros()
    arm = load_launch_module(repo_root, "arm.launch.py")
    nodes = launched_parameters(arm, arm="yam_ultra", player="pick_place", lockstep="true", shaper="true")
    shaper = nodes["setpoint_shaper"]
    assert shaper["rate_hz"] == nodes["setpoint_player"]["rate_hz"] == 250.0
    assert_profile_file(shaper["arm_config"], repo_root, "yam_ultra", "arm.yaml")
    assert shaper["use_sim_time"] is True
    wall = launched_parameters(arm, arm="yam_ultra", shaper="true")["setpoint_shaper"]
    assert wall["rate_hz"] == 500.0  # arms/yam_ultra/mit_bridge.yaml rate_hz
    composed = launched_nodes(arm, arm="yam_ultra", shaper="true", composed="true")
    assert "setpoint_shaper" not in composed and "--shaper" in composed["composed_chain"][1]
    with pytest.raises(ValueError, match="free_drive"):
        launched_parameters(arm, arm="yam_ultra", shaper="true", mode="free_drive")


@pytest.mark.slow  # starts the launch file's processes
def test_launch_with_shaper_follows_pick_place(repo_root):
    """``shaper:=true player:=pick_place lockstep:=true`` on the real launch: the shaped
    stream flows at the tick rate and the arm follows it (RMS < 10 mrad per joint)."""
    require_installed_package()
    from graph_helpers import fresh_domain_id, graph_client, own_namespace
    from sensor_msgs.msg import JointState

    domain, ns = fresh_domain_id(), own_namespace()
    args = (f"namespace:={ns.lstrip('/')}", "player:=pick_place", "lockstep:=true", "shaper:=true")
    with launched(repo_root, domain, *args) as proc, graph_client(domain, ns) as client:
        shaped = client.subscribe(JointState, "shaped/joint_setpoint")
        states = client.subscribe(JointState, "joint_states")
        assert client.spin_until(lambda: len(shaped) > 0, 60.0, proc), proc.poll()
        assert client.spin_until(lambda: len(states) >= 2000, 90.0, proc), len(states)
        shaped_log, state_log = list(shaped), list(states)

    def stamp(m):
        return m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec

    shaped_t = np.array([stamp(m) for m in shaped_log])
    shaped_q = np.array([m.position for m in shaped_log])
    state_t = np.array([stamp(m) for m in state_log])
    state_q = np.array([m.position for m in state_log])
    keep = state_t >= shaped_t[0] + 0.5
    last = np.clip(np.searchsorted(shaped_t, state_t[keep], side="right") - 1, 0, len(shaped_t) - 1)
    rms = np.sqrt(np.mean((state_q[keep] - shaped_q[last]) ** 2, axis=0))
    assert np.all(rms < 0.01), rms
