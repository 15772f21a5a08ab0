"""mit_bridge_node: joint commands → MIT-mode CAN frames, motor replies → joint_states, safety.

The decisions (clamping, timeouts, faults, stale replies, shutdown) live in the ROS-free
:class:`~gravity_friction_comp.mit.bridge_core.MitBridgeCore`; the bus plumbing in
:mod:`gravity_friction_comp.mit.bus`. This node only translates parameters and messages and
owns the clock. A frame exchange reads the replies waiting on the bus (on the executor's
thread, no reader thread: :class:`~gravity_friction_comp.mit.bus.CanFrameIO`), feeds them
to the core, sends the core's frames and publishes ``joint_states``; it runs as soon as a
``joint_command`` arrives, and from a timer at ``rate_hz`` only for a command that had to wait
or when commands stop or come slower (the timer is re-armed after each decision, so it does
not fire while commands flow: :mod:`~gravity_friction_comp.mit.timer_plan`); on
average at most 1.05 times per period, at most two exchanges back to back
(:mod:`~gravity_friction_comp.mit.send_schedule`).

Topics:
    joint_command (sub, sensor_msgs/JointState): position required; velocity/effort optional
        (empty = 0); by name, every bridge joint must be present, extra names are ignored.
        effort is τ_ff [N·m] (clamped to ``effort_limit`` and the motor's T_MAX).
    gripper/holding (sub, std_msgs/Bool): attaches the payload in the simulated arm.
    joint_states (pub, sensor_msgs/JointState): measured position [rad], velocity [rad/s],
        effort [N·m] of the joints that have replied, at ``rate_hz``; stamped when the
        exchange read the replies from the bus (before its step and send).
    /diagnostics (pub, diagnostic_msgs/DiagnosticArray; absolute, where diagnostic_aggregator
        listens, also under a namespace): one status per motor (behaviour,
        fault, stale, missed replies, temperatures) and one for the bus (load as a fraction
        of the bus time: classic frames at ``can.bitrate``, or with ``can.fd`` FD frames with
        bit-rate switch, data phase at ``can.data_bitrate``; frame rates, loop period
        statistics), at ``diagnostics_rate_hz``; named ``<node fqn>: <joint>`` and
        ``<node fqn>: bus <can.channel>``; with a ``bus`` per joint (several buses, e.g. one
        per arm) one bus status per bus, ``<node fqn>: bus <bus>``.
    /clock (pub, rosgraph_msgs/Clock) and joint_setpoint (sub, watched only): lockstep only.
    ~/external_effort (pub, sensor_msgs/JointState; ``observer.enable:=true``): the momentum
        observer's estimate per joint [N·m], stamped as its ``joint_states``; a contact latches
        ``contact.reaction`` until ``~/clear_faults`` (status ``<node fqn>: contact``;
        docs/observer.md).

Several buses: ``bus`` names each joint's CAN channel; the node opens one bus per name and
routes frames by bus (CAN ids repeat across buses). Simulated: one private ``virtual``
channel per bus (``<sim channel>/<bus>``, :func:`~gravity_friction_comp.sim.bus.virtual_bus_settings`).

Service:
    ~/clear_faults (std_srvs/Trigger): clear latched motor faults and a latched contact
        (explicit request only).

Parameters: :data:`PARAMETERS` (name, type, default, unit, range, description); read-only
after start except ``kp``/``kd`` and the observer's (``observer.*`` but ``observer.arm_config``,
``contact.*``). Per-joint arrays are in ``joints`` order; an empty array
takes :data:`~gravity_friction_comp.mit.bridge_params.PER_JOINT_DEFAULTS`. Empty
``position_lower``/``position_upper`` take the URDF's ``<limit lower/upper>`` of each joint
when ``urdf_path``/``robot_description`` is set. ``simulate:=true`` runs emulated motors and
the simulated arm on a private python-can ``virtual`` bus (channel
``<can.channel>/sim<node fqn>/<pid>``) in this process, with the true values of
``sim_config`` (:class:`~gravity_friction_comp.sim.config.SimConfig`). With
``sim_lockstep:=true`` the simulated arm owns the time: it publishes ``/clock`` and runs each
tick's physics only once the ``joint_command`` stamped with the tick has arrived; a dead chain
raises ``LockstepStalled`` naming the silent topic (:mod:`~gravity_friction_comp.sim.lockstep`,
:mod:`~gravity_friction_comp.nodes.lockstep_clock`; the parameters ``sim_*`` in docs/parameters.md).
Every default comes from the core's config dataclasses (:mod:`~gravity_friction_comp.mit.bridge_config`,
:class:`~gravity_friction_comp.mit.bus.CanSettings`); values are validated there too.
"""

