"""A ROS-free emulated MIT-mode motor: frames in, torque and feedback frames out.

The emulator has no physics of its own. A simulator sets the motor's shaft position and
velocity (:meth:`EmulatedMotor.set_shaft_state`), asks for the torque the motor applies
(:meth:`EmulatedMotor.torque`), integrates, and repeats. Frames are handled exactly as
the bridge will send them on a CAN bus (:meth:`EmulatedMotor.handle_frame`), and replies are
the quantized bytes a real motor sends, so the codec and the bridge's safety code run
unchanged against it.

Motor law (on the *decoded*, i.e. quantized, command, as the firmware sees it)::

    τ = clamp(kp (p_des − p) + kd (v_des − v) + τ_ff, −T_MAX, T_MAX)    [N·m]

with τ = 0 while disabled or in a fault state (FIELD_NOTES "MIT mode on CAN").

No rclpy import: pure Python.
"""

from __future__ import annotations

import math

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.mit.codec import MitCommand, decode_command
from gravity_friction_comp.mit.cubemars_feedback import CubeMarsError, encode_feedback_cubemars
from gravity_friction_comp.mit.damiao_feedback import DamiaoState, encode_feedback_damiao
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.mit.robstride_feedback import encode_feedback_robstride
from gravity_friction_comp.mit.special_frames import SpecialFrame, classify_special_frame
from gravity_friction_comp.validation import can_id as checked_can_id
from gravity_friction_comp.validation import frame_bytes

__all__ = ["EmulatedMotor"]


