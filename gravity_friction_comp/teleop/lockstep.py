"""Teleoperation in lockstep without ROS: a leader and a follower arm side by side on one clock.

Two :class:`~gravity_friction_comp.sim.chain.ChainArm` in one
:class:`~gravity_friction_comp.sim.chain.SimulatedChain`, each with its own bridge core,
virtual bus and simulated arm, wired as ``teleop.launch.py`` wires the nodes:

- **leader** (free drive, :class:`~gravity_friction_comp.sim.free_drive_loop.FreeDriveLoop`):
  kp 0, kd ``kd_scale`` × the motor map's, g(q) and friction of the measured state (the
  profile's free-drive friction scale and dither), plus the **feedback effort** on its
  setpoint; a :class:`ScriptedHand` moves it (an impedance towards a scripted pose, plus
  any torques of its :class:`~gravity_friction_comp.sim.external_effort.ExternalEffortSchedule`).
- **link**: each tick the leader's measured pose (one sample per bus, as one bridge per bus
  publishes it) → :class:`~gravity_friction_comp.teleop.link.TeleopLink`
  (mapping, soft engage, hold) → :class:`~gravity_friction_comp.stage.shaper.SetpointShaper`
  (jerk-limited q, q̇ at the tick) → the follower's gravity and friction stages → its bridge.
- **follower** (follow mode, the motor map's kp/kd): after each frame exchange its measured
  state → the link, one sample per bus (source: the bus), and (q, q̇, motor torque) →
  :class:`~gravity_friction_comp.observer.momentum.MomentumObserver`
  → :class:`~gravity_friction_comp.teleop.feedback.ForceFeedback` → the leader's feedback
  effort at the next tick. A :class:`SpringObstacle` (a stiff one-sided wall) acts on it.

Everything runs the objects the nodes run, so the figures are the launch's, deterministic.
No rclpy import.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.friction.arm_yaml import actuator_model_from_arm_yaml, gravity_scale_from_arm_yaml
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values
from gravity_friction_comp.model.robot_model import RobotModel
from gravity_friction_comp.observer.momentum import MomentumObserver
from gravity_friction_comp.profiles.arm_profiles import ArmProfile, raised_effort_limits
from gravity_friction_comp.sim.arm import SimulatedArm
from gravity_friction_comp.sim.chain import ChainArm, SimulatedChain, unique_channel
from gravity_friction_comp.sim.config import SimConfig
from gravity_friction_comp.sim.external_effort import ExternalEffortSchedule
from gravity_friction_comp.sim.free_drive_loop import FreeDriveLoop
from gravity_friction_comp.stage.free_drive import FreeDriveConfig, FreeDriveSource
from gravity_friction_comp.stage.friction import FrictionConfig, FrictionStage
from gravity_friction_comp.stage.gravity import GravityConfig, GravityStage
from gravity_friction_comp.stage.settings import StageSettings
from gravity_friction_comp.stage.shaper import SetpointShaper, shaper_limits_from_arm_yaml
from gravity_friction_comp.teleop.config import TeleopPairConfig
from gravity_friction_comp.teleop.feedback import ForceFeedback
from gravity_friction_comp.teleop.link import TeleopLink

__all__ = [
    "ArmPieces",
    "ScriptedHand",
    "SpringObstacle",
    "TeleopLoop",
    "TeleopRecord",
    "arm_pieces",
]


class SpringObstacle:
    """A stiff one-sided wall on one joint of a simulated arm: τ = −k·(q − q_wall) − d·q̇
    while the joint is past the wall (``side`` +1: above it, −1: below), never pulling.

    Used as a :class:`~gravity_friction_comp.sim.lockstep.LockstepDriver`'s ``external``
    (asked at every physics step). :attr:`torque` is the last torque given (the contact
    truth, (n,) [N·m]).

    Raises:
        ConfigError: an unknown joint, stiffness ≤ 0, damping < 0, side not ±1.
    """

    def __init__(
        self,
        arm: SimulatedArm,
        joint: str,
        wall: float,
        stiffness: float,
        damping: float = 0.0,
        side: int = 1,
    ):
        if joint not in arm.joint_names:
            raise ConfigError(f"obstacle joint {joint!r} not in {list(arm.joint_names)}", key="joint")
        if not stiffness > 0 or not damping >= 0 or side not in (1, -1):
            raise ConfigError("obstacle: stiffness > 0, damping ≥ 0, side ±1", key="stiffness")
        self.arm, self.j, self.wall = arm, arm.joint_names.index(joint), float(wall)
        self.k, self.d, self.side = float(stiffness), float(damping), side
        self.torque = np.zeros(arm.n)
        self.active = True

    def at(self, t: float) -> np.ndarray:
        """τ_ext (n,) [N·m] at the arm's current state (``t`` unused: the wall is static)."""
        out = np.zeros(self.arm.n)
        q, v = self.arm.position[self.j], self.arm.velocity[self.j]
        depth = self.side * (q - self.wall)
        if self.active and depth > 0:
            out[self.j] = self.side * min(0.0, -self.k * depth - self.d * self.side * v)
        self.torque = out
        return out.copy()


