"""ROS-free core of the MIT bridge: joint commands → CAN frames, feedback → joint state, safety.

The node (or an SDK loop) owns the clock and the bus; this module owns the decisions:

- :meth:`MitBridgeCore.set_command` stores the newest joint command (position [rad],
  velocity [rad/s], effort [N·m] per joint); NaN/inf commands are rejected and the previous
  command is kept (so a stream of bad commands ends in the timeout behaviour).
- :meth:`MitBridgeCore.step` (call at ``rate_hz`` with the current time ``now`` [s]) returns the
  ``(can_id, data)`` frames to send this cycle.
- :meth:`MitBridgeCore.ingest_feedback` decodes a received frame and updates the measured
  joint state, fault latch and reply bookkeeping.

Per-motor behaviour, evaluated in :meth:`step` in this order:

1. shut down (after :meth:`shutdown_frames`): disable frames.
2. fault latched (feedback reported a fault state; sticky until :meth:`request_clear_fault`):
   ``fault_behavior``.
   Then a reaction in force (:meth:`MitBridgeCore.react`, a detected contact; until
   :meth:`MitBridgeCore.clear_reaction`): its behaviour on every motor.
3. no valid command yet: ``startup_behavior`` (default ``timeout_behavior``; ``hold``
   keeps the arm at its first measured position until a setpoint source appears, a joint
   with kp 0 is damped instead: a hold without stiffness would not hold). None for longer
   than ``command_timeout`` after one: ``timeout_behavior``
   from the first step with ``now - last command > command_timeout`` (up to
   :data:`TIME_TOLERANCE`: deterministic for ticks at exact multiples of the period);
   left on the first step after a valid command arrives.
4. otherwise the command: p, v from the command, kp/kd per joint, τ_ff = effort clamped to
   ``effort_limit`` and to the motor's T_MAX at the joint (r·T_MAX).

Behaviours (joint space, mapped to the motor with :class:`JointMotorMap`):
``damp`` kp = 0, kd = ``damp_kd`` (default: the joint's kd), τ_ff = 0;
``hold`` p = last measured position latched when the behaviour starts, v = 0, the joint's
kp/kd, τ_ff = 0 (falls back to ``damp`` when nothing was ever measured);
``disable`` the disable special frame every cycle (the motor still answers, so replies
keep being checked); an enable frame is sent when the motor leaves it.

A motor is *stale* when it has missed ``stale_cycles`` consecutive replies (a step after one
that sent frames, with no feedback received in between). Stale is reported, not acted on:
commands keep going out so the motor (which runs its own loop) stays commanded.

No wall clock, no rclpy, no I/O: deterministic and testable with a fake clock.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

import numpy as np

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.mit.bridge_checks import (
    JointValues,
    check_command,
    check_gains_motor_side,
    check_time,
    gain_array,
)
from gravity_friction_comp.mit.bridge_config import BridgeConfig, check_behavior, check_gains
from gravity_friction_comp.mit.bridge_status import JointStateArrays, MotorStatus
from gravity_friction_comp.mit.damiao_registers import (
    damiao_register_read_request,
    parse_damiao_register_reply,
)
from gravity_friction_comp.mit.motor_codec import MotorCodec
from gravity_friction_comp.mit.special_frames import DISABLE_FRAME, ENABLE_FRAME, clear_error_frames
from gravity_friction_comp.validation import frame_bytes

__all__ = [
    "JointStateArrays",
    "MitBridgeCore",
    "MotorStatus",
]

#: [s] Clock-reading slack of the command timeout (see :meth:`MitBridgeCore.step`): the
#: switch happens on the first tick with elapsed > timeout + min(1 µs, period / 100).
TIME_TOLERANCE = 1e-6


class _MotorRuntime:
    """Mutable per-motor bookkeeping (internal)."""

    def __init__(self) -> None:
        self.behavior = "none"
        self.reason = ""
        self.hold_position: float | None = None
        self.fault = False
        self.fault_reason = ""
        self.clear_requested = False
        # Fault replies still ignored after a clear: replies to frames sent before the clear
        # can arrive after it and must not re-latch the fault just cleared.
        self.fault_grace = 0
        self.replied = False
        self.sent_last_step = False
        self.missed = 0
        self.total_missed = 0
        self.replies = 0
        self.effort_clamped = False
        self.position_clamped = False
        self.motor_enabled: bool | None = None
        self.temperatures: tuple[tuple[str, int], ...] = ()
        self.last_reply_time: float | None = None
        self.q = 0.0
        self.qd = 0.0
        self.tau = 0.0
        self.valid = False


# --- the core ---------------------------------------------------------------------------------


class MitBridgeCore:
    """Safety state machine and frame builder for n MIT motors (one per joint).

    Args:
        config: :class:`BridgeConfig`.
        startup_behavior: Behaviour before the first valid command (:data:`BEHAVIORS`);
            ``None`` = ``config.timeout_behavior``. ``hold`` latches each joint's first
            measured position (kp/kd of the joint, τ_ff 0; damp while unmeasured or kp 0).

    All times are explicit ``now`` arguments [s] on one monotonic clock.

    Raises:
        ConfigError: not a BridgeConfig, ``startup_behavior`` not in :data:`BEHAVIORS`
            (key ``startup_behavior``), gains that overflow on the motor side or exceed its
            encodable range kp_max·r², kd_max·r² (key ``kp``; the message names the joint,
            the gain and the range).
    """

    def __init__(self, config: BridgeConfig, startup_behavior: str | None = None):
        if not isinstance(config, BridgeConfig):
            raise ConfigError("config must be a BridgeConfig", key="config", value=config)
        if startup_behavior is None:
            startup_behavior = config.timeout_behavior
        self.config = config
        self.startup_behavior = check_behavior("startup_behavior", startup_behavior)
        self._joint_names = tuple(m.name for m in config.motors)
        self._tau_limit = tuple(m.tau_limit for m in config.motors)  # config is frozen: once, not per step
        n = len(config.motors)
        self._kp = np.array([m.kp for m in config.motors], dtype=float)
        self._kd = np.array([m.kd for m in config.motors], dtype=float)
        try:  # gains that overflow on the motor side (kp 1e308 at gear 0.5) never reach step()
            check_gains_motor_side(config.motors, self._kp, self._kd)
        except InputError as error:
            raise ConfigError(str(error), key="kp", value=self._kp.tolist()) from None
        self._cmd_q = np.zeros(n)
        self._cmd_qd = np.zeros(n)
        self._cmd_tau = np.zeros(n)
        self._cmd_time: float | None = None
        self._rt = [_MotorRuntime() for _ in range(n)]
        self._codecs = [MotorCodec(m.limits, m.mapping) for m in config.motors]
        self._motors = config.motors
        # a Damiao register reply starts [id lo, id hi, 0x33] as the request does: a reply that
        # does not (every feedback frame but an aliasing one) skips the parse (None: not Damiao)
        self._register_head = [
            damiao_register_read_request(m.can_id, 0)[:3] if m.limits.family == "damiao" else None
            for m in config.motors
        ]
        self._by_master: dict[int, list[int]] = {}
        for i, m in enumerate(config.motors):
            self._by_master.setdefault(m.master_id, []).append(i)
        self._shut_down = False
        self._reaction: tuple[str, str] | None = None  # (behaviour, reason) of react()
        self.frames_sent = 0
        self.frames_received = 0
        self.rejected_commands = 0
        self.unknown_frames = 0
        self.register_frames = 0

    # --- properties -----------------------------------------------------------------------

    @property
    def n_joints(self) -> int:
        """Number of joints / motors."""
        return len(self.config.motors)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Joint names in order."""
        return self._joint_names

    @property
    def reply_ids(self) -> frozenset[int]:
        """Arbitration ids the bridge listens to (for a python-can filter)."""
        return frozenset(self._by_master)

    # --- inputs ---------------------------------------------------------------------------

    def checked_command(
        self,
        position: JointValues,
        velocity: JointValues | None,
        effort: JointValues | None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The command :meth:`set_command` would store, validated, without storing or counting it.

        The node checks a command with this before it queues it (lockstep), so a command
        that would be refused never reaches a later :meth:`set_command`.

        Args:
            position: Joint positions [rad], shape (n,); required (``None`` is refused).
            velocity: Joint velocities [rad/s], shape (n,), or ``None`` for zeros.
            effort: Joint efforts (τ_ff) [N·m], shape (n,), or ``None`` for zeros.

        Returns:
            ``(position, velocity, effort)``, new float arrays of shape (n,).

        Raises:
            InputError: as :meth:`set_command`.
        """
        return check_command(self.config.motors, position, velocity, effort)

    def set_command(
        self,
        position: JointValues,
        velocity: JointValues | None,
        effort: JointValues | None,
        now: float,
    ) -> None:
        """Store the newest joint command (copied; the caller's arrays are not kept).

        Args:
            position: Joint positions [rad], shape (n,); required (``None`` is refused).
            velocity: Joint velocities [rad/s], shape (n,), or ``None`` for zeros.
            effort: Joint efforts (τ_ff) [N·m], shape (n,), or ``None`` for zeros.
            now: Receive time [s], finite. A stamp later than the next :meth:`step`'s ``now``
                counts as that step's time (a future stamp never extends the command's life).

        Raises:
            InputError: NaN/inf anywhere, ``now`` included (reason ``Reason.NOT_FINITE``),
                not numbers (``Reason.TYPE``), not of shape (n,) (``Reason.SHAPE``), position ``None``
                (``Reason.MISSING``), a finite value that overflows once mapped to the motor
                (``Reason.RANGE``, the joint named); the previous command is kept, its age
                keeps growing, and :attr:`rejected_commands` counts it.
        """
        try:
            now = check_time(now)
            q, qd, tau = self.checked_command(position, velocity, effort)
        except InputError:
            self.rejected_commands += 1
            raise
        self._cmd_q, self._cmd_qd, self._cmd_tau = q, qd, tau
        self._cmd_time = now

    def checked_gains(
        self, kp: JointValues | None = None, kd: JointValues | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The gains :meth:`set_gains` would apply, validated, without applying them.

        The node's parameter callback calls this to accept or reject ``ros2 param set``.

        Args:
            kp: Joint stiffness [N·m/rad], shape (n,); ``None`` keeps the current one.
            kd: Joint damping [N·m·s/rad], shape (n,); ``None`` keeps the current one.

        Returns:
            ``(kp, kd)`` new arrays, shape (n,) each.

        Raises:
            InputError: not numbers (reason ``Reason.TYPE``), not of shape (n,) (``Reason.SHAPE``).
            ConfigError: negative or non-finite (key ``kp``/``kd``), or beyond the motor's
                encodable range at the joint (kp_max·r², kd_max·r²; the joint, gain and range named).
        """
        n = self.n_joints
        new_kp = self._kp if kp is None else check_gains("kp", gain_array("kp", kp, n))
        new_kd = self._kd if kd is None else check_gains("kd", gain_array("kd", kd, n))
        for key, gains in (("kp", (new_kp, self._kd)), ("kd", (new_kp, new_kd))):
            try:
                check_gains_motor_side(self.config.motors, *gains)
            except InputError as error:
                raise ConfigError(str(error), key=key, value=gains[key == "kd"].tolist()) from None
        return new_kp.copy(), new_kd.copy()

    def set_gains(self, kp: JointValues | None = None, kd: JointValues | None = None) -> None:
        """Set joint-space gains (runtime parameters), shape (n,) each; ``None`` keeps them.

        Both are validated (:meth:`checked_gains`) before either is applied.

        Raises:
            InputError: not of shape (n,) (``Reason.SHAPE``). ConfigError: negative or non-finite
                (key ``kp``/``kd``).
        """
        self._kp, self._kd = self.checked_gains(kp, kd)

    @property
    def gains(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the joint kp [N·m/rad] and kd [N·m·s/rad], shape (n,) each."""
        return self._kp.copy(), self._kd.copy()

    def request_clear_fault(self, index: int | None = None) -> None:
        """Ask the next :meth:`step` to clear the latched fault of motor ``index`` (all: None).

        The step sends the family's clear sequence (Damiao FB + FC, CubeMars FD + FC) and
        unlatches. Fault replies that may predate the clear (one in flight plus one per clear
        frame) are ignored until the motor reports a non-fault state; a motor whose fault
        persists latches again after them.
        """
        targets = range(self.n_joints) if index is None else [self._index(index)]
        for i in targets:
            if self._rt[i].fault:
                self._rt[i].clear_requested = True

    def _index(self, index: int) -> int:
        ok = isinstance(index, (int, np.integer)) and not isinstance(index, bool)
        if not ok or not 0 <= index < self.n_joints:
            raise ConfigError(
                f"motor index must be 0..{self.n_joints - 1}, got {index!r}", key="index", value=index
            )
        return int(index)

    # --- reaction (a detected contact) -------------------------------------------------------

    def react(self, behavior: str, reason: str) -> None:
        """From the next :meth:`step` on, every motor gets the safe behaviour ``behavior``
        (:data:`BEHAVIORS`: damp, hold, disable) whatever the commands, until
        :meth:`clear_reaction`; shutdown and latched faults still come first. ``reason`` is
        the motors' :attr:`MotorStatus.reason` meanwhile (e.g. the contact's joint and torque).
        A second call replaces the first (``hold`` keeps the position it latched).

        Raises:
            ConfigError: ``behavior`` not in :data:`BEHAVIORS` (key ``behavior``).
        """
        self._reaction = (check_behavior("behavior", behavior), str(reason))

    def clear_reaction(self) -> bool:
        """End :meth:`react`'s behaviour: commands are obeyed again from the next step.
        Returns whether one was in force."""
        active, self._reaction = self._reaction is not None, None
        return active

    @property
    def reaction(self) -> tuple[str, str] | None:
        """``(behavior, reason)`` of :meth:`react` in force, or ``None``."""
        return self._reaction

    # --- frames out -----------------------------------------------------------------------

    def enable_frames(self, bus: str | None = None) -> list[tuple[int, bytes]]:
        """Enable frame for every motor (on ``bus`` only when given; send once before the first :meth:`step`)."""
        return [(m.can_id, ENABLE_FRAME) for m in self.config.motors if bus is None or m.bus == bus]

    def shutdown_frames(self, bus: str | None = None) -> list[tuple[int, bytes]]:
        """Disable frame for every motor (the frames of ``bus`` only when given; every motor
        is shut down either way); later steps keep sending disable frames."""
        self._shut_down = True
        for rt in self._rt:
            rt.behavior, rt.reason = "shutdown", "shutdown"
        frames = [(m.can_id, DISABLE_FRAME) for m in self.config.motors if bus is None or m.bus == bus]
        self.frames_sent += len(frames)
        return frames

    def _command_frame(self, i: int, q: float, qd: float, kp: float, kd: float, tau: float) -> bytes:
        return self._codecs[i].command(q, qd, kp, kd, tau)  # encode_command of the motor side, bit for bit

    def _behavior_frame(self, i: int, behavior: str) -> tuple[str, bytes]:
        """Frame for a safe behaviour; returns the behaviour actually used (hold → damp fallback)."""
        m, rt = self.config.motors[i], self._rt[i]
        if behavior == "disable":
            return "disable", DISABLE_FRAME
        if behavior == "hold":
            if rt.behavior != "hold" or rt.hold_position is None:
                rt.hold_position = rt.q if rt.valid else None
            if rt.hold_position is not None:
                return "hold", self._command_frame(i, rt.hold_position, 0.0, self._kp[i], self._kd[i], 0.0)
        kd = self._kd[i] if m.damp_kd is None else m.damp_kd
        return "damp", self._command_frame(i, rt.q if rt.valid else 0.0, 0.0, 0.0, kd, 0.0)

    def step(self, now: float, bus: str | None = None) -> list[tuple[int, bytes]]:
        """Frames to send this cycle, ``[(can_id, 8 data bytes), ...]`` in joint order.

        Also advances the missed-reply counters (stale detection).

        Args:
            now: Current time [s], same clock as :meth:`set_command`; finite.
            bus: Only the motors on this bus (``MotorConfig.bus``): with several buses, call
                once per bus each cycle (CAN ids repeat across buses, so frames are routed here).

        Raises:
            InputError: ``now`` not a number (``Reason.TYPE``) or NaN/inf
                (``Reason.NOT_FINITE``); nothing is sent or counted.
        """
        now = check_time(now)
        cfg = self.config
        if self._cmd_time is not None and self._cmd_time > now:
            # stamped after this step (a clock ahead, a bogus stamp): its age counts from here
            self._cmd_time = now
        # elapsed == timeout (ticks at exact multiples of the period) must not switch: the
        # float difference of two clock readings is off by up to a few ulp of ``now`` (0.2 µs
        # at epoch seconds), so compare with a tolerance far below one period.
        tolerance = min(TIME_TOLERANCE, 0.01 * cfg.period)
        timed_out = self._cmd_time is None or (now - self._cmd_time) > cfg.command_timeout + tolerance
        frames: list[tuple[int, bytes]] = []
        # python floats once per step, not a numpy scalar per field (same values)
        cmd_q, cmd_qd, cmd_tau = self._cmd_q.tolist(), self._cmd_qd.tolist(), self._cmd_tau.tolist()
        kps, kds = self._kp.tolist(), self._kd.tolist()
        for i, m in enumerate(cfg.motors):
            if bus is not None and m.bus != bus:
                continue
            rt = self._rt[i]
            # reply bookkeeping for the frames sent last step
            if rt.sent_last_step and not rt.replied:
                rt.missed += 1
                rt.total_missed += 1
            elif rt.replied:
                rt.missed = 0
            rt.replied = False
            prev = rt.behavior
            out: list[bytes] = []
            if self._shut_down:
                behavior, reason, out = "shutdown", "shutdown", [DISABLE_FRAME]
            elif rt.fault and rt.clear_requested:
                behavior, reason = "clear_fault", "clearing fault on request"
                out = list(clear_error_frames(m.limits.family))
                rt.fault, rt.fault_reason, rt.clear_requested = False, "", False
                # one reply in flight from before the clear + one per clear frame; a motor
                # whose fault persists still latches again after these
                rt.fault_grace = 1 + len(out)
            elif rt.fault:
                behavior, frame = self._behavior_frame(i, cfg.fault_behavior)
                reason, out = f"fault: {rt.fault_reason}", [frame]
            elif self._reaction is not None:
                behavior, frame = self._behavior_frame(i, self._reaction[0])
                reason, out = self._reaction[1], [frame]
            elif self._cmd_time is None:
                wanted = self.startup_behavior
                if wanted == "hold" and self._kp[i] == 0.0:
                    wanted = "damp"  # no stiffness: damping (damp_kd) is the safer choice
                behavior, frame = self._behavior_frame(i, wanted)
                reason, out = "no command yet", [frame]
            elif timed_out:
                behavior, frame = self._behavior_frame(i, cfg.timeout_behavior)
                reason, out = "command timeout", [frame]
            else:
                lim = self._tau_limit[i]
                tau = cmd_tau[i]
                rt.effort_clamped = abs(tau) > lim
                tau = min(max(tau, -lim), lim)
                q, qd = cmd_q[i], cmd_qd[i]
                rt.position_clamped = not m.position_lower <= q <= m.position_upper
                if rt.position_clamped:  # at the bound, no velocity setpoint further out
                    if q > m.position_upper:
                        q, qd = m.position_upper, min(qd, 0.0)
                    else:
                        q, qd = m.position_lower, max(qd, 0.0)
                behavior, reason = "command", ""
                try:
                    out = [self._codecs[i].command(q, qd, kps[i], kds[i], tau)]
                except InputError:  # unreachable after set_command's checks; never raise here
                    behavior, frame = self._behavior_frame(i, cfg.timeout_behavior)
                    reason, out = "command not encodable", [frame]
            if prev == "disable" and behavior not in ("disable", "shutdown", "clear_fault"):
                out.insert(0, ENABLE_FRAME)
            if behavior != "hold":
                rt.hold_position = None
            rt.behavior, rt.reason = behavior, reason
            rt.sent_last_step = bool(out)
            for data in out:
                frames.append((m.can_id, data))
        self.frames_sent += len(frames)
        return frames

    # --- frames in ------------------------------------------------------------------------

    def ingest_feedback(
        self, arbitration_id: int, data: bytes, now: float, bus: str | None = None
    ) -> int | None:
        """Decode a received frame and update that motor's measured state.

        Args:
            arbitration_id: Frame id (a motor's master id).
            data: Frame data (8 bytes; 6 for old CubeMars firmware).
            now: Receive time [s].
            bus: The bus it came on: only motors on it match (ids repeat across buses).

        Returns:
            Index of the motor updated, or ``None`` for a frame that is not a reply of ours
            (counted in :attr:`unknown_frames`; never raises on bad bytes) or a Damiao
            register read reply (counted in :attr:`register_frames`; parse those with
            :func:`~gravity_friction_comp.mit.damiao_registers.parse_damiao_register_reply`).

        Raises:
            InputError: ``now`` not a number (``Reason.TYPE``) or NaN/inf (``Reason.NOT_FINITE``).
        """
        now = check_time(now)
        try:
            raw = frame_bytes(data)
            arbitration_id = operator.index(arbitration_id)
        except (InputError, TypeError):  # not a frame (or not an integer id): count, never raise
            self.unknown_frames += 1
            return None
        return self._ingest(arbitration_id, raw, now, bus)

    def ingest_replies(self, frames: Iterable[tuple[int, bytes]], now: float, bus: str | None = None) -> None:
        """:meth:`ingest_feedback` of each ``(arbitration_id, data)`` (int, bytes: as ``CanFrameIO.read``
        gives them) received at ``now`` [s] on ``bus``. Raises InputError: ``now`` not finite."""
        now = check_time(now)
        for arbitration_id, raw in frames:
            self._ingest(arbitration_id, raw, now, bus)

    def _ingest(self, arbitration_id: int, raw: bytes, now: float, bus: str | None) -> int | None:
        candidates = self._by_master.get(arbitration_id)
        if not candidates or len(raw) < 6:
            self.unknown_frames += 1
            return None
        for i in candidates:
            m = self._motors[i]
            if (bus is not None and m.bus != bus) or not m.reply_matches(raw):
                continue
            head = self._register_head[i]
            if (
                head is not None
                and raw[:3] == head
                and parse_damiao_register_reply(raw, m.can_id) is not None
            ):
                # a register read reply on the master id, not feedback (see damiao_registers)
                self.register_frames += 1
                return None
            codec = self._codecs[i]
            state = codec.joint_state(raw)  # p|v|τ in one pass, bit-identical to decode_feedback's
            if state is None:  # a length this family does not send
                continue
            rt = self._rt[i]
            is_fault, fault_reason, rt.temperatures, rt.motor_enabled = codec.reply_status(raw)
            rt.q, rt.qd, rt.tau = state
            rt.valid = True
            rt.replied = True
            rt.replies += 1
            rt.last_reply_time = now
            if is_fault:
                if rt.fault_grace > 0:
                    rt.fault_grace -= 1  # may predate the clear (see _MotorRuntime)
                else:
                    rt.fault = True
                    rt.fault_reason = fault_reason
            else:
                rt.fault_grace = 0  # the motor answered the clear: back to normal
            self.frames_received += 1
            return i
        self.unknown_frames += 1
        return None

    # --- outputs --------------------------------------------------------------------------

    def measured(self) -> tuple[list[float], list[float], list[float], bool]:
        """:meth:`joint_state` as lists of floats (position, velocity, effort) and whether every joint is valid."""
        rts = self._rt
        return (
            [rt.q for rt in rts],
            [rt.qd for rt in rts],
            [rt.tau for rt in rts],
            all(rt.valid for rt in rts),
        )

    def joint_state(self) -> JointStateArrays:
        """Measured joint state (new arrays), see :class:`JointStateArrays`."""
        return JointStateArrays(
            position=np.array([rt.q for rt in self._rt]),
            velocity=np.array([rt.qd for rt in self._rt]),
            effort=np.array([rt.tau for rt in self._rt]),
            valid=np.array([rt.valid for rt in self._rt], dtype=bool),
        )

    def status(self) -> tuple[MotorStatus, ...]:
        """Per-motor status, in joint order."""
        out = []
        for m, rt in zip(self.config.motors, self._rt):
            out.append(
                MotorStatus(
                    name=m.name,
                    can_id=m.can_id,
                    behavior=rt.behavior,
                    reason=rt.reason,
                    fault=rt.fault,
                    fault_reason=rt.fault_reason,
                    stale=rt.missed >= self.config.stale_cycles,
                    missed_replies=rt.missed,
                    total_missed_replies=rt.total_missed,
                    replies=rt.replies,
                    effort_clamped=rt.effort_clamped,
                    position_clamped=rt.position_clamped,
                    motor_enabled=rt.motor_enabled,
                    temperatures=rt.temperatures,
                    last_reply_time=rt.last_reply_time,
                )
            )
        return tuple(out)
