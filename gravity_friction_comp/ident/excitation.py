"""Excitation trajectories for friction identification (ROS-free).

Two kinds of profile, one joint at a time with the other joints held at their start
position (issue 7, "Excitation"):

- **Constant-velocity sweeps**: for each speed ``v`` in ``speeds`` the joint moves across
  ``[center − amplitude/2, center + amplitude/2]`` up at ``+v`` and back at ``−v`` with
  trapezoidal velocity (acceleration ``acceleration``), holding ``hold_time`` at each end.
  A sweep at a slow speed is shortened to ``max_sweep_duration`` so slow speeds do not take
  minutes. The constant-velocity part gives samples of friction at a known speed in both
  directions (Coulomb level, viscous slope, Stribeck drop at low speed).
- **Slow chirp**: ``q = center + w(t)·(amplitude/2)·sin(2π(f0·t + (f1 − f0)t²/(2T)))``
  (linear chirp, window ``w`` = sin² ramps over the first and last 10 %), for the low-speed
  range and direction reversals.

Safety: every speed is clipped to ``velocity_scale`` × the URDF ``<limit velocity>`` and the
range to the URDF ``[lower, upper]`` shrunk by ``margin`` (URDF spec, ``<limit>`` element).

The output is a sampled setpoint stream (time, position, velocity, acceleration per joint)
that a setpoint player or a simulation loop can replay: :func:`write_setpoint_csv` writes it
as a joint-log CSV the ``setpoint_player`` replays (``profile:=csv csv_path:=...``,
``loop:=false``); the command line is :mod:`gravity_friction_comp.tools.excite`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.validation import number, per_joint

__all__ = [
    "ExcitationConfig",
    "ExcitationProfile",
    "JointLimits",
    "excitation_profile",
    "record_simulated",
    "write_setpoint_csv",
]


class JointLimits(NamedTuple):
    """Joint names and URDF limits, each array (n,).

    Attributes:
        joint_names: (n,) names. lower, upper: position limits [rad]. velocity: [rad/s] > 0.
    """

    joint_names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray

    @classmethod
    def from_model(cls, model) -> JointLimits:
        """Limits of a :class:`~gravity_friction_comp.model.robot_model.RobotModel` (URDF ``<limit>``)."""
        return cls(
            tuple(model.joint_names),
            np.array(model.position_lower, dtype=float),
            np.array(model.position_upper, dtype=float),
            np.array(model.velocity_limits, dtype=float),
        )


@dataclasses.dataclass(frozen=True)
class ExcitationConfig:
    """Settings of :func:`excitation_profile`.

    Attributes:
        joints: names of the joints to excite, in order; ``None`` → all joints.
        speeds: sweep speeds [rad/s] (> 0), slowest first recommended.
        amplitude: sweep range width [rad] (> 0), centred on ``center`` (or the start
            position) and clipped to the limits minus ``margin``.
        acceleration: ramp acceleration [rad/s²] (> 0).
        hold_time: rest at each sweep end [s] (≥ 0).
        max_sweep_duration: longest constant-speed sweep [s] (> 0); slower sweeps cover less.
        chirp: append a chirp per joint.
        chirp_f0, chirp_f1: chirp start/end frequency [Hz] (> 0).
        chirp_duration: [s] (> 0).
        velocity_scale: fraction of the URDF velocity limit never exceeded (0, 1].
        margin: distance kept from the URDF position limits [rad] (≥ 0).
        rate_hz: sample rate of the profile [Hz] (> 0).

    Raises:
        ConfigError: a value out of range (``key`` names it).
    """

    joints: tuple[str, ...] | None = None
    speeds: tuple[float, ...] = (0.05, 0.1, 0.2, 0.4, 0.8)
    amplitude: float = 0.6
    acceleration: float = 2.0
    hold_time: float = 0.3
    max_sweep_duration: float = 3.0
    chirp: bool = True
    chirp_f0: float = 0.05
    chirp_f1: float = 0.5
    chirp_duration: float = 20.0
    velocity_scale: float = 0.5
    margin: float = 0.05
    rate_hz: float = 200.0

    def __post_init__(self) -> None:
        if self.joints is not None:
            if isinstance(self.joints, str) or not all(isinstance(j, str) for j in self.joints):
                raise ConfigError(
                    f"joints: expected a list of joint names, got {self.joints!r}",
                    key="joints",
                    value=self.joints,
                )
            object.__setattr__(self, "joints", tuple(self.joints))
        try:
            speeds = tuple(float(s) for s in self.speeds)
        except (TypeError, ValueError):
            raise ConfigError(
                f"speeds: expected numbers, got {self.speeds!r}", key="speeds", value=self.speeds
            ) from None
        if not speeds or not all(math.isfinite(s) and s > 0 for s in speeds):
            raise ConfigError(
                f"speeds: expected one or more finite values > 0, got {speeds}",
                key="speeds",
                value=self.speeds,
            )
        object.__setattr__(self, "speeds", speeds)
        for key in (
            "amplitude",
            "acceleration",
            "max_sweep_duration",
            "chirp_f0",
            "chirp_f1",
            "chirp_duration",
            "rate_hz",
            "velocity_scale",
        ):
            number(key, getattr(self, key), positive=True)
        for key in ("hold_time", "margin"):
            number(key, getattr(self, key), nonneg=True)
        if self.velocity_scale > 1.0:
            raise ConfigError(
                f"velocity_scale must be ≤ 1, got {self.velocity_scale}",
                key="velocity_scale",
                value=self.velocity_scale,
            )


class ExcitationProfile(NamedTuple):
    """Sampled setpoints, m samples of n joints.

    Attributes:
        joint_names: (n,) names (all joints of the limits, in their order).
        time: (m,) [s] from 0, uniform at the config's rate.
        position: (m, n) [rad]. velocity: (m, n) [rad/s]. acceleration: (m, n) [rad/s²].
        segments: ``(joint, label, t_start, t_end)`` per part, label ``"sweep <v>"``,
            ``"chirp"`` or ``"move"``.
    """

    joint_names: tuple[str, ...]
    time: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    segments: tuple[tuple[str, str, float, float], ...]


def _trapezoid(q0: float, q1: float, speed: float, accel: float, dt: float):
    """Samples (t > 0 … end) of a trapezoidal move q0 → q1 (peak ≤ speed, ramps ``accel``)."""
    d = abs(q1 - q0)
    if d == 0.0:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    sgn = math.copysign(1.0, q1 - q0)
    vp = min(speed, math.sqrt(d * accel))
    ta = vp / accel
    tc = (d - vp * ta) / vp
    total = 2 * ta + tc
    t = np.arange(1, int(math.ceil(total / dt)) + 1) * dt
    t = np.minimum(t, total)
    s = np.where(
        t < ta,
        0.5 * accel * t**2,
        np.where(
            t < ta + tc, 0.5 * vp * ta + vp * (t - ta), d - 0.5 * accel * np.maximum(total - t, 0.0) ** 2
        ),
    )
    v = np.where(t < ta, accel * t, np.where(t < ta + tc, vp, accel * np.maximum(total - t, 0.0)))
    a = np.where(t < ta, accel, np.where(t < ta + tc, 0.0, -accel))
    return q0 + sgn * s, sgn * v, sgn * a


def excitation_profile(
    limits: JointLimits,
    start_position: Sequence[float],
    config: ExcitationConfig | None = None,
    *,
    center: Sequence[float] | None = None,
) -> ExcitationProfile:
    """Sweeps (and chirps) for each selected joint in turn, others held (module doc).

    Args:
        limits: joint names and URDF limits (:meth:`JointLimits.from_model`).
        start_position: (n,) [rad] where the arm is; each joint returns there after its part.
        config: settings (defaults when ``None``).
        center: (n,) [rad] sweep centres; default ``start_position``.

    Returns:
        :class:`ExcitationProfile`; positions stay within ``[lower + margin, upper − margin]``
        (a start position outside it is first moved inside), speeds ≤ velocity_scale × limit.

    Raises:
        ConfigError: unknown joint (valid names listed), non-finite ``start_position`` /
            ``center`` (a scalar is broadcast), or a joint whose range is narrower than
            2·margin; DimensionError (a ConfigError) for a wrong length.
    """
    cfg = ExcitationConfig() if config is None else config
    names = tuple(limits.joint_names)
    n = len(names)
    q_start = per_joint("start_position", start_position, n)
    c_all = q_start if center is None else per_joint("center", center, n)
    joints = names if cfg.joints is None else cfg.joints
    unknown = [j for j in joints if j not in names]
    if unknown:
        raise ConfigError(
            f"joints: unknown joint(s) {unknown}; valid joints: {list(names)}", key="joints", value=unknown[0]
        )
    lo = np.asarray(limits.lower, dtype=float) + cfg.margin
    hi = np.asarray(limits.upper, dtype=float) - cfg.margin
    dt = 1.0 / cfg.rate_hz
    q_hold = np.clip(q_start, lo, hi)
    pos, vel, acc = [q_hold[None, :]], [np.zeros((1, n))], [np.zeros((1, n))]
    segments = []
    t_now = [0.0]

    def append(i: int, qs, vs, as_, joint: str, label: str) -> None:
        m = len(qs)
        if m == 0:
            return
        block = np.repeat(q_hold[None, :], m, axis=0)
        block[:, i] = qs
        vb = np.zeros((m, n))
        vb[:, i] = vs
        ab = np.zeros((m, n))
        ab[:, i] = as_
        pos.append(block)
        vel.append(vb)
        acc.append(ab)
        segments.append((joint, label, t_now[0], t_now[0] + m * dt))
        t_now[0] += m * dt

    def hold(i: int, q: float, joint: str) -> None:
        m = int(round(cfg.hold_time / dt))
        append(i, np.full(m, q), np.zeros(m), np.zeros(m), joint, "hold")

    for joint in joints:
        i = names.index(joint)
        if hi[i] - lo[i] <= 0:
            raise ConfigError(
                f"joint {joint}: range [{limits.lower[i]}, {limits.upper[i]}] is "
                f"narrower than 2·margin = {2 * cfg.margin}",
                key="margin",
                value=cfg.margin,
            )
        vmax = cfg.velocity_scale * float(limits.velocity[i])
        c = float(np.clip(c_all[i], lo[i], hi[i]))
        a = min(cfg.amplitude / 2, c - lo[i], hi[i] - c)
        if a <= 0:  # centre on a limit: use the widest half-range available inside
            c = 0.5 * (lo[i] + hi[i])
            a = min(cfg.amplitude / 2, 0.5 * (hi[i] - lo[i]))
        q = float(q_hold[i])
        for speed in cfg.speeds:
            v = min(speed, vmax)
            half = min(a, 0.5 * v * cfg.max_sweep_duration)
            q_a, q_b = c - half, c + half
            label = f"sweep {v:g}"
            for target, lab in ((q_a, "move"), (q_b, label), (q_a, label)):
                speed_now = v if lab == label else min(vmax, max(v, 0.2 * vmax))
                qs, vs, as_ = _trapezoid(q, target, speed_now, cfg.acceleration, dt)
                append(i, qs, vs, as_, joint, lab)
                q = target
                hold(i, q, joint)
        if cfg.chirp:
            qs, vs, as_ = _trapezoid(q, c, min(vmax, 0.2 * vmax + 0.1), cfg.acceleration, dt)
            append(i, qs, vs, as_, joint, "move")
            q = c
            amp = a
            # clip so that the peak speed ≈ amp·2π·f1 (+ window slope) stays below vmax
            amp = min(amp, vmax / (2 * math.pi * cfg.chirp_f1 * 1.5))
            t = np.arange(1, int(round(cfg.chirp_duration / dt)) + 1) * dt
            T = cfg.chirp_duration
            phase = 2 * math.pi * (cfg.chirp_f0 * t + 0.5 * (cfg.chirp_f1 - cfg.chirp_f0) * t**2 / T)
            ramp = np.clip(np.minimum(t, T - t) / (0.1 * T), 0.0, 1.0)
            w = np.sin(0.5 * math.pi * ramp) ** 2
            qs = c + amp * w * np.sin(phase)
            vs = np.gradient(qs, dt)
            append(i, qs, vs, np.gradient(vs, dt), joint, "chirp")
            q = float(qs[-1])
        qs, vs, as_ = _trapezoid(q, float(q_hold[i]), min(vmax, 0.2 * vmax + 0.1), cfg.acceleration, dt)
        append(i, qs, vs, as_, joint, "move")
        hold(i, float(q_hold[i]), joint)
    position = np.concatenate(pos)
    position = np.clip(position, lo, hi)
    m = position.shape[0]
    return ExcitationProfile(
        names, np.arange(m) * dt, position, np.concatenate(vel), np.concatenate(acc), tuple(segments)
    )


def write_setpoint_csv(profile: ExcitationProfile, path) -> None:
    """Write ``profile`` as a joint-log CSV (:func:`~gravity_friction_comp.ident.joint_log.write_csv`:
    ``time``, ``<joint>/position`` [rad], ``<joint>/velocity`` [rad/s]), which the
    setpoint_player replays (``profile:=csv``)."""
    from gravity_friction_comp.ident.joint_log import JointStateLog, write_csv

    write_csv(
        path, JointStateLog(profile.joint_names, profile.time, profile.position, profile.velocity, None)
    )


def record_simulated(
    profile: ExcitationProfile,
    arm,
    bridge_config,
    *,
    feedforward: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    channel: str = "record_simulated",
):
    """Play ``profile`` through the MIT bridge core into the simulated arm and record what the
    bridge measures, faster than real time (no rclpy; the ``mit_bridge`` node's loop, minus ROS).

    Each bridge cycle (``1 / bridge_config.rate_hz``): the setpoint at that time (linear
    interpolation of the profile) goes to
    :meth:`~gravity_friction_comp.mit.bridge_core.MitBridgeCore.set_command` with ``tau_ff =
    feedforward(q_setpoint, v_setpoint)``; the core's MIT frames go over a python-can
    ``virtual`` bus to :class:`~gravity_friction_comp.sim.bus.SimulatedMotorBus` (the
    :class:`~gravity_friction_comp.sim.chain.ChainArm` of the arm, one tick per cycle; emulated
    motors answer with quantized feedback frames, then the arm is stepped at its physics
    rate until the next cycle); the replies are decoded by the core, and its joint state is
    one log sample. So the log carries exactly the MIT feedback quantization (16-bit
    position, 12-bit velocity and torque over the motor's ranges, mit_codec) of the bridge's
    ``joint_states``; no other noise is added. The effort is the torque the motor reports
    (its MIT law on the quantized command at the reply), mapped to the joint.

    Args:
        profile: from :func:`excitation_profile`; its joints must include the bridge's joints
            (other joints are ignored: passive in the arm).
        arm: :class:`~gravity_friction_comp.sim.arm.SimulatedArm` (stepped: its state
            changes); its physics rate must be a multiple of the bridge rate.
        bridge_config: :class:`~gravity_friction_comp.mit.bridge_core.BridgeConfig` (motors,
            kp [N·m/rad], kd [N·m·s/rad], rate_hz [Hz]).
        feedforward: ``(q (n,), v (n,)) → tau_ff (n,)`` [N·m] in the profile's joint order
            (e.g. the compensator's gravity ``model.gravity(q)``); ``None`` → 0.
        channel: virtual bus channel (unique per concurrent recording).

    Returns:
        :class:`~gravity_friction_comp.ident.joint_log.JointStateLog` of the bridge's joints
        (motor-map order), time [s] from 0 at the bridge rate.

    Raises:
        ConfigError: a bridge joint missing from the profile (lists the profile's joints),
            or a physics rate that is not a multiple of the bridge rate.
    """
    from gravity_friction_comp.ident.joint_log import JointStateLog
    from gravity_friction_comp.sim.chain import ChainArm  # the CAN stack: only when simulating

    names = list(profile.joint_names)
    joints = [m.name for m in bridge_config.motors]
    missing = [j for j in joints if j not in names]
    if missing:
        raise ConfigError(
            f"bridge joint(s) {missing} not in the profile; profile joints: {names}",
            key="joints",
            value=missing,
        )
    idx = [names.index(j) for j in joints]
    chain = ChainArm(arm, bridge_config, channel=channel)  # one tick per bridge cycle, no delay
    period = 1.0 / bridge_config.rate_hz
    times = np.arange(0.0, float(profile.time[-1]) + 0.5 * period, period)
    t_log, q_log, v_log, e_log = [], [], [], []
    core = chain.core

    def settle() -> None:  # one bridge cycle of physics, no frame exchange
        for _ in range(chain.schedule.exchange_steps):
            chain.sim.run_once()

    try:
        chain.enable()  # the motors answer with the start pose, then give no torque for a cycle
        chain.ingest()
        settle()
        for now in times:
            q_set = np.array(
                [np.interp(now, profile.time, profile.position[:, i]) for i in range(len(names))]
            )
            v_set = np.array(
                [np.interp(now, profile.time, profile.velocity[:, i]) for i in range(len(names))]
            )
            tau = (
                np.zeros(len(names))
                if feedforward is None
                else np.asarray(feedforward(q_set, v_set), dtype=float)
            )
            chain.command(q_set[idx], v_set[idx], tau[idx])
            chain.driver.run_tick()
            state = core.joint_state()
            if state.valid.all():
                t_log.append(now)
                q_log.append(state.position)
                v_log.append(state.velocity)
                e_log.append(state.effort)
        chain.disable()
        settle()
    finally:
        chain.close()
    return JointStateLog(tuple(joints), np.asarray(t_log), np.array(q_log), np.array(v_log), np.array(e_log))
