"""Validation of values shared by every config schema and runtime input (one place for the rules).

Each function raises :class:`~gravity_friction_comp.errors.ConfigError` (or
:class:`~gravity_friction_comp.errors.DimensionError`) naming the key and the value, so a
bad value fails the same way from YAML, a constructor keyword or ``ros2 param set``.
"""

from __future__ import annotations

import difflib
import math
import numbers
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError, Reason

__all__ = [
    "CAN_EXTENDED_ID_MAX",
    "can_id",
    "CAN_STANDARD_ID_MAX",
    "check_bound",
    "check_shape",
    "frame_bytes",
    "integer",
    "joint_names",
    "known_keys",
    "MAX_MODEL_INPUT",
    "MAX_PLAUSIBLE_POSITION",
    "MAX_PLAUSIBLE_VELOCITY",
    "MAX_RATE_HZ",
    "MAX_SCALE",
    "number",
    "per_joint",
    "positive_rate",
    "short_repr",
    "string_keys",
    "vector",
    "within_bound",
]

#: Largest |scale| a stage (and a per-arm ``gravity_scale``) accepts [-]. ``scale`` corrects
#: a model (0.5–1.5 in practice); a model off by more than 100× is a wrong model or wrong
#: units, and with such a factor every output already sits at the effort limit
#: (``scale:=1e308`` saturated every joint).
MAX_SCALE = 100.0
#: Largest 11-bit (standard) CAN arbitration id.
CAN_STANDARD_ID_MAX = 0x7FF
#: Largest 29-bit (extended) CAN arbitration id.
CAN_EXTENDED_ID_MAX = 0x1FFFFFFF

#: [rad/s or m/s] no joint of the arms this package targets moves faster (~10x the fastest,
#: DM4340 output: 10 rad/s): a larger velocity input is refused (friction models,
#: :meth:`FrictionStage.update`), and a faster step between two position samples is a
#: *jump*, not motion (:class:`~gravity_friction_comp.stage.velocity.VelocityEstimator`).
MAX_PLAUSIBLE_VELOCITY = 100.0
#: [rad or m] no joint position is larger: a measured or target position beyond it (1e308 is
#: finite) is refused, not planned from (Ruckig fails on it at every later step, a shaper
#: started there never produced a setpoint again).
MAX_PLAUSIBLE_POSITION = 1e6
#: Largest |entry| of a q, v, a or τ the robot model computes with (far beyond any joint, so
#: refusing it costs no real input): within it the dynamics' quadratic terms (v², q·q) stay
#: ~1e200 and cannot overflow; the check (two reductions) does not overflow itself (``q·q``
#: did: ``RuntimeWarning: overflow encountered in dot`` for |q| ≥ ~1e154, then refused).
MAX_MODEL_INPUT = 1e100
#: [Hz] highest publication rate a node's ``rate_hz`` accepts (setpoint player, shaper,
#: teleop): 1e9 was taken (a 1 ns timer, the node busy for ever).
MAX_RATE_HZ = 5000.0


def positive_rate(value: float) -> None:
    """Refuse a ``rate_hz`` of 0 or below (a ``FloatingPointRange`` is inclusive, and 0 Hz
    divides by zero in a timer period); the upper bound, :data:`MAX_RATE_HZ`, is the range's.

    Raises:
        ConfigError: ``key`` ``rate_hz``.
    """
    if not value > 0.0:
        raise ConfigError(
            f"rate_hz must be in (0, {MAX_RATE_HZ:g}] [Hz], got {value!r}", key="rate_hz", value=value
        )