class ScriptedHand:
    """The simulated hand on the leader: an impedance towards a scripted pose plus stamped torques.

    τ_hand = K·(q_ref(t) − q) − D·q̇ on the joints ``q_ref`` gives (``None``: the hand
    lets go, no impedance), plus ``schedule.at(t)``. :attr:`torque` is the last value (n,) [N·m].

    Args:
        arm: The leader's simulated arm.
        stiffness, damping: K [N·m/rad], D [N·m·s/rad] per joint (n,) or one number.
        reference: t [s] → (n,) q_ref [rad] or ``None``.
    """

    def __init__(
        self, arm: SimulatedArm, stiffness, damping, reference: Callable[[float], np.ndarray | None]
    ):
        self.arm = arm
        self.k = np.broadcast_to(np.asarray(stiffness, dtype=float), (arm.n,)).copy()
        self.d = np.broadcast_to(np.asarray(damping, dtype=float), (arm.n,)).copy()
        self.reference = reference
        self.schedule = ExternalEffortSchedule(arm.joint_names)
        self.torque = np.zeros(arm.n)

    def at(self, t: float) -> np.ndarray:
        """τ_hand (n,) [N·m] at simulated time ``t`` [s] and the arm's current state."""
        out = self.schedule.at(t)
        ref = self.reference(t)
        if ref is not None:
            out = out + self.k * (ref - self.arm.position) - self.d * self.arm.velocity
        self.torque = out
        return out.copy()


@dataclass
class ArmPieces:
    """What one simulated arm of a profile needs: its bridge config, models, stages, arm.

    Attributes:
        profile: The arm profile. config: bridge configuration (kp/kd as run).
        model: the compensator's model (actuators attached). friction_model: the arm YAML's.
        gravity, friction: the stages. arm: the simulated arm (the profile's sim truth).
        effort_limit: {bridge joint: the bridge's |τ_ff| bound [N·m]} (:meth:`ArmProfile.effort_limits`).
        joints: the bridge joints, motor-map order.
    """

    profile: ArmProfile
    config: Any
    model: RobotModel
    friction_model: FrictionModel
    gravity: GravityStage
    friction: FrictionStage
    arm: SimulatedArm
    effort_limit: dict[str, float]
    joints: tuple[str, ...]


def arm_pieces(
    profile: ArmProfile, *, free_drive: bool, kd_scale: float = 0.4, deadband: float = 0.02
) -> ArmPieces:
    """The pieces of one arm as ``arm.launch.py`` runs it: ``free_drive`` (leader: kp 0, kd
    ``kd_scale`` × the motor map's, friction from the measured velocity with the profile's
    free-drive scale and dither, deadband ``deadband`` [rad/s]) or follow (the motor map's
    gains, friction from the setpoint velocity). Gravity: the profile's URDF with its arm
    YAML's actuators and gravity scale, effort limits raised to the motor map's (the URDF's are
    placeholders on some arms); no payload.

    Raises:
        ConfigError, ModelError: as the readers of the profile's files.
    """
    values = profile.bridge_values()
    joints = list(values["joints"])
    if free_drive:
        values["kp"] = [0.0] * len(joints)
        values["kd"] = [kd_scale * k for k in values["kd"]]
    config = bridge_config_from_values(values)
    limits = profile.effort_limits()
    bare = RobotModel.from_urdf(profile.urdf)
    bare = bare.with_actuators(actuator_model_from_arm_yaml(profile.arm_config, robot=bare))
    raised, _ = raised_effort_limits(bare.joint_names, list(bare.effort_limits), limits)
    scale = gravity_scale_from_arm_yaml(profile.arm_config, bare.joint_names)
    gravity = GravityStage(
        GravityConfig(bare, effort_limit=list(raised) or None),
        StageSettings(scale=1.0 if scale is None else scale),
    )
    fmodel = FrictionModel.from_yaml(profile.arm_config, joints)
    if free_drive:
        fconfig = FrictionConfig(
            fmodel,
            tuple(joints),
            velocity_source="measured",
            velocity_deadband=deadband,
            dither=profile.free_drive_dither or 0.0,
            measured=True,
        )
        fs = profile.free_drive_friction_scale
        settings = StageSettings(scale=np.array(fs) if fs else 1.0)
    else:
        fconfig, settings = FrictionConfig(fmodel, tuple(joints)), StageSettings()
    friction = FrictionStage(fconfig, settings)
    sim_config = SimConfig.from_yaml(profile.sim_config)
    # unbridged joints (grippers): held by their own motor on the real arm; here they stick
    held = {
        j: dataclasses.replace(sim_config.joint(j), coulomb=10.0) for j in bare.joint_names if j not in joints
    }
    if held:
        sim_config = dataclasses.replace(sim_config, joints={**sim_config.joints, **held})
    arm = SimulatedArm(bare, sim_config)
    return ArmPieces(profile, config, bare, fmodel, gravity, friction, arm, limits, tuple(joints))


