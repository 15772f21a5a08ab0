"""When the bridge exchanges frames: at once for a new command, at most once per timer period.

The bridge's timer ticks every ``1/rate_hz``; the time between two ticks is one *window*.
Rule: at most one frame exchange (one frame per motor, :meth:`MitBridgeCore.step`) per
window, the tick's own exchange counting in the window it closes:

- a command that arrives in a window without an exchange is sent at once
  (:meth:`SendSchedule.command` returns ``True``);
- a command that arrives after this window's exchange waits: the next command (newer) or
  the tick closing the next window carries it;
- a tick closing a window without an exchange sends one (commands stopped or slower than
  ``rate_hz``: the motors stay fed, the watchdog runs).

So commands at up to ``rate_hz`` leave on arrival, and the bus never sees more than one
frame per motor per timer period. Two exchanges of adjacent windows can be closer than a
period (a tick's exchange, then a command right after it): the rate stays ``rate_hz`` at
most, counted per window. No clock here: the caller says what happened, in order.
"""

from __future__ import annotations

__all__ = ["SendSchedule"]


class SendSchedule:
    """The send decision of :mod:`send_schedule` (see there); counts what it decided."""

    def __init__(self) -> None:
        self._sent_in_window = False
        #: Exchanges started by a command (sent on arrival).
        self.on_arrival = 0
        #: Exchanges started by the timer (keep-alive / a waiting command).
        self.on_tick = 0
        #: Commands that arrived after their window's exchange (sent later or superseded).
        self.deferred = 0

    def command(self) -> bool:
        """A command arrived: ``True`` = exchange now (its window had none yet)."""
        if self._sent_in_window:
            self.deferred += 1
            return False
        self._sent_in_window = True
        self.on_arrival += 1
        return True

    def tick(self) -> bool:
        """The timer ticked (closing a window): ``True`` = exchange now (the window had none).

        Either way a new window starts.
        """
        send = not self._sent_in_window
        self._sent_in_window = False
        if send:
            self.on_tick += 1
        return send
