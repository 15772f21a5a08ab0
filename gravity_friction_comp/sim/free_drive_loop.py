"""Free drive in lockstep without ROS: the nodes' objects wired as the launch file wires them.

One tick (the bridge's ``sim_setpoint_rate_hz``) of the chain ``joint_states →
FreeDriveSource → GravityStage → FrictionStage → MitBridgeCore → emulated motors → arm``:
after each frame exchange the measured state goes where ``joint_states`` goes (the source,
the friction stage's ``update_measured``); at the tick the source's setpoint (its effort:
the feedback effort given to the source, :meth:`FreeDriveSource.feedback`) runs through
the stages and the command (stamped with the tick) is queued on the
:class:`~gravity_friction_comp.sim.lockstep.LockstepSchedule`, exactly as
:class:`~gravity_friction_comp.nodes.lockstep_clock.LockstepClock` does with the nodes'
``joint_command``. The nodes hold no numerics of their own, so this runs the same code as
``arm.launch.py mode:=free_drive`` in simulation, deterministically and faster.

No rclpy import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gravity_friction_comp.mit.bridge_config import BridgeConfig
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.chain import ChainArm
from gravity_friction_comp.stage.free_drive import FreeDriveSource, stale_reply_ages
from gravity_friction_comp.stage.friction import FrictionStage
from gravity_friction_comp.stage.gravity import GravityStage

__all__ = ["FreeDriveLoop", "LoopRecord"]


@dataclass
class LoopRecord:
    """What a run recorded, one row per tick.

    Attributes:
        t: (k,) [s] tick times. q, v: (k, n) true joint position [rad] and velocity [rad/s]
        of the arm (its joint order). command: (k, m) the commanded effort [N·m] in bridge
        joint order (NaN while the source gave no setpoint). torque: (k, m) the motors'
        MIT torque at the joints [N·m] after the tick (what the arm feels from them).
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    command: np.ndarray
    torque: np.ndarray


class FreeDriveLoop:
    """The free-drive chain against the simulated arm, stepped in lockstep (module docstring).

    Args:
        arm: The simulated arm (its state is the start pose).
        config: Bridge configuration (kp/kd as the free drive runs them).
        source: The :class:`FreeDriveSource` (its mode decides follow / free drive).
        gravity, friction: The stages (``None``: that stage is not in the chain).
        channel: A ``virtual`` CAN channel name unique to this loop (a multi-bus motor map:
            one channel ``<channel>/<bus>`` per bus, as the bridge node opens them).
        setpoint_rate_hz: Tick rate [Hz] (a divisor of the physics rate).
        delay: Modelled command transport delay [s] (whole physics steps).
        startup_behavior: The bridge core's behaviour before the first command.
        name: The arm's name in a :class:`~gravity_friction_comp.sim.chain.SimulatedChain`
            (teleoperation: ``leader`` beside its follower).

    Raises:
        ConfigError: rates that are no whole number of physics steps.
    """

    def __init__(
        self,
        arm: SimulatedArm,
        config: BridgeConfig,
        source: FreeDriveSource,
        gravity: GravityStage | None,
        friction: FrictionStage | None,
        *,
        channel: str,
        setpoint_rate_hz: float | None = None,
        delay: float = 0.0,
        startup_behavior: str | None = None,
        name: str = "arm",
    ):
        self.arm, self.config, self.source = arm, config, source
        self.gravity, self.friction = gravity, friction
        chain = ChainArm(
            arm,
            config,
            channel=channel,
            setpoint_rate_hz=setpoint_rate_hz,
            delay=delay,
            startup_behavior=startup_behavior,
            on_state=self._on_state,
            external_effort=True,
            name=name,
        )
        self.chain = chain
        self.schedule, self.core, self.sim, self.driver = chain.schedule, chain.core, chain.sim, chain.driver
        self.ios, self.io, self.external = chain.ios, chain.io, chain.external
        self.names = self.core.joint_names
        self._last_effort = np.full(len(self.names), np.nan)
        chain.enable()

    def _on_state(self, now_ns: int) -> None:
        # what the bridge node publishes as joint_states, delivered to its subscribers
        state = self.core.joint_state()
        if not state.valid.all():
            return
        t = now_ns * 1e-9
        names = list(self.names)
        self.source.measured(names, state.position, t)
        # the bridge's stale motors with the age of their last reply, as the free_drive node reads them
        missed = {s.name: s.missed_replies for s in self.core.status() if s.stale}
        self.source.set_stale(stale_reply_ages(missed, self.config.rate_hz))
        if self.friction is not None:
            self.friction.update_measured(names, state.velocity.tolist())

    def set_holding(self, holding: bool) -> None:
        """``gripper/holding``: the stage at once, the simulated arm at the next tick."""
        if self.gravity is not None:
            self.gravity.set_holding(holding)
        self.schedule.set_holding(holding)

    def command(self, t: float) -> None:
        """The tick ``t`` [s]: the source's setpoint through the stages to the bridge (nothing
        when the source gives none). :meth:`run` calls it; a loop of several arms in one
        :class:`~gravity_friction_comp.sim.chain.SimulatedChain` calls it before the tick."""
        sp = self.source.setpoint(t)
        if sp is None:  # nothing published: the bridge's command timeout decides
            self._last_effort = np.full(len(self.names), np.nan)
            return
        names, position, velocity = list(sp.names), sp.position, sp.velocity
        effort = sp.effort  # the feedback effort (teleoperation), else zeros
        if self.gravity is not None:
            effort = self.gravity.update(names, position, velocity, effort, t).effort
        if self.friction is not None:
            effort = self.friction.update(names, position, velocity, effort, t).effort
        index = {n: i for i, n in enumerate(names)}
        k = [index[n] for n in self.names]
        self._last_effort = np.asarray(effort)[k]
        self.chain.command(position[k], velocity[k], self._last_effort.copy())

    def run(self, duration: float, on_tick: Callable[[float], None] | None = None) -> LoopRecord:
        """Run ``duration`` [s] of simulated time; ``on_tick(t)`` before each tick's command.

        Returns:
            The :class:`LoopRecord` of this run.
        """
        ticks = int(round(duration * 1e9 / (self.schedule.tick_steps * self.schedule.dt_ns)))
        t_out, q_out, v_out, c_out, tau_out = [], [], [], [], []
        for _ in range(ticks):
            t = self.schedule.tick_ns * 1e-9
            if on_tick is not None:
                on_tick(t)
            self.command(t)
            self.driver.run_tick()
            t_out.append(t)
            q_out.append(self.arm.position)
            v_out.append(self.arm.velocity)
            c_out.append(self._last_effort.copy())
            tau_out.append([sm.mapping.torque_from_motor(sm.motor.torque()) for sm in self.sim.motors])
        return LoopRecord(*(np.array(x) for x in (t_out, q_out, v_out, c_out, tau_out)))

    def close(self) -> None:
        """Close both ends of the virtual buses (idempotent)."""
        self.chain.close()
