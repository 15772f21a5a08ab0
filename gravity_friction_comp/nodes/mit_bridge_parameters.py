"""The MIT bridge node's parameters, each declared once (:data:`BRIDGE_PARAMETERS`, :data:`PARAMETERS`).

Defaults are read from the core config dataclasses, so each is written once; the core
validates the values it owns (ranges here are what ``ros2 param describe`` shows).
:mod:`~gravity_friction_comp.nodes.mit_bridge_node` declares them and re-exports both tuples.
"""

from __future__ import annotations

import math

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_config import BEHAVIORS, BridgeConfig, default_of
from gravity_friction_comp.mit.bridge_params import PER_JOINT_DEFAULTS, bridge_config_from_values
from gravity_friction_comp.mit.bus import CanSettings, read_damiao_limits
from gravity_friction_comp.nodes.observer_runtime import (
    BRIDGE_ENABLE,
    OBSERVER_PARAMETERS,
    REACTION_PARAMETERS,
)
from gravity_friction_comp.nodes.parameters import Param
from gravity_friction_comp.nodes.robot_params import robot_parameters
from gravity_friction_comp.realtime import MAX_THREAD_PRIORITY

__all__ = [
    "BRIDGE_OBSERVER_PARAMETERS",
    "BRIDGE_PARAMETERS",
    "PARAMETERS",
    "STARTUP_BEHAVIOR",
    "config_with_motor_limits",
]

_JOINT = PER_JOINT_DEFAULTS


def _positive(key: str):
    # FloatingPointRange is inclusive: 0 passes the descriptor, this rejects it
    def _check(value: float) -> None:
        if not (math.isfinite(value) and value > 0.0):
            raise ConfigError(f"{key} must be finite and > 0, got {value!r}", key=key, value=value)

    return _check


_BEHAVIORS = " | ".join(BEHAVIORS)

#: The bridge holds the arm where it is until a setpoint source appears (issue 13 point 4:
#: damping alone let an arm without a player fall onto its limits).
STARTUP_BEHAVIOR = "hold"

