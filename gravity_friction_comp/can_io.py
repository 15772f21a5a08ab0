"""python-can plumbing of the MIT bridge, and the simulated motors behind a ``virtual`` bus.

Bridge side:

- :func:`open_bus` opens any python-can interface with ``ignore_config=True`` (a hidden
  ``~/.canrc`` cannot change which bus opens).
- :class:`BridgeCanIO` runs a python-can ``Notifier`` whose listener (:class:`FrameQueue`)
  stamps each received frame with ``time.monotonic()`` and puts it on a thread-safe queue;
  the control loop drains the queue on its own thread (the listener never calls into the
  node or rclpy) and sends the core's frames.
- :func:`read_damiao_limits` asks Damiao motors for registers 21–23 (P_MAX, V_MAX, T_MAX)
  before the loop starts.
- :func:`bridge_config_from_values` turns the node's flat parameter values into a validated
  :class:`~gravity_friction_comp.bridge_core.BridgeConfig` (same errors from YAML, launch or
  ``ros2 param set``).

Simulation side: :class:`SimulatedMotorBus` owns one
:class:`~gravity_friction_comp.motor_emulator.EmulatedMotor` per joint and a
:class:`~gravity_friction_comp.simulation.SimulatedArm` on its own ``virtual`` bus object,
in its own thread at the arm's physics rate in real time. Motors live in motor space, the
arm in joint space; :class:`~gravity_friction_comp.motor_table.JointMotorMap` converts
(θ = d·r·(q − q₀), τ_q = d·r·τ_θ). Each tick: answer every received frame at once (as a
motor does, with the quantized feedback bytes), then compute each motor's MIT torque on the
current shaft state, map it to the joint, and step the arm.

No rclpy import.
"""

from __future__ import annotations

import math
import queue
import struct
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple, Sequence

import can
import numpy as np

from .bridge_core import BEHAVIORS, BridgeConfig, MotorConfig
from .exceptions import ConfigError, GravityFrictionCompError
from .motor_emulator import EmulatedMotor
from .motor_table import (
    DAMIAO_LIMIT_REGISTERS,
    DAMIAO_PARAM_ARBITRATION_ID,
    JointMotorMap,
    MotorLimits,
    damiao_register_read_request,
    limits_from_damiao_registers,
    motor_limits,
    parse_damiao_register_reply,
)
from .simulation import SimulatedArm

__all__ = [
    "BridgeCanIO",
    "BusOpenError",
    "CanSettings",
    "FrameQueue",
    "PER_JOINT_DEFAULTS",
    "ReceivedFrame",
    "SimulatedMotor",
    "SimulatedMotorBus",
    "bridge_config_from_values",
    "fill_position_limits_from_urdf",
    "can_interfaces",
    "open_bus",
    "read_damiao_limits",
]

#: GIL switch interval [s] while a simulated arm runs (Python default: 5 ms).
SIM_SWITCH_INTERVAL = 5e-4


class BusOpenError(ConfigError):
    """The CAN bus could not be opened (no such interface/channel, missing driver, …)."""


def can_interfaces() -> tuple[str, ...]:
    """python-can interface names this installation knows, sorted."""
    return tuple(sorted(can.VALID_INTERFACES))


@dataclass(frozen=True)
class CanSettings:
    """Which bus to open.

    Attributes:
        interface: python-can interface (``socketcan``, ``virtual``, ``pcan``, …).
        channel: Interface channel (``can0``; any name for ``virtual``).
        bitrate: Nominal bitrate [bit/s] (> 0), also the bus-load reference.

    Raises:
        ConfigError: unknown interface (lists the valid ones), empty channel, bad bitrate.
    """

    interface: str = "socketcan"
    channel: str = "can0"
    bitrate: int = 1_000_000

    def __post_init__(self) -> None:
        if self.interface not in can.VALID_INTERFACES:
            raise ConfigError(f"can.interface must be one of {', '.join(can_interfaces())}; "
                              f"got {self.interface!r}", key="can.interface", value=self.interface)
        if not isinstance(self.channel, str) or not self.channel:
            raise ConfigError(f"can.channel must be a non-empty string, got {self.channel!r}",
                              key="can.channel", value=self.channel)
        if isinstance(self.bitrate, bool) or not isinstance(self.bitrate, int) or self.bitrate <= 0:
            raise ConfigError(f"can.bitrate must be a positive integer [bit/s], got {self.bitrate!r}",
                              key="can.bitrate", value=self.bitrate)


