"""When the bridge exchanges frames: a command at once, the timer only when commands stop.

One *exchange* = one frame per motor (:meth:`MitBridgeCore.step`). ``T = 1/rate_hz``.
Rule, on the caller's monotonic clock:

- **Budget** (a token bucket): credit grows by ``1 +`` :data:`SLACK` per period ``T``
  (5 % above ``rate_hz``), capped at :data:`BURST` = 2; every exchange needs credit ≥ 1
  and spends 1. So any ``n`` consecutive periods hold at most ``⌊2 + 1.05·n⌋`` exchanges:
  at most two back to back (a late command, then the next on time), a third no sooner
  than 0.95 of a period after them, on average at most ``1.05 × rate_hz``; a command up to
  one period early against the others still finds its credit. Why the slack: with commands at exactly ``rate_hz`` a budget that
  refills at ``rate_hz`` never gets back what a burst spent (a keep-alive just before the
  stream, the queued commands after a stall): every later command then waits for the
  credit of the one before, each one early by its jitter waits for a tick or is superseded
  by the next (simulated: 3,653 of 40,000 jittered commands waited; measured end to end:
  189 commands waited per second of 500). With 5 % the debt is repaid within
  ``jitter / (SLACK·T)`` periods (e.g. 6 for a jitter of 0.3 periods).
- **Command** (:meth:`SendSchedule.command`): exchange at once when the budget allows;
  otherwise it *waits* (the next tick sends it when the budget allows; a newer command
  arriving first *supersedes* it: that one is never sent).
- **Tick** of the timer at ``rate_hz`` (:meth:`SendSchedule.tick`): sends a waiting
  command when the budget allows, else a *keep-alive* (the last command again: the motors
  stay fed, the watchdog runs) when no command came for :data:`KEEPALIVE_AFTER` = 2 periods
  and the credit is full (a period or more since the last exchange): a keep-alive leaves
  a whole credit, so the next command never waits for it. Commands stopped: a keep-alive
  every tick whose period was full, at least every second tick. (When commands start again
  shortly after a keep-alive, their stream starts with one credit, not two: until the
  slack refills it, a command early by jitter against the first may wait for a tick.)

Why not one exchange per timer window: the timer's ticks are late and skipped under load
(at 1 kHz the bridge's timer reached 440 ticks/s in the composed chain), so one window held
several commands and all but the first waited or were superseded. A keep-alive while commands
still flow would spend the credit of a command that is merely late, so it waits for 2
periods of silence. No rclpy here: the caller says what happened and when.
"""

from __future__ import annotations

__all__ = ["BURST", "KEEPALIVE_AFTER", "SLACK", "SendSchedule"]

#: Budget refill above ``rate_hz`` [fraction]: a stream at ``rate_hz`` repays a burst's debt.
SLACK = 0.05
#: Credit cap [exchanges]: a late command and the next one on time both go at once (a cap
#: below 2 made the second wait for a tick, and a third taken meanwhile superseded it).
BURST = 2.0
#: [periods] No command for this long: the timer sends keep-alives (commands stopped/slow).
KEEPALIVE_AFTER = 2.0


class SendSchedule:
    """The send decision of :mod:`send_schedule` (see there); counts what it decided.

    Args:
        period: ``T`` [s], the bridge's ``1/rate_hz`` (> 0).

    Raises:
        ValueError: ``period`` not positive.
    """

    def __init__(self, period: float) -> None:
        if not period > 0.0:
            raise ValueError(f"period must be > 0 s, got {period!r}")
        self.period = float(period)
        self._refill = (1.0 + SLACK) / self.period  # [credit/s]
        self._credit = BURST
        self._credit_at: float | None = None  # time of the last credit update
        self._last_command: float | None = None
        self._waiting = False
        #: Exchanges started by a command (sent on arrival).
        self.on_arrival = 0
        #: Exchanges of the timer carrying a command that waited.
        self.on_tick = 0
        #: Keep-alive exchanges of the timer (no command for 2 periods).
        self.keepalive = 0
        #: Commands that had to wait (budget spent).
        self.deferred = 0
        #: Waiting commands replaced by a newer one before they were sent (never sent).
        self.superseded = 0
        #: Timer ticks seen.
        self.ticks = 0

    @property
    def waiting(self) -> bool:
        """A command waits for the send budget (the next tick that finds credit sends it)."""
        return self._waiting

    def next_due(self, now: float) -> float:
        """The earliest time [s] at which :meth:`tick` would exchange if no command comes
        first: a waiting command when the credit reaches 1, else the keep-alive (2 periods
        after the last command, with a full credit). Reads the state; changes nothing."""
        credit = self._credit_at_time(now)
        if self._waiting:
            return now + max(1.0 - credit, 0.0) / self._refill
        full = now + max(BURST - credit, 0.0) / self._refill
        if self._last_command is None:
            return full
        return max(full, self._last_command + KEEPALIVE_AFTER * self.period)

    def _credit_at_time(self, now: float) -> float:
        """The credit at ``now`` [s]: grown by 1 + SLACK per period since the last update, capped."""
        if self._credit_at is None:
            return self._credit
        return min(BURST, self._credit + max(now - self._credit_at, 0.0) * self._refill)

    def _allowed(self, now: float) -> bool:
        self._credit, self._credit_at = self._credit_at_time(now), now
        return self._credit >= 1.0 - 1e-9  # float sums of exact periods land just below 1

    def _spend(self, now: float) -> None:
        self._credit -= 1.0
        self._waiting = False

    def command(self, now: float) -> bool:
        """A command arrived at ``now`` [s]: ``True`` = exchange now; ``False`` = it waits."""
        self._last_command = now
        if self._waiting:
            self.superseded += 1  # the waiting one is replaced by this newer command
        if self._allowed(now):
            self._spend(now)
            self.on_arrival += 1
            return True
        self._waiting = True
        self.deferred += 1
        return False

    def tick(self, now: float) -> bool:
        """The timer ticked at ``now`` [s]: ``True`` = exchange now (a waiting command, or a
        keep-alive after 2 periods without a command)."""
        self.ticks += 1
        if self._waiting:
            if self._allowed(now):
                self._spend(now)
                self.on_tick += 1
                return True
            return False
        # 1e-9 s: as in _allowed, sums of exact periods on a large monotonic clock land just below
        silent = (
            self._last_command is None or now - self._last_command >= KEEPALIVE_AFTER * self.period - 1e-9
        )
        if silent and self._allowed(now) and self._credit >= BURST - 1e-9:
            self._spend(now)
            self.keepalive += 1
            return True
        return False
