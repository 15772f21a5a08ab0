"""The momentum observer in lockstep without ROS: an arm profile's chain with the bridge's observer.

One arm (:class:`~gravity_friction_comp.sim.chain.ChainArm`: bridge core, virtual CAN,
emulated motors whose replies carry the codec's quantized position, velocity and torque,
the simulated arm with its "true" sim YAML) driven by a setpoint
:class:`~gravity_friction_comp.trajectory.base.Profile` with the model's gravity as
feedforward (the payload model while the arm holds), the simulated hand
(:class:`~gravity_friction_comp.sim.external_effort.ExternalEffortSchedule`) as the truth, and
after every frame exchange the bridge core's measured state through a
:class:`~gravity_friction_comp.observer.guard.ContactGuard`, exactly where the bridge node
publishes ``joint_states`` and runs its observer (``observer.enable:=true``); a contact's
reaction acts on the same core.

What the observer believes: the URDF (masses as written, the sim may scale them), the
per-arm YAML's friction block (the compensator's friction model; the sim's truth differs),
and the rotor inertia of the sim YAML's ``actuators:`` block (a datasheet value, taken as
known). ``python -m gravity_friction_comp.tools.observer_check`` and its tests run it (docs/observer.md).

No rclpy import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.model.payload import Payload
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.observer.contact import DEFAULT_REST_VELOCITY, Contact, ContactDetector
from gravity_friction_comp.observer.guard import ContactGuard, feedback_deadband
from gravity_friction_comp.observer.momentum import MomentumObserver
from gravity_friction_comp.profiles.arm_profiles import ArmProfile, load_arm
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.chain import ChainArm, unique_channel
from gravity_friction_comp.sim.config import SimConfig

__all__ = ["ObserverLoop", "ObserverRecord", "SetpointProfile", "arm_models"]


class SetpointProfile(Protocol):
    """What :meth:`ObserverLoop.run` follows: a trajectory profile
    (:class:`~gravity_friction_comp.trajectory.base.Profile`, a layer above this one)."""

    joint_names: tuple[str, ...]

    def sample(self, t: float) -> Any:
        """``(position (n,), velocity (n,), holding)`` at time ``t`` [s]."""


@dataclass
class ObserverRecord:
    """One row per ``joint_states`` (frame exchange) of a run.

    Attributes:
        joints: The bridge's joints (column order).
        t: (k,) [s] measurement times. estimate: (k, m) r [N·m]. truth: (k, m) the hand's
        τ_ext [N·m] in force at t. velocity: (k, m) measured q̇ [rad/s]. holding: (k,) the
        arm's true holding state. reacting: (k,) the core's reaction in force.
        contacts: Each contact detected (in order; cleared only by the caller).
    """

    joints: tuple[str, ...]
    t: np.ndarray
    estimate: np.ndarray
    truth: np.ndarray
    velocity: np.ndarray
    holding: np.ndarray
    reacting: np.ndarray
    contacts: list[Contact] = field(default_factory=list)

    def column(self, joint: str) -> int:
        """The column of ``joint``."""
        return self.joints.index(joint)


def arm_models(profile: ArmProfile, sim: SimConfig) -> tuple[RobotModel, FrictionModel]:
    """What the observer believes of ``profile``'s arm (module docstring): the URDF model with
    the sim's rotor inertia, and the per-arm YAML's friction model over the bridge's joints."""
    model = RobotModel.from_urdf(str(profile.urdf))
    if sim.actuators is not None:
        model = model.with_actuators(sim.actuators)
    return model, FrictionModel.from_yaml(profile.arm_config, list(profile.joints))


