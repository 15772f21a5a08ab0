"""The bridge's diagnostics: one DiagnosticStatus per motor and one for the bus.

Built from the core's :class:`~gravity_friction_comp.mit.bridge_core.MotorStatus` and the
bus counters; :class:`~gravity_friction_comp.nodes.mit_bridge_node.MitBridgeNode` publishes
them on ``diagnostics``. Status names carry the node's fully qualified name (its namespace)
and the bus, so two arms side by side (``/left/mit_bridge: base_yaw``,
``/right/mit_bridge: base_yaw``) stay apart on ``/diagnostics``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from gravity_friction_comp.mit.bus_load import bus_load_fraction, mit_bus_load
from gravity_friction_comp.mit.send_schedule import SLACK

__all__ = ["bus_status", "log_messages", "motor_statuses", "start_messages"]

_LEVEL = {"ok": DiagnosticStatus.OK, "warn": DiagnosticStatus.WARN, "error": DiagnosticStatus.ERROR}


def _kv(key: str, value: Any) -> KeyValue:
    return KeyValue(key=key, value=str(value))


def motor_statuses(node_name: str, statuses: Sequence[Any], bus: str = "") -> list[DiagnosticStatus]:
    """One status per motor (behaviour, fault, stale, missed replies, temperatures).

    Args:
        node_name: The node's fully qualified name (``/left/mit_bridge``); status names are
            ``"<node_name>: <joint>"``.
        statuses: The core's motor statuses.
        bus: The bus (CAN channel) the motors are on; in ``hardware_id`` and key ``bus``.
    """
    out = []
    for s in statuses:
        hardware = f"{bus} can_id 0x{s.can_id:X}" if bus else f"can_id 0x{s.can_id:X}"
        st = DiagnosticStatus(name=f"{node_name}: {s.name}", hardware_id=hardware)
        if s.fault:
            level, message = "error", f"fault: {s.fault_reason}; {s.behavior}"
        elif s.stale:
            level, message = "error", f"stale: {s.missed_replies} replies missed"
        elif s.behavior not in ("command",):
            level, message = "warn", f"{s.behavior}: {s.reason}"
        elif s.effort_clamped:
            level, message = "warn", "tau_ff clamped to effort limit"
        elif s.position_clamped:
            level, message = "warn", "position setpoint clamped to the joint limits"
        else:
            level, message = "ok", "command"
        st.level, st.message = _LEVEL[level], message
        st.values = [
            _kv("bus", bus),
            _kv("behavior", s.behavior),
            _kv("reason", s.reason),
            _kv("fault", s.fault),
            _kv("fault_reason", s.fault_reason),
            _kv("stale", s.stale),
            _kv("missed_replies", s.missed_replies),
            _kv("total_missed_replies", s.total_missed_replies),
            _kv("replies", s.replies),
            _kv("effort_clamped", s.effort_clamped),
            _kv("position_clamped", s.position_clamped),
            _kv("motor_enabled", s.motor_enabled),
        ]
        st.values += [_kv(f"{name} [degC]", t) for name, t in s.temperatures]
        out.append(st)
    return out


def bus_status(
    node_name: str,
    core: Any,
    io: Any,
    settings: Any,
    rate_hz: float,
    fps: float,
    periods: np.ndarray,
    rejected: int,
    simulate: bool,
    bus_name: str = "",
    n_motors: int | None = None,
) -> DiagnosticStatus:
    """The bus status: load as a fraction of the bus time (measured ``fps`` [frames/s] and
    expected at ``rate_hz``; classic frames, or FD frames with bit-rate switch when
    ``settings.fd``: arbitration at ``settings.bitrate``, data at its data bitrate), frame
    and error counters, loop ``periods`` [s] statistics.

    Named ``"<node_name>: bus <bus_name>"`` (``bus_name`` defaults to ``settings.channel``).
    ``n_motors``: motors on this bus for the expected load (default: all of ``core``).
    """
    fd = bool(getattr(settings, "fd", False))
    data_bitrate = settings.effective_data_bitrate if fd else settings.bitrate
    load = bus_load_fraction(fps, settings.bitrate, fd=fd, data_bitrate=data_bitrate)
    n = core.n_joints if n_motors is None else n_motors
    expected = mit_bus_load(n, rate_hz, settings.bitrate, fd=fd, data_bitrate=data_bitrate)
    name = bus_name or settings.channel
    bus = DiagnosticStatus(
        name=f"{node_name}: bus {name}", hardware_id=f"{settings.interface}:{settings.channel}"
    )
    worst = max(load, expected)
    problems = []
    lost = getattr(io, "lost_since", None)  # a socketcand link (SocketcandCanIO) that is down
    if worst > 1.0 or lost is not None:
        problems.append("error")
    elif worst > 0.8 or io.send_errors or io.listener.dropped or io.listener.errors:
        problems.append("warn")
    level = problems[0] if problems else "ok"
    bus.level = _LEVEL[level]
    rates = f"{settings.bitrate} bit/s" + (f", FD data {data_bitrate} bit/s" if fd else "")
    bus.message = f"bus {name}: load {load:.1%} of {rates} (expected {expected:.1%})"
    if lost is not None:
        bus.message = f"bus {name}: connection lost {time.monotonic() - lost:.1f} s ago, reconnecting"
    bus.values = [
        _kv("bus", name),
        _kv("bus_load", f"{load:.4f}"),
        _kv("expected_bus_load", f"{expected:.4f}"),
        _kv("frames_per_second", f"{fps:.1f}"),
        _kv("bitrate", settings.bitrate),
        _kv("fd", fd),
        _kv("data_bitrate", data_bitrate),
        _kv("frames_sent", io.sent),
        _kv("frames_received", io.listener.received),
        _kv("send_errors", io.send_errors),
        _kv("last_send_error", io.last_send_error),
        _kv("rx_dropped", io.listener.dropped),
        _kv("rx_errors", io.listener.errors),
        _kv("unknown_frames", core.unknown_frames),
        _kv("rejected_commands", rejected),
        _kv("rate_hz", rate_hz),
        _kv("simulate", simulate),
    ]
    if periods.size:
        bus.values += [
            _kv("loop_period_p50 [ms]", f"{1e3 * np.percentile(periods, 50):.3f}"),
            _kv("loop_period_p99 [ms]", f"{1e3 * np.percentile(periods, 99):.3f}"),
            _kv("loop_period_max [ms]", f"{1e3 * periods.max():.3f}"),
        ]
    return bus


def start_messages(
    config: Any, settings: Any, core: Any, n_buses: int, simulated: bool
) -> list[tuple[str, str]]:
    """The bridge's start-up log lines, ``(level, text)`` with level ``info``, ``warning`` or
    ``error``: motors, buses and the expected bus load (an error when it exceeds the bus, a
    warning when commands faster than ``rate_hz``, sent at up to ``1 + SLACK`` times it by
    the send budget, would), the start-up behaviour before the first command.

    Args:
        config: The :class:`~gravity_friction_comp.mit.bridge_config.BridgeConfig`.
        settings: The :class:`~gravity_friction_comp.mit.bus.CanSettings`.
        core: The :class:`~gravity_friction_comp.mit.bridge_core.MitBridgeCore`.
        n_buses: Buses the node opened.
        simulated: The simulated arm is behind the bus.
    """
    load = mit_bus_load(
        len(config.motors),
        config.rate_hz,
        settings.bitrate,
        fd=settings.fd,
        data_bitrate=settings.effective_data_bitrate,
    )
    rates = f"{settings.bitrate} bit/s" + (
        f" (CAN-FD, data {settings.effective_data_bitrate} bit/s)" if settings.fd else ""
    )
    if n_buses == 1:
        where = f"on {settings.interface}:{settings.channel}"
    else:
        load = max(config.bus_loads().values())
        where = "on buses " + ", ".join(
            f"{b} ({len(config.motors_on(b))}, load {x:.0%})" for b, x in config.bus_loads().items()
        )
    out = [
        (
            "info",
            f"{len(config.motors)} motors {where} at {config.rate_hz:g} Hz; expected bus load "
            f"{load:.0%} of {rates}{' (simulated arm)' if simulated else ''}",
        )
    ]
    if core.startup_behavior == "hold":
        limp = [m.name for m in config.motors if m.kp == 0.0]
        out.append(
            (
                "info",
                "no joint_command yet: holding the measured position"
                + (f" (kp 0, damped instead: {limp})" if limp else "")
                + f"; after the first command, {config.timeout_behavior} on timeout",
            )
        )
    if load > 1.0:
        out.append(
            (
                "error",
                f"expected bus load {load:.0%}: {len(config.motors)} motors at {config.rate_hz:g} Hz "
                "do not fit this bus; lower rate_hz or split the motors over buses",
            )
        )
    elif load * (1.0 + SLACK) > 1.0:
        out.append(
            (
                "warning",
                f"expected bus load {load:.0%} at rate_hz; commands faster than rate_hz go at up to "
                f"{1.0 + SLACK:g} x rate_hz (the send budget's slack): {load * (1.0 + SLACK):.0%}, "
                "more than the bus carries",
            )
        )
    return out


def log_messages(logger, messages: list[tuple[str, str]]) -> None:
    """Log :func:`start_messages`' ``(level, text)`` lines on an rclpy ``logger``, one call
    site per severity: rclpy refuses two severities from one line ("Logger severity cannot
    be changed between calls")."""
    for level, text in messages:
        if level == "error":
            logger.error(text)
        elif level == "warning":
            logger.warning(text)
        else:
            logger.info(text)
