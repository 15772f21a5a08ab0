"""One arm: setpoint_player → gravity_compensation → friction_feedforward → mit_bridge.

Wiring (ARCHITECTURE.md), by remapping only::

    joint_setpoint ─▶ gravity_compensation ─gravity/joint_command─▶ friction_feedforward
        ─joint_command─▶ mit_bridge ─▶ joint_states, diagnostics

``use_gravity:=false`` or ``use_friction:=false`` drops that stage and connects its input
topic straight to its output topic's consumer. Everything lives under ``namespace`` (two
arms side by side: ``namespace:=left`` and ``namespace:=right``).

Parameters come from the ``ros2 param dump`` files in ``config/`` (``gravity_params``,
``friction_params``, ``bridge_params``, ``player_params``); launch arguments override them
(``urdf`` → ``urdf_path`` of the gravity node and of the bridge, which takes its position
limits (when ``urdf`` is given) and the simulated arm from it, ``arm_config`` → the friction node's ``arm_config``,
``simulate``/``sim_config``/``can_interface``/``can_channel`` → the bridge). The payload
the gravity node is told about (``payload.*`` in ``gravity_params``) is also the payload of
the simulated arm: one place for each fact.
``lockstep:=true`` (with ``simulate:=true``) runs the simulated arm in lockstep: it owns the
clock (``/clock``), every node gets ``use_sim_time``, and physics advances only once the
chain has answered each setpoint (the bridge's ``sim_lockstep``; ``/clock`` ticks at the
player's ``rate_hz``), so results do not depend on the machine's load (see
:func:`time_parameters`).
``player:=none`` (the default) starts the player with profile ``hold``: it holds the
measured pose (see :func:`player_parameters`), so ``joint_command`` carries the gravity and
friction terms and the arm does not sag on the bridge's kp alone.
The files are read here and handed to each node as values, so a file keyed by the bare node
name still applies under ``namespace`` (see ``node_parameters``).

``arm:=NAME`` takes the defaults of ``urdf``, ``arm_config``, ``sim_config``,
``bridge_params`` (the motor map) and, where the profile has them, ``gravity_params`` /
``friction_params`` from the arm profile ``arms/NAME`` (``--list-arms`` of the demo lists
them); an explicit launch argument overrides the profile's file (see
:func:`profile_arguments`). With a profile, the gravity node also gets the arm YAML as its
``arm_config`` (its ``gravity_scale``: i2rt's ``gravity_comp_factor``) and an
``effort_limit`` raised to the motor map's where the URDF's is lower
(:func:`effort_limit_parameters`). Where the profile has no file of its own, the generic
(palletizer) file gives only what is not arm-specific: the payload hangs from the profile's
last motor joint (:func:`gravity_parameters`, also for the simulated arm), the friction node
takes the motor map's joints and effort limits, and the player the demo's poses (model
joints, home = sim config initial positions, :func:`profile_player_parameters`), each
computed by the helpers the lockstep demo uses (``arm_profiles``).
``composed:=true`` runs gravity, friction and the bridge in one process
(``composed_chain``: no DDS hop between them, every term still published, the same node
names and parameters; needs both stages and one bus); the separate nodes are the default.
``shaper:=true`` puts the setpoint shaper (``setpoint_shaper``, Ruckig) between the source's
``joint_setpoint`` and the first stage, at the chain's rate (:func:`shaper_parameters`).
``read_motor_limits:=true`` has the bridge read each Damiao motor's P/V/T_MAX registers at
start (real arm only; the simulated arm never does).

Examples::

    ros2 launch gravity_friction_comp arm.launch.py                       # simulated palletizer
    ros2 launch gravity_friction_comp arm.launch.py arm:=yam_ultra player:=pick_place lockstep:=true
    ros2 launch gravity_friction_comp arm.launch.py arm:=yam_ultra simulate:=false read_motor_limits:=true
    ros2 launch gravity_friction_comp arm.launch.py player:=pick_place
    ros2 launch gravity_friction_comp arm.launch.py player:=pick_place lockstep:=true
    ros2 launch gravity_friction_comp arm.launch.py simulate:=false can_interface:=socketcan can_channel:=can0
"""

from __future__ import annotations

import pathlib

# launch/launch_ros are imported inside the functions, so the pure helpers (chain_topics,
# robot_parameters) import and test without a ROS install.
PACKAGE = "gravity_friction_comp"
PLAYER_PROFILES = ("none", "sine", "ramp", "pick_place", "csv", "bag", "external")


