"""Teleoperation: a leader arm in free drive drives a follower arm, force feedback optional.

    leader (arm.launch.py arm:=LEADER mode:=free_drive namespace:=leader)
        ─/leader/joint_states─▶ teleop ─/follower/joint_setpoint─▶ follower chain
    follower (arm.launch.py arm:=FOLLOWER player:=external namespace:=follower)
        ─/follower/joint_states─▶ momentum_observer ─/follower/momentum_observer/external_effort─▶ teleop
        ─/leader/feedback_effort─▶ leader's free_drive (added to its τ_ff)

Each arm is its own ``arm.launch.py`` (its own bus and bridge; with ``simulate:=true`` each
its own simulated arm on a private virtual bus), in its own namespace. ``teleop_node`` maps
the leader's joints onto the follower's (the per-pair YAML ``pair_config``; default
``arms/<follower>/teleop.yaml`` where it exists, else the identity mapping of the joints both
motor maps share), engages softly, shapes the stream and feeds back (docs/teleop.md).
A bimanual profile (``openarm_v10_bimanual``) is one teleop node over both arms' joints (the
follower's one gravity stage takes the whole model per setpoint); its follower runs one
bridge per bus (``/follower/left``, ``/follower/right``): the teleop node reads each bridge's
``joint_states`` and merges them by joint name (:func:`state_topics`), a fault of either
bridge holds the follower, and each bus has its own momentum observer on its bridge's
``joint_states`` (:func:`observer_commands`: ``/follower/left/momentum_observer``, ...), the
teleop node taking each one's estimate for that bus's joints.

Examples::

    ros2 launch gravity_friction_comp teleop.launch.py leader:=palletizer follower:=palletizer
    ros2 launch gravity_friction_comp teleop.launch.py leader:=openarm_v10_bimanual follower:=openarm_v10_bimanual
"""

from __future__ import annotations

import pathlib

PACKAGE = "gravity_friction_comp"
LEADER_NS, FOLLOWER_NS = "leader", "follower"


def _profile(arm):
    """``arm``: a profile name (loaded here) or an already loaded
    :class:`~gravity_friction_comp.profiles.arm_profiles.ArmProfile` (returned as it is), so
    :func:`teleop_wiring` loads each arm's profile once for all the helpers."""
    from gravity_friction_comp.profiles.arm_profiles import ArmProfile, load_arm

    return arm if isinstance(arm, ArmProfile) else load_arm(arm)


def default_pair_config(follower) -> str:
    """``arms/<follower>/teleop.yaml`` when the follower profile (a name or a loaded
    profile, :func:`_profile`) has one, else ``""``."""
    path = _profile(follower).directory / "teleop.yaml"
    return str(path) if path.is_file() else ""


def state_topics(motor_values: dict, namespace: str, free_drive: bool, root: str = "") -> list[str]:
    """The ``joint_states`` topics of one arm as ``arm.launch.py`` starts its bridges in
    ``namespace``: one per bus's bridge (``<root>/<namespace>/<bus namespace>/joint_states``,
    :func:`~gravity_friction_comp.profiles.arm_profiles.bus_bridges`), or the one
    ``<root>/<namespace>/joint_states`` of a single bridge (one bus; free drive, where
    ``arm.launch.py`` runs one bridge serving every bus). ``root``: "" (the launch) or a
    namespace ``/x`` above both arms' (a test's own)."""
    from gravity_friction_comp.profiles.arm_profiles import bus_bridges

    subs = [""] if free_drive else [sub for sub, _, _ in bus_bridges(motor_values)]
    base = f"{root.rstrip('/')}/{namespace}"
    return [f"{base}/{sub}/joint_states" if sub else f"{base}/joint_states" for sub in subs]


