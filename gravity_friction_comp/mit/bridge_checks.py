"""Input checks of the MIT bridge core: times, joint commands and gains against the motors.

:class:`~gravity_friction_comp.mit.bridge_core.MitBridgeCore` calls these before it stores
anything, so a value it accepts always encodes (no overflow once mapped to the motor, gains
within the motor's encodable range). Each raises
:class:`~gravity_friction_comp.errors.InputError` with a :class:`~gravity_friction_comp.errors.Reason`
(the core turns a gain error into a :class:`~gravity_friction_comp.errors.ConfigError`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gravity_friction_comp.errors import InputError, Reason
from gravity_friction_comp.mit.bridge_config import MotorConfig
from gravity_friction_comp.validation import check_shape

__all__ = [
    "JointValues",
    "check_command",
    "check_gains_motor_side",
    "check_time",
    "gain_array",
    "joint_array",
]

#: A per-joint input: a sequence or array of n numbers.
JointValues = Sequence[float] | np.ndarray


def check_time(now: object) -> float:
    """``now`` [s] as a finite float: a NaN stamp would never time out (every comparison is
    false), an inf one never age.

    Raises:
        InputError: not a number (``Reason.TYPE``), NaN/inf (``Reason.NOT_FINITE``).
    """
    if type(now) is float and math.isfinite(now):  # the common case: every step and reply
        return now
    if isinstance(now, (bool, np.bool_)) or not isinstance(now, (int, float, np.integer, np.floating)):
        raise InputError(f"now must be a time in seconds, got {now!r}", reason=Reason.TYPE)
    try:
        out = float(now)
    except OverflowError:  # an int beyond the float range
        raise InputError(f"now must be finite, got {now!r}", reason=Reason.NOT_FINITE) from None
    if not math.isfinite(out):
        raise InputError(f"now must be finite, got {now!r}", reason=Reason.NOT_FINITE)
    return out


def joint_array(key: str, values: JointValues | None, n: int, *, required: bool = False) -> np.ndarray:
    """``values`` as a new (n,) float array; ``None`` is zeros unless ``required``.

    Raises:
        InputError: ``None`` when required (``Reason.MISSING``), not numbers (``Reason.TYPE``),
            not of shape (n,) (``Reason.SHAPE``).
    """
    if values is None:
        if required:
            raise InputError(f"{key} is required ({n} numbers), got None", reason=Reason.MISSING)
        return np.zeros(n)
    if isinstance(values, (str, bytes)):
        raise InputError(f"{key} must be {n} numbers, got {values!r}", reason=Reason.TYPE)
    try:
        arr = np.array(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{key} must be {n} numbers, got {values!r}", reason=Reason.TYPE) from None
    check_shape(key, arr, n)
    return arr


def gain_array(key: str, values: Any, n: int) -> np.ndarray:
    """:func:`joint_array`, refusing bools (``kp: [true, true, true]`` is not a stiffness)."""
    raw = values.tolist() if isinstance(values, np.ndarray) else values
    if isinstance(raw, (bool, np.bool_)) or (
        isinstance(raw, Sequence) and any(isinstance(x, (bool, np.bool_)) for x in raw)
    ):
        raise InputError(f"{key} must be {n} numbers, not booleans, got {values!r}", reason=Reason.TYPE)
    return joint_array(key, values, n)


def check_command(
    motors: Sequence[MotorConfig],
    position: JointValues | None,
    velocity: JointValues | None,
    effort: JointValues | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A joint command, one motor per joint, validated (see ``MitBridgeCore.checked_command``).

    Returns:
        ``(position, velocity, effort)``, new float arrays of shape (n,).

    Raises:
        InputError: see ``MitBridgeCore.set_command``.
    """
    n = len(motors)
    q = joint_array("position", position, n, required=True)
    qd = joint_array("velocity", velocity, n)
    tau = joint_array("effort", effort, n)
    # a sum is the cheap finiteness screen (NaN/inf propagate, ~1 µs against ~10 µs of
    # np.isfinite); only a non-finite or overflowing total pays for the element-wise check
    qs, qds, taus = q.tolist(), qd.tolist(), tau.tolist()
    if not math.isfinite(sum(qs) + sum(qds) + sum(taus)) and not (
        np.isfinite(q).all() and np.isfinite(qd).all() and np.isfinite(tau).all()
    ):
        raise InputError("joint command contains NaN/inf; rejected", reason=Reason.NOT_FINITE)
    # a finite joint value times the gear ratio can still overflow on the motor side: the
    # motor-side values summed are the screen again (~0.5 µs a joint), only a non-finite
    # total pays for command_to_motor's check of each value (~2 µs a joint), which names it
    total = 0.0
    for m, a, b, c in zip(motors, qs, qds, taus):
        mp = m.mapping
        total += mp.position_to_motor(a) + mp.velocity_to_motor(b) + mp.torque_to_motor(c)
    if not math.isfinite(total):
        for m, a, b, c in zip(motors, qs, qds, taus):
            try:
                m.mapping.command_to_motor(a, b, 0.0, 0.0, c)
            except InputError as error:
                raise InputError(f"joint {m.name}: {error}; rejected", reason=Reason.RANGE) from None
    return q, qd, tau


def check_gains_motor_side(motors: Sequence[MotorConfig], kp: np.ndarray, kd: np.ndarray) -> None:
    """Raise InputError (``Reason.RANGE``, joint named) if a joint's kp, kd or ``damp_kd``
    overflows once mapped to its motor (times 1/r²) or is beyond the motor's encodable range
    (0..kp_max, 0..kd_max motor-side): the encoder would cap a larger gain silently (issue 32
    point 3). ``kp``, ``kd``: (n,) [N·m/rad], [N·m·s/rad]."""
    for i, m in enumerate(motors):
        damp_kd = kd[i] if m.damp_kd is None else m.damp_kd
        mp, lim = m.mapping, m.limits
        try:
            mp.command_to_motor(0.0, 0.0, float(kp[i]), float(kd[i]), 0.0)
            mp.command_to_motor(0.0, 0.0, 0.0, float(damp_kd), 0.0)
        except InputError as error:
            raise InputError(f"joint {m.name}: {error}; rejected", reason=Reason.RANGE) from None
        for key, gain, cap in (
            ("kp", float(kp[i]), lim.kp_max),
            ("kd", float(kd[i]), lim.kd_max),
            ("damp_kd", float(damp_kd), lim.kd_max),
        ):
            if mp.kp_to_motor(gain) > cap * (1.0 + 1e-12):  # kp and kd map alike: / r²
                raise InputError(
                    f"joint {m.name}: {key} {gain:g} is beyond the motor's range 0..{mp.kp_from_motor(cap):g} "
                    f"at the joint ({key[-2:]}_max {cap:g} on the motor, gear ratio "
                    f"{mp.gear_ratio:g}); rejected",
                    reason=Reason.RANGE,
                )
