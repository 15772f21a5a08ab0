"""Diagnosis counters of a bridge process in a bench run: CPU per thread, send decisions, cost.

Used by ``end_to_end_latency.py`` inside the bridge's process (the child): between
:meth:`BridgeProbe.start` (the parent signals the start of the measured span) and
:meth:`BridgeProbe.figures`, it counts

- CPU time of each thread of the process, from ``/proc/self/task/<tid>/stat`` (utime +
  stime), as a fraction of one core over the span, grouped by role (the executor's main
  thread, the simulated arm's physics thread when in-process, DDS threads, the tap);
  the Python threads share one GIL, so their sum near 100 % means the process is saturated;
- the :class:`~gravity_friction_comp.mit.send_schedule.SendSchedule` decisions per second
  (timer ticks, exchanges on arrival / of a waiting command / keep-alive, commands that
  waited, superseded commands);
- the wall time of each frame exchange (drain, ``MitBridgeCore.step``, send, publish
  ``joint_states``), and the bridge's recent timer periods.

:class:`Arrivals` records when each setpoint reached the chain in this process (the wall
clock of its first callback), so the bench splits a setpoint's latency into the way there
(DDS, and the wait for this process's executor) and the chain's own work until its frame.

Storage is pre-allocated and written through at construction, so the process's RSS growth
stays the chain's.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np

__all__ = ["Arrivals", "BridgeProbe", "Sequence", "thread_cpu"]

_TICK = os.sysconf("SC_CLK_TCK")
_COUNTERS = ("ticks", "on_arrival", "on_tick", "keepalive", "deferred", "superseded")


def _role(name: str) -> str:
    if name == "MainThread":
        return "main"
    if name == "simulated_motor_bus":
        return "sim arm"
    if name == "e2e_tap":
        return "tap"
    if name.startswith("dds"):
        return "DDS"
    return "other"


def thread_cpu() -> dict[str, float]:
    """CPU seconds used so far by this process's threads, summed by role (see module doc)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        role = _role(names.get(int(tid), comm))
        out[role] = out.get(role, 0.0) + (int(fields[11]) + int(fields[12])) / _TICK
    return out


class BridgeProbe:
    """Counts of one :class:`~gravity_friction_comp.nodes.mit_bridge_node.MitBridgeNode`
    (see the module docstring); wraps its exchange to time it."""

    CAPACITY = 2_000_000  # exchanges timed (≥ a 600 s soak at 1 kHz plus warm-up)

    def __init__(self, bridge) -> None:
        self._bridge = bridge
        self._durations = np.full(self.CAPACITY, np.nan)
        self._n = 0
        self._start: tuple | None = None
        exchange = bridge._exchange  # noqa: SLF001 - the bench's own instrumentation

        def timed(now: float) -> None:
            t = time.perf_counter()
            exchange(now)
            if self._n < self.CAPACITY:
                self._durations[self._n] = time.perf_counter() - t
                self._n += 1

        bridge._exchange = timed  # noqa: SLF001

    def _counters(self) -> tuple[int, ...]:
        s = self._bridge.send_schedule
        return tuple(getattr(s, c) for c in _COUNTERS)

    def start(self) -> None:
        """The measured span starts now."""
        self._start = (time.monotonic(), thread_cpu(), self._counters(), self._n)

    def figures(self) -> dict[str, float]:
        """Figures of the span since :meth:`start` (empty before it): ``cpu <role>`` [%
        of one core], ``<counter>/s``, ``exchange p50/p99 us``, ``period p50/p99 ms``."""
        if self._start is None:
            return {}
        t0, cpu0, counters0, n0 = self._start
        span = max(time.monotonic() - t0, 1e-9)
        out: dict[str, float] = {}
        for role, seconds in thread_cpu().items():
            out[f"cpu {role}"] = 100.0 * (seconds - cpu0.get(role, 0.0)) / span
        for name, a, b in zip(_COUNTERS, counters0, self._counters()):
            out[f"{name}/s"] = (b - a) / span
        durations = self._durations[n0 : self._n] * 1e6
        if len(durations):
            out["exchange p50 us"], out["exchange p99 us"] = np.percentile(durations, [50, 99])
        periods = self._bridge.loop_periods() * 1e3
        if len(periods):
            out["period p50 ms"], out["period p99 ms"] = np.percentile(periods, [50, 99])
        return out


class Sequence:
    """(time [s], sequence code) pairs in pre-filled arrays (written through at start, so the
    process's RSS growth stays the chain's; a Python list of 120 000 floats alone is ~7 MB);
    beyond :attr:`CAPACITY` nothing more is kept."""

    CAPACITY = BridgeProbe.CAPACITY

    def __init__(self) -> None:
        self._times = np.full(self.CAPACITY, np.nan)
        self._codes = np.full(self.CAPACITY, -1, dtype=np.int64)
        self.count = 0

    def record(self, t: float, code: int) -> None:
        if self.count < self.CAPACITY:
            self._times[self.count], self._codes[self.count] = t, code
            self.count += 1

    @property
    def times(self) -> np.ndarray:
        return self._times[: self.count]

    @property
    def codes(self) -> np.ndarray:
        return self._codes[: self.count]


class Arrivals(Sequence):
    """``time.time()`` and sequence code of each call of a wrapped callback (see the module
    docstring); ``code_of(*args)`` gives the code, ``None`` = not a sequenced setpoint."""

    def wrap(self, call, code_of):
        """``call`` that first records the time and ``code_of`` of its arguments."""

        def recorded(*args, **kwargs):
            t = time.time()
            code = code_of(*args, **kwargs)
            if code is not None:
                self.record(t, code)
            return call(*args, **kwargs)

        return recorded


def describe(fig: dict[str, float]) -> str:
    """One line of :meth:`BridgeProbe.figures` for the bench's output."""
    if not fig:
        return ""
    cpu = ", ".join(
        f"{k[4:]} {v:.0f}%"
        for k, v in sorted(fig.items(), key=lambda kv: -kv[1])
        if k.startswith("cpu ") and v >= 0.5
    )
    return (
        f"  bridge process CPU (of one core): {cpu}\n"
        f"  timer {fig['ticks/s']:.0f} ticks/s, period p50 {fig.get('period p50 ms', float('nan')):.2f}"
        f" / p99 {fig.get('period p99 ms', float('nan')):.2f} ms | exchanges/s: on arrival "
        f"{fig['on_arrival/s']:.0f}, waiting command on a tick {fig['on_tick/s']:.0f}, keep-alive "
        f"{fig['keepalive/s']:.0f}; each p50 {fig.get('exchange p50 us', float('nan')):.0f} / p99 "
        f"{fig.get('exchange p99 us', float('nan')):.0f} us | commands waited {fig['deferred/s']:.0f}/s, "
        f"superseded {fig['superseded/s']:.0f}/s"
    )
