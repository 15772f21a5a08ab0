"""One motor's frames in one pass: a joint command → its 8 bytes, a reply → the joint's state.

:class:`MotorCodec` fuses the joint ↔ motor map (:class:`~gravity_friction_comp.mit.joint_motor_map.JointMotorMap`),
the quantization (:mod:`~gravity_friction_comp.mit.quantize`) and the frame layouts
(:mod:`~gravity_friction_comp.mit.codec`, the p|v|τ block of every feedback family) with
each motor's constants computed once, for the bridge's per-frame path. Every float
operation is the reference route's, in its order, so the results are bit-identical to
``encode_command(mapping.position_to_motor(q), …, limits)`` and to
``mapping.position_from_motor(decode_feedback(raw, limits).position)`` (tested against
them); what the reply says besides p|v|τ (fault, state, temperatures) stays with the
family decoders of :mod:`~gravity_friction_comp.mit.feedback`.

No rclpy import: pure Python.
"""

from __future__ import annotations

import math

from gravity_friction_comp.mit.codec import P_CODE_MAX, encode_command
from gravity_friction_comp.mit.damiao_feedback import DamiaoFeedback
from gravity_friction_comp.mit.feedback import decode_feedback
from gravity_friction_comp.mit.joint_motor_map import JointMotorMap
from gravity_friction_comp.mit.motor_table import MotorLimits
from gravity_friction_comp.mit.quantize import KD_BITS, KP_BITS, P_BITS, T_BITS, V_BITS, check_limits

__all__ = ["MotorCodec", "ReplyStatus"]

#: What a reply says besides p|v|τ: ``(is_fault, fault_reason, temperatures, motor_enabled)``
#: as the family's decoder gives them (``motor_enabled`` ``None`` but for Damiao).
ReplyStatus = tuple[bool, str, tuple[tuple[str, int], ...], "bool | None"]

_P_TOP = (1 << P_BITS) - 1
_V_TOP = (1 << V_BITS) - 1
_KP_TOP = (1 << KP_BITS) - 1
_KD_TOP = (1 << KD_BITS) - 1
_T_TOP = (1 << T_BITS) - 1


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
        "_p",
        "_v",
        "_kp",
        "_kd",
        "_t",
        "_length",
        "_status_key",
        "_status",
    )

    def __init__(self, limits: MotorLimits, mapping: JointMotorMap):
        check_limits(limits)
        self._limits, self._mapping = limits, mapping
        d, r = mapping.direction, mapping.gear_ratio
        self._d, self._r, self._off = d, r, mapping.offset
        self._dr = d * r  # JointMotorMap: direction * gear_ratio, evaluated first
        self._rr = r * r
        # (lo, hi, hi - lo) per field, as float_to_uint / uint_to_float compute them
        self._p = (-limits.p_max, limits.p_max, limits.p_max - -limits.p_max)
        self._v = (-limits.v_max, limits.v_max, limits.v_max - -limits.v_max)
        self._kp = (0.0, limits.kp_max, limits.kp_max - 0.0)
        self._kd = (0.0, limits.kd_max, limits.kd_max - 0.0)
        self._t = (-limits.t_max, limits.t_max, limits.t_max - -limits.t_max)
        self._length = (6, 8) if limits.family == "cubemars" else (8,)
        self._status_key = -1
        self._status: ReplyStatus = (False, "", (), None)

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
        floor = math.floor
        lo, hi, span = self._p
        x = lo if theta < lo else hi if theta > hi else theta
        p = floor((x - lo) * _P_TOP / span + 0.5)
        p = P_CODE_MAX if p > P_CODE_MAX else p  # codec: never the bytes of a special frame
        lo, hi, span = self._v
        x = lo if theta_dot < lo else hi if theta_dot > hi else theta_dot
        v = floor((x - lo) * _V_TOP / span + 0.5)
        lo, hi, span = self._kp
        x = lo if kp_m < lo else hi if kp_m > hi else kp_m
        c_kp = floor((x - lo) * _KP_TOP / span + 0.5)
        lo, hi, span = self._kd
        x = lo if kd_m < lo else hi if kd_m > hi else kd_m
        c_kd = floor((x - lo) * _KD_TOP / span + 0.5)
        lo, hi, span = self._t
        x = lo if tau_m < lo else hi if tau_m > hi else tau_m
        t = floor((x - lo) * _T_TOP / span + 0.5)
        # each code <= its top: x <= hi gives (x - lo) * top / span <= top
        word = (
            (p << 48)
            | ((_V_TOP if v > _V_TOP else v) << 36)
            | ((_KP_TOP if c_kp > _KP_TOP else c_kp) << 24)
            | ((_KD_TOP if c_kd > _KD_TOP else c_kd) << 12)
            | (_T_TOP if t > _T_TOP else t)
        )
        return word.to_bytes(8, "big")

    def joint_state(self, raw: bytes) -> tuple[float, float, float] | None:
        """Joint position [rad], velocity [rad/s] and effort [N·m] of a reply's p|v|τ block
        (bytes 1–5), or ``None`` for a length the motor's family does not send."""
        if len(raw) not in self._length:
            return None
        word = int.from_bytes(raw[1:6], "big")
        lo, _, span = self._p
        theta = lo + (word >> 24) * span / _P_TOP
        lo, _, span = self._v
        theta_dot = lo + ((word >> 12) & 0xFFF) * span / _V_TOP
        lo, _, span = self._t
        tau_m = lo + (word & 0xFFF) * span / _T_TOP
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
