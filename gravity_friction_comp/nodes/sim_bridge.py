"""The ``mit_bridge`` node's simulated arm (``simulate:=true``): loaded only then.

The simulator (:func:`~gravity_friction_comp.sim.bus.simulated_bus_for_bridge`) and its
lockstep clock (:func:`~gravity_friction_comp.sim.chain.lockstep_schedule`, the chain
builder's) are ROS-free; this module adds what the node
needs around them: the private ``virtual`` channel named after the node, the real-time
thread or the lockstep ``/clock`` (:class:`~gravity_friction_comp.nodes.lockstep_clock.LockstepClock`),
the ``sim/external_effort`` subscription, and the log lines.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import Any

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.mit.bridge_config import BridgeConfig
from gravity_friction_comp.mit.bridge_core import MitBridgeCore
from gravity_friction_comp.mit.bus import CanFrameIO, CanSettings
from gravity_friction_comp.nodes.lockstep_clock import LockstepClock
from gravity_friction_comp.nodes.sim_external_effort import subscribe_external_effort
from gravity_friction_comp.sim.bus import simulated_bus_for_bridge, virtual_bus_settings
from gravity_friction_comp.sim.chain import lockstep_schedule
from gravity_friction_comp.sim.lockstep import LockstepDriver, LockstepSchedule

__all__ = ["SimBridge"]


class SimBridge:
    """Emulated motors and the simulated arm behind a bridge node (not started until
    :meth:`attach`).

    Args:
        node: The bridge node (its logger, name; the clock and subscriptions go on it).
        values: The node's parameter values (``sim_config``, ``sim_lockstep``,
            ``sim_setpoint_rate_hz`` [Hz], ``sim_delay`` [s], ``sim_stall_*`` [s],
            ``sim_lockstep_peers``, ``sim_lockstep_follow``, ``payload.attached``).
        config: The bridge's motor map.
        settings: The bridge's configured bus (its FD settings are kept, the channel is
            replaced by a private ``virtual`` one: ``<can.channel>/sim<node fqn>/<pid>``).
        models: The node's robot models (``bare``: the simulated URDF; ``loaded.payload``).

    Attributes:
        sim: The :class:`~gravity_friction_comp.sim.bus.SimulatedMotorBus`.
        settings: The simulator's bus settings. per_bus: bus name → settings the bridge opens.
        schedule: The lockstep schedule (``sim_lockstep:=true``), else ``None``.

    Raises:
        ConfigError: no robot model, a bad sim YAML, or lockstep rates that are no whole
            number of physics steps. BusOpenError: a virtual bus cannot be opened.
    """

    def __init__(self, node, values: Mapping[str, Any], config: BridgeConfig, settings: CanSettings, models):
        if models is None:
            raise ConfigError(
                "simulate:=true needs the robot: set urdf_path or robot_description", key="urdf_path"
            )
        self._node, self._values = node, values
        path = values["sim_config"]
        channel = f"{settings.channel}/sim{node.get_fully_qualified_name()}/{os.getpid()}"
        self.settings = dataclasses.replace(settings, interface="virtual", channel=channel)
        self.sim = simulated_bus_for_bridge(
            models.bare,
            config,
            self.settings,
            sim_config=path,
            payload=models.loaded.payload,
            holding=bool(values["payload.attached"]),
        )
        self.per_bus = virtual_bus_settings(self.settings, config.buses)
        arm = self.sim.arm
        self.lockstep = bool(values["sim_lockstep"])
        try:
            self.schedule: LockstepSchedule | None = (
                lockstep_schedule(arm.dt, config, values["sim_setpoint_rate_hz"], values["sim_delay"])
                if self.lockstep
                else None
            )
        except BaseException:
            self.sim.stop()
            raise
        if not self.lockstep:
            self.sim.start()  # real time; in lockstep the LockstepDriver steps it
        node.get_logger().info(
            f"simulated arm {list(arm.joint_names)} at {arm.config.physics_rate_hz:g} Hz "
            f"({'lockstep on /clock' if self.lockstep else 'real time'}; sim config "
            f"{path or 'defaults'}), virtual channel {channel!r}"
        )

    def attach(
        self,
        core: MitBridgeCore,
        ios: Mapping[str | None, CanFrameIO],
        publish_state_at: Callable[[int], None],
        qos,
        command_subscription,
    ) -> LockstepClock | None:
        """Wire the simulator to the node's core and buses: in lockstep, the driver and the
        ``/clock`` (returned; with ``sim_lockstep_peers`` it waits for those bridges, with
        ``sim_lockstep_follow`` it follows another bridge's); always the
        ``sim/external_effort`` subscription. ``command_subscription``: the node's
        ``joint_command`` subscription.

        Raises:
            ConfigError: both ``sim_lockstep_peers`` and ``sim_lockstep_follow``, or peers
                with a bridge rate slower than the tick (:class:`~gravity_friction_comp.sim.lockstep.TickWait`).
        """
        clock = None
        if self.schedule is not None:
            io: CanFrameIO | Mapping[str | None, CanFrameIO] = (
                ios if len(ios) > 1 else next(iter(ios.values()))
            )
            driver = LockstepDriver(self.schedule, core, io, self.sim, publish_state_at)
            stall = float(self._values["sim_stall_timeout"])
            peers = [str(t) for t in self._values["sim_lockstep_peers"] or () if str(t)]
            follow = bool(self._values["sim_lockstep_follow"])
            clock = LockstepClock(
                self._node,
                driver,
                qos,
                stall,
                max(10.0, stall),
                command_subscription.topic_name,
                stall_limit=float(self._values["sim_stall_limit"]),
                peers=peers,
                follow=follow,
                command_subscription=command_subscription if peers or follow else None,
            )
            s = self.schedule
            shared = (
                f"; the clock waits for {clock.peer_topics}"
                if peers
                else "; following another bridge's /clock"
                if follow
                else ""
            )
            self._node.get_logger().info(
                f"lockstep: /clock every {s.tick_steps} physics step(s), frame exchange every "
                f"{s.exchange_steps}, command delay {s.delay_steps} step(s){shared}"
            )
        subscribe_external_effort(self._node, self.sim, getattr(clock, "driver", None))  # the simulated hand
        return clock