#: The bridge's own parameters (robot/payload ones are in :data:`PARAMETERS`). Defaults are
#: read from the core config dataclasses, so each is written once; the core validates the
#: values it owns (ranges here are what ``ros2 param describe`` shows).
BRIDGE_PARAMETERS: tuple[Param, ...] = (
    Param("joints", None, "joint names, order of every per-joint array", type="string[]", read_only=True),
    Param("can_id", None, "motor CAN ids (required)", type="int[]", read_only=True),
    Param("master_id", None, "motor reply (master) ids (required)", type="int[]", read_only=True),
    Param("motor_type", None, "motor table keys, e.g. DM4340 (required)", type="string[]", read_only=True),
    Param(
        "direction", None, f"+1/-1 per joint; empty = {_JOINT['direction']:+d}", type="int[]", read_only=True
    ),
    Param(
        "offset",
        None,
        f"joint position when the motor reads 0; empty = {_JOINT['offset']:g}",
        "rad",
        type="double[]",
        read_only=True,
    ),
    Param(
        "gear_ratio",
        None,
        f"motor turns per joint turn; empty = {_JOINT['gear_ratio']:g}",
        type="double[]",
        read_only=True,
    ),
    Param(
        "kp",
        None,
        f"joint stiffness, runtime-settable; one number = every joint; empty = {_JOINT['kp']:g}",
        "N·m/rad",
        type="double[]",
    ),
    Param(
        "kd",
        None,
        f"joint damping, runtime-settable; one number = every joint; empty = {_JOINT['kd']:g}",
        "N·m·s/rad",
        type="double[]",
    ),
    Param(
        "effort_limit",
        None,
        f"|tau_ff| bound per joint; empty = {_JOINT['effort_limit']:g} (T_MAX only)",
        "N·m",
        type="double[]",
        read_only=True,
    ),
    Param(
        "damp_kd", None, "kd of the damp behaviour; empty = kd", "N·m·s/rad", type="double[]", read_only=True
    ),
    Param(
        "position_lower",
        None,
        "commanded position lower bound; empty = URDF <limit lower> when a robot description "
        f"is set, else {_JOINT['position_lower']:g}",
        "rad",
        type="double[]",
        read_only=True,
    ),
    Param(
        "position_upper",
        None,
        "commanded position upper bound; empty = URDF <limit upper> when a robot description "
        f"is set, else {_JOINT['position_upper']:g}",
        "rad",
        type="double[]",
        read_only=True,
    ),
    Param(
        "bus",
        None,
        "CAN channel of each joint's bus (one bridge, several buses: e.g. can0/can1, one per arm; "
        "CAN ids unique per bus); empty or '' = can.channel",
        type="string[]",
        read_only=True,
    ),
    *(
        Param(
            key,
            None,
            f"MIT-mode {what} range of each joint's motor; empty, or 0 for a joint, = the motor "
            "table's; all five required for RS02/RS03/RS04 (docs/can_buses.md)",
            unit,
            type="double[]",
            read_only=True,
        )
        for key, what, unit in (
            ("p_max", "position ±", "rad"),
            ("v_max", "velocity ±", "rad/s"),
            ("t_max", "torque ±", "N·m"),
            ("kp_max", "kp 0..", "N·m/rad"),
            ("kd_max", "kd 0..", "N·m·s/rad"),
        )
    ),
    Param(
        "rate_hz",
        default_of(BridgeConfig, "rate_hz"),
        "control loop rate",
        "Hz",
        low=0.0,
        read_only=True,
    ),
    Param(
        "command_timeout",
        default_of(BridgeConfig, "command_timeout"),
        "no joint_command for this long -> timeout_behavior",
        "s",
        low=0.0,
        read_only=True,
    ),
    Param(
        "startup_behavior",
        STARTUP_BEHAVIOR,
        f"before the first joint_command: {_BEHAVIORS} (hold: the first measured position, "
        "kp/kd per joint; a joint with kp 0 is damped)",
        read_only=True,
    ),
    Param("timeout_behavior", default_of(BridgeConfig, "timeout_behavior"), _BEHAVIORS, read_only=True),
    Param(
        "fault_behavior",
        default_of(BridgeConfig, "fault_behavior"),
        f"behaviour of a faulted motor: {_BEHAVIORS}",
        read_only=True,
    ),
    Param(
        "stale_cycles",
        default_of(BridgeConfig, "stale_cycles"),
        "missed replies in a row that make a motor stale",
        low=1,
        read_only=True,
    ),
    Param(
        "diagnostics_rate_hz",
        10.0,
        "diagnostics publish rate",
        "Hz",
        low=0.0,
        read_only=True,
        validate=_positive("diagnostics_rate_hz"),
    ),
    Param(
        "thread_priority",
        0,
        "SCHED_FIFO priority of the executor thread, 1-99 (0: normal scheduler), as ros2_control's "
        "thread_priority; needs an rtprio limit or CAP_SYS_NICE, else a warning (docs/latency.md)",
        low=0,
        high=MAX_THREAD_PRIORITY,
        read_only=True,
    ),
    Param(
        "can.interface",
        default_of(CanSettings, "interface"),
        "python-can interface (socketcan, socketcand, virtual, pcan, ...)",
        read_only=True,
    ),
    Param("can.channel", default_of(CanSettings, "channel"), "python-can channel", read_only=True),
    Param(
        "can.bitrate",
        default_of(CanSettings, "bitrate"),
        "CAN bitrate, also the bus-load reference",
        "bit/s",
        low=1,
        read_only=True,
    ),
    Param(
        "can.fd",
        default_of(BridgeConfig, "fd"),
        "CAN-FD: frames sent as FD with bit-rate switch",
        read_only=True,
    ),
    Param(
        "can.data_bitrate",
        default_of(BridgeConfig, "data_bitrate"),
        "CAN-FD data-phase bitrate, 0 = can.bitrate",
        "bit/s",
        low=0,
        read_only=True,
    ),
    Param(
        "can.host",
        default_of(CanSettings, "host"),
        "socketcand server address (can.interface socketcand only, required there; e.g. 127.0.0.1 "
        "for sim_arm)",
        read_only=True,
    ),
    Param(
        "can.port",
        default_of(CanSettings, "port"),
        "socketcand server TCP port (can.interface socketcand only)",
        low=1,
        high=65535,
        read_only=True,
    ),
    Param("read_motor_limits", False, "read Damiao registers 21-23 (P/V/T_MAX) at start", read_only=True),
    Param("simulate", False, "emulated motors + simulated arm on a private virtual bus", read_only=True),
    Param("sim_config", "", "sim YAML with the simulated arm's true values ('' = defaults)", read_only=True),
    Param(
        "sim_lockstep",
        False,
        "simulate only: the simulated arm owns the time (/clock) and steps once the chain answered",
        read_only=True,
    ),
    Param(
        "sim_setpoint_rate_hz",
        250.0,
        "lockstep: /clock tick rate, one setpoint expected per tick (divides the physics rate)",
        "Hz",
        low=0.0,
        read_only=True,
        validate=_positive("sim_setpoint_rate_hz"),
    ),
    Param(
        "sim_delay",
        0.001,
        "lockstep: modelled transport delay of a command, whole physics steps",
        "s",
        low=0.0,
        read_only=True,
    ),
    Param(
        "sim_lockstep_peers",
        None,
        "lockstep, one bridge per bus: the joint_states topics of the other bridges of this "
        "lockstep (e.g. /right/joint_states); this bridge owns /clock and shows the next tick once "
        "each of them published its state of the tick (they run sim_lockstep_follow)",
        type="string[]",
        read_only=True,
    ),
    Param(
        "sim_lockstep_follow",
        False,
        "lockstep, one bridge per bus: another bridge owns /clock (its sim_lockstep_peers names "
        "this bridge's joint_states); this one publishes no /clock and steps its arm on each answer",
        read_only=True,
    ),
    Param(
        "sim_stall_timeout",
        3.0,
        "lockstep: wall time without an answer, the machine idle (< 0.5 core busy), that ends the "
        "run with an error (start-up: ≥ 10 s); a publisher leaving the graph ends it after 1 s",
        "s",
        low=0.0,
        read_only=True,
        validate=_positive("sim_stall_timeout"),
    ),
    Param(
        "sim_stall_limit",
        300.0,
        "lockstep, last resort: wall time without an answer that ends the run however busy the machine",
        "s",
        low=0.0,
        read_only=True,
        validate=_positive("sim_stall_limit"),
    ),
)

