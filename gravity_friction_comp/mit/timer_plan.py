"""When the bridge's loop timer fires: only when a command waits or commands stop.

The send rule (:mod:`~gravity_friction_comp.mit.send_schedule`) needs a tick for two things
only: a command that waits for the send budget, and the keep-alive once no command came for
:data:`~gravity_friction_comp.mit.send_schedule.KEEPALIVE_AFTER` = 2 periods. A timer at
``rate_hz`` regardless of the commands woke the executor about twice per setpoint (the
command, then a tick that found nothing to do): an empty tick costs the EventsExecutor's
thread ~50 µs, a third of a bare relay's whole message. So after every decision the plan
re-arms the timer (``reset``, with a new period when it changes) to the schedule's
:meth:`~gravity_friction_comp.mit.send_schedule.SendSchedule.next_due`:

- a command exchanged on arrival: the timer fires 2 periods later (the keep-alive moment);
  the next command, one period later, re-arms it again, so while commands flow it never fires;
- a command that waits: the timer fires when the credit reaches 1 (sooner than the next
  tick of a fixed-rate timer would on average);
- a keep-alive (commands stopped): back to period ``T``, ticking periodically as before (a
  tick too soon after the last keep-alive is skipped by the rule, the next one feeds).

Every decision stays the schedule's: the plan only chooses when :meth:`SendSchedule.tick`
is asked. No rclpy here: ``timer`` is anything with ``timer_period_ns`` (settable) and
``reset()`` (an rclpy ``Timer``: ``reset`` makes the next call ``now + period``).
"""

from __future__ import annotations

import math
from typing import Protocol

from gravity_friction_comp.mit.send_schedule import SendSchedule

__all__ = ["ArmableTimer", "TimerPlan"]

#: [ns] Shortest period armed (a waiting command whose credit is back already).
MIN_PERIOD_NS = 1_000


class ArmableTimer(Protocol):
    """What the plan needs of a timer (an rclpy ``Timer`` has it)."""

    timer_period_ns: int

    def reset(self) -> None: ...


class TimerPlan:
    """Re-arms ``timer`` after each decision of ``schedule`` (see the module docstring).

    Args:
        schedule: The bridge's send schedule (its period ``T`` is the timer's start period).
        timer: The loop timer, created with period ``T``.

    Attributes:
        rearms: Times the timer was re-armed (``reset``).
    """

    def __init__(self, schedule: SendSchedule, timer: ArmableTimer) -> None:
        self._schedule = schedule
        self._timer = timer
        self._period_ns = math.ceil(schedule.period * 1e9)
        self._armed_ns = self._period_ns
        self.rearms = 0

    def _arm(self, delay: float) -> None:
        ns = max(math.ceil(delay * 1e9), MIN_PERIOD_NS)  # never before the schedule's time
        if ns != self._armed_ns:
            self._timer.timer_period_ns = ns
            self._armed_ns = ns
        self._timer.reset()
        self.rearms += 1

    def command(self, now: float) -> None:
        """After :meth:`SendSchedule.command` at ``now`` [s] (sent or waiting)."""
        self._arm(self._schedule.next_due(now) - now)

    def tick(self, now: float) -> None:
        """After :meth:`SendSchedule.tick` at ``now`` [s]."""
        schedule = self._schedule
        delay = schedule.next_due(now) - now
        if schedule.waiting or delay > schedule.period * (1.0 + 1e-6):  # a command's own time
            self._arm(delay)
        elif self._armed_ns != self._period_ns:  # commands stopped: periodic keep-alives again
            self._arm(schedule.period)