def package_share() -> pathlib.Path:
    """The installed share directory; the source tree when the package is not installed."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        return pathlib.Path(__file__).resolve().parents[1]
    try:
        return pathlib.Path(get_package_share_directory(PACKAGE))
    except (PackageNotFoundError, OSError):  # OSError: AMENT_PREFIX_PATH unset (no workspace sourced)
        return pathlib.Path(__file__).resolve().parents[1]


def node_parameters(params_file: str, node_name: str, namespace: str = "") -> dict:
    """The flattened ``ros__parameters`` of ``node_name`` in a ``ros2 param dump`` file
    (:func:`gravity_friction_comp.param_files.node_parameters`): handed to ``Node`` as values so
    that a file keyed by the bare node name still applies under ``namespace``.

    Raises:
        ValueError: no section of the file applies to the node.
    """
    from gravity_friction_comp.param_files import node_parameters as read

    return read(params_file, node_name, namespace)


def robot_parameters(gravity_params: str, namespace: str = "", payload_parent: str = "") -> dict:
    """``gravity`` and ``payload.*`` of the gravity node's parameter file (for the simulator),
    ``payload.parent`` replaced by ``payload_parent`` when given (as for the gravity node, see
    :func:`gravity_parameters`).

    Raises:
        ValueError: the file has no section for ``gravity_compensation``.
    """
    params = node_parameters(gravity_params, "gravity_compensation", namespace)
    out = {k: v for k, v in params.items() if k == "gravity" or k.startswith("payload.")}
    return out | ({"payload.parent": payload_parent} if payload_parent else {})


#: Launch argument → ArmProfile attribute of the file it defaults to.
PROFILE_FILES = {
    "urdf": "urdf",
    "arm_config": "arm_config",
    "sim_config": "sim_config",
    "bridge_params": "motor_map",
    "gravity_params": "gravity_params",
    "friction_params": "friction_params",
}


def profile_arguments(arm: str, explicit: dict[str, str]) -> dict[str, str]:
    """The file launch arguments of arm profile ``arm``, explicit ones (non-empty) winning.

    Args:
        arm: Profile name or directory (``""``: no profile, ``explicit`` returned as given).
        explicit: Launch argument name → value as given on the command line (``""`` unset).

    Returns:
        Every key of :data:`PROFILE_FILES` and of ``explicit`` → path (``""`` where neither the
        profile nor the command line gives one: the launch file's palletizer default applies).

    Raises:
        ConfigError: unknown profile (the message lists the valid names) or a bad one.
    """
    out = {key: "" for key in PROFILE_FILES} | {k: v for k, v in explicit.items()}
    if not arm:
        return out
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    profile = load_arm(arm)
    for key, attribute in PROFILE_FILES.items():
        path = getattr(profile, attribute)
        if not out.get(key) and path is not None:
            out[key] = str(path)
    return out


def free_drive_dither(dither, dither_scale: str) -> tuple[float, ...]:
    """The stiction dither ``mode:=free_drive`` gives the friction stage: the profile's
    ``free_drive.dither`` (per bridge joint, fractions of breakaway) × launch argument
    ``dither_scale`` (0 = off, 1 = the profile's; on hardware start at 0 and raise it).

    Raises:
        ConfigError: ``dither_scale`` not a finite number in 0..1 (key ``dither_scale``).
    """
    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.validation import number

    scale = number("dither_scale", dither_scale, text=True)
    if not 0.0 <= scale <= 1.0:
        raise ConfigError(
            f"dither_scale must be in 0..1 (0 = off, 1 = the profile's dither), got {dither_scale!r}",
            key="dither_scale",
            value=dither_scale,
        )
    return tuple(scale * float(d) for d in dither)


def gravity_parameters(
    file_params: dict, arm_config: str, from_profile: bool, payload_parent: str = ""
) -> dict:
    """The gravity node's parameters: its file's, plus (with an arm profile whose gravity file
    is not the user's) ``arm_config`` with ``scale`` left unset, so that the node applies the
    arm YAML's ``gravity_scale`` (a file's ``scale`` would outrank it), and ``payload.parent``
    set to ``payload_parent`` (the generic file's ``tool`` is the palletizer's frame).

    Args:
        file_params: Parameters read from the gravity parameter file.
        arm_config: The arm YAML.
        from_profile: True when ``arm:=`` was given and neither the profile nor the command
            line names a gravity file (the package's generic one is used).
        payload_parent: Joint or link of the profile's arm holding the payload
            (:func:`gravity_friction_comp.profiles.arm_profiles.profile_payload_parent`); ``""`` keeps
            the file's.
    """
    if not from_profile:
        return dict(file_params)
    parent = {"payload.parent": payload_parent} if payload_parent else {}
    return {k: v for k, v in file_params.items() if k != "scale"} | {"arm_config": arm_config} | parent


def effort_limit_parameters(urdf: str, motor_values: dict) -> dict:
    """The gravity node's ``effort_limit`` where the URDF's is below the motor map's (placeholder
    limits, i2rt YAM ``effort="1"``), as the lockstep demo sets it
    (:func:`gravity_friction_comp.profiles.arm_profiles.raised_effort_limits`); ``{}`` when none is.

    Raises:
        ConfigError: unreadable URDF.
    """
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import raised_effort_limits

    joints, effort = motor_values.get("joints") or [], motor_values.get("effort_limit") or []
    if not isinstance(effort, (list, tuple)) or len(effort) != len(joints):
        return {}
    model = RobotModel.from_urdf(urdf)
    limits, _ = raised_effort_limits(model.joint_names, model.effort_limits, dict(zip(joints, effort)))
    return {"effort_limit": list(limits)} if limits else {}


def profile_player_parameters(arm: str, urdf: str, sim_config: str, joints: list[str]) -> dict:
    """The player's arm-specific values for ``arm:=NAME`` with the generic player file, as the
    lockstep demo builds them (:func:`gravity_friction_comp.profiles.arm_profiles.pick_place_poses`):
    ``joint_names`` = the model's joints, ``home`` = the sim config's ``initial_position``,
    ``pick``/``place`` = home ± the demo's offsets inside the limits, ``amplitude`` (sine,
    ramp) = pick − home. Timing (``move_time``, ``rate_hz``, ...) stays the file's.

    Raises:
        ConfigError: bad profile, URDF or sim config.
    """
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import load_arm, pick_place_poses, proximal_joints
    from gravity_friction_comp.sim.config import SimConfig

    model = RobotModel.from_urdf(urdf)
    sim = SimConfig.from_yaml(sim_config)
    names = list(model.joint_names)
    home = [float(sim.joint(j).initial_position) for j in names]
    proximal = proximal_joints(load_arm(arm), joints)
    pick, place = pick_place_poses(names, joints, proximal, home, model.position_lower, model.position_upper)
    return {
        "joint_names": names,
        "home": home,
        "pick": [float(x) for x in pick],
        "place": [float(x) for x in place],
        "amplitude": [float(p - h) for p, h in zip(pick, home)],
    }


def bus_bridges(values: dict) -> list[tuple[str, str, dict]]:
    """One bridge per bus of a motor map: ``[(namespace, channel, parameters)]``
    (:func:`gravity_friction_comp.profiles.arm_profiles.bus_bridges`)."""
    from gravity_friction_comp.profiles.arm_profiles import bus_bridges as split

    return split(values)


def launch_bridges(values: dict, simulate: bool, one: bool = False) -> list[tuple[str, str, dict]]:
    """The bridges to start: one per bus (:func:`bus_bridges`), each its own process, on a
    real arm and on the simulated one alike (issue 28.3: each simulated bridge runs its own
    arm's joints on its own virtual bus; in lockstep they share one clock,
    :func:`bridge_wiring`). ``one`` (the composed chain or free drive on a simulated arm: one
    ``joint_states`` for one consumer): one bridge with the whole motor map (``bus`` kept),
    serving every bus on its own virtual channel."""
    bridges = bus_bridges(values)
    if one and simulate and len(bridges) > 1:
        return [("", str(values.get("can.channel", "")), values)]
    return bridges


def friction_measurement_parameters(friction_values: dict, bridges: list[tuple[str, str, dict]]) -> dict:
    """The friction node's measurement topic for the bridges :func:`launch_bridges` starts.

    One bridge: nothing to change (its ``joint_states`` is the node's, in the arm's
    namespace). One bridge per bus: each publishes its own ``<bus>/joint_states`` and no
    topic carries the whole arm's, so the node's ``joint_states`` would hear nothing and
    ``velocity_source: measured`` run on a velocity of 0, silently: ``joint_states_topic``
    ``""`` (the node then refuses ``velocity_source: measured`` / ``drive: position_error``
    at runtime, with the reason), and such values from the parameter file are refused here.

    Raises:
        ValueError: ``friction_values`` need a measurement and there are several bridges.
    """
    if len(bridges) < 2:
        return {}
    needs = [
        f"{key}: {friction_values[key]}"
        for key, value in (("velocity_source", "measured"), ("drive", "position_error"))
        if friction_values.get(key) == value
    ]
    if needs:
        topics = ", ".join(f"{sub}/joint_states" for sub, _, _ in bridges)
        raise ValueError(
            f"friction {', '.join(needs)} reads one joint_states topic, and this motor map has "
            f"{len(bridges)} buses, each bridge publishing its own ({topics}): use velocity_source "
            "setpoint or differentiated (drive: velocity) on this arm"
        )
    return {"joint_states_topic": ""}


def bridge_wiring(
    bridges: list[tuple[str, str, dict]], simulate: bool, lockstep: bool, namespace: str, command_topic: str
) -> list[tuple[dict, dict]]:
    """Per bridge of :func:`launch_bridges`: its extra parameters and remappings. A bus's
    bridge in its own namespace reads the chain's ``command_topic`` (in ``namespace``); on
    the simulated arm also the chain's setpoint, gripper and simulated-hand topics, and in
    lockstep the first bridge owns ``/clock`` and waits for the others' states
    (:func:`gravity_friction_comp.sim.chain.bus_bridge_wiring`)."""
    base = "/" + namespace.strip("/") if namespace.strip("/") else ""
    if len(bridges) < 2:
        return [({}, {})] * len(bridges)
    if not simulate:
        return [({}, {"joint_command": f"{base}/{command_topic}"})] * len(bridges)
    from gravity_friction_comp.sim.chain import bus_bridge_wiring

    return bus_bridge_wiring([sub for sub, _, _ in bridges], namespace, command_topic, lockstep)


def motor_limit_parameters(read_motor_limits: bool, simulate: bool) -> dict:
    """The bridge's ``read_motor_limits`` (issue 13 point 5): as asked on a real arm; always
    ``False`` on the simulated arm (its emulated motors have no registers to read)."""
    return {"read_motor_limits": bool(read_motor_limits) and not simulate}


def time_parameters(lockstep: bool, simulate: bool, setpoint_rate_hz: float) -> tuple[dict, dict]:
    """``(every node, bridge only)`` parameter overrides for the time model.

    Lockstep: ``use_sim_time`` for every node; the bridge ``sim_lockstep`` with its /clock tick
    at the player's rate. Otherwise nothing (wall clock).

    Raises:
        ValueError: lockstep without simulate (a real arm cannot wait for the chain).
    """
    if not lockstep:
        return {}, {}
    if not simulate:
        raise ValueError("lockstep:=true needs simulate:=true (a real arm does not wait for the chain)")
    return {"use_sim_time": True}, {"sim_lockstep": True, "sim_setpoint_rate_hz": float(setpoint_rate_hz)}


def player_velocity_limits(player_values: dict, urdf: str) -> dict:
    """The player's robot description, so a ``joint_trajectory`` is checked against the URDF
    velocity limits (without one the player checks none, and a trajectory to 1e30 rad was
    followed: the friction stage dropped its setpoints and the bridge fell into the timeout
    damp). The chain's ``urdf`` unless the player's file names a description of its own.
    """
    if player_values.get("robot_description") or player_values.get("urdf_path"):
        return {}
    return {"urdf_path": urdf}


def player_parameters(
    player: str, simulate: bool, sim_config: str, joint_names: list[str] | None = None
) -> dict:
    """The player's overrides: ``profile`` = ``player``; ``player:=none`` starts profile
    ``hold`` (issue 13 point 4: the chain holds the arm with its gravity and friction terms
    instead of the bridge's kp-only start-up hold, which lets the arm sag).

    On the simulated arm, hold's pose is the sim config's ``initial_position`` of its joints,
    at once (``hold_wait`` 0): that is where the arm starts, while the first ``joint_states``
    the player can see comes after the arm has sagged on the bridge's kp for a few tens of ms
    (and in lockstep only once the chain has answered). On a real arm it is the first measured
    ``joint_states`` of every joint (``joint_names`` empty), with no fallback: it never moves
    the arm to a pose it has not measured. ``joint_names`` (simulated arm): hold these joints
    (an arm profile's model joints, passive ones included: the gravity node needs every model
    joint) instead of the sim config's.

    Raises:
        ConfigError: unreadable or invalid ``sim_config``.
    """
    if player != "none":
        return {"profile": player}
    if not simulate:
        return {"profile": "hold", "joint_names": [""]}
    from gravity_friction_comp.sim.config import SimConfig

    sim = SimConfig.from_yaml(sim_config)
    names = list(joint_names) if joint_names else list(sim.joints)
    return {
        "profile": "hold",
        "joint_names": names or [""],
        "home": [float(sim.joint(j).initial_position) for j in names] or [0.0],
        "hold_wait": 0.0,
    }


def _bool(context, name: str) -> bool:
    from launch.substitutions import LaunchConfiguration

    value = LaunchConfiguration(name).perform(context).strip().lower()
    if value not in ("true", "false", "1", "0"):
        raise ValueError(f"launch argument {name} must be true or false, got {value!r}")
    return value in ("true", "1")


def chain_topics(use_gravity: bool, use_friction: bool, shaper: bool = False) -> dict[str, dict[str, str]]:
    """Remappings per stage: the stages that run, wired from ``joint_setpoint`` (with
    ``shaper``: the shaper's output ``shaped/joint_setpoint``, the shaper reading ``joint_setpoint``) to
    ``joint_command`` (the bridge's input). The bridge's lockstep watch of the setpoint
    stays on the source's ``joint_setpoint``: before the chain's first answer its idle ticks
    move the clock on until the shaper has a target (its first timer call may come first)."""
    stages = [s for s, on in (("gravity", use_gravity), ("friction", use_friction)) if on]
    remaps: dict[str, dict[str, str]] = {}
    source = "joint_setpoint"
    if shaper:
        from gravity_friction_comp.nodes.setpoint_shaper_node import SHAPED_TOPIC

        source = SHAPED_TOPIC
    for k, stage in enumerate(stages):
        target = "joint_command" if k == len(stages) - 1 else f"{stage}/joint_command"
        remaps[stage] = {"joint_setpoint": source, "joint_command": target}
        source = target
    # No stage at all: the bridge reads the setpoints directly.
    remaps["bridge"] = {"joint_command": source} if source != "joint_command" else {}
    return remaps


def shaper_parameters(urdf: str, arm_config: str, rate_hz: float) -> dict:
    """The setpoint shaper's parameters for ``shaper:=true`` (issue 30): the URDF (velocity
    and position limits), the per-arm YAML (its ``setpoint_shaper:`` block: acceleration and
    jerk), ``rate_hz`` (the chain's: the bridge's rate, or the lockstep tick) and ``joints``
    = the model's joints (what the gravity stage needs in every setpoint).

    Raises:
        ConfigError: the arm YAML and URDF do not give every limit for the joints (the node's
            own check, :func:`~gravity_friction_comp.nodes.setpoint_shaper_node.shaper_from_values`,
            run here: the launch fails with the reason instead of a shaper node exiting 2).
    """
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.nodes.setpoint_shaper_node import PARAMETERS, shaper_from_values

    joints = list(RobotModel.from_urdf(urdf).joint_names)
    values = {"urdf_path": urdf, "arm_config": arm_config, "rate_hz": float(rate_hz), "joints": joints}
    shaper_from_values({p.name: p.default for p in PARAMETERS} | values, joints)
    return values


def _setup(context, *args, **kwargs):
    from launch.actions import GroupAction
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node, PushRosNamespace

    share = package_share()
    given = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    arm = given("arm")
    files = profile_arguments(arm, {key: given(key) for key in PROFILE_FILES})
    cfg = lambda name: files[name] if name in files else given(name)  # noqa: E731
    urdf = cfg("urdf") or str(share / "urdf" / "palletizer.urdf.xacro")
    arm_config = cfg("arm_config") or str(share / "config" / "palletizer_arm.yaml")
    sim_config = cfg("sim_config") or str(share / "config" / "sim_palletizer.yaml")
    gravity_params = cfg("gravity_params") or str(share / "config" / "gravity_compensation.yaml")
    friction_params = cfg("friction_params") or str(share / "config" / "friction_feedforward.yaml")
    bridge_params = cfg("bridge_params") or str(share / "config" / "mit_bridge.yaml")
    # a profile without a file of its own: the generic file's arm-specific values are replaced
    # by the profile's (arm YAML gravity_scale, payload parent, motor-map joints, poses)
    gravity_from_profile = bool(arm) and not files["gravity_params"]
    friction_from_profile = bool(arm) and not files["friction_params"]
    player_from_profile = gravity_from_profile and not given("player_params")
    player_params = cfg("player_params") or str(share / "config" / "setpoint_player.yaml")
    player = cfg("player")
    if player not in PLAYER_PROFILES:
        raise ValueError(
            f"launch argument player must be one of {', '.join(PLAYER_PROFILES)}, got {player!r}"
        )
    simulate = _bool(context, "simulate")
    shaper = _bool(context, "shaper")  # issue 30: the setpoint shaper before the first stage
    remaps = chain_topics(_bool(context, "use_gravity"), _bool(context, "use_friction"), shaper)
    namespace = cfg("namespace")
    params = lambda path, node: node_parameters(path, node, namespace)  # noqa: E731
    player_rate = params(player_params, "setpoint_player").get("rate_hz", 250.0)
    clock, bridge_clock = time_parameters(_bool(context, "lockstep"), simulate, player_rate)
    free_drive = None  # issue 19: mode:=free_drive, the chain on the measured joint_states
    if cfg("mode") == "free_drive":
        from gravity_friction_comp.nodes.free_drive_launch import free_drive_launch_parts
        from gravity_friction_comp.profiles.arm_profiles import load_arm

        fd_friction = params(friction_params, "friction_feedforward")
        if friction_from_profile:  # the friction node then runs on the motor map's joints (below)
            from gravity_friction_comp.profiles.arm_profiles import motor_map_stage_values

            fd_friction |= motor_map_stage_values(params(bridge_params, "mit_bridge"))
        free_drive = free_drive_launch_parts(
            params(bridge_params, "mit_bridge"),
            urdf,
            fd_friction,
            float(cfg("free_drive_kd_scale")),
            player_rate if _bool(context, "lockstep") else 0.0,
            free_drive_dither(load_arm(arm).free_drive_dither if arm else (), cfg("dither_scale")),
            load_arm(arm).free_drive_friction_scale if arm else (),
        )
    elif cfg("mode") != "follow":
        raise ValueError(f"launch argument mode must be follow or free_drive, got {cfg('mode')!r}")
    if shaper and free_drive:
        raise ValueError("shaper:=true shapes a setpoint source; mode:=free_drive follows the measured arm")
    actions = []
    if namespace:
        actions.append(PushRosNamespace(namespace))
    motor_values = params(bridge_params, "mit_bridge")
    payload_parent = ""
    if gravity_from_profile:
        from gravity_friction_comp.profiles.arm_profiles import load_arm, profile_payload_parent

        payload_parent = profile_payload_parent(load_arm(arm), motor_values.get("joints") or [], False)
    gravity_file = params(gravity_params, "gravity_compensation")
    gravity_values = gravity_parameters(gravity_file, arm_config, gravity_from_profile, payload_parent)
    if arm and "effort_limit" not in gravity_file:  # a file's own effort_limit wins
        gravity_values |= effort_limit_parameters(urdf, motor_values)
    gravity_values |= {"urdf_path": urdf} | clock
    friction_values = params(friction_params, "friction_feedforward") | {"arm_config": arm_config}
    if friction_from_profile:
        from gravity_friction_comp.profiles.arm_profiles import motor_map_stage_values

        friction_values |= motor_map_stage_values(motor_values)
    if free_drive:
        friction_values |= free_drive[1]
    friction_values |= clock
    composed = _bool(context, "composed")
    # free drive: one bridge serving every bus, one joint_states for the one source
    bridges = launch_bridges(motor_values, simulate, one=composed or bool(free_drive))
    if free_drive and len(bridges) > 1:
        bridges = [("", str(motor_values.get("can.channel", "")), motor_values)]
    friction_values |= friction_measurement_parameters(friction_values, bridges)
    shaper_values = None
    if shaper:  # at the chain's rate: the lockstep tick, else the bridge's exchange rate
        from gravity_friction_comp.mit.bridge_config import BridgeConfig

        rate = (
            player_rate if _bool(context, "lockstep") else motor_values.get("rate_hz", BridgeConfig.rate_hz)
        )
        shaper_values = shaper_parameters(urdf, arm_config, rate) | clock
    if shaper_values and not composed:
        actions.append(
            Node(
                package=PACKAGE,
                executable="setpoint_shaper",
                name="setpoint_shaper",
                output="screen",
                parameters=[shaper_values],
            )
        )
    if "gravity" in remaps and not composed:
        actions.append(
            Node(
                package=PACKAGE,
                executable="gravity_compensation_node",
                name="gravity_compensation",
                output="screen",
                parameters=[gravity_values],
                remappings=list(remaps["gravity"].items()),
            )
        )
    if "friction" in remaps and not composed:
        actions.append(
            Node(
                package=PACKAGE,
                executable="friction_feedforward_node",
                name="friction_feedforward",
                output="screen",
                parameters=[friction_values],
                remappings=list(remaps["friction"].items()),
            )
        )
    bridge_overrides = {
        "simulate": simulate,
        "can.interface": cfg("can_interface"),
        "can.channel": cfg("can_channel"),
        **motor_limit_parameters(_bool(context, "read_motor_limits"), simulate),
    }
    if cfg("urdf"):  # on hardware too: the bridge clamps commanded positions to its <limit>s
        bridge_overrides["urdf_path"] = urdf
    if simulate:
        bridge_overrides.update(robot_parameters(gravity_params, namespace, payload_parent))
        bridge_overrides.update({"urdf_path": urdf, "sim_config": sim_config})
    if free_drive:
        bridge_overrides.update(free_drive[0])
        if not composed:  # composed: free drive runs inside composed_free_drive
            actions.append(
                Node(
                    package=PACKAGE,
                    executable="free_drive_node",
                    name="free_drive",
                    output="screen",
                    parameters=[free_drive[2] | clock],
                )
            )
    if composed:
        check_composed(remaps, bridges)
        bridge_values = bridges[0][2] | bridge_overrides | clock | bridge_clock
        free_values = free_drive[2] | clock if free_drive else None
        file = composed_parameters_file(
            gravity_values, friction_values, bridge_values, free_values, shaper=shaper_values
        )
        actions.append(removed_at_shutdown(file))
        actions.append(
            Node(package=PACKAGE, executable="composed_free_drive", output="screen", parameters=[file])
            if free_drive
            else Node(
                package=PACKAGE,
                executable="composed_chain",
                output="screen",
                parameters=[file],
                arguments=["--shaper"] if shaper_values else [],
            )
        )
        bridges = []  # the bridge runs inside composed_chain
    command_topic = remaps["bridge"].get("joint_command", "joint_command")
    wiring = bridge_wiring(bridges, simulate, _bool(context, "lockstep"), namespace, command_topic)
    for (sub, channel, values), (lockstep_values, shared) in zip(bridges, wiring):
        overrides = dict(bridge_overrides) | lockstep_values
        remapping = dict(remaps["bridge"]) | shared
        if sub:  # the bus's bridge in its own namespace, on its own channel
            overrides["can.channel"] = channel
        actions.append(
            Node(
                package=PACKAGE,
                executable="mit_bridge_node",
                name="mit_bridge",
                namespace=sub or None,
                output="screen",
                parameters=[values | overrides | clock | bridge_clock],
                remappings=list(remapping.items()),
            )
        )
    if player == "external":  # another node publishes joint_setpoint (teleop.launch.py's follower)
        return [GroupAction(actions, scoped=True)]
    player_values = params(player_params, "setpoint_player")
    if player_from_profile:
        joints = [str(j) for j in motor_values.get("joints") or []]
        player_values |= profile_player_parameters(arm, urdf, sim_config, joints)
    names = player_values["joint_names"] if player_from_profile else None
    player_values |= player_parameters(player, simulate, sim_config, names)  # none: hold (issue 13.4)
    player_values |= player_velocity_limits(player_values, urdf)
    actions.append(
        Node(
            package=PACKAGE,
            executable="setpoint_player",
            name="setpoint_player",
            output="screen",
            parameters=[player_values | clock],
            remappings=[("joint_setpoint", "follow_setpoint")] if free_drive else [],
        )
    )
    return [GroupAction(actions, scoped=True)]


def check_composed(remaps: dict, bridges: list) -> None:
    """Refuse ``composed:=true`` where it cannot run: it chains both stages into one bridge.

    Raises:
        ValueError: a stage switched off, or motors on several buses.
    """
    if "gravity" not in remaps or "friction" not in remaps:
        raise ValueError("composed:=true runs both stages: use_gravity and use_friction must be true")
    if len(bridges) != 1:
        raise ValueError(f"composed:=true runs one bridge; this motor map has {len(bridges)} buses")


def composed_parameters_file(
    gravity: dict, friction: dict, bridge: dict, free_drive: dict | None = None, shaper: dict | None = None
) -> str:
    """A ``ros2 param dump`` file with one section per node of ``composed_chain`` (rcl
    matches each node by name, ``/**/<name>``, so each gets its own values), and one for
    ``free_drive`` when given (``composed_free_drive``) and one for ``setpoint_shaper``
    when given (``composed_chain --shaper``); returns its path (the caller deletes
    it: :func:`removed_at_shutdown`). Written by
    :func:`~gravity_friction_comp.param_files.dump_parameter_file`: no YAML aliases, which rcl
    refuses (free drive's ``kd`` and ``free_drive_kd`` are one list)."""
    import tempfile

    from gravity_friction_comp.param_files import dump_parameter_file

    sections = {
        "/**/gravity_compensation": gravity,
        "/**/friction_feedforward": friction,
        "/**/mit_bridge": bridge,
    }
    if free_drive is not None:
        sections["/**/free_drive"] = free_drive
    if shaper is not None:
        sections["/**/setpoint_shaper"] = shaper
    with tempfile.NamedTemporaryFile("w", prefix="composed_chain_", suffix=".yaml", delete=False) as out:
        out.write(dump_parameter_file(sections))
    return out.name


def removed_at_shutdown(path: str):
    """A launch action deleting the temporary file ``path`` when the launch shuts down."""
    import contextlib
    import os

    from launch.actions import RegisterEventHandler
    from launch.event_handlers import OnShutdown

    def remove(event, context) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    return RegisterEventHandler(OnShutdown(on_shutdown=remove))


#: Every launch argument: (name, default, description), declared once; ``launch_arguments``
#: builds the DeclareLaunchArgument list and the README table is generated from it
#: (``python -m gravity_friction_comp.tools.param_docs``).
ARGUMENTS: tuple[tuple[str, str, str], ...] = (
    (
        "arm",
        "",
        "arm profile (arms/<name>): defaults of urdf, arm_config, sim_config, "
        "bridge_params, gravity_params, friction_params; explicit arguments override",
    ),
    (
        "read_motor_limits",
        "false",
        "true: the bridge reads each Damiao motor's P/V/T_MAX registers at start (real arm only)",
    ),
    ("urdf", "", "URDF or .xacro path (default: the bundled palletizer xacro)"),
    ("arm_config", "", "per-arm YAML for the friction stage (default config/palletizer_arm.yaml)"),
    ("simulate", "true", "true: simulated arm on a private virtual CAN bus"),
    (
        "lockstep",
        "false",
        "true (with simulate): the simulated arm owns /clock, every node use_sim_time, "
        "physics steps once the chain answered (reproducible on any machine)",
    ),
    ("sim_config", "", "simulated arm's true values (default config/sim_palletizer.yaml)"),
    ("use_gravity", "true", "false: no gravity stage (the chain is rewired around it)"),
    ("use_friction", "true", "false: no friction stage (the chain is rewired around it)"),
    (
        "namespace",
        "",
        "namespace of this arm's nodes and topics (two arms side by side: left and right; the "
        "config/*.yaml files apply under any namespace)",
    ),
    ("can_interface", "socketcan", "python-can interface of the real bus (simulate:=false)"),
    ("can_channel", "can0", "CAN channel of the real bus (simulate:=false)"),
    (
        "player",
        "none",
        f"setpoint source: {' | '.join(PLAYER_PROFILES)} "
        "(none: the player holds the measured pose, so gravity/friction terms still flow; "
        "external: no player, another node publishes joint_setpoint, e.g. teleop.launch.py)",
    ),
    ("gravity_params", "", "gravity node parameter file (default config/gravity_compensation.yaml)"),
    ("friction_params", "", "friction node parameter file (default config/friction_feedforward.yaml)"),
    ("bridge_params", "", "bridge parameter file, the motor map (default config/mit_bridge.yaml)"),
    (
        "mode",
        "follow",
        "follow (the setpoint source) | free_drive (kp 0, terms from the measured joint_states: the arm "
        "floats in the hand; with arm:=NAME the profile's stiction dither and friction scale; "
        "docs/free_drive.md)",
    ),
    ("free_drive_kd_scale", "0.4", "free-drive kd = this × the motor map's kd"),
    (
        "dither_scale",
        "1.0",
        "free-drive stiction dither = this × the profile's free_drive.dither (0..1, 0 = off)",
    ),
    ("player_params", "", "setpoint_player parameter file (default config/setpoint_player.yaml)"),
    (
        "shaper",
        "false",
        "true: the setpoint shaper (Ruckig, jerk-limited; docs/trajectory.md) between the setpoint "
        "source and the first stage, at the chain's rate, limits from the URDF and the arm YAML's "
        "setpoint_shaper block (composed: the chain's shaper stage)",
    ),
    (
        "composed",
        "false",
        "true: gravity, friction and the bridge in one process (no DDS hop between "
        "them, every term still published; also with mode:=free_drive; docs/latency.md); false: separate "
        "nodes (the reference)",
    ),
)


def launch_arguments(arguments=None) -> list:
    """The launch arguments ``(name, default, description)`` of ``arguments`` (default
    :data:`ARGUMENTS`; teleop.launch.py gives its own) as ``DeclareLaunchArgument``."""
    from launch.actions import DeclareLaunchArgument

    given = ARGUMENTS if arguments is None else arguments
    return [DeclareLaunchArgument(n, default_value=d, description=t) for n, d, t in given]


def generate_launch_description(arguments=None, setup=None):
    """The arguments (:func:`launch_arguments`) and ``setup`` (default this file's) run on
    them: this file's description, or another launch file's of the same shape."""
    from launch.actions import OpaqueFunction

    from launch import LaunchDescription

    return LaunchDescription([*launch_arguments(arguments), OpaqueFunction(function=setup or _setup)])
