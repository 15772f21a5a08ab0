"""Replay setpoint profile: linear interpolation of a recorded joint log (CSV or rosbag2).

The recording is read by :mod:`gravity_friction_comp.ident.joint_log` (the package's one
joint-log format); :func:`load_csv` and :func:`load_rosbag` turn it into a
:class:`ReplayProfile`, with every error a :class:`~gravity_friction_comp.errors.ConfigError`
naming the player option (``csv_path``, ``bag_path``, ``topic``, ``joint_names``).
"""

from __future__ import annotations

import math
import os
import pathlib
from collections.abc import Sequence

import numpy as np

from gravity_friction_comp.errors import ConfigError, DimensionError, IdentificationError
from gravity_friction_comp.ident import joint_log
from gravity_friction_comp.trajectory.base import MIN_DURATION, Profile, checked_names, finite_rate, name_list

__all__ = ["ReplayProfile", "load_csv", "load_rosbag"]


class ReplayProfile(Profile):
    """Linear interpolation of a recorded setpoint stream.

    Args:
        times: (m,) [s] sample times, each at least :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION` after the previous
            (shifted so the first is 0).
        joint_names: (n,) joints.
        positions: (m, n) [rad].
        velocities: (m, n) [rad/s], or ``None`` to use the slope of the interpolated
            position (piecewise constant, exact derivative of the interpolant).
        loop: See :class:`~gravity_friction_comp.trajectory.base.Profile`.

    Raises:
        ConfigError: fewer than 2 samples, times not finite or not increasing by at least
            :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION` (the first offending sample named), non-finite values, or
            values whose steps or slopes (step/Δt) overflow.
        DimensionError: array shapes do not match.
    """

    def __init__(self, times, joint_names: Sequence[str], positions, velocities=None, loop: bool = True):
        self.joint_names = checked_names(joint_names)
        try:
            t = np.array(times, dtype=float).reshape(-1)
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(
                f"replay times must be numbers, got {times!r}", key="times", value=times
            ) from None
        if t.size < 2:
            raise ConfigError(f"replay needs ≥ 2 samples, got {t.size}", key="times", value=t.size)
        with np.errstate(over="ignore", invalid="ignore"):
            self.times = t - t[0]
        if not np.isfinite(self.times).all():
            raise ConfigError("replay times must be finite (and span a finite time)", key="times")
        short = np.flatnonzero(~(np.diff(self.times) >= MIN_DURATION))
        if short.size:
            k = int(short[0]) + 1
            raise ConfigError(
                f"replay times must increase by ≥ {MIN_DURATION:g} s per sample "
                f"(strictly increasing); sample {k} is at {t[k]!r} s after "
                f"{t[k - 1]!r} s",
                key="times",
                value=float(t[k]),
            )
        self.positions = self._table("positions", positions, t.size)
        self.velocities = None if velocities is None else self._table("velocities", velocities, t.size)
        with np.errstate(over="ignore", invalid="ignore"):
            dq = np.diff(self.positions, axis=0)
            slope = dq / np.diff(self.times)[:, None]
        finite_rate("positions", dq, "a step between samples")
        if self.velocities is None:
            finite_rate("positions", slope, "the slope step/Δt")
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                dv = np.diff(self.velocities, axis=0)
            finite_rate("velocities", dv, "a step between samples")
        self.period = float(self.times[-1])
        self.loop = bool(loop)

    def _table(self, key: str, values, m: int) -> np.ndarray:
        try:
            arr = np.array(values, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(f"{key} must be an (m, n) table of numbers", key=key) from None
        if arr.ndim != 2 or arr.shape != (m, self.n):
            raise DimensionError(key, (m, self.n), arr.shape)  # type: ignore[arg-type]  # shapes read as well
        if not np.isfinite(arr).all():
            raise ConfigError(f"{key} contain NaN/inf", key=key)
        return arr

    def _at(self, t):
        k = int(np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, self.times.size - 2))
        t0, t1 = self.times[k], self.times[k + 1]
        w = (t - t0) / (t1 - t0)
        q = self.positions[k] + w * (self.positions[k + 1] - self.positions[k])
        if self.velocities is None:
            v = (self.positions[k + 1] - self.positions[k]) / (t1 - t0)
        else:
            v = self.velocities[k] + w * (self.velocities[k + 1] - self.velocities[k])
        return q, v, None


def _path(key: str, value) -> pathlib.Path:
    """A non-empty file or folder path (``str`` or ``os.PathLike``)."""
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise ConfigError(f"{key} must be a non-empty path, got {value!r}", key=key, value=value)
    return pathlib.Path(value)


