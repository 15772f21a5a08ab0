"""One builder for a simulated chain: motor map → bridge core → virtual buses → emulated motors
→ simulated arm → lockstep driver, for one arm or several side by side in one lockstep.

ROS-free. :class:`ChainArm` assembles one arm as the ``mit_bridge`` node does with
``simulate:=true sim_lockstep:=true``: a :class:`~gravity_friction_comp.mit.bridge_core.MitBridgeCore`
of the motor map, one python-can ``virtual`` channel per bus of the map
(:func:`~gravity_friction_comp.sim.bus.virtual_bus_settings`), the
:class:`~gravity_friction_comp.sim.bus.SimulatedMotorBus` on the other end of those channels,
and a :class:`~gravity_friction_comp.sim.lockstep.LockstepDriver` on its own
:class:`~gravity_friction_comp.sim.lockstep.LockstepSchedule`. :class:`SimulatedChain` runs
several of them (a leader and a follower, two palletizers) on one clock: every arm must have
the same physics step and tick, and :meth:`SimulatedChain.run_tick` runs the same tick on
each in turn (the arms share no state, so the order between them changes nothing).

The caller supplies what goes around the chain: the setpoint of each tick
(:meth:`ChainArm.command`) and what to do with each measured state (``on_state``).

The same lockstep over bridge processes, one per bus (the bimanual pair in ROS, issue 28.3):
:func:`bus_bridge_wiring` gives each bridge node its part (the first owns ``/clock`` and
waits for the others' states, :class:`~gravity_friction_comp.sim.lockstep.TickWait`).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_config import BridgeConfig
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.bus import CanFrameIO, CanSettings, open_bus
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.bus import SimulatedMotorBus, virtual_bus_settings
from gravity_friction_comp.sim.external_effort import ExternalEffortSchedule
from gravity_friction_comp.sim.lockstep import LockstepDriver, LockstepSchedule, whole_steps

__all__ = ["ChainArm", "SimulatedChain", "bus_bridge_wiring", "lockstep_schedule", "unique_channel"]

#: The chain's topics a bridge in a namespace of its own reads from the chain's namespace
#: (its ``joint_command``; the setpoint watch, the gripper and the simulated hand).
SHARED_TOPICS = ("joint_setpoint", "gripper/holding", "sim/external_effort")

_channels = itertools.count()


def unique_channel(prefix: str) -> str:
    """A ``virtual`` channel name no other chain of this process or another one uses:
    ``<prefix>/<pid>/<counter>``."""
    return f"{prefix}/{os.getpid()}/{next(_channels)}"


def bus_bridge_wiring(
    namespaces: Sequence[str], base: str = "", command_topic: str = "joint_command", lockstep: bool = True
) -> list[tuple[dict[str, Any], dict[str, str]]]:
    """Simulated bridges, one per bus, each in namespace ``<base>/<namespace>`` (ROS names):
    per bridge its parameter overrides and remappings.

    Every bridge reads the chain's ``command_topic`` and :data:`SHARED_TOPICS` in ``base``
    and publishes its own ``joint_states``. In ``lockstep`` the first owns ``/clock`` and
    waits for the others' ``joint_states`` (``sim_lockstep_peers``); the others follow it
    (``sim_lockstep_follow``): one simulated time, each arm stepped in its own process.

    Raises:
        ConfigError: fewer than two namespaces, or a repeated or empty one.
    """
    names = [str(n).strip("/") for n in namespaces]
    if len(names) < 2 or len(set(names)) != len(names) or not all(names):
        raise ConfigError(
            f"one bridge per bus: two or more distinct namespaces, got {list(namespaces)}",
            key="namespaces",
            value=list(namespaces),
        )
    root = "/" + base.strip("/") if base.strip("/") else ""
    remaps = {t: f"{root}/{t}" for t in (*SHARED_TOPICS, "joint_command")}
    remaps["joint_command"] = f"{root}/{command_topic.strip('/')}"
    out = []
    for k, name in enumerate(names):
        params: dict[str, Any] = {}
        if lockstep:
            params = (
                {"sim_lockstep_peers": [f"{root}/{n}/joint_states" for n in names if n != name]}
                if k == 0
                else {"sim_lockstep_follow": True}
            )
        out.append((params, dict(remaps)))
    return out


def lockstep_schedule(
    dt: float, config: BridgeConfig, setpoint_rate_hz: float | None = None, delay: float = 0.0
) -> LockstepSchedule:
    """The lockstep clock of a chain: physics step ``dt`` [s], a tick every
    ``1/setpoint_rate_hz`` [s] (``None``: the bridge rate), a frame exchange every bridge
    period, commands in force ``delay`` [s] after their stamp.

    Raises:
        ConfigError: a period or delay that is no whole number of physics steps (key
            ``sim_setpoint_rate_hz``, ``rate_hz`` or ``sim_delay``).
    """
    rate = config.rate_hz if setpoint_rate_hz is None else setpoint_rate_hz
    return LockstepSchedule(
        int(round(dt * 1e9)),
        whole_steps(1.0 / rate, dt, "sim_setpoint_rate_hz"),
        whole_steps(config.period, dt, "rate_hz"),
        whole_steps(delay, dt, "sim_delay", allow_zero=True),
    )


class ChainArm:
    """One simulated arm behind its bridge core, stepped in lockstep (module docstring).

    Args:
        arm: The simulated arm (its state is the start pose; the chain steps it).
        config: The bridge's motor map (ids, ranges, kp [N·m/rad], kd [N·m·s/rad],
            rate_hz [Hz], buses).
        channel: ``virtual`` channel of this arm (unique: :func:`unique_channel`); a
            multi-bus map gets one sub-channel ``<channel>/<bus>`` per bus.
        setpoint_rate_hz: Tick rate [Hz] (one setpoint per tick; a divisor of the physics
            rate); ``None``: the bridge rate.
        delay: Modelled command transport delay [s] (whole physics steps, ≥ 0).
        startup_behavior: The core's behaviour before the first command (``None``: the
            config's default).
        on_state: Called after each frame exchange with its simulated time [ns] (where the
            bridge node publishes ``joint_states``; read :attr:`core` there).
        external_effort: Keep an :class:`ExternalEffortSchedule` (:attr:`external`, the
            simulated hand) that sets the arm's external torque at every physics step;
            ``False``: the arm's external torque is the caller's (``arm.set_external_effort``).
        name: The arm's name in a :class:`SimulatedChain`.

    Attributes:
        arm, config, core, sim, schedule, driver, name: the pieces, built once.
        ios: Bus name → the bridge's :class:`CanFrameIO` (key ``None``: the only bus).
        io: The first (on a single-bus map, the only) of :attr:`ios`.
        external: The external effort schedule, or ``None``.

    Raises:
        ConfigError: a rate or delay that is no whole number of physics steps, or a motor
            map the simulator rejects (see :class:`SimulatedMotorBus`).
        BusOpenError: a virtual bus cannot be opened.
    """

    def __init__(
        self,
        arm: SimulatedArm,
        config: BridgeConfig,
        *,
        channel: str,
        setpoint_rate_hz: float | None = None,
        delay: float = 0.0,
        startup_behavior: str | None = None,
        on_state: Callable[[int], None] | None = None,
        external_effort: bool = False,
        name: str = "arm",
    ):
        self.name, self.arm, self.config = name, arm, config
        self.schedule = lockstep_schedule(arm.dt, config, setpoint_rate_hz, delay)
        self.core = MitBridgeCore(config, startup_behavior=startup_behavior)
        settings = CanSettings("virtual", channel, config.bitrate)
        self.sim = SimulatedMotorBus.for_bridge(arm, config, settings)
        per_bus = virtual_bus_settings(settings, config.buses)
        self.ios: dict[str | None, CanFrameIO] = {}
        try:
            single = len(per_bus) == 1
            for bus, bus_settings in per_bus.items():
                self.ios[None if single else bus] = CanFrameIO(open_bus(bus_settings), self.core.reply_ids)
        except BaseException:
            self.close()
            raise
        self.io = next(iter(self.ios.values()))
        self._on_state = on_state
        self.driver = LockstepDriver(self.schedule, self.core, self.ios, self.sim, self._state)
        self.external = ExternalEffortSchedule(arm.joint_names) if external_effort else None
        self.driver.external = self.external

    def _state(self, now_ns: int) -> None:
        if self._on_state is not None:
            self._on_state(now_ns)

    def enable(self) -> None:
        """Send the enable frames on every bus; the motors answer at once (no physics step).
        The replies wait on the bus until :meth:`ingest` or the next exchange."""
        for bus, io in self.ios.items():
            io.send(self.core.enable_frames(bus))
        self.sim.answer_frames()

    def ingest(self) -> None:
        """Feed the core every reply waiting on each bus, at the current simulated time."""
        now = self.schedule.now_ns * 1e-9
        for bus, io in self.ios.items():
            for frame in io.drain():
                self.core.ingest_feedback(frame.arbitration_id, frame.data, now, bus)

    def command(self, position: np.ndarray, velocity: np.ndarray, effort: np.ndarray) -> None:
        """The answer to the current tick's setpoint, stamped with the tick: in force from
        the tick plus the delay. Each (m,) in the motor map's joint order: position [rad or
        m], velocity [rad/s or m/s], feedforward effort [N·m or N]."""
        self.schedule.add_command(self.schedule.tick_ns, (position, velocity, effort))

    def disable(self) -> None:
        """Send the disable frames on every bus and let the motors answer (no physics step)."""
        for bus, io in self.ios.items():
            io.send(self.core.shutdown_frames(bus))
        self.sim.answer_frames()

    def close(self) -> None:
        """Close the bridge's buses and the simulator's (idempotent)."""
        for io in self.ios.values():
            io.close()
        self.sim.stop()


class SimulatedChain:
    """Several :class:`ChainArm` on one lockstep clock (module docstring).

    Args:
        arms: One or more arms with unique names, the same physics step and the same tick.

    Raises:
        ConfigError: no arm, a repeated name, or arms whose physics step, tick or current
            step differ (build them together, before any tick).
    """

    def __init__(self, arms: Sequence[ChainArm]):
        self.arms: dict[str, ChainArm] = {}
        for arm in arms:
            if arm.name in self.arms:
                raise ConfigError(f"arm name {arm.name!r} used twice", key="name", value=arm.name)
            self.arms[arm.name] = arm
        if not self.arms:
            raise ConfigError("a simulated chain needs at least one arm", key="arms", value=[])
        first = next(iter(self.arms.values())).schedule
        for arm in self.arms.values():
            s = arm.schedule
            if (s.dt_ns, s.tick_steps, s.step) != (first.dt_ns, first.tick_steps, first.step):
                raise ConfigError(
                    f"arm {arm.name!r}: physics step {s.dt_ns} ns, {s.tick_steps} steps per tick, at "
                    f"step {s.step}; the chain runs {first.dt_ns} ns, {first.tick_steps} steps per tick, "
                    f"at step {first.step}",
                    key="sim_setpoint_rate_hz",
                    value=arm.name,
                )

    def __iter__(self) -> Iterator[ChainArm]:
        return iter(self.arms.values())

    def __getitem__(self, name: str) -> ChainArm:
        return self.arms[name]

    @property
    def tick_ns(self) -> int:
        """The tick the clock shows [ns] (the same on every arm)."""
        return next(iter(self.arms.values())).schedule.tick_ns

    def enable(self) -> None:
        """:meth:`ChainArm.enable` on every arm."""
        for arm in self:
            arm.enable()

    def run_tick(self) -> None:
        """Run the current tick's physics steps on every arm (give each its
        :meth:`ChainArm.command` first); the clock then shows the next tick."""
        for arm in self:
            arm.driver.run_tick()

    def close(self) -> None:
        """Close every arm (idempotent)."""
        for arm in self:
            arm.close()
