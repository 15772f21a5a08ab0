"""sim_arm: the simulated arm in its own process, served over socketcand on 127.0.0.1.

The arm a bridge's ``simulate:=true`` would run in its own process (emulated motors and the
1 kHz physics thread, :class:`~gravity_friction_comp.sim.bus.SimulatedMotorBus`), built from
the bridge's own parameter file, so ids, ranges, motor map and buses match by construction;
a bridge then connects with ``simulate:=false can.interface:=socketcand can.host:=127.0.0.1
can.port:=<port>`` as it would to a real arm's socketcand daemon, and the physics costs the
bridge's process nothing.

Usage::

    python -m gravity_friction_comp.tools.sim_arm --params-file mit_bridge.yaml [--port 29536]

The file is the bridge's (``mit_bridge: ros__parameters: {...}`` with ``urdf_path`` or
``robot_description``, ``sim_config``, ``payload.*``); ``simulate``, ``can.interface``,
``can.host`` and ``can.port`` in it are not used here. Prints ``sim_arm: serving
HOST:PORT ...`` once ready, runs until SIGINT/SIGTERM (exit 0); a bad configuration prints
one line ``sim_arm: error: ...`` and exits 2. No rclpy import.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import threading
from collections.abc import Mapping
from typing import Any

from gravity_friction_comp.errors import ConfigError, GravityFrictionCompError
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values, fill_position_limits_from_urdf
from gravity_friction_comp.mit.bus import SOCKETCAND_PORT, can_settings_from_values
from gravity_friction_comp.nodes.mit_bridge_parameters import PARAMETERS
from gravity_friction_comp.nodes.parameters import as_declared_type, check, is_null
from gravity_friction_comp.nodes.robot_params import build_robot_models
from gravity_friction_comp.param_files import node_parameters
from gravity_friction_comp.sim.bus import SimulatedMotorBus, simulated_bus_for_bridge

__all__ = ["bridge_values", "main", "simulated_bus_from_parameters", "socketcand_channels"]

_BY_NAME = {p.name: p for p in PARAMETERS}


def bridge_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The bridge's parameter values as its node would hold them: declared defaults, then
    ``values`` (a dumped ``null`` = unset; integers for doubles as floats, as the node's
    declaration accepts them), range-checked. Names the bridge does not declare are dropped
    (rclpy ignores them too).

    Raises:
        ConfigError: a value out of its declared range (key = the parameter).
    """
    out = {p.name: p.default for p in PARAMETERS}
    for name, value in values.items():
        p = _BY_NAME.get(name)
        if p is not None and not is_null(p, value):
            out[name] = as_declared_type(p, list(value) if isinstance(value, tuple) else value)
    check(PARAMETERS, out)
    return out


def simulated_bus_from_parameters(values: Mapping[str, Any], channel: str = "") -> SimulatedMotorBus:
    """The :class:`SimulatedMotorBus` a bridge with parameter ``values`` would simulate
    (``simulate:=true``), on private ``virtual`` channels, not started.

    Args:
        values: The bridge's parameters by ROS name (a ``ros__parameters`` section
            flattened, e.g. :func:`~gravity_friction_comp.param_files.node_parameters`).
        channel: The simulator's virtual channel (``""``: ``sim_arm/<id of the result>``,
            private to this process); one sub-channel per bus on a multi-bus arm.

    Raises:
        ConfigError: bad values (as the bridge refuses them), no robot description,
            ``sim_lockstep`` (the lockstep arm steps with the bridge, in its process).
        BusOpenError: the virtual bus cannot be opened.
    """
    values = bridge_values(values)
    if values["sim_lockstep"]:
        raise ConfigError(
            "sim_lockstep:=true steps the arm inside the bridge's process; sim_arm runs in real time",
            key="sim_lockstep",
            value=True,
        )
    models = build_robot_models(values)
    if models is None:
        raise ConfigError(
            "the simulated arm needs the robot: set urdf_path or robot_description", key="urdf_path"
        )
    fill_position_limits_from_urdf(values, models.bare.urdf_joints)
    config = bridge_config_from_values(values)
    settings = can_settings_from_values({**values, "can.interface": "virtual", "can.host": ""}, config)
    settings = dataclasses.replace(settings, channel=channel or f"sim_arm/{id(values):x}")
    return simulated_bus_for_bridge(
        models.bare,
        config,
        settings,
        sim_config=values["sim_config"],
        payload=models.loaded.payload,
        holding=bool(values["payload.attached"]),
    )


def socketcand_channels(values: Mapping[str, Any], sim_bus: SimulatedMotorBus) -> dict[str, str]:
    """socketcand channel → sim bus name: the channel the bridge with ``values`` opens for
    each bus (:func:`~gravity_friction_comp.mit.bus.bus_settings`: the bus name, ``""`` =
    ``can.channel``), for :class:`~gravity_friction_comp.sim.socketcand_server.SocketcandServer`."""
    default = str(values.get("can.channel") or _BY_NAME["can.channel"].default)
    return {name or default: name for name in sim_bus.bus_settings}


def _port(text: str) -> int:
    """argparse type: a TCP port 0..65535 (bind() would raise OverflowError past it)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is outside 0..65535")
    return port


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="sim_arm", description=__doc__.split("\n")[0])
    p.add_argument(
        "--params-file", required=True, help="the bridge's parameter file (ros2 param dump format)"
    )
    p.add_argument("--node-name", default="mit_bridge", help="its section (default mit_bridge)")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=SOCKETCAND_PORT, help="TCP port, 0 = a free one")
    args = p.parse_args(argv)

    from gravity_friction_comp.sim.socketcand_server import SocketcandServer

    try:
        values = node_parameters(args.params_file, args.node_name)
        sim = simulated_bus_from_parameters(values)
    except GravityFrictionCompError as error:
        print(f"sim_arm: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    try:
        server = SocketcandServer(sim, args.host, args.port, channels=socketcand_channels(values, sim))
        server.start()
    except (GravityFrictionCompError, OSError) as error:
        sim.stop()
        print(f"sim_arm: error: cannot serve on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 2
    try:
        sim.start()
        channels = ", ".join(server.channels)
        print(
            f"sim_arm: serving {args.host}:{server.port} (channels {channels}; joints "
            f"{list(sim.arm.joint_names)}, {sim.arm.config.physics_rate_hz:g} Hz)",
            flush=True,
        )
        while not done.wait(0.5):
            pass
    finally:
        server.stop()
        sim.stop()
    print(
        f"sim_arm: stopped after {sim.ticks} physics steps ({sim.overruns} overruns); frames in "
        f"{server.frames_in}, out {server.frames_out}, malformed {server.malformed}; clients dropped (stopped reading) {server.dropped}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