#: The momentum observer in the bridge (docs/observer.md) and its reaction to a contact.
BRIDGE_OBSERVER_PARAMETERS: tuple[Param, ...] = (BRIDGE_ENABLE, *OBSERVER_PARAMETERS, *REACTION_PARAMETERS)

#: Every parameter the node declares: its own, the observer's, then the robot/payload ones,
#: read-only (the bridge reads them once, to build the simulated arm, the URDF position
#: limits and the observer's model).
PARAMETERS: tuple[Param, ...] = (
    BRIDGE_PARAMETERS + BRIDGE_OBSERVER_PARAMETERS + robot_parameters(read_only=True)
)


def config_with_motor_limits(buses: dict, config: BridgeConfig, values: dict, logger) -> BridgeConfig:
    """The bridge's config with the P/V/T limits each Damiao motor reports
    (``read_motor_limits:=true``; :func:`~gravity_friction_comp.mit.bus.read_damiao_limits`
    on each of ``buses``, name → open bus); each motor's values or why not logged."""
    results = {}
    for name, bus in buses.items():
        results.update(read_damiao_limits(bus, config.motors_on(name)))
    for name, (limits, note) in results.items():
        if note:
            logger.warning(f"{name}: limit registers: {note}")
        else:
            logger.info(
                f"{name}: motor reports P_MAX {limits.p_max:g} rad, V_MAX "
                f"{limits.v_max:g} rad/s, T_MAX {limits.t_max:g} N·m"
            )
    return bridge_config_from_values(values, {k: v[0] for k, v in results.items()})
