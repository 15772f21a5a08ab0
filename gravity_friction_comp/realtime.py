"""Real-time scheduling of the thread that runs a control loop (no ROS here).

On a loaded machine a normal-priority loop waits for a core behind every other runnable
process: at 1 kHz the bridge then takes its setpoints late and back to back, and the send
budget thins the stale ones (docs/latency.md). Linux's ``SCHED_FIFO`` runs the thread as soon
as it is runnable, ahead of every normal process. This is what ros2_control's
``controller_manager`` does with its ``thread_priority`` parameter (default 50 there):
``realtime_tools::configure_sched_fifo``, i.e. ``sched_setscheduler(0, SCHED_FIFO, prio)``
on the calling thread. Threads the thread starts afterwards inherit the policy.

Permission: root, ``CAP_SYS_NICE``, or an ``rtprio`` limit at least the priority
(``/etc/security/limits.conf``: ``@realtime - rtprio 99``, the user in group ``realtime``,
as ros2_control's docs describe). Without it the loop keeps the normal scheduler and the
caller gets the reason to log.
"""

from __future__ import annotations

import os

from gravity_friction_comp.errors import ConfigError

__all__ = ["MAX_THREAD_PRIORITY", "set_thread_priority", "validate_thread_priority"]

#: Highest ``SCHED_FIFO`` priority on Linux (``sched_get_priority_max(SCHED_FIFO)``).
MAX_THREAD_PRIORITY = 99


def validate_thread_priority(value: object, key: str = "thread_priority") -> int:
    """``value`` as a thread priority: 0 (the normal scheduler) or a ``SCHED_FIFO`` priority.

    Raises:
        ConfigError: not an integer in [0, :data:`MAX_THREAD_PRIORITY`] (``key`` named).
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_THREAD_PRIORITY:
        raise ConfigError(
            f"{key} must be an integer in [0, {MAX_THREAD_PRIORITY}] (0: normal scheduler), got {value!r}",
            key=key,
            value=value,
        )
    return value


def set_thread_priority(priority: int) -> tuple[bool, str]:
    """Run the calling thread under ``SCHED_FIFO`` at ``priority`` (0: leave it as it is).

    Args:
        priority: 0, or 1..99 (:func:`validate_thread_priority`).

    Returns:
        ``(applied, message)``: ``(False, "")`` for 0; ``(True, what was set)``; or
        ``(False, why not)`` (no permission, a platform without ``sched_setscheduler``):
        the thread then keeps its scheduler, the caller logs the message as a warning.

    Raises:
        ConfigError: an invalid ``priority`` (as :func:`validate_thread_priority`).
    """
    priority = validate_thread_priority(priority)
    if priority == 0:
        return False, ""
    if not hasattr(os, "sched_setscheduler"):
        return False, f"thread_priority {priority} ignored: no SCHED_FIFO on this platform"
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except PermissionError:
        return False, (
            f"thread_priority {priority} not applied (no permission for SCHED_FIFO): the loop runs "
            "under the normal scheduler; allow it with an rtprio limit (/etc/security/limits.conf: "
            "'@realtime - rtprio 99', user in group realtime) or CAP_SYS_NICE"
        )
    except OSError as error:
        return False, f"thread_priority {priority} not applied: {error.strerror or error}"
    return True, f"executor thread under SCHED_FIFO priority {priority}"