def _select(log: joint_log.JointStateLog, joint_names: Sequence[str] | None) -> joint_log.JointStateLog:
    """``log`` restricted to ``joint_names`` (all recorded joints when empty)."""
    wanted = tuple(n for n in name_list(joint_names or ()) if n)
    if not wanted:
        return log
    missing = [n for n in wanted if n not in log.joint_names]
    if missing:
        raise ConfigError(
            f"recording lacks joints {missing}; recorded: {list(log.joint_names)}",
            key="joint_names",
            value=missing,
        )
    return log.select(wanted)


def load_csv(
    path: str | os.PathLike, loop: bool = True, joint_names: Sequence[str] | None = None
) -> ReplayProfile:
    """Replay of a CSV joint log (:mod:`~gravity_friction_comp.ident.joint_log` layout:
    ``time``, ``<joint>/position`` [rad] and optionally ``<joint>/velocity`` [rad/s] for every
    joint; the older ``position.<joint>``/``velocity.<joint>`` columns are read too).

    Args:
        path: the CSV file.
        loop: See :class:`~gravity_friction_comp.trajectory.base.Profile`.
        joint_names: joints to keep, in this order; ``None`` or empty: all recorded.

    Raises:
        ConfigError: empty path, any :func:`~gravity_friction_comp.ident.joint_log.load_csv`
            error (unreadable file, missing ``time``/position columns, a repeated column, a
            bad row, …) or data :class:`ReplayProfile` refuses (time steps below
            :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION`, …), with
            ``key="csv_path"`` and the file named in the message; ``key="joint_names"`` for
            joints the file lacks.
    """
    p = _path("csv_path", path)
    try:
        log = joint_log.load_csv(p, require=("position",))
    except IdentificationError as error:
        raise ConfigError(str(error), key="csv_path", value=str(p)) from None
    log = _select(log, joint_names)
    try:
        return ReplayProfile(log.time, log.joint_names, log.position, log.velocity, loop=loop)
    except ConfigError as error:
        raise ConfigError(f"CSV {str(p)!r}: {error}", key="csv_path", value=str(p)) from None


def load_rosbag(
    path: str | os.PathLike,
    topic: str = "joint_states",
    joint_names: Sequence[str] | None = None,
    loop: bool = True,
) -> ReplayProfile:
    """Replay of the ``sensor_msgs/msg/JointState`` messages of a rosbag2 folder.

    Read by :func:`~gravity_friction_comp.ident.joint_log.load_rosbag`: header stamps (the
    recording time where a stamp is 0), joints matched by name, messages lacking a joint
    skipped, velocity used only if every kept message has it. Samples are sorted by time and
    one less than :data:`~gravity_friction_comp.trajectory.base.MIN_DURATION` after the
    previous kept one (a repeated stamp) is dropped.

    Args:
        path: rosbag2 folder (with ``metadata.yaml``); sqlite3 or mcap storage.
        topic: Topic to read; a leading ``/`` is optional.
        joint_names: Joints to keep (a list of strings); default (``None`` or empty) those
            of the first message.
        loop: See :class:`~gravity_friction_comp.trajectory.base.Profile`.

    Raises:
        ConfigError: empty path, topic not a non-empty string, joint_names not a list of
            strings, not a readable bag, topic absent (lists the JointState topics), a
            malformed message, fewer than 2 usable samples or samples :class:`ReplayProfile`
            refuses (key ``bag_path``, except ``topic`` / ``joint_names`` for those arguments).
    """
    p = _path("bag_path", path)
    if not isinstance(topic, str) or not topic.strip("/ "):
        raise ConfigError(f"topic must be a non-empty topic name, got {topic!r}", key="topic", value=topic)
    names = name_list(joint_names) if joint_names is not None else ()
    wanted = topic if topic.startswith("/") else f"/{topic}"
    try:
        log = joint_log.load_rosbag(p, topic, names or None, require=("position",))
    except IdentificationError as error:
        raise ConfigError(str(error), key="bag_path", value=str(p)) from None
    order = np.argsort(log.time, kind="stable")
    t = log.time[order]
    keep = np.zeros(t.size, dtype=bool)
    last = -math.inf
    for k, stamp in enumerate(t):  # drop repeated (or < MIN_DURATION apart) stamps
        if stamp - last >= MIN_DURATION:
            keep[k], last = True, stamp
    if int(keep.sum()) < 2:
        raise ConfigError(
            f"bag {str(p)!r} topic {wanted!r}: fewer than 2 usable JointState messages",
            key="bag_path",
            value=str(p),
        )
    q = log.position[order][keep]
    v = None if log.velocity is None else log.velocity[order][keep]
    try:
        return ReplayProfile(t[keep], log.joint_names, q, v, loop=loop)
    except ConfigError as error:
        raise ConfigError(f"bag {str(p)!r} topic {wanted!r}: {error}", key="bag_path", value=str(p)) from None
