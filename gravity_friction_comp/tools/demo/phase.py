"""One run of the demo: compose the nodes in one rclpy context, spin the cycle, record.

The same node classes and ``config/*.yaml`` parameter files as ``launch/arm.launch.py``
(``--params-file`` plus overrides), one executor, on a DDS domain of the caller's choice;
a recorder node keeps what the chain publishes (:class:`Recording`). A motor map on several
buses in lockstep runs, as the launch file does, one bridge process per bus
(:mod:`.bridges`; ``--one-bridge``: one bridge node here serving every bus). rclpy is
imported only when a run starts.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gravity_friction_comp.errors import RunIncomplete
from gravity_friction_comp.profiles.arm_profiles import bus_bridges, motor_map_stage_values
from gravity_friction_comp.tools.demo.scenario import DemoSetup, load_node_parameters

__all__ = ["SETPOINT_RATE_HZ", "Recording", "per_bus", "run_phase"]

#: Setpoint rate of the player [Hz]; in lockstep also the /clock tick rate.
SETPOINT_RATE_HZ = 250.0


@dataclass
class Recording:
    """What one run recorded (times [s] on the node clock).

    Attributes:
        setpoint_t, setpoint_q: joint_setpoint stamps (m,) and positions (m, n).
        state_t, state_q: joint_states stamps (k,) and positions (k, n) (n = setup.joints).
        term_t, gravity, friction: ~/effort stamps and terms (when received).
        command_t, command_effort: joint_command stamps and efforts.
        arrival_t, arrival_q: joint_command arrival times (recorder clock, as the bridge
            receives it) and positions: the reference the bridge actually tracks.
        command_stamp_t: the stamp of each arrival (the setpoint's, passed through).
        timing: how the run kept time: ``lockstep`` (bool), ``sim_s`` simulated and
            ``wall_s`` wall seconds, and in real time the simulated arm's ``overruns`` and
            ``max_lateness_s`` (:func:`~.metrics.timing_problems` judges them).
    """

    setpoint_t: list = field(default_factory=list)
    setpoint_q: list = field(default_factory=list)
    state_t: list = field(default_factory=list)
    state_q: list = field(default_factory=list)
    gravity_t: list = field(default_factory=list)
    gravity: list = field(default_factory=list)
    friction_t: list = field(default_factory=list)
    friction: list = field(default_factory=list)
    command_t: list = field(default_factory=list)
    command_effort: list = field(default_factory=list)
    arrival_t: list = field(default_factory=list)
    arrival_q: list = field(default_factory=list)
    command_stamp_t: list = field(default_factory=list)
    timing: dict = field(default_factory=dict)

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v, dtype=float) for k, v in vars(self).items() if k != "timing"}


def _stamp(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def _by_name(msg_names, values, wanted) -> list[float] | None:
    index = {n: i for i, n in enumerate(msg_names)}
    if len(values) != len(msg_names) or not all(n in index for n in wanted):
        return None
    return [values[index[n]] for n in wanted]


def per_bus(setup: DemoSetup, motor_map: Mapping[str, Any], lockstep: bool) -> bool:
    """Whether the run starts one bridge process per bus (a motor map on several buses, in
    lockstep, unless ``setup.one_bridge``) instead of one bridge node in the demo's process."""
    return lockstep and not setup.one_bridge and len(bus_bridges(dict(motor_map))) > 1


def _timing(bridge, lockstep: bool, sim_s: float, wall_s: float) -> dict:
    timing = {"lockstep": lockstep, "sim_s": sim_s, "wall_s": wall_s}
    sim = bridge.simulation if bridge is not None else None
    if sim is not None and not lockstep:
        timing.update(overruns=sim.overruns, max_lateness_s=sim.max_lateness)
    return timing


def _params(values: Mapping[str, Any]):
    from rclpy.parameter import Parameter

    return [Parameter(k, value=v) for k, v in values.items()]


def run_phase(
    setup: DemoSetup,
    compensate: bool,
    domain_id: int,
    log=print,
    *,
    gravity: bool | None = None,
    friction: bool | None = None,
    lockstep: bool | None = None,
) -> Recording:
    """One run of the cycle with both stages ``enable`` = ``compensate``.

    Builds the nodes with the parameter files (``--params-file``, as the launch file does)
    plus overrides, spins them on one executor until the cycle is over, and returns what
    was recorded. ``gravity`` / ``friction`` (when not ``None``) set that stage's
    ``enable`` instead of ``compensate``. The friction node reads ``setup.friction_config``
    when set, else ``setup.arm_config``. Raises ConfigError from a node's start-up
    validation. ``lockstep`` (default ``setup.lockstep``): every node runs on the simulated arm's ``/clock``
    (``use_sim_time``; the bridge ``sim_lockstep``), so the result depends on the inputs
    only; ``False``: all on the wall clock, in real time. Raises
    :class:`~gravity_friction_comp.errors.LockstepStalled` when the chain is dead (a slow
    one is waited for), :class:`~gravity_friction_comp.errors.RunIncomplete` when a
    real-time run does not finish in time.
    """
    lockstep = setup.lockstep if lockstep is None else bool(lockstep)
    gravity_on = compensate if gravity is None else bool(gravity)
    friction_on = compensate if friction is None else bool(friction)
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.nodes.friction_feedforward_node import FrictionFeedforwardNode
    from gravity_friction_comp.nodes.gravity_compensation_node import GravityCompensationNode
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode
    from gravity_friction_comp.nodes.runtime import make_executor
    from gravity_friction_comp.nodes.setpoint_player import SetpointPlayerNode
    from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

    context = Context()
    rclpy.init(args=[], context=context, domain_id=domain_id)
    nodes: list[Node] = []
    processes = None  # BridgeProcesses: the bridges in processes of their own
    rec = Recording()
    try:

        def files(path, *remaps):
            args = ["--ros-args", "--params-file", str(path)]
            for remap in remaps:
                args += ["-r", remap]
            return args

        _, gravity_values = load_node_parameters(setup.gravity_params)
        robot = {k: v for k, v in gravity_values.items() if k == "gravity" or k.startswith("payload.")}
        gravity_overrides = {"urdf_path": setup.urdf, "enable": gravity_on, "use_sim_time": lockstep}
        if setup.gravity_arm_config:
            gravity_overrides["arm_config"] = setup.gravity_arm_config
        if setup.gravity_scale:
            gravity_overrides["scale"] = list(setup.gravity_scale)
        if setup.gravity_effort_limit:
            gravity_overrides["effort_limit"] = list(setup.gravity_effort_limit)
        if setup.payload_parent:
            robot["payload.parent"] = gravity_overrides["payload.parent"] = setup.payload_parent
        nodes.append(
            GravityCompensationNode(
                context=context,
                cli_args=files(setup.gravity_params, "joint_command:=gravity/joint_command"),
                parameter_overrides=_params(gravity_overrides),
            )
        )
        # the friction stage clamps to the motor map's limits (its joints, its order)
        friction_overrides = motor_map_stage_values(load_node_parameters(setup.motor_map)[1]) | {
            "arm_config": setup.friction_config or setup.arm_config,
            "enable": friction_on,
            "use_sim_time": lockstep,
        }
        nodes.append(
            FrictionFeedforwardNode(
                context=context,
                cli_args=files(setup.friction_params, "joint_setpoint:=gravity/joint_command"),
                parameter_overrides=_params(friction_overrides),
            )
        )
        bridge_values = dict(
            robot,
            simulate=True,
            urdf_path=setup.sim_urdf or setup.urdf,  # the simulated arm's URDF (its truth)
            sim_config=setup.sim_config,
            read_motor_limits=False,
            use_sim_time=lockstep,
            sim_lockstep=lockstep,
            sim_setpoint_rate_hz=SETPOINT_RATE_HZ,
            sim_delay=setup.delay,
        )
        motor_map = load_node_parameters(setup.motor_map)[1] | dict(setup.bridge_overrides)
        bridge = None
        if per_bus(setup, motor_map, lockstep):  # one bridge process per bus, one lockstep
            from gravity_friction_comp.tools.demo.bridges import BridgeProcesses

            processes = BridgeProcesses(motor_map, bridge_values, domain_id)
            log(
                f"  {len(processes.names)} bridge processes, one per bus: {', '.join(processes.state_topics)}"
            )
        else:
            bridge_values.update(setup.bridge_overrides)
            bridge = MitBridgeNode(
                context=context, cli_args=files(setup.motor_map), parameter_overrides=_params(bridge_values)
            )
            nodes.append(bridge)
        recorder = rclpy.create_node(
            "demo_recorder", context=context, parameter_overrides=_params({"use_sim_time": lockstep})
        )
        nodes.append(recorder)
        joints, all_joints = list(setup.joints), list(setup.all_joints)

        def on_setpoint(msg):
            q = _by_name(msg.name, msg.position, joints)
            if q is not None:
                rec.setpoint_t.append(_stamp(msg))
                rec.setpoint_q.append(q)

        def on_state(msg):
            q = _by_name(msg.name, msg.position, joints)
            if q is not None:
                rec.state_t.append(_stamp(msg))
                rec.state_q.append(q)

        def on_term(times, values):
            def cb(msg):
                e = _by_name(msg.name, msg.effort, joints)
                if e is not None:
                    times.append(_stamp(msg))
                    values.append(e)

            return cb

        recorder.create_subscription(JointState, "joint_setpoint", on_setpoint, SETPOINT_QOS)
        if processes is None:
            recorder.create_subscription(JointState, "joint_states", on_state, SETPOINT_QOS)
        else:  # each bridge publishes its own arm's joints: whole states merged by stamp
            from gravity_friction_comp.nodes.lockstep_clock import stamp_ns
            from gravity_friction_comp.tools.demo.bridges import StateMerge

            def on_whole(ns: int, q: list[float]) -> None:
                rec.state_t.append(ns // 1_000_000_000 + 1e-9 * (ns % 1_000_000_000))  # as _stamp
                rec.state_q.append(q)

            merge = StateMerge(joints, on_whole)
            for topic in processes.state_topics:
                recorder.create_subscription(
                    JointState,
                    topic,
                    lambda m: merge.add(stamp_ns(m.header.stamp), m.name, m.position),
                    SETPOINT_QOS,
                )
        recorder.create_subscription(
            JointState, "gravity_compensation/effort", on_term(rec.gravity_t, rec.gravity), SETPOINT_QOS
        )
        recorder.create_subscription(
            JointState, "friction_feedforward/effort", on_term(rec.friction_t, rec.friction), SETPOINT_QOS
        )
        command_cb = on_term(rec.command_t, rec.command_effort)

        def on_command(msg):
            command_cb(msg)
            q = _by_name(msg.name, msg.position, joints)
            if q is not None:
                rec.arrival_t.append(recorder.get_clock().now().nanoseconds * 1e-9)
                rec.command_stamp_t.append(_stamp(msg))
                rec.arrival_q.append(q)

        recorder.create_subscription(JointState, "joint_command", on_command, SETPOINT_QOS)
        if setup.profile == "sine":
            player_values = {
                "profile": "sine",
                "amplitude": list(setup.sine_amplitude),
                "period": setup.period,
                "loop": True,
            }
        else:
            player_values = {
                "profile": "pick_place",
                "pick": list(setup.pick),
                "place": list(setup.place),
                "move_time": setup.move_time,
                "dwell_time": setup.dwell_time,
                "grip_time": setup.grip_time,
                "loop": False,
            }
        player = SetpointPlayerNode(
            context=context,
            parameter_overrides=_params(
                dict(
                    player_values,
                    joint_names=all_joints,
                    home=list(setup.home),
                    rate_hz=SETPOINT_RATE_HZ,
                    use_sim_time=lockstep,
                    start_delay=setup.start_delay,
                )
            ),
        )
        nodes.append(player)
        # lockstep: the EventsExecutor (where rclpy has it) dispatches ~2x faster; the
        # order stays causal (one thread, intra-process delivery), so results do not change
        executor = make_executor(context) if lockstep else SingleThreadedExecutor(context=context)
        for node in nodes:
            executor.add_node(node)
        end = setup.start_delay + setup.cycle_time + 0.3
        # lockstep: no wall-clock bound, a slow machine is waited for (bimanual OpenArm at
        # load 11 on 2 cores: 10.2 s simulated in 234 s); the bridge's watchdog ends a dead
        # chain (sim_stall_timeout, sim_stall_limit: LockstepStalled)
        wall_limit = float("inf") if lockstep else time.monotonic() + end + 30.0
        started = time.monotonic()
        # Real time: a garbage-collector pass over the previous run's data would stall the
        # whole chain for tens of ms in the middle of a move (seen as stick-slip steps).
        gc.collect()
        gc.freeze()
        gc.disable()
        try:
            polled = time.monotonic()
            while player.elapsed() < end and time.monotonic() < wall_limit:
                executor.spin_once(timeout_sec=0.01)
                if processes is not None and time.monotonic() - polled > 0.5:
                    processes.check()  # a bridge that exited: its stall reason, or its last lines
                    polled = time.monotonic()
        finally:
            gc.enable()
            gc.unfreeze()
        rec.timing = _timing(bridge, lockstep, player.elapsed(), time.monotonic() - started)
        executor.shutdown(timeout_sec=1.0)
        if player.elapsed() < end:
            raise RunIncomplete(
                f"the run did not finish: {player.elapsed():.1f} of {end:.1f} s simulated in "
                f"{time.monotonic() - started:.0f} s wall"
            )
    finally:
        if processes is not None:
            processes.close()  # first: no bridge outlives the chain it waits for
        for node in reversed(nodes):
            node.destroy_node()
        rclpy.try_shutdown(context=context)
    label = (
        ("on " if compensate else "off")
        if gravity is None and friction is None
        else f"gravity {'on' if gravity_on else 'off'}, friction {'on' if friction_on else 'off'}"
    )
    log(f"  {label}: {len(rec.setpoint_t)} setpoints, {len(rec.state_t)} joint_states")
    return rec