class EmulatedMotor:
    """One emulated Damiao, CubeMars AK or Robstride motor in MIT mode (selected by ``limits.family``).

    Args:
        limits: Ranges used to decode commands and encode feedback.
        can_id: Id the motor listens on (commands and special frames).
        master_id: Arbitration id of its replies (:attr:`reply_id`).
        t_mos, t_rotor: Initial temperatures [°C] reported in feedback (CubeMars reports
            ``t_rotor`` as its single temperature).
        old_firmware: CubeMars only: answer with 6-byte replies (no temperature/error).
        mit_mode: ``False``: a motor not in MIT mode (a factory Robstride speaks its private
            protocol): MIT frames are not obeyed and get no MIT reply; :meth:`private_frame`
            is what it sends instead.

    Raises:
        ConfigError: ids out of the 11-bit range.

    Behaviour per received frame (each frame is answered with one feedback frame):

    - enable (FC): enabled unless a fault is latched.
    - disable (FD): disabled; the command is kept but no torque is applied.
    - set zero (FE): the current shaft position becomes 0 (:attr:`zero_offset`).
    - clear error (FB, Damiao): clears the latched fault; the motor stays disabled.
      CubeMars has no such frame; FB is ignored (answered, no change).
    - any other 8-byte frame: MIT command, decoded with the motor's ranges.
    """

    def __init__(
        self,
        limits: MotorLimits,
        can_id: int,
        master_id: int,
        *,
        t_mos: float = 30.0,
        t_rotor: float = 30.0,
        old_firmware: bool = False,
        mit_mode: bool = True,
    ):
        if not isinstance(limits, MotorLimits):
            raise ConfigError("limits must be a MotorLimits", key="limits", value=limits)
        self.limits = limits
        self.can_id = checked_can_id("can_id", can_id)
        self.master_id = checked_can_id("master_id", master_id)
        self.t_mos = float(t_mos)
        self.t_rotor = float(t_rotor)
        self.old_firmware = bool(old_firmware)
        self.mit_mode = bool(mit_mode)
        self.enabled = False
        self.fault_code = 0
        self.command = MitCommand(0.0, 0.0, 0.0, 0.0, 0.0)
        self._decoded: tuple[bytes, MitCommand] | None = None  # the last command frame, decoded
        self.zero_offset = 0.0
        self.frames_received = 0
        self._shaft_position = 0.0
        self._shaft_velocity = 0.0

    # --- state from the physics ---------------------------------------------------------

    @property
    def family(self) -> str:
        """``"damiao"``, ``"cubemars"`` or ``"robstride"``."""
        return self.limits.family

    @property
    def reply_id(self) -> int:
        """Arbitration id of the feedback frames (the master id)."""
        return self.master_id

    @property
    def position(self) -> float:
        """Motor position as the motor reports it [rad]: shaft position − zero offset."""
        return self._shaft_position - self.zero_offset

    @property
    def velocity(self) -> float:
        """Motor velocity [rad/s]."""
        return self._shaft_velocity

    def set_shaft_state(self, position: float, velocity: float) -> None:
        """Set the shaft position [rad] (before zero offset) and velocity [rad/s] from physics.

        Raises:
            InputError: non-finite values (reason ``Reason.NOT_FINITE``).
        """
        p, v = float(position), float(velocity)
        if not (math.isfinite(p) and math.isfinite(v)):
            raise InputError(
                f"shaft state must be finite, got ({position!r}, {velocity!r})", reason=Reason.NOT_FINITE
            )
        self._shaft_position, self._shaft_velocity = p, v

    # --- faults --------------------------------------------------------------------------

    def inject_fault(self, code: int) -> None:
        """Latch a fault: Damiao state nibble 8..14 or CubeMars error 1..6. Output drops to 0.

        Raises:
            ConfigError: a code that is not a fault for this family (lists valid codes).
        """
        if self.family == "damiao":
            valid = [int(s) for s in DamiaoState if s not in (DamiaoState.DISABLED, DamiaoState.ENABLED)]
        else:
            valid = [int(e) for e in CubeMarsError if e != CubeMarsError.NONE]
        if code not in valid:
            raise ConfigError(
                f"fault code {code!r} invalid for {self.family}; valid: {valid}", key="code", value=code
            )
        self.fault_code = int(code)
        self.enabled = False

    @property
    def is_fault(self) -> bool:
        """True while a fault is latched."""
        return self.fault_code != 0

    # --- torque ----------------------------------------------------------------------------

    def torque(self) -> float:
        """Torque the motor applies now [N·m] (motor law in the module docstring)."""
        if not self.enabled or self.is_fault:
            return 0.0
        c = self.command
        tau = c.kp * (c.position - self.position) + c.kd * (c.velocity - self.velocity) + c.tau_ff
        t_max = self.limits.t_max
        return min(max(tau, -t_max), t_max)

    # --- frames ----------------------------------------------------------------------------

    def handle_frame(self, data: bytes) -> bytes | None:
        """Process a frame addressed to :attr:`can_id`; return the reply data.

        Args:
            data: Frame data bytes.

        Returns:
            Feedback bytes to send on :attr:`reply_id`, or ``None`` for a frame the motor
            ignores (length ≠ 8).
        """
        try:
            raw = frame_bytes(data)
        except InputError:
            return None  # not a frame at all: a real motor would never see it
        if len(raw) != 8:
            return None
        self.frames_received += 1
        if not self.mit_mode:
            return None  # not its protocol: no MIT reply (the bus may send private_frame())
        kind = classify_special_frame(raw)
        if kind is SpecialFrame.ENABLE:
            self.enabled = not self.is_fault
        elif kind is SpecialFrame.DISABLE:
            self.enabled = False
        elif kind is SpecialFrame.SET_ZERO:
            self.zero_offset = self._shaft_position
        elif kind is SpecialFrame.CLEAR_ERROR:
            if self.family in ("damiao", "robstride"):
                self.fault_code = 0
        else:
            # a held setpoint repeats its frame every cycle: decoded once (a pure function)
            if self._decoded is None or self._decoded[0] != raw:
                self._decoded = (raw, decode_command(raw, self.limits))
            self.command = self._decoded[1]
        return self.feedback_frame()

    def private_frame(self) -> tuple[int, bytes]:
        """What a motor in Robstride's private protocol sends: ``(29-bit id, 8 bytes)``.

        The shape of its feedback (communication type 2: id ``2<<24 | can_id<<8 | host 0xFD``,
        angle/velocity/torque/temperature as 16-bit big-endian codes; RobStride manual,
        private protocol); only the shape matters here: it is not an MIT reply.
        """
        codes = (0x8000, 0x8000, 0x8000, int(self.t_rotor * 10) & 0xFFFF)
        return (2 << 24) | (self.can_id << 8) | 0xFD, b"".join(c.to_bytes(2, "big") for c in codes)

    def feedback_frame(self) -> bytes:
        """The feedback bytes the motor sends for its current state (quantized)."""
        tau = self.torque()
        if self.family == "robstride":
            return encode_feedback_robstride(
                self.can_id & 0xFF, self.position, self.velocity, tau, self.limits, self.t_rotor
            )
        if self.family == "damiao":
            if self.is_fault:
                state = self.fault_code
            else:
                state = DamiaoState.ENABLED if self.enabled else DamiaoState.DISABLED
            return encode_feedback_damiao(
                self.can_id, state, self.position, self.velocity, tau, self.t_mos, self.t_rotor, self.limits
            )
        if self.old_firmware:
            return encode_feedback_cubemars(
                self.can_id & 0xFF, self.position, self.velocity, tau, self.limits
            )
        return encode_feedback_cubemars(
            self.can_id & 0xFF,
            self.position,
            self.velocity,
            tau,
            self.limits,
            temperature=self.t_rotor,
            error_code=self.fault_code,
        )