def teleop_parameters(
    leader, follower, pair_config: str, rate_hz: float | None = None, root: str = ""
) -> dict:
    """The teleop node's parameters for profiles ``leader`` → ``follower`` (names or loaded
    profiles, :func:`_profile`).

    The identity mapping (no pair file) is the leader bridge joints the follower's bridge
    also has; the follower's model joints that no bridge drives (grippers' fingers) are
    published at their sim-config start pose (the gravity stage needs every model joint);
    ``leader_effort_limit`` is the leader motor map's, per mapped joint; the state topics and
    the follower's bridges are those of each arm's bridges (:func:`state_topics`: per bus on
    the bimanual follower), the external-torque topics those of the follower's observers
    (:func:`observer_commands`: one per bus). ``root``: as :func:`state_topics`.

    Raises:
        ConfigError: unknown profile, a pair file that does not load, no common joint.
    """
    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.sim.config import SimConfig
    from gravity_friction_comp.teleop.config import TeleopPairConfig, load_pair_config

    lp, fp = _profile(leader), _profile(follower)
    leader, follower = (a if isinstance(a, str) else a.name for a in (leader, follower))  # for messages
    pair_config = pair_config or default_pair_config(fp)
    if pair_config:
        pair = load_pair_config(pair_config)
    else:
        common = [j for j in lp.joints if j in fp.joints]
        if not common:
            raise ConfigError(f"{leader} and {follower} share no joint: give pair_config", key="pair_config")
        pair = TeleopPairConfig.identity(common)
    lv, fv = lp.bridge_values(), fp.bridge_values()
    limits = lp.effort_limits()  # the leader bridge's bounds (T_MAX where the map sets none)
    leaders = [pair.joints[j].leader for j in pair.joints]
    missing = [j for j in leaders if j not in limits]
    if missing:
        raise ConfigError(f"leader joints {missing} not in {leader}'s motor map", key="pair_config")
    sim = SimConfig.from_yaml(fp.sim_config)
    from gravity_friction_comp.model.robot_model import RobotModel

    model_joints = RobotModel.from_urdf(fp.urdf).joint_names  # independent joints (mimic reduced)
    fixed = [j for j in model_joints if j not in pair.follower_joints and j not in fp.joints]
    follower_topics = state_topics(fv, FOLLOWER_NS, free_drive=False, root=root)
    return {
        "pair_config": pair_config,
        "joints": list(pair.joints) if not pair_config else [""],
        "urdf_path": str(fp.urdf),
        "arm_config": str(fp.arm_config),
        "leader_effort_limit": [limits[j] for j in leaders],
        "fixed_joints": fixed or [""],
        "fixed_positions": [float(sim.joint(j).initial_position) for j in fixed] or [0.0],
        "rate_hz": float(rate_hz if rate_hz is not None else fp.rate_hz),
        "leader_state_topics": state_topics(lv, LEADER_NS, free_drive=True, root=root),
        "follower_state_topics": follower_topics,
        "follower_bridges": [t.removesuffix("joint_states") + "mit_bridge" for t in follower_topics],
        "follower_effort_topics": [
            f"{ns}/{OBSERVER}/external_effort" for ns in _bus_namespaces(follower_topics)
        ],
    }


#: The momentum observer's node name (issue 29's ``observer_node``).
OBSERVER = "momentum_observer"


def _bus_namespaces(topics: list[str]) -> list[str]:
    """The namespace of each bridge's ``joint_states`` topic (``/follower/left``, ...)."""
    return [t.removesuffix("/joint_states") for t in topics]


def observer_commands(follower, python: str, root: str = "") -> list[list[str]]:
    """The follower's momentum observers (issue 29's ``observer_node``), one per bridge, each
    in its bridge's namespace on that bridge's ``joint_states`` (the bimanual follower:
    ``/follower/left`` and ``/follower/right``, each with its bus's joints; one bus:
    ``/follower``): ``python -m`` (its module), the follower profile's URDF (the whole model:
    the arms of a bimanual share no moving body, so a bus's estimates need only its own
    joints) and arm YAML (friction). Their ``~/external_effort`` are the teleop node's
    ``follower_effort_topics`` (:func:`teleop_parameters`). ``follower``: a name or a loaded
    profile (:func:`_profile`). ``root``: as :func:`state_topics`.
    """
    fp = _profile(follower)
    topics = state_topics(fp.bridge_values(), FOLLOWER_NS, free_drive=False, root=root)
    return [
        [
            python,
            "-m",
            "gravity_friction_comp.nodes.observer_node",
            "--ros-args",
            "-r",
            f"__ns:={ns}",
            "-p",
            f"urdf_path:={fp.urdf}",
            "-p",
            f"observer.arm_config:={fp.arm_config}",
        ]
        for ns in _bus_namespaces(topics)
    ]


def teleop_remappings(root: str = "") -> list[tuple[str, str]]:
    """The teleop node's topics in the two arms' namespaces (the arms' ``joint_states`` and
    the follower's estimates: ``leader_state_topics``/``follower_state_topics``/
    ``follower_effort_topics`` of :func:`teleop_parameters`). ``root``: as :func:`state_topics`."""
    base = root.rstrip("/")
    return [
        ("follower_setpoint", f"{base}/{FOLLOWER_NS}/joint_setpoint"),
        ("leader_feedback_effort", f"{base}/{LEADER_NS}/feedback_effort"),
    ]


#: The launch arguments :func:`teleop_wiring` takes.
WIRING_ARGUMENTS = ("pair_config", "external_effort_topic", "feedback", "feedback_gain")


