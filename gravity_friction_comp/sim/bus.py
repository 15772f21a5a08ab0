"""Simulated motors behind a python-can ``virtual`` bus: emulated MIT motors driving a SimulatedArm.

Simulation side: :class:`SimulatedMotorBus` owns one
:class:`~gravity_friction_comp.sim.motor_emulator.EmulatedMotor` per joint and a
:class:`~gravity_friction_comp.sim.arm.SimulatedArm` on its own ``virtual`` bus object,
in its own thread at the arm's physics rate in real time. Motors live in motor space, the
arm in joint space; :class:`~gravity_friction_comp.mit.joint_motor_map.JointMotorMap` converts
(θ = d·r·(q − q₀), τ_q = d·r·τ_θ). Each tick: answer every received frame at once (as a
motor does, with the quantized feedback bytes), then compute each motor's MIT torque on the
current shaft state, map it to the joint, and step the arm.

Several buses (a bimanual arm, one bus per arm): each motor names its bus
(:attr:`SimulatedMotor.bus`, the motor map's ``bus``) and the simulator opens one bus per
name, so CAN ids may repeat across buses as on the real arm; a motor answers on its own bus.

"""

from __future__ import annotations

import logging
import struct
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple

import can

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_config import BridgeConfig
from gravity_friction_comp.mit.bus import CanSettings, mit_message, open_bus
from gravity_friction_comp.mit.damiao_registers import DAMIAO_LIMIT_REGISTERS, DAMIAO_PARAM_ARBITRATION_ID
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.config import SimConfig
from gravity_friction_comp.sim.motor_emulator import EmulatedMotor

_log = logging.getLogger(__name__)

#: GIL switch interval [s] while a simulated arm runs (Python default: 5 ms).
SIM_SWITCH_INTERVAL = 5e-4


def virtual_bus_settings(base: CanSettings, buses: Sequence[str]) -> dict[str, CanSettings]:
    """One channel per bus name for a simulated arm: ``base`` itself for a single bus, else
    ``base`` with channel ``<base.channel>/<bus>`` per bus (FD settings kept).

    The bridge and the simulator call this with the same arguments, so they meet on the same
    channels; distinct channels keep repeated CAN ids apart as separate cables do.
    """
    if len(buses) <= 1:
        return {(buses[0] if buses else ""): base}
    return {bus: replace(base, channel=f"{base.channel}/{bus or 'default'}") for bus in buses}


# --- simulated motors ----------------------------------------------------------------------------


class SimulatedMotor(NamedTuple):
    """One emulated motor, the joint it drives and its bus (``""``: the only bus)."""

    joint: str
    motor: EmulatedMotor
    mapping: JointMotorMap
    bus: str = ""


