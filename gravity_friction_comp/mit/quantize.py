"""Fixed-point quantization of MIT-mode fields: bit widths, float ↔ code, the shared p|v|τ block.

Quantization (a deliberate difference from the peers): :func:`float_to_uint` clamps to the
range and then rounds to the *nearest* code (half up); i2rt / openarm_can / TMotorCANControl
truncate toward zero, which biases every field by −½ LSB on average. Decode
(:func:`uint_to_float`) is the exact inverse map ``lo + code·span/(2^bits − 1)``, so a round
trip is within ½ LSB. Neither scheme represents 0.0 on the symmetric fields: rounding
encodes 0 to the code above the middle (+½ LSB), truncation to the one below (−½ LSB).

Both feedback layouts (Damiao and CubeMars AK) carry position 16 bit, velocity 12 bit and
torque 12 bit in bytes 1–5 (:func:`pack_pvt` / :func:`unpack_pvt`).

No rclpy import: pure Python.
"""

from __future__ import annotations

import math
import numbers

from gravity_friction_comp.errors import ConfigError, InputError, Reason
from gravity_friction_comp.mit.motor_table import MotorLimits

__all__ = [
    "KD_BITS",
    "KP_BITS",
    "P_BITS",
    "PvtOperands",
    "T_BITS",
    "V_BITS",
    "check_byte",
    "check_limits",
    "finite",
    "float_to_uint",
    "float_to_uint_unchecked",
    "pack_pvt",
    "pvt_operands",
    "temperature_byte",
    "uint_to_float",
    "uint_to_float_unchecked",
    "unpack_pvt",
    "unpack_pvt_with",
]

P_BITS = 16
V_BITS = 12
KP_BITS = 12
KD_BITS = 12
T_BITS = 12


# --- scalar quantization ----------------------------------------------------------------------


def finite(name: str, x: object) -> float:
    """``x`` as a finite float.

    Raises:
        InputError: not a number, a string included (``"1"`` is not encoded; reason
            ``Reason.TYPE``), or NaN/inf or an int beyond the float range (``Reason.NOT_FINITE``).
    """
    if type(x) is float and math.isfinite(x):  # the common case, once per field of every frame
        return x
    if isinstance(x, (str, bytes, bytearray)):
        raise InputError(f"{name} must be a number, got the string {x!r}", reason=Reason.TYPE)
    try:
        out = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {x!r}", reason=Reason.TYPE) from None
    except OverflowError:  # an int such as 10**400
        raise InputError(
            f"{name} must be finite, got an int of {len(str(x))} digits", reason=Reason.NOT_FINITE
        ) from None
    if not math.isfinite(out):
        raise InputError(f"{name} must be finite, got {x!r}", reason=Reason.NOT_FINITE)
    return out


def float_to_uint(x: float, lo: float, hi: float, bits: int) -> int:
    """Quantize ``x`` to an unsigned ``bits``-bit code over [lo, hi].

    ``code = floor((clamp(x, lo, hi) − lo) · (2^bits − 1)/(hi − lo) + ½)``: clamp, then round
    to the nearest code, halves up (peers truncate; see module docstring).

    Args:
        x: Value [field unit]; must be finite.
        lo, hi: Range ends, ``lo < hi``.
        bits: Field width, 1..32.

    Returns:
        int in ``0 .. 2^bits − 1``.

    Raises:
        InputError: ``x`` NaN/inf (reason ``Reason.NOT_FINITE``) or not a number (a string
            included; ``Reason.TYPE``).
        ConfigError: ``lo >= hi`` (or not finite numbers) or ``bits`` not an int 1..32.

    Source: FIELD_NOTES "MIT mode on CAN" (scale by (2^bits − 1)/span).
    """
    x = finite("x", x)
    lo, hi, bits = _checked_range(lo, hi, bits)
    return float_to_uint_unchecked(x, lo, hi, bits)


def _checked_range(lo: object, hi: object, bits: object) -> tuple[float, float, int]:
    """``(lo, hi, bits)`` of :func:`float_to_uint` / :func:`uint_to_float` checked: finite
    ``lo < hi`` whose span times ``2^bits − 1`` is finite (a wider one made the code
    ``floor(inf)`` or ``inf/inf``: OverflowError, ValueError), ``bits`` an int 1..32.

    Raises:
        ConfigError: key ``range`` or ``bits``.
    """
    try:
        lo, hi = finite("lo", lo), finite("hi", hi)
    except InputError:
        lo = hi = math.nan  # refused just below
    if not lo < hi:
        raise ConfigError(f"range must satisfy lo < hi, got [{lo}, {hi}]", key="range", value=(lo, hi))
    if isinstance(bits, bool) or not isinstance(bits, numbers.Integral) or not 1 <= int(bits) <= 32:
        raise ConfigError(f"bits must be an integer 1..32, got {bits!r}", key="bits", value=bits)
    if not math.isfinite((hi - lo) * ((1 << int(bits)) - 1)):
        raise ConfigError(
            f"range [{lo}, {hi}] too wide to quantize over {int(bits)} bits (span overflows)",
            key="range",
            value=(lo, hi),
        )
    return lo, hi, int(bits)