from __future__ import annotations

import collections
import struct
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from builtin_interfaces.msg import Time as TimeMsg
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.mit.bridge_config import BridgeConfig
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values, fill_position_limits_from_urdf
from gravity_friction_comp.mit.bus import (
    CanFrameIO,
    CanSettings,
    SocketcandCanIO,
    bus_settings,
    can_settings_from_values,
    open_bus,
)
from gravity_friction_comp.mit.bus_load import FrameRate
from gravity_friction_comp.mit.send_schedule import SendSchedule
from gravity_friction_comp.mit.startup_check import StartupCheck
from gravity_friction_comp.mit.timer_plan import TimerPlan
from gravity_friction_comp.nodes.bridge_diagnostics import (
    bus_status,
    log_messages,
    motor_statuses,
    start_messages,
)
from gravity_friction_comp.nodes.joint_state_bytes import JointStateBytes
from gravity_friction_comp.nodes.mit_bridge_parameters import (
    BRIDGE_OBSERVER_PARAMETERS,
    BRIDGE_PARAMETERS,
    PARAMETERS,
    config_with_motor_limits,
)
from gravity_friction_comp.nodes.observer_runtime import (
    ObserverHook,
    ObserverRuntime,
    check_enabled,
    clear_faults_message,
    contact_status,
)
from gravity_friction_comp.nodes.parameters import (
    check,
    check_undeclared,
    declare,
    fill_from_scalar,
    values_of,
)
from gravity_friction_comp.nodes.robot_params import (
    build_robot_models,
    declare_robot_parameters,
    log_model_warnings,
)
from gravity_friction_comp.nodes.runtime import run_node
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS, StageOutput, clock_ns, publish_guarded
from gravity_friction_comp.stage.contract import parse_setpoint
from gravity_friction_comp.throttle import Throttle

if TYPE_CHECKING:  # the simulator is loaded with simulate:=true only (nodes/sim_bridge.py)
    from gravity_friction_comp.nodes.lockstep_clock import LockstepClock
    from gravity_friction_comp.sim.bus import SimulatedMotorBus

try:  # std_srvs is pinned in requirements.txt; keep the node usable without it
    from std_srvs.srv import Trigger
except ImportError:  # pragma: no cover - depends on the install
    Trigger = None

__all__ = ["BRIDGE_PARAMETERS", "MitBridgeNode", "PARAMETERS", "main"]