def _bus_parts(config: Any, joints: Sequence[str]) -> list[tuple[str, np.ndarray]]:
    """Per bus of a bridge config: (its name, the indices of its joints in ``joints``), as
    one bridge per bus publishes them (one part on a single-bus arm)."""
    return [
        (bus, np.array([joints.index(m.name) for m in config.motors_on(bus)], dtype=int))
        for bus in config.buses
    ]


@dataclass
class TeleopRecord:
    """One row per tick.

    Attributes:
        t: (k,) [s]. leader_q: (k, n) leader true position [rad] (leader bridge order).
        mapped: (k, m) the leader's true pose mapped onto the follower [rad] (the reference
        at the same instant as ``follower_q``).
        setpoint: (k, m) the shaped follower setpoint [rad] (NaN when none).
        follower_q: (k, m) follower true position [rad] (``pair.follower_joints`` order).
        estimate: (k, m) the observer's external torque [N·m]. contact: (k, m) the true
        external torque on the follower (the obstacle) [N·m]. feedback: (k, n) the feedback
        effort on the leader's setpoint [N·m]. hand: (k, n) the hand's torque [N·m].
        state: (k,) the link's state.
    """

    t: np.ndarray
    leader_q: np.ndarray
    mapped: np.ndarray
    setpoint: np.ndarray
    follower_q: np.ndarray
    estimate: np.ndarray
    contact: np.ndarray
    feedback: np.ndarray
    hand: np.ndarray
    state: list[str]


