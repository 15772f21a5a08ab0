"""TimerPlan: the bridge's loop timer re-armed after each send decision fires only when a
command waits or commands stop; the send rule's decisions are unchanged (timed event
sequences on a simulated rcl timer, no real clock)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.mit.send_schedule import BURST, KEEPALIVE_AFTER, SLACK, SendSchedule
from gravity_friction_comp.mit.timer_plan import TimerPlan

T = 1e-3  # [s] rate_hz 1000


class RclLikeTimer:
    """An rcl timer on a simulated clock: ``reset`` makes the next call ``now + period``; a
    call moves it on by whole periods past the call time (missed periods skipped)."""

    def __init__(self, clock: list[float], period: float) -> None:
        self._clock = clock
        self.timer_period_ns = math.ceil(period * 1e9)
        self.next = clock[0] + period

    def reset(self) -> None:
        self.next = self._clock[0] + self.timer_period_ns * 1e-9

    def fire(self) -> None:
        period = self.timer_period_ns * 1e-9
        self.next += period
        if self.next <= self._clock[0]:
            self.next += math.ceil((self._clock[0] - self.next) / period + 1e-12) * period


def run(commands, end: float, plan: bool = True, start: float = 0.0):
    """Commands at ``commands`` [s] into a schedule whose timer (period T from ``start``) is
    re-armed by a TimerPlan (``plan=False``: the fixed-rate timer of before); returns the
    schedule and the (time, kind, sent) events, kind ``c`` command or ``|`` tick."""
    clock = [start]
    schedule = SendSchedule(T)
    timer = RclLikeTimer(clock, T)
    tp = TimerPlan(schedule, timer) if plan else None
    pending = sorted(commands)
    out = []
    k = 0
    while True:
        c = pending[k] if k < len(pending) else math.inf
        t = min(c, timer.next)
        if t > end:
            return schedule, out
        clock[0] = t
        if c <= timer.next:
            k += 1
            out.append((t, "c", schedule.command(t)))
            if tp is not None:
                tp.command(t)
        else:
            timer.fire()
            out.append((t, "|", schedule.tick(t)))
            if tp is not None:
                tp.tick(t)


def _ticks(out, lo=-math.inf, hi=math.inf):
    return [(t, sent) for t, kind, sent in out if kind == "|" and lo <= t < hi]


def test_commands_flowing_the_timer_never_fires_stopped_it_feeds_every_period():
    rng = np.random.default_rng(4)
    for jitter in (0.0, 0.1 * T, 0.2 * T):
        # the first command half a period after a start-up hold: 0.5 credit in hand, so none
        # early by the jitter waits (a waiting command's tick is the next test's)
        commands = list(5.5 * T + np.arange(2000) * T + rng.uniform(-jitter, jitter, 2000))
        last = commands[-1]
        end = last + 0.3
        schedule, out = run(commands, end)
        _, before_out = run(commands, end, plan=False)
        flowing = _ticks(out, commands[0] + 1e-9, last)
        assert flowing == [], jitter  # no tick while commands flow ...
        assert len(_ticks(before_out, commands[0], last)) > 1990  # ... the fixed-rate timer: every period
        sent = [s for _, kind, s in out if kind == "c"]
        assert all(sent) and schedule.deferred == 0  # every command leaves on arrival
        stopped = _ticks(out, last)
        fed = np.array([t for t, s in stopped if s])
        assert fed[0] == pytest.approx(last + KEEPALIVE_AFTER * T)  # the keep-alive after 2 periods
        assert len(fed) == len(stopped) >= 0.3 / T - 3  # then one every period, every tick feeds
        assert np.diff(fed).max() <= 1.0001 * T


def test_a_waiting_command_goes_when_the_credit_is_back_no_later_than_the_fixed_timer():
    stall = [0.0, T, 4 * T, 4 * T + 1e-5, 4 * T + 2e-5]  # a stall: three commands back to back
    schedule, out = run(stall, 0.02)
    assert (schedule.on_arrival, schedule.on_tick, schedule.deferred) == (4, 1, 1)
    waited = next(t for t, kind, s in out if kind == "|" and s and t > 4 * T)
    # credit after the two: 1.05·1e-5/T at 4T + 1e-5, growing 1.05 per period: back to 1 then
    assert waited == pytest.approx(
        4 * T + 1e-5 + (1.0 - (1.0 + SLACK) * 1e-5 / T) / (1.0 + SLACK) * T, abs=2e-9
    )
    old, old_out = run(stall, 0.02, plan=False)
    old_waited = next(t for t, kind, s in old_out if kind == "|" and s and t > 4 * T)
    assert waited <= old_waited + 1e-9


@pytest.mark.parametrize("rate", [0.3, 0.7, 1.0, 1.5, 3.0])
def test_the_send_budget_and_the_feeding_hold_for_any_command_stream(rate):
    """Faster, equal and slower random streams with stalls: at most 2 exchanges back to back,
    ⌊BURST + n·(1 + SLACK)⌋ in any n periods, never more than 2 periods without an exchange."""
    rng = np.random.default_rng(int(rate * 10))
    for _ in range(20):
        n = int(rng.integers(100, 500))
        commands = np.cumsum(rng.exponential(T / rate, n))
        stall = rng.integers(1, n, 4)
        commands[stall] = commands[stall - 1] + 1e-6
        commands = np.sort(commands)
        schedule, out = run(list(commands), commands[-1] + 20 * T)
        times = np.array([t for t, _, s in out if s])
        for periods in (1, 2, 5, 20):
            most = max(np.searchsorted(times, times + periods * T - 1e-12) - np.arange(len(times)))
            assert most <= math.floor(BURST + periods * (1.0 + SLACK) - 1e-9)
        assert max(np.searchsorted(times, times + 0.95 * T) - np.arange(len(times))) <= 2
        assert np.diff(times).max() <= 2.0 * T * (1 + 1e-5)  # the motors stay fed (ns rounding)
        assert schedule.on_arrival + schedule.on_tick + schedule.superseded == n


def test_no_command_yet_the_timer_holds_every_period_without_re_arming():
    schedule = SendSchedule(T)
    clock = [0.0]
    timer = RclLikeTimer(clock, T)
    plan = TimerPlan(schedule, timer)
    for _ in range(10):
        clock[0] = timer.next
        timer.fire()
        assert schedule.tick(clock[0])
        plan.tick(clock[0])
    assert plan.rearms == 0 and timer.timer_period_ns == 1_000_000