def open_bus(settings: CanSettings, *, receive_own_messages: bool = False, **kwargs: Any) -> can.BusABC:
    """Open ``settings``' bus: ``can.Bus(interface, channel, bitrate, ignore_config=True)``.

    Args:
        settings: :class:`CanSettings`.
        receive_own_messages: Passed to python-can (False: a bus object does not see what
            it sends).
        **kwargs: Extra interface arguments.

    Returns:
        The bus; close it with ``shutdown()`` (idempotent) or use it as a context manager.

    Raises:
        BusOpenError: python-can failed (missing device, driver, permission); names the bus.
    """
    try:
        return can.Bus(interface=settings.interface, channel=settings.channel, bitrate=settings.bitrate,
                       receive_own_messages=receive_own_messages, ignore_config=True, **kwargs)
    except (can.CanError, OSError, ImportError, ValueError, TypeError) as error:
        raise BusOpenError(f"cannot open CAN bus {settings.interface}:{settings.channel} "
                           f"@ {settings.bitrate} bit/s: {error}", key="can.channel",
                           value=settings.channel) from None


class ReceivedFrame(NamedTuple):
    """A frame as the control loop sees it: ``time`` [s, time.monotonic], id, data bytes."""

    time: float
    arbitration_id: int
    data: bytes


class FrameQueue(can.Listener):
    """Listener for a python-can Notifier: received frames → bounded thread-safe queue.

    Runs on the Notifier's thread: it only stamps and enqueues. When the queue is full
    (the loop stalled) the frame is dropped and counted in :attr:`dropped`.

    Args:
        maxsize: Queue capacity [frames].
        accept: Arbitration ids to keep (``None``: all); others are counted in
            :attr:`ignored` (cheap software filter, works on every interface).
    """

    def __init__(self, maxsize: int = 4096, accept: frozenset[int] | None = None):
        self._queue: queue.Queue[ReceivedFrame] = queue.Queue(maxsize=maxsize)
        self._accept = accept
        self.dropped = 0
        self.ignored = 0
        self.received = 0
        self.errors = 0
        self.last_error: str = ""

    def on_message_received(self, msg: can.Message) -> None:
        if msg.is_error_frame or msg.is_remote_frame:
            self.ignored += 1
            return
        if self._accept is not None and msg.arbitration_id not in self._accept:
            self.ignored += 1
            return
        self.received += 1
        try:
            self._queue.put_nowait(ReceivedFrame(time.monotonic(), msg.arbitration_id, bytes(msg.data)))
        except queue.Full:
            self.dropped += 1

    def on_error(self, exc: Exception) -> None:
        # The Notifier would otherwise stop silently; keep the error for diagnostics.
        self.errors += 1
        self.last_error = str(exc)

    def drain(self, limit: int | None = None) -> list[ReceivedFrame]:
        """Everything queued now (at most ``limit`` frames), oldest first."""
        out: list[ReceivedFrame] = []
        while limit is None or len(out) < limit:
            try:
                out.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return out