def float_to_uint_unchecked(x: float, lo: float, hi: float, bits: int) -> int:
    """:func:`float_to_uint` without its argument checks, for the per-frame path.

    The caller guarantees a finite float ``x`` (:func:`finite`), finite ``lo < hi`` and an int
    ``bits`` 1..32 (the ranges of a validated :class:`MotorLimits` and the field widths here).
    """
    top = (1 << bits) - 1
    x = lo if x < lo else hi if x > hi else x  # the clamp; min(max()) costs twice as much per field
    code = math.floor((x - lo) * top / (hi - lo) + 0.5)  # >= 0 since x >= lo
    return top if code > top else code


def uint_to_float(code: int, lo: float, hi: float, bits: int) -> float:
    """Value of an unsigned ``bits``-bit code over [lo, hi]: ``lo + code·(hi − lo)/(2^bits − 1)``.

    Args:
        code: 0 .. 2^bits − 1.
        lo, hi: Range ends [field unit].
        bits: Field width.

    Returns:
        float [field unit].

    Raises:
        InputError: code not an int (``Reason.TYPE``: a float such as NaN or 1.5, a bool) or
            outside 0..2^bits − 1 (reason ``Reason.RANGE``).
        ConfigError: the range or ``bits`` as :func:`float_to_uint` refuses them.

    Source: inverse of :func:`float_to_uint`; same map as the Damiao/AK reference drivers.
    """
    lo, hi, bits = _checked_range(lo, hi, bits)
    if isinstance(code, bool) or not isinstance(code, numbers.Integral):
        raise InputError(f"code must be an integer, got {code!r}", reason=Reason.TYPE)
    top = (1 << bits) - 1
    if not 0 <= int(code) <= top:
        raise InputError(f"code {code} outside 0..{top}", reason=Reason.RANGE)
    return uint_to_float_unchecked(int(code), lo, hi, bits)


def uint_to_float_unchecked(code: int, lo: float, hi: float, bits: int) -> float:
    """:func:`uint_to_float` without its range check: ``code`` an int known to fit ``bits``
    (a field masked out of a frame)."""
    return lo + code * (hi - lo) / ((1 << bits) - 1)


# --- the p16 | v12 | τ12 block shared by both feedback layouts ---------------------------------------------------


def check_limits(limits: object) -> MotorLimits:
    """``limits`` itself if it is a :class:`MotorLimits`; ConfigError (key ``limits``) otherwise."""
    if not isinstance(limits, MotorLimits):
        raise ConfigError(
            f"limits must be MotorLimits (see motor_limits()), got {limits!r}", key="limits", value=limits
        )
    return limits


def pack_pvt(position: float, velocity: float, torque: float, limits: MotorLimits) -> bytes:
    check_limits(limits)
    p = float_to_uint_unchecked(finite("position", position), -limits.p_max, limits.p_max, P_BITS)
    v = float_to_uint_unchecked(finite("velocity", velocity), -limits.v_max, limits.v_max, V_BITS)
    t = float_to_uint_unchecked(finite("torque", torque), -limits.t_max, limits.t_max, T_BITS)
    return ((p << 24) | (v << 12) | t).to_bytes(5, "big")


#: Per field of the p16 | v12 | τ12 block: ``(lo, hi - lo, 2^bits - 1)`` of :func:`uint_to_float`.
PvtOperands = tuple[tuple[float, float, int], tuple[float, float, int], tuple[float, float, int]]


def pvt_operands(limits: MotorLimits) -> PvtOperands:
    """The decode operands of ``limits``' p|v|τ ranges, for :func:`unpack_pvt_with` (a caller
    decoding many replies of one motor computes them once).

    Raises:
        ConfigError: ``limits`` not a :class:`MotorLimits`.
    """
    check_limits(limits)
    p, v, t = (
        (-x, x - -x, (1 << bits) - 1)
        for x, bits in ((limits.p_max, P_BITS), (limits.v_max, V_BITS), (limits.t_max, T_BITS))
    )
    return p, v, t


def unpack_pvt_with(raw: bytes, operands: PvtOperands) -> tuple[float, float, float]:
    """Position [rad], velocity [rad/s], torque [N·m] at the motor of a 5-byte p|v|τ block,
    each ``lo + code·(hi − lo)/(2^bits − 1)`` as :func:`uint_to_float_unchecked`."""
    word = int.from_bytes(raw, "big")
    (p_lo, p_span, p_top), (v_lo, v_span, v_top), (t_lo, t_span, t_top) = operands
    return (
        p_lo + (word >> 24) * p_span / p_top,
        v_lo + ((word >> 12) & 0xFFF) * v_span / v_top,
        t_lo + (word & 0xFFF) * t_span / t_top,
    )


def unpack_pvt(raw: bytes, limits: MotorLimits) -> tuple[float, float, float]:
    return unpack_pvt_with(raw, pvt_operands(limits))


def check_byte(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise InputError(f"{name} must be an integer 0..255, got {value!r}", reason=Reason.RANGE)
    return value


def temperature_byte(name: str, value: float) -> int:
    """Temperature [°C] as the unsigned byte the motors send (rounded, clamped to 0..255)."""
    v = finite(name, value)
    return min(max(int(math.floor(v + 0.5)), 0), 255)