class SimulatedMotorBus:
    """Emulated MIT motors driving a :class:`SimulatedArm`, answering on a python-can bus.

    Args:
        arm: The simulated arm (joint space).
        motors: One :class:`SimulatedMotor` per actuated joint; arm joints without one get
            zero torque (passive).
        settings: Bus to open (normally ``virtual`` with a channel unique to this arm), or
            bus name → settings with one entry per :attr:`SimulatedMotor.bus` (several buses).

    Raises:
        ConfigError: a motor for a joint the arm lacks (lists the arm's joints), two motors
            on one joint or on one CAN id of one bus, a motor on a bus without settings.
        BusOpenError: the bus cannot be opened.

    Thread model: :meth:`start` runs :meth:`run_once` every ``arm.dt`` in a daemon thread on a
    monotonic deadline schedule; between ticks it blocks on the bus and answers each frame as
    it arrives (a real motor replies within microseconds), with the motor state of the last
    tick. After falling more than 50 ms
    behind it re-anchors and counts an overrun, so simulated time then lags real time).
    An exception in a step (the arm's physics diverged, say) ends the thread: it is kept in
    :attr:`error` and logged once as an ERROR with its traceback; the motors then stop
    answering, which the bridge reports as stale replies.
    :meth:`inject_fault`, :meth:`set_muted`, :meth:`set_holding` and :meth:`snapshot` are
    safe from other threads (one lock). Without :meth:`start`, call :meth:`run_once`
    yourself (deterministic tests, faster than real time).
    """

    def __init__(
        self,
        arm: SimulatedArm,
        motors: Sequence[SimulatedMotor],
        settings: CanSettings | Mapping[str, CanSettings],
    ):
        if not isinstance(arm, SimulatedArm):
            raise ConfigError("arm must be a SimulatedArm", key="arm", value=arm)
        index = {n: i for i, n in enumerate(arm.joint_names)}
        self.arm = arm
        self.motors = tuple(motors)
        self._joint_index = []
        if isinstance(settings, CanSettings):
            settings = virtual_bus_settings(
                settings, tuple(dict.fromkeys(sm.bus for sm in self.motors)) or ("",)
            )
        seen_joint: set[str] = set()
        seen_id: set[tuple[str, int]] = set()
        for sm in self.motors:
            if sm.bus not in settings:
                raise ConfigError(
                    f"simulated motor of {sm.joint!r} on bus {sm.bus!r}, which has no settings; "
                    f"buses: {list(settings)}",
                    key="bus",
                    value=sm.bus,
                )
            if sm.joint not in index:
                raise ConfigError(
                    f"no joint {sm.joint!r} in the simulated arm; joints: {list(arm.joint_names)}",
                    key="joints",
                    value=sm.joint,
                )
            if sm.joint in seen_joint or (sm.bus, sm.motor.can_id) in seen_id:
                raise ConfigError(
                    f"two simulated motors on joint {sm.joint!r} or can_id {sm.motor.can_id} (bus {sm.bus!r})",
                    key="can_id",
                    value=sm.motor.can_id,
                )
            seen_joint.add(sm.joint)
            seen_id.add((sm.bus, sm.motor.can_id))
            self._joint_index.append(index[sm.joint])
        self._by_can_id = {(sm.bus, sm.motor.can_id): k for k, sm in enumerate(self.motors)}
        self._muted = [False] * len(self.motors)
        #: Bus name → settings (one entry per bus of the motors).
        self.bus_settings: dict[str, CanSettings] = dict(settings)
        first = next(iter(self.bus_settings.values()))
        self.settings = first
        self._fd = {
            name: bool(s.fd) for name, s in self.bus_settings.items()
        }  # replies FD+BRS like the bridge's
        #: Bus name → open bus; :attr:`bus` is the first (the only one on a single-bus arm).
        self.buses: dict[str, can.BusABC] = {}
        try:
            for name, s in self.bus_settings.items():
                self.buses[name] = open_bus(s)
        except BaseException:
            for opened in self.buses.values():
                opened.shutdown()
            raise
        self.bus = next(iter(self.buses.values()))
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ticks = 0
        self.overruns = 0
        self.frames_received = 0
        self.replies_sent = 0
        self.send_errors = 0
        self.max_lateness = 0.0
        #: The exception that ended the real-time thread, or None.
        self.error: BaseException | None = None
        self._sync_shafts()

    @classmethod
    def for_bridge(cls, arm: SimulatedArm, config: BridgeConfig, settings: CanSettings) -> SimulatedMotorBus:
        """One emulated motor per :class:`MotorConfig` of ``config`` (same ids, ranges, map, bus).

        ``settings``: one :class:`CanSettings` (every bus of ``config`` gets it: fine for a
        single bus) or bus name → settings (:func:`~gravity_friction_comp.mit.bus.bus_settings`).
        """
        motors = [
            SimulatedMotor(m.name, EmulatedMotor(m.limits, m.can_id, m.master_id), m.mapping, m.bus)
            for m in config.motors
        ]
        return cls(arm, motors, settings)

    # --- thread-safe controls ---------------------------------------------------------------
    def _motor(self, joint: str) -> int:
        for k, sm in enumerate(self.motors):
            if sm.joint == joint:
                return k
        raise ConfigError(
            f"no simulated motor on joint {joint!r}; joints: {[m.joint for m in self.motors]}",
            key="joint",
            value=joint,
        )

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

    def set_external_effort(self, effort) -> None:
        """External joint torque (n,) [N·m] on the simulated arm (SimulatedArm.set_external_effort)."""
        with self._lock:
            self.arm.set_external_effort(effort)

    def snapshot(self):
        """The arm's :class:`~gravity_friction_comp.sim.arm.SimState` (consistent copy)."""
        with self._lock:
            return self.arm.state()

    def motor_state(self, joint: str) -> tuple[bool, int]:
        """(enabled, fault_code) of ``joint``'s motor."""
        with self._lock:
            m = self.motors[self._motor(joint)].motor
            return m.enabled, m.fault_code

    # --- simulation ------------------------------------------------------------------------
    def _sync_shafts(self, q: list[float] | None = None, v: list[float] | None = None) -> None:
        # q, v: the arm's state as floats (no numpy scalars), read from the arm when None
        if q is None or v is None:
            q, v = self.arm.position.tolist(), self.arm.velocity.tolist()
        for sm, j in zip(self.motors, self._joint_index):
            sm.motor.set_shaft_state(sm.mapping.position_to_motor(q[j]), sm.mapping.velocity_to_motor(v[j]))

    def _send(self, bus: str, msg: can.Message) -> None:
        try:
            self.buses[bus].send(msg, timeout=0.001)
            self.replies_sent += 1
        except (can.CanError, OSError):
            self.send_errors += 1

    def _handle(self, msg: can.Message, bus: str) -> None:
        for reply in self._replies(msg, bus):
            self._send(bus, reply)

    def _replies(self, msg: can.Message, bus: str) -> list[can.Message]:
        # what the emulated motors answer to ``msg`` (caller holds the lock)
        data = bytes(msg.data)
        self.frames_received += 1
        if msg.arbitration_id == DAMIAO_PARAM_ARBITRATION_ID and len(data) == 8 and data[2] == 0x33:
            k = self._by_can_id.get((bus, data[0] | (data[1] << 8)))
            if k is None or self._muted[k] or self.motors[k].motor.family != "damiao":
                return []
            motor = self.motors[k].motor
            field = DAMIAO_LIMIT_REGISTERS.get(data[3])
            if field is None:
                return []
            value = struct.pack("<f", getattr(motor.limits, field))
            return [mit_message(motor.master_id, data[:4] + value, self._fd[bus])]
        k = self._by_can_id.get((bus, msg.arbitration_id))
        if k is None:
            return []
        motor = self.motors[k].motor
        reply = motor.handle_frame(data)
        if self._muted[k]:
            return []
        if reply is not None:
            return [mit_message(motor.master_id, reply, self._fd[bus])]
        if not motor.mit_mode:  # a motor in its private protocol answers in that
            private_id, private_data = motor.private_frame()
            return [can.Message(arbitration_id=private_id, data=private_data)]
        return []

    def answer(self, msg: can.Message, bus: str = "") -> list[can.Message]:
        """The emulated motors' replies to ``msg`` on ``bus``, now (thread-safe), returned
        instead of sent on the simulator's own bus: for a transport that carries the frames
        itself (:class:`~gravity_friction_comp.sim.socketcand_server.SocketcandServer`).
        Counted in :attr:`frames_received` / :attr:`replies_sent` as bus frames are."""
        with self._lock:
            replies = self._replies(msg, bus)
            self.replies_sent += len(replies)
        return replies

    def _answer_waiting(self) -> None:
        # caller holds the lock
        for name, bus in self.buses.items():
            while (msg := bus.recv(timeout=0.0)) is not None:
                self._handle(msg, name)

    def answer_frames(self) -> None:
        """Answer the frames received so far (motor state of now), without stepping the arm."""
        with self._lock:
            self._answer_waiting()

    def run_once(self, dt: float | None = None) -> None:
        """Answer the frames received so far, then advance the arm one step of ``dt`` [s]."""
        with self._lock:
            self._answer_waiting()
            tau = [0.0] * self.arm.n
            for sm, j in zip(self.motors, self._joint_index):
                tau[j] = sm.mapping.torque_from_motor(sm.motor.torque())
            q, v = self.arm.step(tau, dt)
            self._sync_shafts(q.tolist(), v.tolist())
            self.ticks += 1

    def _answer_until(self, deadline: float) -> None:
        # Wait for frames instead of sleeping: a motor answers within microseconds, not at
        # the next physics tick (a late reply would be counted against the wrong cycle).
        # Several buses: a short blocking wait on the first, then a poll of every bus.
        single = len(self.buses) == 1
        name = next(iter(self.buses))
        while (left := deadline - time.monotonic()) > 0 and not self._stop.is_set():
            msg = self.bus.recv(timeout=left if single else min(left, 1e-4))
            with self._lock:
                if msg is not None:
                    self._handle(msg, name)
                if not single:
                    self._answer_waiting()

    def _run(self) -> None:
        try:
            self._run_real_time()
        except Exception as error:  # noqa: BLE001 - a daemon thread's error is otherwise only on stderr
            self.error = error
            _log.error(
                "the simulated arm stopped at tick %d: %s: %s",
                self.ticks,
                type(error).__name__,
                error,
                exc_info=error,
            )

    def _run_real_time(self) -> None:
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
        """Stop the thread and shut the buses down (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
            sys.setswitchinterval(self._switch_interval)
        for bus in self.buses.values():
            bus.shutdown()


def simulated_bus_for_bridge(
    model,
    config: BridgeConfig,
    settings: CanSettings,
    *,
    sim_config: str = "",
    payload=None,
    holding: bool = False,
) -> SimulatedMotorBus:
    """The simulated arm a bridge talks to: :class:`SimulatedArm` of ``model`` with the true
    values of the ``sim_config`` YAML (``""``: :class:`SimConfig` defaults), one emulated
    motor per motor of ``config`` (:meth:`SimulatedMotorBus.for_bridge`), not started.

    Args:
        model: The bare :class:`~gravity_friction_comp.model.robot_model.RobotModel`.
        config: The bridge's config (ids, ranges, map, buses).
        settings: The simulator's bus (normally ``virtual``; one sub-channel per bus of a
            multi-bus ``config``, :func:`virtual_bus_settings`).
        sim_config: Path of the sim YAML.
        payload, holding: The payload and its initial holding state.

    Raises:
        ConfigError: a bad sim YAML or motor set (see :class:`SimulatedMotorBus`).
        BusOpenError: the bus cannot be opened.
    """
    arm = SimulatedArm(
        model,
        SimConfig.from_yaml(sim_config) if sim_config else SimConfig(),
        payload=payload,
        holding=holding,
    )
    return SimulatedMotorBus.for_bridge(arm, config, settings)