def per_joint(
    key: str,
    value: Any,
    n: int,
    *,
    positive: bool = False,
    nonneg: bool = False,
    nonzero: bool = False,
    bound: float | None = None,
) -> np.ndarray:
    """A scalar (broadcast) or one number per joint → read-only float array.

    Args:
        key: Parameter name for the error message.
        value: A number or a flat sequence of n numbers (bools and strings rejected).
        n: Number of joints.
        positive: require every value > 0.
        nonneg: require every value >= 0.
        nonzero: require every value != 0.
        bound: require every ``|value| <= bound`` (a plausibility limit of the caller's).

    Returns:
        (n,) read-only float64 array; ``-0.0`` entries normalised to ``+0.0``.

    Raises:
        ConfigError: not numbers, not flat, not finite, outside the required sign or
            beyond ``bound``.
        DimensionError: a sequence whose length is not n.
    """
    if isinstance(value, (str, bytes, bool, np.bool_, Mapping)) or (
        isinstance(value, (list, tuple)) and any(isinstance(x, (str, bytes, bool, np.bool_)) for x in value)
    ):
        raise ConfigError(
            f"{key}: expected a number or a list of numbers, got {value!r}", key=key, value=value
        )
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float
        raise ConfigError(
            f"{key}: expected a number or a list of numbers, got {value!r}", key=key, value=value
        ) from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    elif arr.ndim != 1:
        raise ConfigError(
            f"{key}: expected a scalar or a flat list, got shape {arr.shape}", key=key, value=value
        )
    elif arr.size != n:
        raise DimensionError(key, n, arr.size)
    signs = (
        (positive, arr <= 0.0, "> 0"),
        (nonneg and not positive, arr < 0.0, ">= 0"),  # > 0 says it already
        (nonzero, arr == 0.0, "!= 0"),
    )
    if not np.all(np.isfinite(arr)):
        wanted_text = "".join(f" and {text}" for wanted, _, text in signs if wanted)  # the whole rule
        raise ConfigError(
            f"{key}: values must be finite{wanted_text}, got {arr.tolist()}", key=key, value=value
        )
    for wanted, bad, text in signs:
        if wanted and np.any(bad):
            raise ConfigError(f"{key}: values must be {text}, got {arr.tolist()}", key=key, value=value)
    if bound is not None and np.any(np.abs(arr) > bound):
        raise ConfigError(
            f"{key}: values must be within ±{bound:g}, got {arr.tolist()}", key=key, value=value
        )
    arr = arr + 0.0  # no -0.0 coefficients
    arr.setflags(write=False)
    return arr


def number(
    key: str,
    value: Any,
    *,
    positive: bool = False,
    nonneg: bool = False,
    unit: str = "",
    text: bool = False,
    finite: bool = True,
) -> float:
    """One real number (int or float; bools are rejected), finite unless ``finite=False``.

    Args:
        key: Parameter name for the error message.
        value: The value.
        positive: require > 0.
        nonneg: require >= 0.
        unit: e.g. ``"[Hz]"``, appended to the message.
        text: also read numeric strings (for YAML files: PyYAML reads ``1e-5``, without a
            dot, as a string); otherwise strings are rejected.
        finite: require a finite value; ``False`` admits ±inf (a limit meaning "none"),
            never NaN.

    Raises:
        ConfigError: not a number, NaN, not finite (when required), or outside the required
            sign. The message shows the value cut by :func:`short_repr`.
    """
    unit = f" {unit}" if unit else ""
    shown = short_repr(value)
    numeric = isinstance(value, (int, float, np.integer, np.floating)) or (text and isinstance(value, str))
    if isinstance(value, (bool, np.bool_)) or not numeric:
        raise ConfigError(f"{key} must be a number{unit}, got {shown}", key=key, value=value)
    try:
        x = float(value)
    except ValueError:
        raise ConfigError(f"{key} must be a number{unit}, got {shown}", key=key, value=value) from None
    except OverflowError:  # an int beyond the float range
        raise ConfigError(f"{key} must be finite{unit}, got {shown}", key=key, value=value) from None
    if math.isnan(x) or (finite and not math.isfinite(x)):
        raise ConfigError(f"{key} must be finite{unit}, got {shown}", key=key, value=value)
    if positive and not x > 0.0:
        raise ConfigError(f"{key} must be > 0{unit}, got {shown}", key=key, value=value)
    if nonneg and not x >= 0.0:
        raise ConfigError(f"{key} must be >= 0{unit}, got {shown}", key=key, value=value)
    return x


