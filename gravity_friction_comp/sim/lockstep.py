"""Lockstep simulation: the simulated arm advances only when the chain has answered, on its own clock.

ROS-free. :class:`LockstepSchedule` is the bookkeeping on simulated time (integer
nanoseconds, physics step ``dt``): the clock ticks every ``tick_steps`` physics steps (one
setpoint per tick is expected); a tick's physics runs only once the command answering that
tick's setpoint (matched on the stamp the stages pass through) is in; a command stamped ``T``
is in force from step ``T/dt + delay_steps`` (the modelled transport delay); the MIT frame
exchange happens every ``exchange_steps`` steps (the bridge's ``rate_hz``). A holding change
received during tick ``m`` takes effect at tick ``m + 1``, together with the stages' answer to
it. :class:`LockstepDriver` runs one tick of the bridge core against the emulated motors in
a fixed order (commands due → frames out → motors answer and physics steps → replies in), so
the result is a function of the inputs alone. :class:`~gravity_friction_comp.mit.bus.CanFrameIO` is the bridge's bus
without a Notifier thread (frames are read when the driver asks, never by another thread).

Time model (step ``j`` at ``t_j = j·dt``): the clock shows tick ``T_m = m·tick_steps·dt``
while the arm is at step ``m·tick_steps``; the answer to the setpoint stamped ``T_m`` lets
steps ``m·tick_steps … (m+1)·tick_steps − 1`` run, then the clock shows ``T_{m+1}``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.bus import CanFrameIO
from gravity_friction_comp.sim.bus import SimulatedMotorBus

__all__ = [
    "LockstepDriver",
    "LockstepSchedule",
    "StallCheck",
    "TickWait",
    "machine_busy_seconds",
    "stall_reason",
    "whole_steps",
]

#: [cores] averaged over the wait: the machine did less work than this while no answer came,
#: so nothing was computing it (a live, runnable chain would have had the idle cores).
IDLE_BUSY_CORES = 0.5
#: [s] wall a topic must stay without any publisher (after it had one) to count as gone.
GONE_AFTER = 1.0


def machine_busy_seconds(path: str = "/proc/stat") -> float | None:
    """CPU seconds all cores spent not idle since boot (Linux ``/proc/stat``: everything but
    ``idle``; iowait and steal count as busy, a chain waiting on them is not dead), or
    ``None`` where it cannot be read."""
    try:
        with open(path, encoding="ascii") as f:
            fields = f.readline().split()
        ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    except (OSError, ValueError):
        return None
    if not fields or fields[0] != "cpu" or len(ticks) < 4:
        return None
    return (sum(ticks) - ticks[3]) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class StallCheck:
    """What the lockstep watchdog observes while the clock waits for an answer.

    Attributes:
        waited: Wall time since the last answered tick [s].
        busy_cores: Machine CPU use averaged over the wait [cores] (all processes), or
            ``None`` when unknown.
        publishers: Publishers on the awaited topic now.
        had_publisher: The awaited topic had a publisher before (seen, or a message came).
        no_publisher_for: Wall time the awaited topic has had no publisher [s] (0 if it has).
        answered: The chain answered at least one tick.
    """

    waited: float
    busy_cores: float | None
    publishers: int
    had_publisher: bool
    no_publisher_for: float
    answered: bool


def stall_reason(check: StallCheck, timeout: float, start_timeout: float, limit: float) -> str | None:
    """Whether a waiting lockstep chain is dead, and by what: a slow chain is not.

    ``"gone"``: the awaited topic lost its last publisher (a node exited) :data:`GONE_AFTER`
    ago, whatever the load. ``"idle"``: no answer for ``timeout`` [s] (before the first
    answer ``start_timeout``) while the whole machine did under :data:`IDLE_BUSY_CORES` of
    work: nothing was computing the answer. ``"limit"``: no answer for ``limit`` [s], the
    last resort when a busy machine hides a hung stage. ``None``: keep waiting (alive, or
    starved by other work).
    """
    if check.publishers == 0 and check.had_publisher and check.no_publisher_for >= GONE_AFTER:
        return "gone"
    if check.waited >= limit:
        return "limit"
    idle = check.busy_cores is not None and check.busy_cores < IDLE_BUSY_CORES
    if idle and check.waited >= (timeout if check.answered else start_timeout):
        return "idle"
    return None


def whole_steps(period_s: float, dt_s: float, key: str, *, allow_zero: bool = False) -> int:
    """``period_s`` in whole physics steps of ``dt_s`` (rounded; ≥ 1 unless ``allow_zero``).

    Raises:
        ConfigError: the period is not within 1e-6 of a whole number of steps (key ``key``),
            rounds to 0 steps when not allowed, or is no finite number of steps.
    """
    steps = period_s / dt_s
    if not math.isfinite(steps):  # int(round(inf)) raised OverflowError (sim_delay 1e308)
        raise ConfigError(
            f"{key}: {period_s:g} s is not a finite number of physics steps of {dt_s:g} s",
            key=key,
            value=period_s,
        )
    n = int(round(steps))
    if abs(steps - n) > 1e-6 * max(1.0, steps) or n < (0 if allow_zero else 1):
        raise ConfigError(
            f"{key}: {period_s:g} s is not a whole number of physics steps of {dt_s:g} s "
            f"({steps:.4g}); choose rates that divide the physics rate",
            key=key,
            value=period_s,
        )
    return n


@dataclass
class _Pending:
    apply_step: int
    value: Any


class LockstepSchedule:
    """Simulated time and what is due when (see the module docstring).

    Args:
        dt_ns: Physics step [ns] (> 0).
        tick_steps: Physics steps per clock tick (≥ 1; the setpoint period).
        exchange_steps: Physics steps per MIT frame exchange (≥ 1; the bridge period).
        delay_steps: Modelled transport delay of a command [steps] (≥ 0).

    Raises:
        ConfigError: a non-positive step or count.
    """

    def __init__(self, dt_ns: int, tick_steps: int, exchange_steps: int, delay_steps: int):
        for key, value, low in (
            ("dt_ns", dt_ns, 1),
            ("tick_steps", tick_steps, 1),
            ("exchange_steps", exchange_steps, 1),
            ("delay_steps", delay_steps, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"{key} must be an integer ≥ {low}, got {value!r}", key=key, value=value)
        self.dt_ns, self.tick_steps = dt_ns, tick_steps
        self.exchange_steps, self.delay_steps = exchange_steps, delay_steps
        self.step = tick_steps  # the clock starts at the first tick (time 0 means "unset" in ROS)
        self.answered_ns = -1  # newest command stamp received
        self._commands: list[_Pending] = []
        self._holding: _Pending | None = None

    @property
    def now_ns(self) -> int:
        """Simulated time of the current step [ns]."""
        return self.step * self.dt_ns

    @property
    def tick_ns(self) -> int:
        """The tick the clock shows [ns] (the current step is at a tick between ticks' runs)."""
        return (self.step // self.tick_steps) * self.tick_steps * self.dt_ns

    def tick_answered(self) -> bool:
        """The command answering the current tick's setpoint has arrived."""
        return self.answered_ns >= self.tick_ns

    def add_command(self, stamp_ns: int, command: Any) -> int:
        """Queue ``command`` stamped ``stamp_ns``; returns the step it takes effect at.

        A stamp that is no whole step (or 0, unstamped) counts from the current step; a
        command due in the past (a late duplicate) takes effect at the current step.
        """
        base = stamp_ns // self.dt_ns if stamp_ns > 0 else self.step
        apply_step = max(base + self.delay_steps, self.step)
        self._commands.append(_Pending(apply_step, command))
        if stamp_ns > self.answered_ns:
            self.answered_ns = stamp_ns
        return apply_step

    def set_holding(self, holding: bool) -> int:
        """A holding change received now takes effect at the next tick; returns that step."""
        apply_step = (self.step // self.tick_steps + 1) * self.tick_steps
        self._holding = _Pending(apply_step, bool(holding))
        return apply_step

    def due_command(self) -> Any:
        """The newest command due at the current step (``None`` when none became due)."""
        due = None
        keep = []
        for pending in self._commands:
            if pending.apply_step <= self.step:
                due = pending.value
            else:
                keep.append(pending)
        self._commands = keep
        return due

    def due_holding(self) -> bool | None:
        """The holding state due at the current step (``None`` when no change is due)."""
        if self._holding is not None and self._holding.apply_step <= self.step:
            value, self._holding = self._holding.value, None
            return value
        return None

    def exchange_now(self) -> bool:
        """The MIT frame exchange happens at the current step."""
        return self.step % self.exchange_steps == 0

    def last_exchange_ns(self) -> int:
        """Simulated time [ns] of the last frame exchange of the tick before the current one
        (the tick just run): each bridge of a lockstep publishes its state stamped so while it
        runs that tick (:class:`TickWait`); earlier than that tick's start when no exchange
        falls in it (``exchange_steps > tick_steps``)."""
        end = self.step // self.tick_steps * self.tick_steps  # the current tick's first step
        return (end - 1) // self.exchange_steps * self.exchange_steps * self.dt_ns

    def follow(self, stamp_ns: int) -> bool:
        """Move on, without physics, to the tick of ``stamp_ns`` when it is ahead (the bridge
        owning the clock ticked idle before the chain's first answer, its arm frozen); never
        back. Returns whether the clock moved."""
        step = stamp_ns // self.dt_ns // self.tick_steps * self.tick_steps
        if step <= self.step:
            return False
        self.step = step
        return True


class TickWait:
    """One lockstep, one bridge per bus: what the bridge owning the clock waits for before it
    shows the next tick.

    The clock's own bridge runs each tick when its answer arrives; every other bridge of the
    lockstep (a peer, ``sim_lockstep_follow``) runs the same tick on the same answer and
    publishes its states on its own topic. The next tick may be shown once each peer has
    published a state stamped :meth:`LockstepSchedule.last_exchange_ns` (or later): it then
    ran the tick. Before the first tick each peer publishes its start state once it is ready
    (its ``joint_command`` subscription matched), and the clock starts only after all did.
    With one exchange per tick (``exchange_steps == tick_steps``) that start state, stamped
    at the first tick, stands for the first tick's (the same measured state: the tick's
    exchange reports the state before its physics step; the peer runs that tick on the
    answer it has queued).

    Args:
        schedule: The owning bridge's schedule (the same rates as every peer's).
        peers: The peers' state topics (non-empty, unique).

    Raises:
        ConfigError: no peer, a repeated one, or a tick without a frame exchange
            (``exchange_steps > tick_steps``: a peer would publish no state in it).
    """

    def __init__(self, schedule: LockstepSchedule, peers: Sequence[str]):
        if not peers or len(set(peers)) != len(peers):
            raise ConfigError(
                f"sim_lockstep_peers: the other bridges' state topics, non-empty and unique, got {list(peers)}",
                key="sim_lockstep_peers",
                value=list(peers),
            )
        if schedule.exchange_steps > schedule.tick_steps:
            raise ConfigError(
                f"one lockstep over several bridges needs a frame exchange in every tick: rate_hz "
                f"({schedule.exchange_steps} steps) must not be slower than sim_setpoint_rate_hz "
                f"({schedule.tick_steps} steps)",
                key="sim_lockstep_peers",
                value=list(peers),
            )
        self.schedule = schedule
        #: peer topic -> newest state stamp [ns] (-1: none yet)
        self.newest: dict[str, int] = dict.fromkeys(peers, -1)

    def seen(self, peer: str, stamp_ns: int) -> None:
        """A state of ``peer`` stamped ``stamp_ns`` [ns] arrived."""
        if stamp_ns > self.newest[peer]:
            self.newest[peer] = stamp_ns

    def not_ready(self) -> list[str]:
        """Peers that have not published their start state yet (the clock waits to start)."""
        return [p for p, ns in self.newest.items() if ns < 0]

    def not_done(self) -> list[str]:
        """Peers whose state of the tick just run has not come yet (the clock waits)."""
        need = self.schedule.last_exchange_ns()
        return [p for p, ns in self.newest.items() if ns < need]


Command = tuple[np.ndarray, np.ndarray, np.ndarray]


class LockstepDriver:
    """Runs the bridge core against the emulated motors one tick at a time.

    Args:
        schedule: The :class:`LockstepSchedule`.
        core: The bridge core (its frames go out on ``io``).
        io: The bridge's :class:`~gravity_friction_comp.mit.bus.CanFrameIO` (the same virtual channel as ``sim``),
            or bus name → its CanFrameIO (several buses: each bus's frames go out and come in
            on its own channel, ``core.step(now, bus)`` / ``ingest_feedback(..., bus)``).
        sim: The emulated motors and arm (never started: stepped here).
        on_state: Called after each frame exchange with the step's time [ns] (publish
            joint_states there).

    Attribute ``external`` (default ``None``): an
    :class:`~gravity_friction_comp.sim.external_effort.ExternalEffortSchedule` asked for the
    simulated hand's torque at every physics step.
    """

    def __init__(
        self,
        schedule: LockstepSchedule,
        core: MitBridgeCore,
        io: CanFrameIO | Mapping[str | None, CanFrameIO],
        sim: SimulatedMotorBus,
        on_state: Callable[[int], None],
    ):
        self.schedule, self.core, self.sim = schedule, core, sim
        # bus None: the only bus (every motor); else one entry per bus name
        self._ios: dict[str | None, CanFrameIO] = {}
        if isinstance(io, CanFrameIO):
            self._ios[None] = io
        else:
            self._ios.update(io)
        self.io = next(iter(self._ios.values()))
        self._on_state = on_state
        self._dt = schedule.dt_ns * 1e-9
        self.ticks = 0
        self.external: Any = None  # ExternalEffortSchedule: the simulated hand
        self._primed_ns = -1  # step time [ns] whose state prime() published

    def prime(self) -> None:
        """Exchange one round of frames at the current time without stepping the arm, so the
        measured start pose is on joint_states before the chain's first answer (a source that
        starts from the measured state, free drive, needs it; the tick's own exchange at the
        same step replaces these frames, so the physics is unchanged). Called again at the same
        step it publishes the same state again, without exchanging frames."""
        s, core = self.schedule, self.core
        if self._primed_ns == s.now_ns:
            self._on_state(s.now_ns)
            return
        now = s.now_ns * 1e-9
        for bus, io in self._ios.items():
            io.send(core.step(now, bus))
        self.sim.answer_frames()
        for bus, io in self._ios.items():
            for frame in io.drain():
                core.ingest_feedback(frame.arbitration_id, frame.data, now, bus)
        self._on_state(s.now_ns)
        self._primed_ns = s.now_ns  # the same state: not published again at this step

    def run_tick(self) -> None:
        """Run the physics steps of the current tick (call once it is answered)."""
        s, core = self.schedule, self.core
        for _ in range(s.tick_steps):
            now = s.now_ns * 1e-9
            holding = s.due_holding()
            if holding is not None:
                self.sim.set_holding(holding)
            command = s.due_command()
            if command is not None:
                position, velocity, effort = command
                core.set_command(position, velocity, effort, now)
            if self.external is not None:
                self.sim.set_external_effort(self.external.at(now))
            exchange = s.exchange_now()
            if exchange:
                for bus, io in self._ios.items():
                    io.send(core.step(now, bus))
            self.sim.run_once(self._dt)  # answers the frames (state at t_j), then steps
            if exchange:
                for bus, io in self._ios.items():
                    for frame in io.drain():
                        core.ingest_feedback(frame.arbitration_id, frame.data, now, bus)
                if s.now_ns != self._primed_ns:
                    self._on_state(s.now_ns)
            s.step += 1
        self.ticks += 1