class MitBridgeNode(Node):
    """The MIT bridge (node name ``mit_bridge``); see the module docstring."""

    NODE_NAME = "mit_bridge"

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self._init_attributes()
        values = self._declare_parameters()
        models = self._robot_models(values)
        config = bridge_config_from_values(values)
        self._open_buses(values, config, can_settings_from_values(values, config), models)
        self._log_start()
        self._create_interfaces()
        self._start_observer(values, models)
        self._start_loop()
        diagnostics_period = 1.0 / float(values["diagnostics_rate_hz"])
        self._diag_timer = self.create_timer(diagnostics_period, self._publish_diagnostics)
        self._ready = True

    # ------------------------------------------------------------------ start-up steps
    def _init_attributes(self) -> None:
        self._declaring = True
        self._pending_gains: tuple[np.ndarray, np.ndarray] | None = None
        self._ready = False
        self._simulated: Any = None  # nodes.sim_bridge.SimBridge (simulate:=true)
        self._sim: SimulatedMotorBus | None = None
        self._ios_opened: list[CanFrameIO] = []
        self._lockstep: LockstepClock | None = None
        self._closed = False
        self._throttle = Throttle(2.0)
        self._observer_hook: ObserverHook | None = None

    def _declare_parameters(self) -> dict[str, Any]:
        """Declare and check every parameter; returns their values."""
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._post_set_parameters)
        fill_from_scalar(self, ("kp", "kd"), "joints")  # kp 5 (start-up or ros2 param set): every joint
        declare(self, BRIDGE_PARAMETERS + BRIDGE_OBSERVER_PARAMETERS)
        declare_robot_parameters(self, read_only=True)  # read once, at start-up
        check_undeclared(self)  # before the bus opens
        self._declaring = False
        values = self._values()
        check(BRIDGE_PARAMETERS + BRIDGE_OBSERVER_PARAMETERS, values)
        if values["sim_lockstep"] and not values["simulate"]:
            raise ConfigError("sim_lockstep:=true needs simulate:=true", key="sim_lockstep", value=True)
        for key in ("sim_lockstep_peers", "sim_lockstep_follow"):
            if values[key] and not values["sim_lockstep"]:
                raise ConfigError(f"{key} needs sim_lockstep:=true", key=key, value=values[key])
        return values

    def _robot_models(self, values: dict[str, Any]):
        """The URDF models (``None`` without a robot); empty position limits filled from it."""
        models = build_robot_models(values)
        check_enabled(values, models)  # before the bus opens
        if models is not None:
            log_model_warnings(self.get_logger(), models)
            unbounded = fill_position_limits_from_urdf(values, models.bare.urdf_joints)
            for joint, why in unbounded.items():
                self.get_logger().warning(
                    f"{joint}: commanded position not bounded ({why}); "
                    "set position_lower/position_upper to bound it"
                )
        return models

    def _open_buses(self, values, config: BridgeConfig, settings: CanSettings, models) -> None:
        """The simulator (``simulate:=true``), one bus per motor-map bus name (a bimanual arm:
        one per arm), the motor limits read from the motors, the core; sends enable."""
        buses: dict[str, Any] = {}  # opened, not yet owned by an io
        try:
            if values["simulate"]:
                from gravity_friction_comp.nodes.sim_bridge import SimBridge

                self._simulated = SimBridge(self, values, config, settings, models)
                self._sim = self._simulated.sim
                settings = self._simulated.settings
                per_bus = self._simulated.per_bus
            else:
                per_bus = bus_settings(settings, config.buses)
            for name, bus_cfg in per_bus.items():
                buses[name] = open_bus(bus_cfg)
            if values["read_motor_limits"]:
                config = config_with_motor_limits(buses, config, values, self.get_logger())
            core = MitBridgeCore(config, startup_behavior=values["startup_behavior"])
            ios: dict[str | None, CanFrameIO] = {}  # key None: the only bus (every motor)
            single = len(buses) == 1
            for name in list(buses):
                io: CanFrameIO
                if per_bus[name].interface == "socketcand":  # reconnects when the server comes back
                    io = SocketcandCanIO(
                        buses.pop(name), core.reply_ids, fd=settings.fd, settings=per_bus[name]
                    )
                else:
                    io = CanFrameIO(buses.pop(name), core.reply_ids, fd=settings.fd)
                ios[None if single else name] = io
                self._ios_opened.append(io)
        except BaseException:
            for bus in buses.values():
                bus.shutdown()
            self._close_bus()
            raise
        self._core: MitBridgeCore = core
        self._ios = ios
        self._io = next(iter(ios.values()))
        self.settings = settings
        self._bus_settings = {name: per_bus[config.buses[0] if name is None else name] for name in ios}
        self._bus_name = str(values["can.channel"])  # the configured bus, also when simulated
        self._startup_check = StartupCheck(config, self._bus_name)  # motors that never answer
        self.config = config
        for key, one in ios.items():
            one.send(core.enable_frames(key))

    def _log_start(self) -> None:
        messages = start_messages(
            self.config, self.settings, self._core, len(self._ios), self._sim is not None
        )
        log_messages(self.get_logger(), messages)

    def _create_interfaces(self) -> None:
        """Loop state, publishers, subscriptions, the clear-faults service."""
        self._periods: collections.deque[float] = collections.deque(maxlen=4096)
        self._last_loop: float | None = None  # the timer's last tick, and the re-arms until then
        self._last_rearms = 0
        self._rejected = 0
        self._frame_rates = {bus: FrameRate(time.monotonic()) for bus in self._ios}
        self._schedule = SendSchedule(self.config.period)
        self._monotonic = time.monotonic  # the send schedule's clock (a test steps its own)
        #: Reused for every ``joint_states`` (publish serialises at once); typed fields only.
        self._state_msg = JointState(check_fields=False)
        self._joint_names = list(self._core.joint_names)
        try:  # joint_states as serialized bytes, packed from a template
            self._state_bytes: JointStateBytes | None = JointStateBytes(self._joint_names)
        except ValueError:  # pragma: no cover - an encoding without the slots: messages
            self._state_bytes = None
        #: More diagnostics statuses, each call one status (the composed chain's stages).
        self.diagnostic_sources: list[Callable[[], DiagnosticStatus | None]] = []  # None: none now
        #: Composed chain: called with each ``joint_states`` after it is published (the
        #: friction stage's measurement, without a DDS hop).
        self.state_hand_off: Callable[[JointState], None] | None = None
        self._state_pub = self.create_publisher(JointState, "joint_states", SETPOINT_QOS)
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", SETPOINT_QOS)
        self._command_sub = self.create_subscription(
            JointState, "joint_command", self.accept_command, SETPOINT_QOS
        )
        self.create_subscription(Bool, "gripper/holding", self._on_holding, SETPOINT_QOS)
        if Trigger is not None:
            self.create_service(Trigger, "~/clear_faults", self._on_clear_faults)
        else:  # pragma: no cover
            self.get_logger().warning("std_srvs not installed: ~/clear_faults service unavailable")

    def _start_loop(self) -> None:
        """The lockstep clock (``sim_lockstep:=true``) or the ``rate_hz`` timer; the simulated hand."""
        if self._simulated is not None:
            self._lockstep = self._simulated.attach(
                self._core, self._ios, self._publish_state, SETPOINT_QOS, self._command_sub
            )
        if self._lockstep is None:  # re-armed after each decision: fires when commands stop or wait
            self._loop_timer = self.create_timer(self.config.period, self._loop)
            self._timer_plan = TimerPlan(self._schedule, self._loop_timer)

    def _start_observer(self, values: dict[str, Any], models) -> None:
        """The momentum observer (docs/observer.md), its topic and its diagnostics status."""
        self._observer_hook = ObserverHook(self, values, models, self._core)
        name = f"{self.get_fully_qualified_name()}: contact"  # a status while the observer runs
        self.diagnostic_sources.append(
            lambda: None if self.observer is None else contact_status(name, self.observer)
        )

    # ------------------------------------------------------------------ setup helpers
    def _values(self) -> dict[str, Any]:
        return values_of(self, PARAMETERS)

    @property
    def simulation(self) -> SimulatedMotorBus | None:
        """The emulated motors and simulated arm (``simulate:=true``), else ``None``."""
        return self._sim

    @property
    def lockstep(self) -> LockstepClock | None:
        """The lockstep clock (``sim_lockstep:=true``), else ``None``."""
        return self._lockstep

    # ------------------------------------------------------------------ parameters
    def _on_set_parameters(self, params) -> SetParametersResult:
        if self._declaring or not self._ready:
            return SetParametersResult(successful=True)
        reason = None if self._observer_hook is None else self._observer_hook.check(params)
        if reason is not None:
            return SetParametersResult(successful=False, reason=reason)
        gains = {p.name: p.value for p in params if p.name in ("kp", "kd")}
        if not gains:
            return SetParametersResult(successful=True)
        try:  # the core's one validation: lengths, types, signs, the motor's encodable range
            kp, kd = self._core.checked_gains(**{k: [] if v is None else v for k, v in gains.items()})
        except (ConfigError, InputError, TypeError, ValueError) as error:
            return SetParametersResult(successful=False, reason=str(error))
        self._pending_gains = (kp, kd)
        return SetParametersResult(successful=True)

    def _post_set_parameters(self, params) -> None:
        if self._observer_hook is not None and self._ready:
            self._observer_hook.apply()
        if self._pending_gains is not None and self._ready:
            kp, kd = self._pending_gains
            self._pending_gains = None
            self._core.set_gains(kp, kd)
            self.get_logger().info(f"gains kp={kp.tolist()} kd={kd.tolist()}")

    # ------------------------------------------------------------------ inputs
    def _warn(self, key: str, message: str) -> None:
        if self._throttle.ready(key):
            self.get_logger().warning(message)

    def accept_command(self, msg: JointState) -> None:
        """Take ``msg`` as a ``joint_command`` (the subscription's callback; the composed
        chain calls it directly): parse, store, and send at once when the send budget allows
        (:class:`SendSchedule`), else the timer sends it (or a newer command supersedes it)."""
        self._accept(msg, False)

    def accept_validated(self, out: StageOutput) -> None:
        """:meth:`accept_command` for the composed chain's friction stage output (parsed and checked
        there: only the joint map is new; the core's checks and clamps run as for any command)."""
        self._accept(out, True)

    def _accept(self, msg, handed: bool) -> None:
        if self._closed:
            return
        core = self._core
        try:
            if handed:
                sp = msg.setpoint_for(core.joint_names)
            else:
                sp = parse_setpoint(msg.name, msg.position, msg.velocity, msg.effort, core.joint_names)
            command = (sp.model_position(), sp.model_velocity(), sp.model_effort())
            if self._lockstep is not None:  # checked now: the queued command is set later
                command = core.checked_command(*command)
            else:
                now = self._monotonic()
                core.set_command(*command, now)
        except InputError as error:  # also a finite value that overflows on the motor side
            self._rejected += 1
            self._warn(f"command_{error.reason}", f"joint_command rejected ({error}); previous command kept")
            return
        if self._lockstep is not None:
            from gravity_friction_comp.nodes.lockstep_clock import stamp_ns  # loaded with the simulator

            self._lockstep.command_received(stamp_ns(msg.header.stamp), command)
        else:
            if self._schedule.command(now):
                self._exchange(now)
            self._timer_plan.command(now)

    def _on_holding(self, msg: Bool) -> None:
        if self._observer_hook is not None:
            self._observer_hook.set_holding(bool(msg.data))
        if self._lockstep is not None:
            self._lockstep.schedule.set_holding(bool(msg.data))  # at the next tick, with the stages
        elif self._sim is not None:
            self._sim.set_holding(bool(msg.data))

    def _on_clear_faults(self, request, response):
        faulted = [s.name for s in self._core.status() if s.fault]
        self._core.request_clear_fault(None)
        reaction = self._core.reaction  # before the hook's clear ends it (it may outlive its contact)
        contact = None if self._observer_hook is None else self._observer_hook.clear()
        self._core.clear_reaction()
        response.success = True
        response.message = clear_faults_message(faulted, contact, reaction)
        self.get_logger().info(f"clear_faults: {response.message}")
        return response

    # ------------------------------------------------------------------ loop
    def _loop(self) -> None:
        if self._closed:
            return
        now = self._monotonic()
        plan = self._timer_plan
        if self._last_loop is not None and plan.rearms == self._last_rearms:  # a periodic tick
            self._periods.append(now - self._last_loop)
        if self._schedule.tick(now):  # a waiting command, or commands stopped: keep the motors fed
            self._exchange(now)
        plan.tick(now)
        self._last_loop, self._last_rearms = now, plan.rearms

    def _exchange(self, now: float) -> None:
        # per bus (key None: the only bus, every motor): CAN ids repeat across buses, so
        # frames in and out are routed by bus. The replies are read before the step, a
        # period after their frames went, so each step judges whole replies: read right
        # after the send (frames ~70 µs sooner over socketcand), a reply that sometimes
        # beats the read and sometimes not would count as missed.
        core = self._core
        stamp = self._ingest_waiting()  # joint_states: the time its replies were read
        for bus, io in self._ios.items():
            io.send(core.step(now, bus))
        self._publish_state(stamp)

    def _ingest_waiting(self) -> int:
        """Feed the core every reply waiting on each bus (read in one pass, stamped at the
        read); returns the ROS time [ns] of the read (after the last bus's, before decoding)."""
        read = [(bus, io.read()) for bus, io in self._ios.items()]
        stamp = clock_ns(self.get_clock())  # a third of clock.now()
        for bus, frames in read:
            if frames:
                self._core.ingest_replies(frames, time.monotonic(), bus)
        return stamp

    @property
    def send_schedule(self) -> SendSchedule:
        """The send decisions and their counts (exchanges on arrival / on the timer)."""
        return self._schedule

    def _publish_state(self, stamp_ns: int) -> None:
        """Publish ``joint_states`` stamped ``stamp_ns`` [ns]: every joint measured, as the
        serialized bytes packed from a template (:class:`JointStateBytes`); before that, the
        joints measured so far in a ``JointState``. Then the hand-off (composed chain)."""
        position, velocity, effort, every = self._core.measured()
        if every and self._state_bytes is not None:
            try:
                data = self._state_bytes.fill(stamp_ns, position, velocity, effort)
            except struct.error:  # a stamp beyond int32 seconds: the message route below
                data = None
            if data is not None:
                publish_guarded(self, self._state_pub, data)  # SIGINT may end the context mid-tick
                hook = self._observer_hook if self.observer is not None else None
                if self.state_hand_off is not None or hook is not None:
                    msg = self._state_msg
                    stamp = msg.header.stamp  # reused as the message is: each call reads it at once
                    stamp.sec, stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
                    msg.name, msg.position, msg.velocity, msg.effort = (
                        self._joint_names,
                        position,
                        velocity,
                        effort,
                    )
                    if hook is not None:  # (not called while off: observe() would return at once)
                        hook.observe(msg)
                    if self.state_hand_off is not None:
                        self.state_hand_off(msg)
                return
        msg = self.state_message(stamp_ns)
        if msg is None:
            return
        publish_guarded(self, self._state_pub, msg)
        if self._observer_hook is not None:
            self._observer_hook.observe(msg)
        if self.state_hand_off is not None:
            self.state_hand_off(msg)

    def state_message(self, stamp_ns: int) -> JointState | None:
        """``joint_states`` as a message (the joints measured so far; ``None`` before any),
        stamped ``stamp_ns`` [ns]; the reused message object, typed fields only."""
        state = self._core.joint_state()
        valid = state.valid
        if not valid.any():
            return None
        msg = self._state_msg
        msg.header.stamp = TimeMsg(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
        idx = np.flatnonzero(valid)
        msg.name = [self._joint_names[i] for i in idx]
        msg.position = state.position[idx].tolist()
        msg.velocity = state.velocity[idx].tolist()
        msg.effort = state.effort[idx].tolist()
        return msg

    @property
    def observer(self) -> ObserverRuntime | None:
        """The momentum observer and its contact detection (``observer.enable``), else ``None``."""
        return None if self._observer_hook is None else self._observer_hook.runtime

    def loop_periods(self) -> np.ndarray:
        """Recent control loop periods [s] (up to 4096), oldest first (for benchmarks)."""
        return np.array(self._periods)

    # ------------------------------------------------------------------ diagnostics
    def _publish_diagnostics(self) -> None:
        if self._closed:
            return
        core = self._core
        array = DiagnosticArray()
        array.header.stamp = self.get_clock().now().to_msg()
        fqn = self.get_fully_qualified_name()
        statuses = core.status()
        for text in self._startup_check.poll(statuses, core.joint_state().position.tolist()):
            self.get_logger().error(text)
        for io in self._ios.values():
            for text in io.pop_events():
                self.get_logger().warning(text)
        periods = np.array(self._periods)[-max(int(self.config.rate_hz / 2), 10) :]
        now = time.monotonic()
        for bus, io in self._ios.items():  # one status per bus (bus None: the only bus)
            bus_name = self._bus_name if bus is None else bus
            mine = [st for st, m in zip(statuses, self.config.motors) if bus is None or m.bus == bus]
            array.status += motor_statuses(fqn, mine, bus_name)
            fps = self._frame_rates[bus].update(now, io.sent + io.listener.received)
            array.status.append(
                bus_status(
                    fqn,
                    core,
                    io,
                    self._bus_settings[bus],
                    self.config.rate_hz,
                    fps,
                    periods,
                    self._rejected,
                    self._sim is not None,
                    bus_name,
                    n_motors=len(mine),
                )
            )
        array.status += [st for source in self.diagnostic_sources if (st := source()) is not None]
        publish_guarded(self, self._diag_pub, array)

    # ------------------------------------------------------------------ shutdown
    def shutdown_motors(self) -> None:
        """Send disable to every motor and close the bus (idempotent; also on destroy)."""
        if self._closed:
            return
        self._closed = True
        if self._lockstep is not None:
            self._lockstep.close()
        if self._ready:
            core = self._core
            self._ingest_waiting()  # replies to earlier frames: not an answer to the disable
            replies = [st.replies for st in core.status()]
            for bus, io in self._ios.items():
                io.send(core.shutdown_frames(bus))
            if self._lockstep is not None and self._sim is not None:
                self._sim.answer_frames()  # the emulated motors take the disable frames now
            else:
                time.sleep(0.01)  # the replies to the disable frames (a motor answers in < 1 ms)
            self._ingest_waiting()
            silent = [st.name for st, n in zip(core.status(), replies) if st.replies == n]
            self.get_logger().info(
                f"shutdown: disable sent to {len(replies)} motors {list(core.joint_names)}; "
                + (f"no reply after it from {silent}" if silent else "every motor replied")
            )
        self._close_bus()

    def _close_bus(self) -> None:
        for io in self._ios_opened:
            io.close()
        if self._sim is not None:
            self._sim.stop()

    def destroy_node(self):
        self.shutdown_motors()
        return super().destroy_node()


def main(args=None) -> None:
    """Entry point of the ``mit_bridge_node`` executable."""
    run_node(MitBridgeNode, args)


if __name__ == "__main__":
    main()
