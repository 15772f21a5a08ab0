"""Record a calibration plan on the simulated arm, in lockstep (deterministic, ROS-free).

The same pieces as the lockstep demo, without the ROS graph: the plan's profile gives a
setpoint every clock tick (the motor map's ``sim_setpoint_rate_hz``), the
:class:`~gravity_friction_comp.stage.gravity.GravityStage` adds g(q_setpoint) of the
believed URDF, the :class:`~gravity_friction_comp.mit.bridge_core.MitBridgeCore` turns it
into MIT frames (the motor map's kp, kd, rate), and the
:class:`~gravity_friction_comp.sim.lockstep.LockstepDriver` steps the emulated motors and
the :class:`~gravity_friction_comp.sim.arm.SimulatedArm` (its true links, stiction on). The
joint states the bridge decodes after each frame exchange are the recording, as
``joint_states`` would be on the real arm.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gravity_friction_comp.calib.plan import CalibrationPlan
from gravity_friction_comp.ident.joint_log import JointStateLog
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values
from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.chain import ChainArm, unique_channel
from gravity_friction_comp.sim.config import SimConfig
from gravity_friction_comp.stage.gravity import GravityConfig, GravityStage

__all__ = ["record_in_simulation"]

#: PD of the held undriven joints [N·m/rad or N/m], [N·m·s/rad or N·s/m].
_HOLD_KP, _HOLD_KD = 20.0, 0.2


def record_in_simulation(
    plan: CalibrationPlan,
    model: RobotModel,
    sim_config: SimConfig,
    bridge_values: Mapping[str, Any],
    *,
    payload: Payload | None = None,
    holding: bool = False,
    delay: float = 0.002,
    sim_model: RobotModel | None = None,
    hold_undriven: bool = False,
) -> JointStateLog:
    """Play ``plan`` on the simulated arm and return the bridge's joint states.

    Args:
        plan: The poses (joint order of ``model``).
        model: The believed robot (the gravity stage's model; the sim's truth is
            ``sim_config``'s links applied to its URDF).
        sim_config: The simulator's truth (friction, links, rate).
        bridge_values: The motor map's parameters (``ros2 param dump`` names).
        payload: Held by the simulated arm while ``holding`` (the true payload; the stage
            compensates the arm alone, so the holds measure it).
        delay: Modelled command transport delay [s] (whole physics steps).
        sim_model: The simulated arm's URDF model (default ``model``; ``sim_config``'s
            links apply to it): lets a calibrated ``model`` run against the true arm.
        hold_undriven: Hold the joints the bridge does not drive (e.g. gripper fingers) at
            the plan's value, as their own motor would (the sim's true static torque plus a
            soft PD, as an external torque updated every tick); otherwise they are free.

    Returns:
        Log of the bridge joints, time from the first sample [s] (profile time).
    """
    config = bridge_config_from_values(bridge_values)  # missing per-joint arrays: defaults
    arm = SimulatedArm(sim_model or model, sim_config, payload=payload, holding=holding)
    stage = GravityStage(GravityConfig(model))  # the believed arm; a held payload is not compensated
    profile = plan.profile(model.position_lower, model.position_upper)
    rate = float(bridge_values.get("sim_setpoint_rate_hz", 250.0))
    names = list(model.joint_names)
    times: list[float] = []
    rows: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def on_state(now_ns: int) -> None:
        state = chain.core.joint_state()
        if state.valid.all():
            times.append(now_ns * 1e-9)
            rows.append((state.position.copy(), state.velocity.copy(), state.effort.copy()))

    chain = ChainArm(
        arm, config, channel=unique_channel("calib"), setpoint_rate_hz=rate, delay=delay, on_state=on_state
    )
    core, schedule = chain.core, chain.schedule
    order = [names.index(j) for j in core.joint_names]
    undriven = [i for i, j in enumerate(names) if j not in core.joint_names] if hold_undriven else []
    hold = np.zeros(len(names))
    t0 = schedule.tick_ns * 1e-9
    try:
        chain.enable()
        while (t := schedule.tick_ns * 1e-9 - t0) <= profile.period:
            sample = profile.sample(t)
            out = stage.update(names, sample.position, sample.velocity, [], t)
            command = (sample.position[order], sample.velocity[order], np.asarray(out.effort)[order])
            chain.command(*command)
            if undriven:  # their motor: static torque + soft PD (stable at the tick rate)
                q, v = arm.position, arm.velocity
                hold[undriven] = (
                    arm.gravity(q)[undriven]
                    + _HOLD_KP * (sample.position[undriven] - q[undriven])
                    - _HOLD_KD * v[undriven]
                )
                arm.set_external_effort(hold)
            chain.driver.run_tick()
    finally:
        chain.close()
    data = [np.array([r[k] for r in rows]) for k in range(3)]
    return JointStateLog(tuple(core.joint_names), np.array(times) - t0, *data)
