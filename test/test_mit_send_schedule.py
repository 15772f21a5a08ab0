"""SendSchedule: a command leaves on arrival, the timer only fills a period without an
exchange, never two exchanges in one timer period (sequences of events, no clock)."""

from __future__ import annotations

import numpy as np

from gravity_friction_comp.mit.send_schedule import SendSchedule


def _run(events: str) -> list[int]:
    """Exchanges per timer window for an event string: ``c`` command, ``|`` tick (the tick's
    exchange counts in the window it closes)."""
    schedule, per_window, count = SendSchedule(), [], 0
    for e in events:
        if e == "c":
            count += schedule.command()
        else:
            count += schedule.tick()
            per_window.append(count)
            count = 0
    return per_window


def test_commands_at_the_rate_leave_on_arrival_and_the_timer_stays_quiet():
    schedule = SendSchedule()
    for _ in range(100):
        assert schedule.command()  # sent at once
        assert not schedule.tick()  # that window had its exchange
    assert (schedule.on_arrival, schedule.on_tick, schedule.deferred) == (100, 0, 0)


def test_faster_commands_one_exchange_per_window():
    assert _run("ccc|cc|c|") == [1, 1, 1]
    schedule = SendSchedule()
    assert [schedule.command() for _ in range(3)] == [True, False, False]
    assert schedule.deferred == 2


def test_commands_stop_the_timer_keeps_the_motors_fed_every_period():
    assert _run("c|c|||||") == [1, 1, 1, 1, 1, 1]


def test_slower_commands_still_leave_on_arrival():
    schedule = SendSchedule()
    out = []
    for _ in range(20):
        out.append(schedule.command())  # a command mid-window after a keep-alive tick
        for _ in range(4):
            schedule.tick()
    assert all(out) and schedule.on_tick == 20 * 3


def test_random_event_orders_never_two_exchanges_in_a_window():
    rng = np.random.default_rng(18)
    for _ in range(200):
        events = "".join(rng.choice(["c", "|"], size=60, p=[0.6, 0.4]))
        windows = _run(events + "|")
        assert max(windows) <= 1
        # every window is fed: a tick closing an empty window sends
        assert min(windows) == 1
