"""Log throttling: a message passes once per period per key (the nodes' throttled warnings)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

__all__ = ["Throttle"]


class Throttle:
    """Lets a message through once per ``period`` seconds per key (for log throttling).

    Args:
        period: Minimum time between two passes of the same key [s].
        clock: Callable returning the current time [s] (monotonic by default).
    """

    def __init__(self, period: float = 2.0, clock: Callable[[], float] | None = None):
        self._period = period
        self._clock = clock or time.monotonic
        self._last: dict[str, float] = {}

    def ready(self, key: str) -> bool:
        """True when ``key`` has not passed within the last ``period`` seconds."""
        now = self._clock()
        last = self._last.get(key, -math.inf)
        if now - last >= self._period:
            self._last[key] = now
            return True
        return False