class BridgeCanIO:
    """The bridge's bus: a Notifier feeding a :class:`FrameQueue`, and a send method.

    Args:
        bus: An open python-can bus (owned from now on: :meth:`close` shuts it down).
        accept: Arbitration ids the listener keeps (the core's ``reply_ids``).
        send_timeout: Per-frame send timeout [s] (a full TX queue must not block the loop).
    """

    def __init__(self, bus: can.BusABC, accept: frozenset[int] | None = None, send_timeout: float = 0.0005):
        self.bus = bus
        self.listener = FrameQueue(accept=accept)
        self.send_timeout = float(send_timeout)
        self.sent = 0
        self.send_errors = 0
        self.last_send_error = ""
        self._notifier = can.Notifier(bus, [self.listener], timeout=0.1)
        self._closed = False

    def send(self, frames: Sequence[tuple[int, bytes]]) -> int:
        """Send ``[(arbitration_id, data), ...]`` as classic 11-bit frames; returns how many went.

        Failed sends are counted (:attr:`send_errors`), never raised: the loop must go on.
        """
        ok = 0
        for arbitration_id, data in frames:
            msg = can.Message(arbitration_id=arbitration_id, data=data, is_extended_id=False)
            try:
                self.bus.send(msg, timeout=self.send_timeout)
                ok += 1
            except (can.CanError, OSError) as error:
                self.send_errors += 1
                self.last_send_error = str(error)
        self.sent += ok
        return ok

    def drain(self) -> list[ReceivedFrame]:
        """Frames received since the last call, oldest first."""
        return self.listener.drain()

    def close(self) -> None:
        """Stop the Notifier and shut the bus down (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._notifier.stop(timeout=0.5)
        self.bus.shutdown()


def read_damiao_limits(bus: can.BusABC, motors: Sequence[MotorConfig], timeout: float = 0.05
                       ) -> dict[str, tuple[MotorLimits, str]]:
    """Ask each Damiao motor for registers 21–23 and apply the answers over the table.

    Call before a Notifier reads the bus (this function reads it directly), with the
    motors disabled and at rest (see :func:`parse_damiao_register_reply`).

    Args:
        bus: Open bus.
        motors: Motor configs; non-Damiao motors are skipped.
        timeout: Wait per register [s].

    Returns:
        Joint name → ``(limits, note)``: limits with the reported registers applied (the
        configured ones when nothing answered), note ``""`` when all three answered, else
        what happened (for the log/diagnostics).

    Raises:
        Nothing for silent or bad motors (reported in the note).
    """
    out: dict[str, tuple[MotorLimits, str]] = {}
    for m in motors:
        if m.limits.family != "damiao":
            continue
        values: dict[int, float] = {}
        for rid in DAMIAO_LIMIT_REGISTERS:
            msg = can.Message(arbitration_id=DAMIAO_PARAM_ARBITRATION_ID,
                              data=damiao_register_read_request(m.can_id, rid), is_extended_id=False)
            try:
                bus.send(msg, timeout=timeout)
            except (can.CanError, OSError):
                break
            deadline = time.monotonic() + timeout
            while (left := deadline - time.monotonic()) > 0:
                reply = bus.recv(timeout=left)
                if reply is None or reply.arbitration_id != m.master_id:
                    continue
                parsed = parse_damiao_register_reply(bytes(reply.data), m.can_id)
                if parsed is not None and parsed.register_id == rid:
                    values[rid] = parsed.value
                    break
        missing = [DAMIAO_LIMIT_REGISTERS[r] for r in DAMIAO_LIMIT_REGISTERS if r not in values]
        try:
            limits = limits_from_damiao_registers(m.limits, values)
            note = "" if not missing else f"no answer for {missing}; table values kept for those"
        except GravityFrictionCompError as error:
            limits, note = m.limits, f"bad register value ({error}); table values kept"
        out[m.name] = (limits, note)
    return out


# --- parameters → BridgeConfig ------------------------------------------------------------------

#: Per-joint array parameters of the bridge and their defaults when left empty.
PER_JOINT_DEFAULTS: Mapping[str, Any] = {
    "can_id": None, "master_id": None, "motor_type": None, "direction": 1, "offset": 0.0,
    "gear_ratio": 1.0, "kp": 0.0, "kd": 0.0, "effort_limit": math.inf, "damp_kd": None,
    "position_lower": -math.inf, "position_upper": math.inf,
}


def _per_joint(key: str, values: Mapping[str, Any], n: int) -> list[Any]:
    raw = values.get(key)
    if raw is None or (isinstance(raw, (list, tuple)) and len(raw) == 0):
        default = PER_JOINT_DEFAULTS[key]
        if default is None and key != "damp_kd":
            raise ConfigError(f"{key} is required: one value per joint ({n})", key=key, value=raw)
        return [default] * n
    if isinstance(raw, (str, bytes)) or not isinstance(raw, (list, tuple)):
        raw = [raw]
    raw = list(raw)
    if len(raw) != n:
        raise ConfigError(f"{key} has {len(raw)} values for {n} joints", key=key, value=raw)
    return raw


def _as_int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{key} entries must be integers, got {value!r}", key=key, value=value)
    return int(value)


def _as_float(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigError(f"{key} entries must be numbers, got {value!r}", key=key, value=value)
    return float(value)


def bridge_config_from_values(values: Mapping[str, Any],
                              limits_override: Mapping[str, MotorLimits] | None = None) -> BridgeConfig:
    """Validated :class:`BridgeConfig` from the node's parameter values.

    Args:
        values: ``joints`` (names), per-joint arrays ``can_id``, ``master_id``,
            ``motor_type`` (required), ``direction`` (±1), ``offset`` [rad], ``gear_ratio``,
            ``kp`` [N·m/rad], ``kd`` [N·m·s/rad], ``effort_limit`` [N·m], ``damp_kd``
            [N·m·s/rad], ``position_lower``/``position_upper`` [rad] (empty = defaults in
            :data:`PER_JOINT_DEFAULTS`), and ``rate_hz`` [Hz], ``command_timeout`` [s],
            ``timeout_behavior``, ``fault_behavior`` (:data:`BEHAVIORS`), ``stale_cycles``,
            ``can.bitrate`` [bit/s].
        limits_override: Joint name → limits replacing the table's (e.g. read from the
            motor's registers).

    Raises:
        ConfigError: missing/inconsistent values; the key names the parameter.
    """
    joints = values.get("joints")
    if not joints or not isinstance(joints, (list, tuple)) or not all(isinstance(j, str) and j for j in joints):
        raise ConfigError(f"joints must be a non-empty list of joint names, got {joints!r}", key="joints",
                          value=joints)
    n = len(joints)
    cols = {k: _per_joint(k, values, n) for k in PER_JOINT_DEFAULTS}
    override = dict(limits_override or {})
    motors = []
    for i, name in enumerate(joints):
        mtype = cols["motor_type"][i]
        if not isinstance(mtype, str):
            raise ConfigError(f"motor_type entries must be strings, got {mtype!r}", key="motor_type", value=mtype)
        limits = override.get(name) or motor_limits(mtype)
        mapping = JointMotorMap(direction=_as_int("direction", cols["direction"][i]),
                                offset=_as_float("offset", cols["offset"][i]),
                                gear_ratio=_as_float("gear_ratio", cols["gear_ratio"][i]))
        damp = cols["damp_kd"][i]
        lim = _as_float("effort_limit", cols["effort_limit"][i])
        motors.append(MotorConfig(
            name=name, can_id=_as_int("can_id", cols["can_id"][i]),
            master_id=_as_int("master_id", cols["master_id"][i]), limits=limits, mapping=mapping,
            kp=_as_float("kp", cols["kp"][i]), kd=_as_float("kd", cols["kd"][i]),
            effort_limit=lim,
            position_lower=_as_float("position_lower", cols["position_lower"][i]),
            position_upper=_as_float("position_upper", cols["position_upper"][i]),
            damp_kd=None if damp is None or (isinstance(damp, float) and math.isnan(damp))
            else _as_float("damp_kd", damp),
        ))
    kwargs = {}
    for key, cast in (("rate_hz", _as_float), ("command_timeout", _as_float), ("stale_cycles", _as_int)):
        if values.get(key) is not None:
            kwargs[key] = cast(key, values[key])
    for key in ("timeout_behavior", "fault_behavior"):
        if values.get(key) is not None:
            if values[key] not in BEHAVIORS:
                raise ConfigError(f"{key} must be one of {', '.join(BEHAVIORS)}; got {values[key]!r}",
                                  key=key, value=values[key])
            kwargs[key] = values[key]
    if values.get("can.bitrate") is not None:
        kwargs["bitrate"] = _as_int("can.bitrate", values["can.bitrate"])
    return BridgeConfig(motors=tuple(motors), **kwargs)


def fill_position_limits_from_urdf(values: dict[str, Any], urdf_joints: Mapping[str, Any]
                                   ) -> dict[str, str]:
    """Empty ``position_lower``/``position_upper`` in ``values`` → the URDF ``<limit>`` of each
    bridge joint (in place), for :func:`bridge_config_from_values`.

    Args:
        values: The node's parameter values (``joints``, ``position_lower``, ``position_upper``).
        urdf_joints: Joint name → :class:`~gravity_friction_comp.urdf_source.UrdfJoint`
            (``RobotModel.urdf_joints``); ``lower``/``upper`` [rad or m], ``∓inf`` for none.

    Returns:
        Joint name → why it stays unbounded (not in the URDF, or inverted URDF limits: a
        malformed file), for the caller to warn about; empty when nothing was filled.
    """
    joints = values.get("joints") or []
    if not isinstance(joints, (list, tuple)):
        return {}
    unbounded = {}
    for j in joints:
        if j not in urdf_joints:
            unbounded[j] = "not in the URDF"
        elif not urdf_joints[j].lower <= urdf_joints[j].upper:
            unbounded[j] = (f"URDF limits inverted: lower {urdf_joints[j].lower:g} > "
                            f"upper {urdf_joints[j].upper:g}")
    filled = False
    for key, attribute, none in (("position_lower", "lower", -math.inf),
                                 ("position_upper", "upper", math.inf)):
        if not values.get(key):
            filled = True
            values[key] = [none if j in unbounded else getattr(urdf_joints[j], attribute)
                           for j in joints]
    return unbounded if filled else {}


# --- simulated motors ----------------------------------------------------------------------------


class SimulatedMotor(NamedTuple):
    """One emulated motor and the joint it drives."""

    joint: str
    motor: EmulatedMotor
    mapping: JointMotorMap


class SimulatedMotorBus:
    """Emulated MIT motors driving a :class:`SimulatedArm`, answering on a python-can bus.

    Args:
        arm: The simulated arm (joint space).
        motors: One :class:`SimulatedMotor` per actuated joint; arm joints without one get
            zero torque (passive).
        settings: Bus to open (normally ``virtual`` with a channel unique to this arm).

    Raises:
        ConfigError: a motor for a joint the arm lacks (lists the arm's joints), two motors
            on one joint or CAN id.
        BusOpenError: the bus cannot be opened.

    Thread model: :meth:`start` runs :meth:`run_once` every ``arm.dt`` in a daemon thread on a
    monotonic deadline schedule; between ticks it blocks on the bus and answers each frame as
    it arrives (a real motor replies within microseconds), with the motor state of the last
    tick. After falling more than 50 ms
    behind it re-anchors and counts an overrun, so simulated time then lags real time).
    :meth:`inject_fault`, :meth:`set_muted`, :meth:`set_holding` and :meth:`snapshot` are
    safe from other threads (one lock). Without :meth:`start`, call :meth:`run_once`
    yourself (deterministic tests, faster than real time).
    """

    def __init__(self, arm: SimulatedArm, motors: Sequence[SimulatedMotor], settings: CanSettings):
        if not isinstance(arm, SimulatedArm):
            raise ConfigError("arm must be a SimulatedArm", key="arm", value=arm)
        index = {n: i for i, n in enumerate(arm.joint_names)}
        self.arm = arm
        self.motors = tuple(motors)
        self._joint_index = []
        seen_joint, seen_id = set(), set()
        for sm in self.motors:
            if sm.joint not in index:
                raise ConfigError(f"no joint {sm.joint!r} in the simulated arm; joints: {list(arm.joint_names)}",
                                  key="joints", value=sm.joint)
            if sm.joint in seen_joint or sm.motor.can_id in seen_id:
                raise ConfigError(f"two simulated motors on joint {sm.joint!r} or can_id {sm.motor.can_id}",
                                  key="can_id", value=sm.motor.can_id)
            seen_joint.add(sm.joint)
            seen_id.add(sm.motor.can_id)
            self._joint_index.append(index[sm.joint])
        self._by_can_id = {sm.motor.can_id: k for k, sm in enumerate(self.motors)}
        self._muted = [False] * len(self.motors)
        self.settings = settings
        self.bus = open_bus(settings)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ticks = 0
        self.overruns = 0
        self.frames_received = 0
        self.replies_sent = 0
        self.send_errors = 0
        self.max_lateness = 0.0
        self._sync_shafts()

    @classmethod
    def for_bridge(cls, arm: SimulatedArm, config: BridgeConfig, settings: CanSettings) -> SimulatedMotorBus:
        """One emulated motor per :class:`MotorConfig` of ``config`` (same ids, ranges, map)."""
        motors = [SimulatedMotor(m.name, EmulatedMotor(m.limits, m.can_id, m.master_id), m.mapping)
                  for m in config.motors]
        return cls(arm, motors, settings)

    # --- thread-safe controls ---------------------------------------------------------------
    def _motor(self, joint: str) -> int:
        for k, sm in enumerate(self.motors):
            if sm.joint == joint:
                return k
        raise ConfigError(f"no simulated motor on joint {joint!r}; joints: {[m.joint for m in self.motors]}",
                          key="joint", value=joint)

    def inject_fault(self, joint: str, code: int) -> None:
        """Latch fault ``code`` in the motor of ``joint`` (see EmulatedMotor.inject_fault)."""
        with self._lock:
            self.motors[self._motor(joint)].motor.inject_fault(code)

    def set_muted(self, joint: str, muted: bool = True) -> None:
        """Stop (True) or resume (False) the replies of ``joint``'s motor (it still obeys)."""
        with self._lock:
            self._muted[self._motor(joint)] = bool(muted)

    def set_holding(self, holding: bool) -> None:
        """Attach/release the payload in the simulated arm."""
        with self._lock:
            self.arm.set_holding(holding)

    def snapshot(self):
        """The arm's :class:`~gravity_friction_comp.simulation.SimState` (consistent copy)."""
        with self._lock:
            return self.arm.state()

    def motor_state(self, joint: str) -> tuple[bool, int]:
        """(enabled, fault_code) of ``joint``'s motor."""
        with self._lock:
            m = self.motors[self._motor(joint)].motor
            return m.enabled, m.fault_code

    # --- simulation ------------------------------------------------------------------------
    def _sync_shafts(self) -> None:
        q, v = self.arm.position, self.arm.velocity
        for sm, j in zip(self.motors, self._joint_index):
            sm.motor.set_shaft_state(sm.mapping.position_to_motor(q[j]), sm.mapping.velocity_to_motor(v[j]))

    def _reply(self, arbitration_id: int, data: bytes) -> None:
        try:
            self.bus.send(can.Message(arbitration_id=arbitration_id, data=data, is_extended_id=False),
                          timeout=0.001)
            self.replies_sent += 1
        except (can.CanError, OSError):
            self.send_errors += 1

    def _handle(self, msg: can.Message) -> None:
        data = bytes(msg.data)
        self.frames_received += 1
        if msg.arbitration_id == DAMIAO_PARAM_ARBITRATION_ID and len(data) == 8 and data[2] == 0x33:
            k = self._by_can_id.get(data[0] | (data[1] << 8))
            if k is None or self._muted[k] or self.motors[k].motor.family != "damiao":
                return
            motor = self.motors[k].motor
            field = DAMIAO_LIMIT_REGISTERS.get(data[3])
            if field is not None:
                self._reply(motor.master_id, data[:4] + struct.pack("<f", getattr(motor.limits, field)))
            return
        k = self._by_can_id.get(msg.arbitration_id)
        if k is None:
            return
        reply = self.motors[k].motor.handle_frame(data)
        if reply is not None and not self._muted[k]:
            self._reply(self.motors[k].motor.master_id, reply)

    def run_once(self, dt: float | None = None) -> None:
        """Answer the frames received so far, then advance the arm one step of ``dt`` [s]."""
        with self._lock:
            while (msg := self.bus.recv(timeout=0.0)) is not None:
                self._handle(msg)
            tau = np.zeros(self.arm.n)
            for sm, j in zip(self.motors, self._joint_index):
                tau[j] = sm.mapping.torque_from_motor(sm.motor.torque())
            self.arm.step(tau, dt)
            self._sync_shafts()
            self.ticks += 1

    def _answer_until(self, deadline: float) -> None:
        # Wait for frames instead of sleeping: a motor answers within microseconds, not at
        # the next physics tick (a late reply would be counted against the wrong cycle).
        while (left := deadline - time.monotonic()) > 0 and not self._stop.is_set():
            msg = self.bus.recv(timeout=left)
            if msg is not None:
                with self._lock:
                    self._handle(msg)

    def _run(self) -> None:
        period = self.arm.dt
        next_t = time.monotonic()
        while not self._stop.is_set():
            self.run_once(period)
            next_t += period
            delay = next_t - time.monotonic()
            if delay > 0:
                self._answer_until(next_t)
            else:
                self.max_lateness = max(self.max_lateness, -delay)
                if delay < -0.05:
                    self.overruns += 1
                    next_t = time.monotonic()

    def start(self) -> None:
        """Run the simulation in a daemon thread in real time (idempotent).

        Also shortens the interpreter's GIL switch interval to :data:`SIM_SWITCH_INTERVAL`
        while it runs (restored by :meth:`stop`): the 1 kHz physics thread shares the GIL with
        the node's executor, and at Python's default 5 ms each side waits whole periods.
        """
        if self._thread is None:
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch_interval, SIM_SWITCH_INTERVAL))
            self._thread = threading.Thread(target=self._run, name="simulated_motor_bus", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the thread and shut the bus down (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
            sys.setswitchinterval(self._switch_interval)
        self.bus.shutdown()