class TeleopLoop:
    """Leader and follower in one lockstep (module docstring).

    Args:
        leader, follower: :func:`arm_pieces` of each (leader with ``free_drive=True``).
        pair: The pair's mapping (its joints must be the two arms' bridge joints).
        observer_gain: The observer's K [1/s].
        shaper_overrides: ``max_velocity``/``max_acceleration``/``max_jerk`` over the pair's
            ``shaper`` and the follower's arm YAML block (:func:`shaper_limits_from_arm_yaml`).
        hand_stiffness, hand_damping: the :class:`ScriptedHand`'s K, D.
        reference: the hand's scripted pose, t → (n,) leader q_ref or ``None``.

    Raises:
        ConfigError: a pair naming joints the arms' bridges do not have, arms of different
            clocks, shaper limits missing.
    """

    def __init__(
        self,
        leader: ArmPieces,
        follower: ArmPieces,
        pair: TeleopPairConfig,
        *,
        observer_gain: float = 100.0,
        shaper_overrides: Mapping[str, Any] | None = None,
        hand_stiffness: Any = 0.0,
        hand_damping: Any = 0.0,
        reference: Callable[[float], np.ndarray | None] = lambda t: None,
    ):
        self.pair = pair
        lj, fj = leader.joints, follower.joints
        bad = [j for j in pair.leader_joints if j not in lj] + [
            j for j in pair.follower_joints if j not in fj
        ]
        if bad:
            raise ConfigError(f"teleop pair names joints the bridges lack: {bad}", key="joints")
        self.leader, self.follower = leader, follower
        # leader: free drive (its source takes the feedback effort), its ChainArm named "leader"
        fixed = [j for j in leader.model.joint_names if j not in lj]
        q0 = leader.arm.position
        source = FreeDriveSource(
            FreeDriveConfig(lj, fixed, [float(q0[leader.model.joint_names.index(j)]) for j in fixed])
        )
        self.leader_loop = FreeDriveLoop(
            leader.arm,
            leader.config,
            source,
            leader.gravity,
            leader.friction,
            channel=unique_channel("teleop_leader"),
            name="leader",
        )
        self.hand = ScriptedHand(leader.arm, hand_stiffness, hand_damping, reference)
        self.leader_loop.driver.external = self.hand
        # follower: follow mode behind the link and the shaper
        fm = follower.model
        idx = [fm.joint_names.index(j) for j in pair.follower_joints]
        self.link = TeleopLink(pair, fm.position_lower[idx], fm.position_upper[idx], fm.velocity_limits[idx])
        limits = shaper_limits_from_arm_yaml(
            follower.profile.arm_config,
            pair.follower_joints,
            urdf_velocity=fm.velocity_limits[idx],
            position_lower=fm.position_lower[idx],
            position_upper=fm.position_upper[idx],
            overrides={**pair.shaper, **(shaper_overrides or {})},
        )
        self.follower_chain = ChainArm(
            follower.arm,
            follower.config,
            channel=unique_channel("teleop_follower"),
            on_state=self._on_follower_state,
            name="follower",
        )
        s = self.follower_chain.schedule
        self.period = s.tick_steps * s.dt_ns * 1e-9  # [s] one tick
        self.shaper = SetpointShaper.from_limits(limits, self.period, pair.follower_joints)
        self.obstacle: SpringObstacle | None = None
        self.observer = MomentumObserver(
            fm,
            observer_gain,
            friction=follower.friction_model,  # the bridged joints' (an OpenArm YAML has no names)
            friction_joints=follower.joints,
            velocity_deadband=0.02,
        )
        self.feedback = ForceFeedback(
            pair, {j: leader.effort_limit[j] for j in pair.leader_joints if j in leader.effort_limit}
        )
        self.chain = SimulatedChain([self.leader_loop.chain, self.follower_chain])
        self.follower_chain.enable()
        self._leader_buses = _bus_parts(leader.config, lj)
        self._follower_buses = _bus_parts(follower.config, fj)
        self._fixed_f = {
            j: float(follower.arm.position[fm.joint_names.index(j)]) for j in fm.joint_names if j not in fj
        }
        self._estimate = np.zeros(len(pair.follower_joints))
        self._shaped_started = False
        self._held: np.ndarray | None = None  # bridged follower joints outside the pair: held here
        self.follower_fault = ""

    def set_obstacle(
        self, joint: str, wall: float, stiffness: float, damping: float = 0.0, side: int = 1
    ) -> SpringObstacle:
        """Put a :class:`SpringObstacle` on the follower (replacing any)."""
        self.obstacle = SpringObstacle(self.follower.arm, joint, wall, stiffness, damping, side)
        self.follower_chain.driver.external = self.obstacle
        return self.obstacle

    def _on_follower_state(self, now_ns: int) -> None:
        # the follower's joint_states: to the link and the observer (its external_effort)
        state = self.follower_chain.core.joint_state()
        if not state.valid.all():
            return
        t = now_ns * 1e-9
        names = list(self.follower.joints)
        for bus, idx in self._follower_buses:
            self.link.follower([names[i] for i in idx], state.position[idx], t, bus)
        fm = self.follower.model
        at = {n: i for i, n in enumerate(names)}
        q = np.array([state.position[at[j]] if j in at else self._fixed_f[j] for j in fm.joint_names])
        v = np.array([state.velocity[at[j]] if j in at else 0.0 for j in fm.joint_names])
        # an unbridged joint (a gripper finger) rests held by its own motor: its torque is g
        tau = np.array([state.effort[at[j]] if j in at else 0.0 for j in fm.joint_names])
        unbridged = [i for i, j in enumerate(fm.joint_names) if j not in at]
        if unbridged:
            tau[unbridged] = fm.gravity(q)[unbridged]
        r = self.observer.update(t, q, v, tau)
        self.feedback.external(list(fm.joint_names), r, t)
        self._estimate = r[[fm.joint_names.index(j) for j in self.pair.follower_joints]]

    def set_follower_fault(self, reason: str) -> None:
        """A follower fault (``""`` clears it): the link holds, feedback stops."""
        if reason:
            self.link.set_fault(reason)
        else:
            self.link.clear_fault()
        self.feedback.set_fault(bool(reason))
        self.follower_fault = reason

    def _follower_command(self, t: float) -> np.ndarray | None:
        target = self.link.target(t)
        if target is None:
            return None
        if not self._shaped_started:  # the shaper starts at the follower's measured pose, at rest
            self.shaper.reset(target)
            self._shaped_started = True
        shaped = self.shaper.step(target, t, target_velocity=self.link.velocity, sample_time=t)
        chain_names = list(self.follower.joints)
        if self._held is None:  # bridged joints the pair does not map hold their first pose
            self._held = np.array(self.follower_chain.core.joint_state().position, dtype=float)
        position, velocity = self._held.copy(), np.zeros(len(chain_names))
        for k, j in enumerate(self.pair.follower_joints):
            i = chain_names.index(j)
            position[i], velocity[i] = shaped.position[k], shaped.velocity[k]
        at = {j: i for i, j in enumerate(chain_names)}
        model_names = list(self.follower.model.joint_names)
        full_q = np.array([position[at[j]] if j in at else self._fixed_f[j] for j in model_names])
        full_v = np.array([velocity[at[j]] if j in at else 0.0 for j in model_names])
        effort = self.follower.gravity.update(
            model_names, full_q, full_v, np.zeros(len(model_names)), t
        ).effort
        effort = self.follower.friction.update(model_names, full_q, full_v, effort, t).effort
        self.follower_chain.command(
            position, velocity, np.asarray(effort)[[model_names.index(j) for j in chain_names]]
        )
        return shaped.position

    def run(self, duration: float, on_tick: Callable[[float], None] | None = None) -> TeleopRecord:
        """Run ``duration`` [s] of simulated time; ``on_tick(t)`` first at each tick."""
        s = self.follower_chain.schedule
        ticks = int(round(duration * 1e9 / (s.tick_steps * s.dt_ns)))
        rows: dict[str, list] = {
            k: [] for k in ("t", "lq", "mapped", "sp", "fq", "est", "contact", "fb", "hand", "state")
        }
        lm, fm = self.leader.model.joint_names, self.follower.model.joint_names
        l_idx = [lm.index(j) for j in self.leader.joints]
        f_idx = [fm.index(j) for j in self.pair.follower_joints]
        lm_pair = [lm.index(j) for j in self.pair.leader_joints]
        m = len(self.pair.follower_joints)
        for _ in range(ticks):
            t = s.tick_ns * 1e-9
            if on_tick is not None:
                on_tick(t)
            state = self.leader_loop.core.joint_state()
            if state.valid.all():
                for bus, idx in self._leader_buses:
                    names = [self.leader.joints[i] for i in idx]
                    self.link.leader(names, state.position[idx], t, state.velocity[idx], bus)
            fb = self.feedback.effort(t)
            self.leader_loop.source.feedback(list(fb.names), fb.effort, t)
            self.leader_loop.command(t)
            sp = self._follower_command(t)
            self.chain.run_tick()
            rows["t"].append(t)
            rows["lq"].append(self.leader.arm.position[l_idx])
            rows["mapped"].append(self.link.map(self.leader.arm.position[lm_pair]))
            rows["sp"].append(np.full(m, np.nan) if sp is None else sp)
            rows["fq"].append(self.follower.arm.position[f_idx])
            rows["est"].append(self._estimate.copy())
            contact = self.obstacle.torque if self.obstacle is not None else np.zeros(len(fm))
            rows["contact"].append(contact[f_idx])
            by_name = dict(zip(fb.names, fb.effort))
            rows["fb"].append(np.array([by_name.get(j, 0.0) for j in self.leader.joints]))
            rows["hand"].append(self.hand.torque[l_idx])
            rows["state"].append(self.link.state)
        arr = {k: np.array(v) for k, v in rows.items() if k != "state"}
        return TeleopRecord(
            arr["t"],
            arr["lq"],
            arr["mapped"],
            arr["sp"],
            arr["fq"],
            arr["est"],
            arr["contact"],
            arr["fb"],
            arr["hand"],
            rows["state"],
        )

    def close(self) -> None:
        """Close both arms' buses (idempotent)."""
        self.chain.close()