def teleop_wiring(
    leader: str,
    follower: str,
    python: str,
    pair_config: str = "",
    external_effort_topic: str = "",
    feedback: str = "",
    feedback_gain: str = "",
    root: str = "",
) -> tuple[dict, list[list[str]]]:
    """The teleop node's parameters and the observers to start, from the launch arguments
    (strings, :data:`ARGUMENTS`; each profile loaded once): :func:`teleop_parameters`; ``external_effort_topic`` empty:
    the follower's observers (:func:`observer_commands`), else its topics (comma-separated)
    read and no observer started; ``feedback``/``feedback_gain`` given: their start values.

    Raises:
        ConfigError: as :func:`teleop_parameters`. ValueError: ``feedback`` not true/false,
            ``feedback_gain`` not a number (the teleop node checks its range).
    """
    lp, fp = _profile(leader), _profile(follower)  # each profile loaded once for every helper
    values = teleop_parameters(lp, fp, pair_config, root=root)
    topics = [t.strip() for t in external_effort_topic.split(",") if t.strip()]
    observers = [] if topics else observer_commands(fp, python, root=root)
    if topics:  # estimates from elsewhere (e.g. the bridges' own observers)
        values["follower_effort_topics"] = topics
    if feedback:
        if feedback.lower() not in ("true", "false"):
            raise ValueError(f"feedback:={feedback!r}: true or false")
        values["feedback.enable"] = feedback.lower() == "true"
    if feedback_gain:
        try:
            values["feedback.gain"] = float(feedback_gain)
        except ValueError:
            raise ValueError(f"feedback_gain:={feedback_gain!r} is not a number") from None
    return values, observers


def arm_arguments(leader: str, follower: str, simulate: str) -> list[dict[str, str]]:
    """The two ``arm.launch.py`` includes' arguments, leader's then follower's: the same keys
    in both, each include in a scoped group, because an include's arguments stay set in the
    launch context (the leader's ``mode:=free_drive`` put the follower in free drive, kp 0,
    its own ``free_drive`` node publishing on ``/follower/joint_setpoint`` beside the teleop
    node's)."""
    common = {"simulate": simulate, "lockstep": "false"}
    return [
        {"arm": leader, "namespace": LEADER_NS, "mode": "free_drive", "player": "none"} | common,
        {"arm": follower, "namespace": FOLLOWER_NS, "mode": "follow", "player": "external"} | common,
    ]


def _setup(context, *args, **kwargs):
    import sys

    from launch.actions import ExecuteProcess, GroupAction, IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    given = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    leader, follower = given("leader"), given("follower")
    if not leader or not follower:
        raise ValueError(
            "teleop.launch.py needs leader:=<profile> and follower:=<profile> (gfc_demo --list-arms)"
        )
    arm_file = str(pathlib.Path(__file__).resolve().with_name("arm.launch.py"))
    actions: list = [
        GroupAction(
            [
                IncludeLaunchDescription(
                    PythonLaunchDescriptionSource(arm_file), launch_arguments=args.items()
                )
            ],
            scoped=True,
        )
        for args in arm_arguments(leader, follower, given("simulate"))
    ]
    values, observers = teleop_wiring(
        leader, follower, sys.executable, **{k: given(k) for k in WIRING_ARGUMENTS}
    )
    actions += [ExecuteProcess(cmd=c, output="screen") for c in observers]
    actions.append(
        Node(
            package=PACKAGE,
            executable="teleop_node",
            name="teleop",
            output="screen",
            parameters=[values],
            remappings=teleop_remappings(),
        )
    )
    return actions


ARGUMENTS = (
    ("leader", "", "arm profile of the leader (free drive, in namespace leader)"),
    ("follower", "", "arm profile of the follower (follow mode, in namespace follower)"),
    ("pair_config", "", "per-pair YAML (default arms/<follower>/teleop.yaml, else the identity mapping)"),
    ("simulate", "true", "true: both arms simulated, each on its own private virtual CAN bus"),
    ("feedback", "", "true | false: force feedback at start (default: the pair YAML's)"),
    ("feedback_gain", "", "feedback gain at start (default: the pair YAML's; 0..MAX_FEEDBACK_GAIN)"),
    (
        "external_effort_topic",
        "",
        "the follower's external-torque estimate, a topic or several separated by commas (one per "
        "bus); empty (default): start one momentum_observer per follower bridge (python -m "
        "gravity_friction_comp.nodes.observer_node, on that bridge's joint_states) and read theirs; "
        "a topic (e.g. the follower bridges' ~/external_effort with observer.enable) starts none",
    ),
)


def _arm_launch():
    """``arm.launch.py`` beside this file (its description helper serves both files)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "gfc_arm_launch", pathlib.Path(__file__).resolve().with_name("arm.launch.py")
    )
    assert spec is not None and spec.loader is not None
    arm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(arm)
    return arm


def generate_launch_description():
    """:data:`ARGUMENTS` and :func:`_setup` (``arm.launch.py``'s ``generate_launch_description``)."""
    return _arm_launch().generate_launch_description(ARGUMENTS, _setup)