def integer(key: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """One integer (Python or numpy int; bools, floats such as ``1.0`` and strings rejected).

    Args:
        key: Parameter name for the error message.
        value: The value.
        low, high: Inclusive bounds (``None``: unbounded).

    Returns:
        ``value`` as a Python ``int``.

    Raises:
        ConfigError: not an integer, or outside ``low..high``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{key} must be an integer, got {short_repr(value)}", key=key, value=value)
    out = int(value)
    if (low is not None and out < low) or (high is not None and out > high):
        span = f"{'' if low is None else low}..{'' if high is None else high}"
        raise ConfigError(
            f"{key} must be an integer in {span}, got {short_repr(value)}", key=key, value=value
        )
    return out


def can_id(key: str, value: Any, *, extended: bool = False) -> int:
    """A CAN arbitration id: an integer in 0..0x7FF (11-bit standard) or, with
    ``extended=True``, 0..0x1FFFFFFF (29-bit).

    Raises:
        ConfigError: not an integer (bools rejected), or outside the range (the message
            names the range in hex).
    """
    top = CAN_EXTENDED_ID_MAX if extended else CAN_STANDARD_ID_MAX
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, np.integer))
        or not 0 <= value <= top
    ):
        kind = "29-bit extended" if extended else "11-bit standard"
        raise ConfigError(
            f"{key} must be an integer in 0..0x{top:X} ({kind} id), got {short_repr(value)}",
            key=key,
            value=value,
        )
    return int(value)


def joint_names(key: str, value: Any) -> tuple[str, ...]:
    """A non-empty sequence of unique, non-empty joint names.

    Args:
        key: Parameter name for the error message.
        value: A list or tuple of strings (a single string is refused: it is not a list).

    Returns:
        The names as a tuple.

    Raises:
        ConfigError: not a sequence, empty, an entry that is not a non-empty string, or a
            repeated name (the repeats are listed).
    """
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple, np.ndarray)):
        raise ConfigError(
            f"{key}: expected a non-empty list of joint names, got {short_repr(value)}", key=key, value=value
        )
    names = tuple(value)
    if not names:
        raise ConfigError(f"{key}: expected a non-empty list of joint names, got []", key=key, value=names)
    if not all(isinstance(s, str) and s for s in names):
        raise ConfigError(f"{key}: names must be non-empty strings, got {list(names)}", key=key, value=names)
    dup = sorted({s for s in names if names.count(s) > 1})
    if dup:
        raise ConfigError(f"{key}: duplicate names {dup} in {list(names)}", key=key, value=names)
    return names


def vector(
    what: str, value: Any, n: int, *, names: Sequence[str] | None = None, bound: float | None = None
) -> np.ndarray:
    """A runtime input of n finite numbers (a position, velocity or load vector) as floats.

    Args:
        what: Name of the input for the message (``"velocity"``).
        value: A sequence or array of n numbers.
        n: Required length.
        names: The joint order, shown in the shape message when given.
        bound: Largest plausible magnitude (e.g. :data:`MAX_PLAUSIBLE_VELOCITY`); ``None``: any.

    Returns:
        (n,) float64 array (``value`` itself when it already is one; not copied).

    Raises:
        InputError: ``Reason.TYPE`` not numbers (a string, a mapping, mixed entries);
            ``Reason.SHAPE`` not of shape (n,); ``Reason.NOT_FINITE`` a NaN or ±inf entry;
            ``Reason.RANGE`` an entry beyond ``bound``.
    """
    if isinstance(value, (str, bytes, Mapping)):
        raise InputError(f"{what} must be {n} numbers, got {short_repr(value)}", reason=Reason.TYPE)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{what} must be {n} numbers, got {short_repr(value)}", reason=Reason.TYPE) from None
    check_shape(what, arr, n, names)
    if not np.isfinite(arr).all():
        raise InputError(f"{what} contains NaN/inf: {arr.tolist()}", reason=Reason.NOT_FINITE)
    if bound is not None:
        check_bound(what, arr, bound, names)
    return arr


def check_shape(what: str, arr: np.ndarray, n: int, names: Sequence[str] | None = None) -> None:
    """Raise InputError (``Reason.SHAPE``) unless ``arr`` has shape (n,): the one length check
    of every runtime per-joint input (a (n, 1) column or a scalar is not one value per joint).

    Args:
        what: Name of the input for the message.
        arr: The input as an array.
        n: Required length.
        names: The joint order, shown in the message when given.
    """
    if arr.shape != (n,):
        order = "" if names is None else f" in joint order {list(names)}"
        raise InputError(f"{what} must have shape ({n},){order}, got shape {arr.shape}", reason=Reason.SHAPE)


def within_bound(arr: np.ndarray, bound: float) -> bool:
    """Whether every entry of the float (n,) ``arr`` is within ±``bound`` (``False`` for NaN
    or inf): the cheap screen before computing, on Python floats (~1 µs for 7 joints;
    ``arr·arr`` cost ~0.6 µs but overflows for entries ≥ ~1e154, numpy's ``max`` and ``min``
    ~2.7 µs). The sum catches NaN/inf (``max``/``min`` may step over a NaN);
    ``False`` can also be a sum of in-bound entries beyond the float range (a bound ≳ 1e307):
    the caller's precise check (:func:`check_bound`) then decides.
    """
    values = arr.tolist()  # (max/min without ``default=``: the keyword alone costs ~0.5 µs)
    return not values or (math.isfinite(sum(values)) and max(values) <= bound and min(values) >= -bound)


def check_bound(what: str, arr: np.ndarray, bound: float, names: Sequence[str] | None = None) -> None:
    """Raise InputError (``Reason.RANGE``, offending joints named) if ``|arr| > bound`` anywhere.

    Args:
        what: Name of the input for the message.
        arr: (n,) finite floats.
        bound: Largest plausible magnitude.
        names: (n,) joint names for the message (indices when ``None``).
    """
    beyond = np.abs(arr) > bound
    if beyond.any():  # naming the joints only when one is beyond (the common case is cheap)
        bad = np.flatnonzero(beyond)
        where = [names[int(i)] if names is not None else int(i) for i in bad]
        raise InputError(
            f"{what} beyond the plausible ±{bound:g} for joints {where}: {arr[bad].tolist()}",
            reason=Reason.RANGE,
        )


def frame_bytes(data: Any, what: str = "CAN frame data") -> bytes:
    """``data`` as ``bytes``: CAN frame payloads arrive as bytes, bytearray or a byte
    memoryview (python-can), a uint8 numpy array, or a sequence of ints 0–255.

    Args:
        data: The payload.
        what: Name used in the error message.

    Returns:
        The payload as ``bytes`` (any length; callers check the length their format needs).

    Raises:
        InputError: reason ``Reason.TYPE`` for anything else -- notably a number (Python or
            numpy), which ``bytes()`` would silently turn into that many zero bytes, a
            numpy array of another dtype or a memoryview of wider items (their raw memory is
            not the payload), ``None`` and ``str``.
    """
    if isinstance(data, bytes):
        return data
    if data is None or isinstance(data, (numbers.Number, np.generic, str)):
        raise InputError(f"{what} must be bytes, got {type(data).__name__} {data!r}", reason=Reason.TYPE)
    if isinstance(data, np.ndarray) and data.dtype != np.uint8:
        raise InputError(f"{what} must be bytes, got a {data.dtype} array", reason=Reason.TYPE)
    if isinstance(data, memoryview) and data.itemsize != 1:
        raise InputError(
            f"{what} must be bytes, got a memoryview of {data.format!r} items", reason=Reason.TYPE
        )
    try:
        return bytes(data)
    except Exception as error:  # noqa: BLE001 - whatever a foreign __bytes__/__iter__ raises
        raise InputError(
            f"{what} must be bytes (or ints 0-255), got {data!r}: {error}", reason=Reason.TYPE
        ) from None


def string_keys(key: str, value: Any) -> Mapping[str, Any]:
    """``value`` checked to be a mapping whose keys are all strings (YAML allows ``1: 2``).

    Args:
        key: Where the mapping sits (``"simulation"``, ``"payload"``, …), for the error.
        value: The parsed value.

    Returns:
        ``value`` itself.

    Raises:
        ConfigError: not a mapping, or a key that is not a string (listed).
    """
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{key}: expected a mapping, got {type(value).__name__} {value!r}", key=key, value=value
        )
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{key}: keys must be names (strings), got {bad}", key=key, value=value)
    return value


def known_keys(
    where: str,
    value: Mapping[str, Any],
    valid: Sequence[str],
    key_prefix: str = "",
    *,
    file: str | os.PathLike | None = None,
    ignored: Sequence[str] = (),
) -> None:
    """Refuse keys of ``value`` that are neither ``valid`` nor ``ignored`` (a typo such as
    ``friction_cmp:`` must not silently switch a section off). The one rule of every file
    reader of the package (docs/file_formats.md).

    Args:
        where: The mapping's place in the file (``"friction_comp"``, ``"joints.shoulder"``;
            ``""`` for the top level).
        value: A mapping with string keys.
        valid: The keys read.
        key_prefix: Prefix of the error's ``key`` (``"links.tool."``).
        file: The file the mapping was read from, named first in the message.
        ignored: Keys accepted and not read (another program's sections of a file it
            shares, e.g. i2rt's ``motor_list``), listed in the message apart.

    Raises:
        ConfigError: naming the file, the unknown keys (sorted; each with the closest valid
            key, ``difflib``, when one is close) and the valid ones; ``key`` =
            ``key_prefix`` + the first unknown key, ``value`` = its value.
    """
    unknown = sorted(set(value) - set(valid) - set(ignored))
    if not unknown:
        return
    known = [*valid, *ignored]
    named = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1)
        named.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    place = f"{os.fspath(file)}: " if file is not None else ""
    also = f"; also accepted and not read: {', '.join(ignored)}" if ignored else ""
    raise ConfigError(
        f"{place}{where or 'top level'}: unknown key(s) {', '.join(named)}; "
        f"valid keys: {', '.join(valid)}{also}",
        key=f"{key_prefix}{unknown[0]}",
        value=value[unknown[0]],
    )


def short_repr(value: Any, limit: int = 40) -> str:
    """``repr(value)``, cut to about ``limit`` characters for error messages (a 400-digit
    integer or a huge list would otherwise fill the terminal)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit // 2] + f"...({len(text)} characters)"
