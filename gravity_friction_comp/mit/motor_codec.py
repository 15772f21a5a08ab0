"""One motor's frames in one pass: a joint command → its 8 bytes, a reply → the joint's state.

:class:`MotorCodec` fuses the joint ↔ motor map (:class:`~gravity_friction_comp.mit.joint_motor_map.JointMotorMap`,
its constants computed once) with the quantization of
:mod:`~gravity_friction_comp.mit.quantize` (its unchecked per-field helpers and the p|v|τ
block of every feedback family) and the command layout of
:mod:`~gravity_friction_comp.mit.codec`, without the per-call argument checks the limits
and fields already passed, for the bridge's per-frame path. Every float operation is the
reference route's, in its order, so the results are bit-identical to
``encode_command(mapping.position_to_motor(q), …, limits)`` and to
``mapping.position_from_motor(decode_feedback(raw, limits).position)`` (tested against
them); what the reply says besides p|v|τ (fault, state, temperatures) stays with the
family decoders of :mod:`~gravity_friction_comp.mit.feedback`.

No rclpy import: pure Python.
"""

from __future__ import annotations

from gravity_friction_comp.mit import quantize
from gravity_friction_comp.mit.codec import P_CODE_MAX, encode_command
from gravity_friction_comp.mit.damiao_feedback import DamiaoFeedback
from gravity_friction_comp.mit.feedback import decode_feedback
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.mit.quantize import (
    check_limits,
    float_to_uint_unchecked,
    pvt_operands,
    unpack_pvt_with,
)

__all__ = ["MotorCodec", "ReplyStatus"]

#: What a reply says besides p|v|τ: ``(is_fault, fault_reason, temperatures, motor_enabled)``
#: as the family's decoder gives them (``motor_enabled`` ``None`` but for Damiao).
ReplyStatus = tuple[bool, str, tuple[tuple[str, int], ...], "bool | None"]


class MotorCodec:
    """Command encoder and p|v|τ reply decoder of one motor (see the module docstring).

    Args:
        limits: The motor's ranges. mapping: Its joint ↔ motor map.

    Raises:
        ConfigError: ``limits`` not a :class:`MotorLimits` (key ``limits``).
    """

    __slots__ = (
        "_limits",
        "_mapping",
        "_d",
        "_r",
        "_dr",
        "_rr",
        "_off",
        "_length",
        "_status_key",
        "_status",
        "_pvt",
    )

    def __init__(self, limits: MotorLimits, mapping: JointMotorMap):
        check_limits(limits)
        self._limits, self._mapping = limits, mapping
        d, r = mapping.direction, mapping.gear_ratio
        self._d, self._r, self._off = d, r, mapping.offset
        self._dr = d * r  # JointMotorMap: direction * gear_ratio, evaluated first
        self._rr = r * r
        self._length = (6, 8) if limits.family == "cubemars" else (8,)
        self._status_key = -1
        self._status: ReplyStatus = (False, "", (), None)
        self._pvt = pvt_operands(limits)  # unpack_pvt's operands, computed once

    def command(self, q: float, qd: float, kp: float, kd: float, tau: float) -> bytes:
        """The 8 data bytes of the joint command ``q`` [rad], ``qd`` [rad/s], ``kp``
        [N·m/rad], ``kd`` [N·m·s/rad], ``tau`` [N·m] (floats): ``encode_command`` of the
        motor-side values, bit for bit.

        Raises:
            InputError: a value not finite on the motor side (reason ``Reason.NOT_FINITE``,
                from ``encode_command``).
        """
        r = self._r
        theta = self._dr * (q - self._off)
        theta_dot = self._dr * qd
        kp_m = kp / self._rr
        kd_m = kd / self._rr
        tau_m = self._d * tau / r
        total = theta + theta_dot + kp_m + kd_m + tau_m  # NaN/inf anywhere: total - total is NaN
        if total - total != 0.0:  # (or finite values summing past the float range: encoded there)
            return encode_command(theta, theta_dot, kp_m, kd_m, tau_m, self._limits)  # raises, naming it
        lim = self._limits
        p = float_to_uint_unchecked(theta, -lim.p_max, lim.p_max, quantize.P_BITS)
        word = (
            ((P_CODE_MAX if p > P_CODE_MAX else p) << 48)  # codec: never the bytes of a special frame
            | float_to_uint_unchecked(theta_dot, -lim.v_max, lim.v_max, quantize.V_BITS) << 36
            | float_to_uint_unchecked(kp_m, 0.0, lim.kp_max, quantize.KP_BITS) << 24
            | float_to_uint_unchecked(kd_m, 0.0, lim.kd_max, quantize.KD_BITS) << 12
            | float_to_uint_unchecked(tau_m, -lim.t_max, lim.t_max, quantize.T_BITS)
        )
        return word.to_bytes(8, "big")

    def joint_state(self, raw: bytes) -> tuple[float, float, float] | None:
        """Joint position [rad], velocity [rad/s] and effort [N·m] of a reply's p|v|τ block
        (bytes 1–5, :func:`~gravity_friction_comp.mit.quantize.unpack_pvt`), or ``None`` for
        a length the motor's family does not send."""
        if len(raw) not in self._length:
            return None
        theta, theta_dot, tau_m = unpack_pvt_with(raw[1:6], self._pvt)
        d, r = self._d, self._r
        return d * theta / r + self._off, d * theta_dot / r, self._dr * tau_m

    def reply_status(self, raw: bytes) -> ReplyStatus:
        """:data:`ReplyStatus` of a reply of a valid length (:meth:`joint_state` not ``None``),
        from the family decoder (:func:`~gravity_friction_comp.mit.feedback.decode_feedback`),
        decoded again only when what it reads there changed: bytes 0, 6 and 7 (state or id,
        temperatures, error) and the length; a 6-byte CubeMars reply ends in τ bits."""
        key = raw[0] | raw[-2] << 8 | raw[-1] << 16 | len(raw) << 24
        if key != self._status_key:
            fb = decode_feedback(raw, self._limits)
            enabled = fb.is_enabled if isinstance(fb, DamiaoFeedback) else None
            self._status = (fb.is_fault, fb.fault_reason, fb.temperatures, enabled)
            self._status_key = key
        return self._status
