"""Builds the ROS-free free-drive loop of an arm profile from the nodes' own parameter builders."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

_CHANNEL = itertools.count()


def free_drive_loop(
    arm_name: str,
    pose=None,
    *,
    gravity_on: bool = True,
    friction_on: bool = True,
    kd_scale: float = 0.4,
    friction_scale=None,
    deadband: float = 0.01,
    gravity_scale=None,
    holding: bool = False,
    mode: str = "free_drive",
    friction_file=None,
    dither=None,
    dither_hz: float = 5.0,
):
    """A :class:`FreeDriveLoop` for profile ``arm_name`` at ``pose`` (model joints, at rest).

    The bridge runs the profile's motor map with kp = 0 and kd = ``kd_scale`` × its kd; the
    gravity stage is built by :func:`build_robot_models` (the gravity node's builder) with the
    profile's gravity file (payload included) or the URDF, scale ``gravity_scale`` (default:
    the arm YAML's, as the node uses it); the friction stage by
    :func:`build_friction_config` (the friction node's) from the arm YAML with
    ``velocity_source: measured`` and stiction dither ``dither`` at ``dither_hz`` (default:
    the profile's ``free_drive.dither``, as ``arm.launch.py mode:=free_drive`` sets it) and
    friction scale ``friction_scale`` (default: the profile's ``free_drive.friction_scale``, else 1).
    """
    from gravity_friction_comp.friction.arm_yaml import (
        actuator_model_from_arm_yaml,
        gravity_scale_from_arm_yaml,
    )
    from gravity_friction_comp.mit.bridge_params import bridge_config_from_values
    from gravity_friction_comp.model.payload import Payload
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.nodes.friction_feedforward_node import PARAMETERS as FP
    from gravity_friction_comp.nodes.friction_feedforward_node import build_friction_config
    from gravity_friction_comp.nodes.gravity_compensation_node import PARAMETERS as GP
    from gravity_friction_comp.nodes.robot_params import build_robot_models
    from gravity_friction_comp.param_files import first_node_parameters
    from gravity_friction_comp.profiles.arm_profiles import load_arm
    from gravity_friction_comp.sim.arm import SimulatedArm
    from gravity_friction_comp.sim.config import SimConfig
    from gravity_friction_comp.sim.free_drive_loop import FreeDriveLoop
    from gravity_friction_comp.stage.free_drive import FreeDriveConfig, FreeDriveSource
    from gravity_friction_comp.stage.friction import FrictionStage
    from gravity_friction_comp.stage.gravity import GravityConfig, GravityStage
    from gravity_friction_comp.stage.settings import StageSettings
    from gravity_friction_comp.tools.demo.options import _gravity_effort_limits

    profile = load_arm(arm_name)
    values = profile.bridge_values()
    n = len(values["joints"])
    values["kp"] = [0.0] * n
    values["kd"] = [kd_scale * k for k in values["kd"]]
    config = bridge_config_from_values(values)

    gvalues = {p.name: p.default for p in GP}
    if profile.gravity_params is not None:
        gvalues.update(first_node_parameters(profile.gravity_params)[1])
    gvalues["urdf_path"] = str(profile.urdf)
    if not holding and profile.gravity_params is None:
        gvalues["payload.mass"] = 0.0
    # the URDF's placeholder effort limits raised to the motor map's, as the demo does
    urdf_model = RobotModel.from_urdf(profile.urdf)
    raised = _gravity_effort_limits(
        urdf_model, dict(zip(values["joints"], map(float, values["effort_limit"]))), log=lambda *a: None
    )
    if raised:
        gvalues["effort_limit"] = list(raised)
    models = build_robot_models(gvalues)
    if profile.gravity_params is None:  # a payload on the last bridged joint's child for the test
        payload = Payload(0.3, np.array([0.0, 0.0, 0.05]), np.eye(3) * 1e-4, profile.joints[-1], "custom")
        models = type(models)(models.bare, models.bare.with_payload(payload), models.source_key)
    actuators = actuator_model_from_arm_yaml(profile.arm_config, robot=models.bare)
    bare, loaded = models.bare.with_actuators(actuators), models.loaded.with_actuators(actuators)
    scale = gravity_scale
    if scale is None:
        scale = gravity_scale_from_arm_yaml(profile.arm_config, bare.joint_names)
    scale = 1.0 if scale is None else scale
    gravity = GravityStage(
        GravityConfig(bare, loaded, effort_limit=gvalues.get("effort_limit")),
        StageSettings(enabled=gravity_on, scale=scale),
    )

    fvalues = {p.name: p.default for p in FP}
    if profile.friction_params is not None:
        fvalues.update(first_node_parameters(profile.friction_params)[1])
    fvalues.update(
        arm_config=str(friction_file or profile.arm_config),
        joints=list(profile.joints),
        velocity_source="measured",
        velocity_deadband=deadband,
        dither=(profile.free_drive_dither or 0.0) if dither is None else dither,
        dither_hz=dither_hz,
    )
    if friction_scale is None:
        friction_scale = list(profile.free_drive_friction_scale) or 1.0
    friction = FrictionStage(
        build_friction_config(fvalues), StageSettings(enabled=friction_on, scale=friction_scale)
    )

    sim_config = SimConfig.from_yaml(profile.sim_config)
    # unbridged joints (grippers): their own motor holds them on the real arm; here they
    # stick (10 N of friction) instead of sliding under gravity
    held = {
        j: dataclasses.replace(sim_config.joint(j), coulomb=10.0)
        for j in bare.joint_names
        if j not in profile.joints
    }
    if held:
        sim_config = dataclasses.replace(sim_config, joints={**sim_config.joints, **held})
    arm = SimulatedArm(bare, sim_config, payload=loaded.payload, holding=holding)
    if pose is not None:
        arm.reset(pose)
    gravity.set_holding(holding)
    fixed = [j for j in bare.joint_names if j not in profile.joints]
    q0 = arm.position
    source = FreeDriveSource(
        FreeDriveConfig(profile.joints, fixed, [float(q0[bare.joint_names.index(j)]) for j in fixed]),
        mode,
    )
    loop = FreeDriveLoop(arm, config, source, gravity, friction, channel=f"free_drive_{next(_CHANNEL)}")
    return loop


def release(loop, duration: float, extra=None):
    """A hand holds the arm (τ_ext = the true gravity at the start pose) until the chain's
    first command is in force (the first tick: no measured state yet), then lets go; returns
    the run's record and the index of the first tick after release."""
    arm = loop.arm
    q0 = arm.position
    hold_time = loop.schedule.tick_steps * loop.schedule.dt_ns * 1e-9
    loop.external.add(0.0, arm.joint_names, arm.gravity(q0))
    loop.external.add(loop.schedule.tick_ns * 1e-9 + hold_time, arm.joint_names, np.zeros(arm.n))
    if extra is not None:
        for t, names, effort in extra:
            loop.external.add(t, names, effort)
    rec = loop.run(duration + hold_time)
    start = int(np.searchsorted(rec.t, rec.t[0] + hold_time))
    return rec, start


def released_drift(loop, duration: float, chunk: float = 0.4):
    """Release (as :func:`release`) and run up to ``duration`` [s]; returns (drift (n,) [rad]
    = max |q − q_release| per joint, velocity RMS (n,) [rad/s], simulated seconds run).

    Stops early once a whole chunk repeats the previous one bit for bit with the arm at a
    standstill (every true velocity exactly 0, position constant, the same command sequence):
    the loop is deterministic and its only time-dependent input, the stiction dither, has a
    period that divides ``chunk`` (5 Hz: 0.2 s), so each later chunk repeats it and the drift
    and RMS over ``duration`` are the ones computed so far (the RMS over the remaining
    zero-velocity ticks is scaled in).
    """
    rec, start = release(loop, chunk)
    q_rel = rec.q[start]
    qs, vs = [rec.q[start:]], [rec.v[start:]]
    ran = rec.t[-1] - rec.t[start]
    previous = None
    while ran < duration:
        r = loop.run(chunk)
        qs.append(r.q)
        vs.append(r.v)
        ran += chunk
        still = not r.v.any() and (r.q == r.q[0]).all()
        if still and previous is not None and np.array_equal(r.command, previous, equal_nan=True):
            break
        previous = r.command if still else None
    q, v = np.concatenate(qs), np.concatenate(vs)
    ticks_total = duration / (r.t[1] - r.t[0]) if len(qs) > 1 else len(v)
    rms = np.sqrt((v**2).sum(axis=0) / max(ticks_total, len(v)))
    return np.abs(q - q_rel).max(axis=0), rms, ran


def push_and_release(loop, joint: str, torque: float, speed: float, *, at: float = 0.2, coast: float = 2.0):
    """A hand pushes ``joint`` with a constant ``torque`` [N·m] from ``at`` [s] until its true
    speed reaches ``speed`` [rad/s] (at most 1 s), then lets go; runs ``coast`` [s] more.

    Returns:
        dict with ``v_release`` [rad/s] (the joint's speed at the release), ``travel`` [rad]
        (|q_end − q_release|, the coast), ``t_stop`` [s] (release to the last tick the joint
        moved; ``coast`` when it still moved at the end), ``still`` (True when the joint's true
        velocity was exactly 0 over the last 0.2 s: it stopped), ``travel_other`` [rad]
        (the largest coast of the other bridged joints).
    """
    rec, _ = release(loop, at, extra=[(at, [joint], [torque])])
    j = loop.arm.joint_names.index(joint)
    state = {"t_release": None}

    def on_tick(t):
        if state["t_release"] is None and (abs(loop.arm.velocity[j]) >= speed or t >= at + 1.0):
            state["t_release"], state["v"], state["q"] = t, float(loop.arm.velocity[j]), loop.arm.position
            loop.external.add(t, [joint], [0.0])

    pushed = loop.run(1.0 + coast, on_tick=on_tick)
    t_rel = state["t_release"]
    after = pushed.t >= t_rel
    t, q, v = pushed.t[after], pushed.q[after], pushed.v[after]
    moving = np.flatnonzero(v[:, j] != 0.0)
    t_last = t[moving[-1]] if len(moving) else t_rel
    tail = t >= t[-1] - 0.2
    bridged = [loop.arm.joint_names.index(n) for n in loop.names]
    other = [k for k in bridged if k != j]
    return {
        "v_release": state["v"],
        "travel": float(abs(q[-1, j] - state["q"][j])),
        "t_stop": float(t_last - t_rel),
        "still": bool(not v[tail][:, j].any()),
        "travel_other": float(np.abs(q[-1, other] - state["q"][other]).max()) if other else 0.0,
    }


def seeded_poses(arm: str, n: int, seed: int = 19):
    """``n`` start poses of ``arm``: the home pose with each bridged joint uniform in the middle
    70 % of its range. Returns (poses (n of (nq,)), bridged mask (nq,), the loop's buses)."""
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import load_arm

    profile = load_arm(arm)
    model = RobotModel.from_urdf(profile.urdf)
    lo, hi = np.array(model.position_lower), np.array(model.position_upper)
    base = free_drive_loop(arm)
    home = base.arm.position
    buses = set(base.config.buses)
    base.close()
    rng = np.random.default_rng(seed)
    bridged = np.array([j in profile.joints for j in model.joint_names])
    poses = []
    for _ in range(n):
        q = home.copy()
        q[bridged] = lo[bridged] + (hi[bridged] - lo[bridged]) * rng.uniform(0.15, 0.85, bridged.sum())
        poses.append(q)
    return poses, bridged, buses


def lockstep_time(bridge) -> float:
    """The lockstep bridge's simulated time [s]."""
    return bridge._lockstep.schedule.now_ns * 1e-9


def spin_to(executor, bridge, t_end: float, wall: float = 120.0) -> float:
    """Spin ``executor`` until the lockstep time reaches ``t_end`` [s] or ``wall`` s of wall
    time passed; returns the simulated time reached."""
    import time

    t0 = time.monotonic()
    while lockstep_time(bridge) < t_end and time.monotonic() - t0 < wall:
        executor.spin_once(timeout_sec=0.05)
    return lockstep_time(bridge)


def publish_pushes(publisher, joint: str, pushes) -> None:
    """Stamped ``sim/external_effort`` messages: ``pushes`` = [(stamp [s], effort [N·m]), ...]."""
    from sensor_msgs.msg import JointState

    for stamp, effort in pushes:
        msg = JointState()
        msg.header.stamp.sec, msg.header.stamp.nanosec = int(stamp), int(round((stamp % 1) * 1e9))
        msg.name, msg.effort = [joint], [effort]
        publisher.publish(msg)


def state_at(states, t: float, joint: str, field: str = "position") -> float:
    """``field`` of ``joint`` in the recorded ``joint_states`` message stamped nearest ``t`` [s]."""
    m = min(states, key=lambda s: abs(s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec - t))
    return getattr(m, field)[list(m.name).index(joint)]


def lockstep_chain_nodes(
    repo_root, namespace: str, rate: float, *, friction: dict | None = None, bridge: dict | None = None
) -> dict[str, dict]:
    """The simulated palletizer's composed chain in lockstep on sim time, as the composed tests
    build it: ``{"gravity", "friction", "bridge"}`` → that node's constructor keywords
    (``namespace``, ``parameter_overrides``: ``config/*.yaml``, the URDF, the arm and sim YAML,
    lockstep at ``rate`` [Hz]), plus ``friction``/``bridge`` overrides (free drive's)."""
    from rclpy.parameter import Parameter

    from gravity_friction_comp.param_files import first_node_parameters

    urdf = str(repo_root / "urdf" / "palletizer.urdf")
    files = {
        "bridge": "mit_bridge.yaml",
        "gravity": "gravity_compensation.yaml",
        "friction": "friction_feedforward.yaml",
    }
    values = {k: first_node_parameters(repo_root / "config" / f)[1] for k, f in files.items()}
    sim_time = {"use_sim_time": True}
    given = {
        "gravity": {**values["gravity"], "urdf_path": urdf},
        "friction": {
            **values["friction"],
            "arm_config": str(repo_root / "config" / "palletizer_arm.yaml"),
            **(friction or {}),
        },
        "bridge": {
            **values["bridge"],
            "simulate": True,
            "urdf_path": urdf,
            "sim_config": str(repo_root / "config" / "sim_palletizer.yaml"),
            "read_motor_limits": False,
            "sim_lockstep": True,
            "sim_setpoint_rate_hz": rate,
            "sim_stall_timeout": 5.0,
            **(bridge or {}),
        },
    }
    return {
        k: {
            "namespace": namespace,
            "parameter_overrides": [Parameter(n, value=v) for n, v in {**p, **sim_time}.items()],
        }
        for k, p in given.items()
    }