class ObserverLoop:
    """One arm's lockstep chain with the observer (module docstring).

    Args:
        arm: Profile name (``arms/<name>``) or an :class:`ArmProfile`.
        gain: Observer gain K [1/s] (one or one per model joint).
        threshold, speed_band, reaction, rest_band, rest_velocity: The contact detector's
            (:class:`ContactDetector`).
        sim: The simulated arm's truth; ``None``: the profile's sim YAML.
        payload: What the gripper holds (attached to the sim while the profile holds);
            ``None``: nothing.
        observer_payload: The payload the observer's loaded model has; default ``payload``
            (a different one, or ``None`` with ``payload`` set, is a wrong model; the gravity
            feedforward keeps the true one, as a compensator that knows it).
        friction: Subtract the per-arm YAML's friction model (``False``: none).
        velocity_deadband: The observer's deadband [rad/s] per bridge joint; ``None``:
            :func:`~gravity_friction_comp.observer.guard.feedback_deadband` of the motors.
        react: Let a contact's reaction act on the bridge core (``False``: report only).

    Raises:
        ConfigError: a bad profile, sim YAML, gain, threshold or reaction.
    """

    def __init__(
        self,
        arm: str | ArmProfile,
        *,
        gain=100.0,
        threshold=1.0,
        speed_band=0.0,
        reaction: str = "none",
        sim: SimConfig | None = None,
        payload: Payload | None = None,
        observer_payload: Payload | None | str = "same",
        friction: bool = True,
        velocity_deadband=None,
        react: bool = True,
        rest_band=0.0,
        rest_velocity: float = DEFAULT_REST_VELOCITY,
    ):
        self.profile = arm if isinstance(arm, ArmProfile) else load_arm(arm)
        self.sim_config = sim if sim is not None else SimConfig.from_yaml(self.profile.sim_config)
        self.model, friction_model = arm_models(self.profile, self.sim_config)
        believed = payload if observer_payload == "same" else observer_payload
        assert not isinstance(believed, str)
        self.loaded = self.model.with_payload(believed) if believed is not None else self.model
        self.true_loaded = self.model.with_payload(payload) if payload is not None else self.model
        self.arm = SimulatedArm(self.model, self.sim_config, payload=payload)
        self.config = self.profile.bridge_config()
        self.chain = ChainArm(
            self.arm,
            self.config,
            channel=unique_channel("observer_loop"),
            on_state=self._on_state,
            external_effort=True,
        )
        self.core = self.chain.core
        observer = MomentumObserver(
            self.model,
            gain,
            friction=friction_model if friction else None,
            friction_joints=self.profile.joints,  # the motor map order, as self.config.motors
            velocity_deadband=feedback_deadband(self.config)
            if velocity_deadband is None
            else velocity_deadband,
            loaded=self.loaded,
        )
        detector = ContactDetector(
            self.model.joint_names, threshold, speed_band, reaction, rest_band, rest_velocity
        )
        self.guard = ContactGuard(observer, detector, self.core if react else None)
        self.names = self.core.joint_names
        self._rows: list[tuple] = []
        self._contacts: list[Contact] = []
        self.chain.enable()

    def _on_state(self, now_ns: int) -> None:
        # where the bridge node publishes joint_states and runs its observer
        state = self.core.joint_state()
        if not state.valid.all():
            return
        t = now_ns * 1e-9
        names = list(self.names)
        if self.guard.observer.holding != self.arm.holding:  # gripper/holding reached the sim
            self.guard.observer.set_holding(self.arm.holding)
        contact = self.guard.update(t, names, state.position, state.velocity, state.effort)
        if contact is not None:
            self._contacts.append(contact)
        external = self.chain.external
        assert external is not None
        truth = external.at(t)
        index = [self.arm.joint_names.index(n) for n in names]
        self._rows.append(
            (
                t,
                self.guard.estimate.copy(),
                truth[index],
                state.velocity.copy(),
                self.arm.holding,
                self.core.reaction is not None,
            )
        )

    @property
    def home(self) -> np.ndarray:
        """(n,) [rad] the sim's initial pose, model joint order."""
        return np.array([self.sim_config.joint(n).initial_position for n in self.model.joint_names])

    def push(self, t: float, names: Sequence[str], effort: Sequence[float]) -> None:
        """From simulated time ``t`` [s] on, the hand's τ_ext = ``effort`` [N·m] on ``names``."""
        external = self.chain.external
        assert external is not None
        external.add(t, names, effort)

    def run(self, profile: SetpointProfile, duration: float) -> ObserverRecord:
        """Follow ``profile`` for ``duration`` [s] of simulated time (its holding state drives
        the gripper: the sim's payload and the observer's model, at the next tick as a
        node chain does); returns the :class:`ObserverRecord` of this run."""
        schedule = self.chain.schedule
        ticks = int(round(duration * 1e9 / (schedule.tick_steps * schedule.dt_ns)))
        index = [profile.joint_names.index(n) for n in self.model.joint_names]
        bridge = [self.model.joint_names.index(n) for n in self.names]
        holding = False
        for _ in range(ticks):
            t = schedule.tick_ns * 1e-9
            sample = profile.sample(t)
            if sample.holding is not None and sample.holding != holding:
                holding = bool(sample.holding)
                schedule.set_holding(holding)  # the sim (and the observer) at the next tick
            q = sample.position[index]
            v = sample.velocity[index]
            g = (self.true_loaded if self.arm.holding else self.model).gravity(q)
            self.chain.command(q[bridge], v[bridge], g[bridge])
            self.chain.driver.run_tick()
        rows = self._rows
        self._rows = []
        contacts, self._contacts = self._contacts, []
        return ObserverRecord(
            tuple(self.names),
            np.array([r[0] for r in rows]),
            np.array([r[1] for r in rows]),
            np.array([r[2] for r in rows]),
            np.array([r[3] for r in rows]),
            np.array([r[4] for r in rows], dtype=bool),
            np.array([r[5] for r in rows], dtype=bool),
            contacts,
        )

    def close(self) -> None:
        """Close the chain's buses (idempotent)."""
        self.chain.close()
