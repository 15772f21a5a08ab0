"""Setpoint profiles for the ``setpoint_player`` node and the demo (no rclpy import).

A profile maps time ``t`` [s] to a joint setpoint: position (n,) [rad], velocity (n,)
[rad/s] (the exact time derivative of the position, so a friction stage can use it), and
optionally the gripper's holding state. Profiles repeat with :attr:`Profile.period` when
sampled past their end (``loop=True``) or hold their last sample (``loop=False``).

Families (all closed forms, tested against them):

- :class:`SineProfile`: ``q = c + A sin(2πt/T)``, ``q̇ = (2πA/T) cos(2πt/T)``.
- :class:`RampProfile`: triangle wave starting at the centre: ``c → c+A → c−A → c`` over
  ``T``, ``|q̇| = 4A/T``.
- :class:`WaypointProfile`: minimum-jerk moves between waypoints (Flash & Hogan 1985:
  ``s(τ) = 10τ³ − 15τ⁴ + 6τ⁵``), each followed by a dwell that may open/close the gripper;
  :func:`pick_place_profile` builds the pick-and-place cycle from three poses.
- :class:`ReplayProfile`: linear interpolation of a recorded stream, loaded from a CSV file
  (:func:`load_csv`) or a rosbag2 folder of ``sensor_msgs/msg/JointState``
  (:func:`load_rosbag`, read with the ``rosbags`` library).

Every duration (period, move and grip time, replay time step) must be at least
:data:`MIN_DURATION` (1 µs), and the velocities a profile implies must be finite: dividing an
amplitude by a shorter time overflows to inf/NaN, and no real setpoint stream is that fast.
"""

from __future__ import annotations

import csv
import io
import math
import os
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, DimensionError, InputError
from gravity_friction_comp.validation import number, per_joint, read_text

__all__ = [
    "MIN_DURATION",
    "PROFILE_NAMES",
    "Profile",
    "ProfileSample",
    "RampProfile",
    "ReplayProfile",
    "SineProfile",
    "Waypoint",
    "WaypointProfile",
    "load_csv",
    "load_rosbag",
    "minimum_jerk",
    "pick_place_profile",
    "profile_from_options",
]

#: Profile names the player accepts (``profile`` parameter).
PROFILE_NAMES = ("sine", "ramp", "pick_place", "bag", "csv")

#: Shortest accepted period, move/grip time or replay time step [s]: 1 µs is far below any
#: controller tick (so nothing real is refused) and keeps ``amplitude / time`` finite.
MIN_DURATION = 1e-6


class ProfileSample(NamedTuple):
    """One setpoint.

    Attributes:
        position: (n,) [rad or m] in :attr:`Profile.joint_names` order.
        velocity: (n,) [rad/s or m/s], the time derivative of ``position``.
        holding: Gripper holding state at this time, or ``None`` when the profile does not
            drive the gripper.
    """

    position: np.ndarray
    velocity: np.ndarray
    holding: bool | None


def _name_list(joint_names) -> tuple[str, ...]:
    """``joint_names`` as a tuple of strings (may be empty); a bare string is refused (it
    would otherwise become one joint per character)."""
    if not isinstance(joint_names, (list, tuple, np.ndarray)) or not all(
        isinstance(n, str) for n in joint_names
    ):
        raise ConfigError(
            f"joint_names must be a list of joint names (strings), got {joint_names!r}",
            key="joint_names",
            value=joint_names,
        )
    return tuple(str(n) for n in joint_names)


def _names(joint_names: Sequence[str]) -> tuple[str, ...]:
    names = _name_list(joint_names)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ConfigError(
            f"joint_names must be non-empty strings, got {list(names)}", key="joint_names", value=list(names)
        )
    if len(set(names)) != len(names):
        raise ConfigError(f"joint_names has duplicates: {list(names)}", key="joint_names", value=list(names))
    return names


def _vector(key: str, value, n: int) -> np.ndarray:
    """A finite, flat (n,) float copy; a scalar or a one-element list is broadcast
    (:func:`~gravity_friction_comp.validation.per_joint` rules otherwise)."""
    if isinstance(value, (list, tuple, np.ndarray)) and len(value) == 1 and np.ndim(value[0]) == 0:
        value = value[0]
    return np.array(per_joint(key, value, n), dtype=float)


def _duration(key: str, value) -> float:
    """A duration [s] of at least :data:`MIN_DURATION`."""
    x = number(key, value, positive=True, unit="[s]", text=True)
    if x < MIN_DURATION:
        raise ConfigError(f"{key} must be >= {MIN_DURATION:g} [s], got {value!r}", key=key, value=value)
    return x


def _finite_rate(key: str, values: np.ndarray, what: str) -> None:
    """Refuse ``values`` (implied velocities or steps) that overflowed to inf/NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        ok = np.isfinite(values).all()
    if not ok:
        raise ConfigError(f"{key}: {what} is not finite (values too large for the times)", key=key)


class Profile:
    """Base class: ``sample(t)`` → :class:`ProfileSample`.

    Attributes:
        joint_names: (n,) names of every joint the setpoint carries.
        period: Length of one cycle [s].
        loop: ``True``: ``t`` wraps modulo :attr:`period`; ``False``: the last sample holds.
    """

    joint_names: tuple[str, ...]
    period: float
    loop: bool = True

    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.joint_names)

    def sample(self, t: float) -> ProfileSample:
        """The setpoint at time ``t`` [s] (≥ 0).

        Raises:
            InputError: ``t`` negative or not finite (reason ``"time"``).
        """
        try:
            t = float(t)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"profile time must be a number [s], got {t!r}", reason="time") from None
        if not (math.isfinite(t) and t >= 0.0):
            raise InputError(f"profile time must be finite and ≥ 0 [s], got {t!r}", reason="time")
        if t >= self.period:
            if not self.loop:
                position, _, holding = self._at(self.period)
                return ProfileSample(position, np.zeros(self.n), holding)
            t = math.fmod(t, self.period)
        return ProfileSample(*self._at(t))

    def _at(self, t: float) -> tuple[np.ndarray, np.ndarray, bool | None]:
        raise NotImplementedError


class _PeriodicProfile(Profile):
    """A periodic motion about ``centre`` with per-joint ``amplitude`` (shared validation)."""

    _SPEED_FACTOR = 2.0 * math.pi  # peak |q̇| = factor·|A|/T

    def __init__(self, joint_names: Sequence[str], centre, amplitude, period: float, loop: bool = True):
        self.joint_names = _names(joint_names)
        self.centre = _vector("centre", centre, self.n)
        self.amplitude = _vector("amplitude", amplitude, self.n)
        self.period = _duration("period", period)
        self.loop = bool(loop)
        with np.errstate(over="ignore"):
            extreme = np.abs(self.centre) + np.abs(self.amplitude)
            peak = self._SPEED_FACTOR * np.abs(self.amplitude) / self.period
        _finite_rate("centre", extreme, "centre ± amplitude")
        _finite_rate("amplitude", peak, "the peak velocity amplitude/period")


class SineProfile(_PeriodicProfile):
    """``q = centre + amplitude·sin(2πt/period)`` per joint.

    Args:
        joint_names: (n,) joints of the setpoint.
        centre: (n,) or scalar [rad], the mean position.
        amplitude: (n,) or scalar [rad]; 0 keeps a joint still (e.g. distal joints).
        period: [s] (≥ :data:`MIN_DURATION`).
        loop: See :class:`Profile`.

    Raises:
        ConfigError / DimensionError: invalid names (not a list of strings, empty,
            duplicates), lengths or values, a period below :data:`MIN_DURATION`, or an
            amplitude whose peak velocity ``2π·A/period`` is not finite.
    """

    def _at(self, t):
        w = 2.0 * math.pi / self.period
        return (self.centre + self.amplitude * math.sin(w * t), self.amplitude * w * math.cos(w * t), None)


class RampProfile(_PeriodicProfile):
    """Triangle wave: ``centre → centre+A`` (first quarter) ``→ centre−A → centre``.

    Constant speed ``4A/period`` [rad/s], sign flips at the turning points.

    Args: as :class:`SineProfile`.

    Raises: as :class:`SineProfile` (peak velocity ``4A/period``).
    """

    _SPEED_FACTOR = 4.0

    def _at(self, t):
        phase = t / self.period  # [0, 1]
        speed = 4.0 * self.amplitude / self.period
        if phase < 0.25:
            return self.centre + speed * t, speed.copy(), None
        if phase < 0.75:
            return self.centre + self.amplitude - speed * (t - 0.25 * self.period), -speed, None
        return self.centre - self.amplitude + speed * (t - 0.75 * self.period), speed.copy(), None


def minimum_jerk(tau: float) -> tuple[float, float]:
    """Minimum-jerk blend ``s(τ) = 10τ³ − 15τ⁴ + 6τ⁵`` and ``ds/dτ`` for τ in [0, 1].

    Zero velocity and acceleration at both ends (Flash & Hogan 1985). τ is clipped to [0, 1].
    """
    tau = min(max(tau, 0.0), 1.0)
    t2 = tau * tau
    return t2 * tau * (10.0 - 15.0 * tau + 6.0 * t2), 30.0 * t2 * (1.0 - 2.0 * tau + t2)


@dataclass(frozen=True)
class Waypoint:
    """A pose reached by a minimum-jerk move, then held.

    Attributes:
        position: (n,) [rad] target.
        move_time: [s] (≥ :data:`MIN_DURATION`) duration of the move from the previous
            waypoint.
        dwell_time: [s] (≥ 0) time held at the target after arriving.
        holding: Gripper state set on arrival (kept through the dwell and the next moves);
            ``None`` leaves it unchanged.
    """

    position: tuple[float, ...]
    move_time: float
    dwell_time: float = 0.0
    holding: bool | None = None


class WaypointProfile(Profile):
    """A cycle of :class:`Waypoint` s; the last waypoint's pose is the start of the cycle.

    Segment k runs from waypoint k−1 (cyclically) to waypoint k:
    ``q = q_{k-1} + (q_k − q_{k-1})·s(t/T_move)``, ``q̇ = (q_k − q_{k-1})·s'(t/T_move)/T_move``
    (:func:`minimum_jerk`), then holds ``q_k`` for ``dwell_time``. The holding state switches
    on arrival; before the first switch of a cycle the state left by the last waypoint
    with a ``holding`` value applies (``False`` if none).

    Args:
        joint_names: (n,) joints of the setpoint.
        waypoints: ≥ 2 waypoints.
        loop: See :class:`Profile`.

    Raises:
        ConfigError / DimensionError: fewer than 2 waypoints (or not :class:`Waypoint` s),
            wrong lengths, a move time below :data:`MIN_DURATION`, a negative or non-numeric
            dwell time, a non-finite cycle length, or a move whose peak velocity
            ``(15/8)·|Δq|/move_time`` is not finite.
    """

    def __init__(self, joint_names: Sequence[str], waypoints: Sequence[Waypoint], loop: bool = True):
        self.joint_names = _names(joint_names)
        if not isinstance(waypoints, (list, tuple)) or not all(isinstance(w, Waypoint) for w in waypoints):
            raise ConfigError(
                f"waypoints must be a list of Waypoint, got {waypoints!r}", key="waypoints", value=waypoints
            )
        if len(waypoints) < 2:
            raise ConfigError(
                f"a waypoint cycle needs ≥ 2 waypoints, got {len(waypoints)}",
                key="waypoints",
                value=len(waypoints),
            )
        self.positions = np.array(
            [_vector(f"waypoints[{i}].position", w.position, self.n) for i, w in enumerate(waypoints)]
        )
        self.move_times = np.array(
            [_duration(f"waypoints[{i}].move_time", w.move_time) for i, w in enumerate(waypoints)]
        )
        self.dwell_times = np.array(
            [
                number(f"waypoints[{i}].dwell_time", w.dwell_time, nonneg=True, unit="[s]", text=True)
                for i, w in enumerate(waypoints)
            ]
        )
        self.holdings = tuple(w.holding for w in waypoints)
        with np.errstate(over="ignore", invalid="ignore"):
            steps = self.positions - np.roll(self.positions, 1, axis=0)  # segment k: k−1 → k
            peaks = np.abs(steps) * (15.0 / 8.0) / self.move_times[:, None]
            ends = np.cumsum(self.move_times + self.dwell_times)
        _finite_rate("waypoints", steps, "a step between waypoints")
        _finite_rate("waypoints", peaks, "the peak velocity (15/8)·step/move_time")
        _finite_rate("waypoints", ends, "the cycle length")
        self._starts = np.concatenate(([0.0], ends[:-1]))
        self.period = float(ends[-1])
        self.loop = bool(loop)
        last = [h for h in self.holdings if h is not None]
        self._initial_holding = bool(last[-1]) if last else False

    def holding_at(self, t: float) -> bool:
        """Gripper state at cycle time ``t`` [s] in [0, period]."""
        state = self._initial_holding
        for k, start in enumerate(self._starts):
            if t >= start + self.move_times[k] and self.holdings[k] is not None:
                state = bool(self.holdings[k])
        return state

    def segment_times(self, k: int) -> tuple[float, float, float]:
        """(move start, arrival, dwell end) [s] of segment ``k`` within one cycle."""
        start = float(self._starts[k])
        arrive = start + float(self.move_times[k])
        return start, arrive, arrive + float(self.dwell_times[k])

    def _at(self, t):
        k = int(np.searchsorted(self._starts, t, side="right") - 1)
        k = min(max(k, 0), len(self._starts) - 1)
        q0, q1 = self.positions[k - 1], self.positions[k]
        T = self.move_times[k]
        s, ds = minimum_jerk((t - self._starts[k]) / T)
        return q0 + (q1 - q0) * s, (q1 - q0) * (ds / T), self.holding_at(t)


def pick_place_profile(
    joint_names: Sequence[str],
    home,
    pick,
    place,
    *,
    move_time: float = 2.0,
    dwell_time: float = 1.5,
    grip_time: float = 0.2,
    loop: bool = True,
) -> WaypointProfile:
    """Pick-and-place cycle: home → pick, wait, close → place, open → home.

    Segments (each move minimum-jerk over ``move_time``):

    1. move to ``pick``, hold ``dwell_time`` with the gripper open (the arm settles);
    2. ``grip_time`` still at ``pick``, then the gripper closes and the arm holds
       ``dwell_time`` with the payload (the window before and after the close shows the
       payload's static sag);
    3. move to ``place``; the gripper opens on arrival; hold ``dwell_time``;
    4. move back ``home``; hold ``dwell_time``.

    Args:
        joint_names: (n,) joints.
        home, pick, place: (n,) [rad] poses (a scalar is broadcast).
        move_time: [s] per move (≥ :data:`MIN_DURATION`). dwell_time: [s] per stop (≥ 0).
        grip_time: [s] (≥ :data:`MIN_DURATION`) gripper closing time.

    Raises:
        ConfigError / DimensionError: as :class:`WaypointProfile`; ``key`` names the
            argument (``"pick"``, ``"move_time"``, ``"dwell_time"``, …).
    """
    names = _names(joint_names)
    home_t, pick_t, place_t = (
        tuple(_vector(key, value, len(names)).tolist())
        for key, value in (("home", home), ("pick", pick), ("place", place))
    )
    move_time = _duration("move_time", move_time)
    grip_time = _duration("grip_time", grip_time)
    dwell_time = number("dwell_time", dwell_time, nonneg=True, unit="[s]", text=True)
    return WaypointProfile(
        names,
        [
            Waypoint(pick_t, move_time, dwell_time, None),
            Waypoint(pick_t, grip_time, dwell_time, True),
            Waypoint(place_t, move_time, dwell_time, False),
            Waypoint(home_t, move_time, dwell_time, None),
        ],
        loop=loop,
    )


class ReplayProfile(Profile):
    """Linear interpolation of a recorded setpoint stream.

    Args:
        times: (m,) [s] sample times, each at least :data:`MIN_DURATION` after the previous
            (shifted so the first is 0).
        joint_names: (n,) joints.
        positions: (m, n) [rad].
        velocities: (m, n) [rad/s], or ``None`` to use the slope of the interpolated
            position (piecewise constant, exact derivative of the interpolant).
        loop: See :class:`Profile`.

    Raises:
        ConfigError: fewer than 2 samples, times not finite or not increasing by at least
            :data:`MIN_DURATION` (the first offending sample named), non-finite values, or
            values whose steps or slopes (step/Δt) overflow.
        DimensionError: array shapes do not match.
    """

    def __init__(self, times, joint_names: Sequence[str], positions, velocities=None, loop: bool = True):
        self.joint_names = _names(joint_names)
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
        _finite_rate("positions", dq, "a step between samples")
        if self.velocities is None:
            _finite_rate("positions", slope, "the slope step/Δt")
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                dv = np.diff(self.velocities, axis=0)
            _finite_rate("velocities", dv, "a step between samples")
        self.period = float(self.times[-1])
        self.loop = bool(loop)

    def _table(self, key: str, values, m: int) -> np.ndarray:
        try:
            arr = np.array(values, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(f"{key} must be an (m, n) table of numbers", key=key) from None
        if arr.ndim != 2 or arr.shape != (m, self.n):
            raise DimensionError(key, (m, self.n), arr.shape)
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


def load_csv(path: str | pathlib.Path, loop: bool = True) -> ReplayProfile:
    """Load a recorded stream from CSV (UTF-8, a leading byte-order mark is accepted).

    Format: a header row with ``time`` [s], then ``position.<joint>`` [rad] per joint and
    optionally ``velocity.<joint>`` [rad/s] for every joint; one row per sample::

        time,position.shoulder_pitch,position.beam_pitch,velocity.shoulder_pitch,velocity.beam_pitch
        0.000,0.30,0.20,0.0,0.0

    Raises:
        ConfigError: empty path, unreadable or non-UTF-8 file, missing ``time``/position
            columns, a repeated column, velocity columns for only some joints, no data rows,
            a row with the wrong number of cells or a non-numeric cell (row named), or data
            :class:`ReplayProfile` refuses (time steps below :data:`MIN_DURATION`, NaN, …);
            always ``key="csv_path"`` and the file named in the message.
    """
    p = _path("csv_path", path)
    text = read_text(p, "csv_path")
    if text.startswith("\ufeff"):  # byte-order mark written by spreadsheet programs
        text = text[1:]
    rows = list(csv.reader(io.StringIO(text)))

    def fail(message: str) -> ConfigError:
        return ConfigError(f"CSV {str(p)!r}: {message}", key="csv_path", value=str(p))

    numbered = [(k + 1, r) for k, r in enumerate(rows) if r and any(c.strip() for c in r)]
    if not numbered:
        raise fail("is empty")
    header = [c.strip() for c in numbered[0][1]]
    if "time" not in header:
        raise fail(f"has no 'time' column; columns: {header}")
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise fail(f"repeated column(s) {repeated}")
    names = [c[len("position.") :] for c in header if c.startswith("position.")]
    if not names:
        raise fail(f"has no 'position.<joint>' columns; columns: {header}")
    vel_names = [c[len("velocity.") :] for c in header if c.startswith("velocity.")]
    if vel_names and sorted(vel_names) != sorted(names):
        raise fail(f"velocity columns {vel_names} must match position columns {names}")
    if len(numbered) < 2:
        raise fail("no data rows (only the header)")
    data = np.empty((len(numbered) - 1, len(header)))
    for i, (line, row) in enumerate(numbered[1:]):
        if len(row) != len(header):
            raise fail(f"line {line} has {len(row)} cells, the header {len(header)}")
        try:
            data[i] = [float(c) for c in row]
        except ValueError as error:
            raise fail(f"line {line}: non-numeric cell ({error})") from None
    col = {c: i for i, c in enumerate(header)}
    positions = data[:, [col[f"position.{n}"] for n in names]]
    velocities = data[:, [col[f"velocity.{n}"] for n in names]] if vel_names else None
    try:
        return ReplayProfile(data[:, col["time"]], names, positions, velocities, loop=loop)
    except ConfigError as error:
        raise fail(str(error)) from None


def load_rosbag(
    path: str | pathlib.Path,
    topic: str = "joint_states",
    joint_names: Sequence[str] | None = None,
    loop: bool = True,
) -> ReplayProfile:
    """Load ``sensor_msgs/msg/JointState`` messages from a rosbag2 folder (``rosbags``).

    Sample times are the header stamps (the recording time where a stamp is 0). Joints are
    matched by name, so messages may list them in any order; messages lacking one of the
    joints, or carrying velocity for some messages only, are handled: samples missing a
    joint are skipped, and velocity is used only if every kept message has it. A sample
    less than :data:`MIN_DURATION` after the previous kept one (a repeated stamp) is dropped.

    Args:
        path: rosbag2 folder (with ``metadata.yaml``); sqlite3 or mcap storage.
        topic: Topic to read; a leading ``/`` is optional.
        joint_names: Joints to keep (a list of strings); default (``None`` or empty) those
            of the first message.
        loop: See :class:`Profile`.

    Raises:
        ConfigError: empty path, topic not a non-empty string, joint_names not a list of
            strings, not a readable bag, topic absent (lists the JointState topics), fewer
            than 2 usable samples or samples :class:`ReplayProfile` refuses (key
            ``bag_path``, except ``topic`` / ``joint_names`` for those arguments).
    """
    p = _path("bag_path", path)
    if not isinstance(topic, str) or not topic.strip("/ "):
        raise ConfigError(f"topic must be a non-empty topic name, got {topic!r}", key="topic", value=topic)
    names: tuple[str, ...] | None = None
    if joint_names is not None:
        names = _name_list(joint_names) or None
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    wanted = topic if topic.startswith("/") else f"/{topic}"
    typestore = get_typestore(Stores.ROS2_HUMBLE)
    times, positions, velocities = [], [], []
    has_velocity = True
    try:
        with Reader(p) as reader:
            connections = [c for c in reader.connections if c.topic in (wanted, topic)]
            if not connections:
                states = sorted(
                    {c.topic for c in reader.connections if c.msgtype == "sensor_msgs/msg/JointState"}
                )
                raise ConfigError(
                    f"bag {str(p)!r} has no topic {wanted!r}; JointState topics: {states}",
                    key="bag_path",
                    value=str(p),
                )
            for connection, timestamp, raw in reader.messages(connections=connections):
                msg = typestore.deserialize_cdr(raw, connection.msgtype)
                index = {n: i for i, n in enumerate(msg.name)}
                if names is None:
                    names = tuple(msg.name)
                if not all(n in index for n in names) or len(msg.position) != len(msg.name):
                    continue
                stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
                times.append(stamp if stamp > 0 else timestamp * 1e-9)
                cols = [index[n] for n in names]
                positions.append(np.asarray(msg.position, dtype=float)[cols])
                if len(msg.velocity) == len(msg.name):
                    velocities.append(np.asarray(msg.velocity, dtype=float)[cols])
                else:
                    has_velocity = False
    except ConfigError:
        raise
    except Exception as error:  # rosbags raises its own types for unreadable folders
        raise ConfigError(
            f"cannot read rosbag2 folder {str(p)!r}: {error}", key="bag_path", value=str(p)
        ) from None
    if len(times) < 2 or names is None:
        raise ConfigError(
            f"bag {str(p)!r} topic {wanted!r}: fewer than 2 usable JointState messages",
            key="bag_path",
            value=str(p),
        )
    order = np.argsort(np.asarray(times), kind="stable")
    t = np.asarray(times)[order]
    keep = np.zeros(t.size, dtype=bool)
    last = -math.inf
    for k, stamp in enumerate(t):  # drop repeated (or < MIN_DURATION apart) stamps
        if stamp - last >= MIN_DURATION:
            keep[k], last = True, stamp
    q = np.asarray(positions)[order][keep]
    v = np.asarray(velocities)[order][keep] if has_velocity else None
    try:
        return ReplayProfile(t[keep], names, q, v, loop=loop)
    except ConfigError as error:
        raise ConfigError(f"bag {str(p)!r} topic {wanted!r}: {error}", key="bag_path", value=str(p)) from None


def profile_from_options(
    name: str,
    joint_names: Sequence[str],
    *,
    home,
    amplitude=0.0,
    period: float = 4.0,
    pick=None,
    place=None,
    move_time: float = 2.0,
    dwell_time: float = 1.5,
    grip_time: float = 0.2,
    csv_path: str = "",
    bag_path: str = "",
    topic: str = "joint_states",
    loop: bool = True,
) -> Profile:
    """Build a profile by name (what the player's parameters describe).

    Args:
        name: One of :data:`PROFILE_NAMES`.
        joint_names: (n,) list of joint names (strings) of the setpoint (for ``csv``/``bag``:
            joints to keep, or empty for those recorded).
        home: (n,) or scalar [rad] centre of sine/ramp, home pose of pick_place.
        amplitude: (n,) or scalar [rad] for sine/ramp (0 keeps a joint still).
        period: [s] for sine/ramp (≥ :data:`MIN_DURATION`).
        pick, place: (n,) or scalar [rad] poses of pick_place (``None`` or empty: home ±
            amplitude).
        move_time, dwell_time, grip_time: [s] for pick_place.
        csv_path, bag_path, topic: replay sources.
        loop: repeat the cycle.

    Raises:
        ConfigError: unknown name (lists :data:`PROFILE_NAMES`), joint_names not a list of
            strings, or invalid options (``key`` names the option).
    """
    if name not in PROFILE_NAMES:
        raise ConfigError(
            f"unknown profile {name!r}; valid: {', '.join(PROFILE_NAMES)}", key="profile", value=name
        )
    if name == "csv":
        wanted = _name_list(joint_names)
        return _select(load_csv(csv_path, loop=loop), wanted)
    if name == "bag":
        return load_rosbag(bag_path, topic, _name_list(joint_names) or None, loop=loop)
    names = _names(joint_names)
    home_v = _vector("home", home, len(names))
    amp = _vector("amplitude", amplitude, len(names))
    if name == "sine":
        return SineProfile(names, home_v, amp, period, loop=loop)
    if name == "ramp":
        return RampProfile(names, home_v, amp, period, loop=loop)

    def pose(key: str, value, default: np.ndarray) -> np.ndarray:
        empty = value is None or (isinstance(value, (list, tuple, np.ndarray)) and len(value) == 0)
        return default if empty else _vector(key, value, len(names))

    with np.errstate(over="ignore", invalid="ignore"):
        pick_v = pose("pick", pick, home_v + amp)
        place_v = pose("place", place, home_v - amp)
    return pick_place_profile(
        names,
        home_v,
        pick_v,
        place_v,
        move_time=move_time,
        dwell_time=dwell_time,
        grip_time=grip_time,
        loop=loop,
    )


def _select(profile: ReplayProfile, joint_names: Sequence[str]) -> ReplayProfile:
    """Restrict a replay to ``joint_names`` (all recorded joints when empty)."""
    wanted = tuple(n for n in joint_names if n)
    if not wanted:
        return profile
    missing = [n for n in wanted if n not in profile.joint_names]
    if missing:
        raise ConfigError(
            f"recording lacks joints {missing}; recorded: {list(profile.joint_names)}",
            key="joint_names",
            value=missing,
        )
    cols = [profile.joint_names.index(n) for n in wanted]
    return ReplayProfile(
        profile.times,
        wanted,
        profile.positions[:, cols],
        None if profile.velocities is None else profile.velocities[:, cols],
        loop=profile.loop,
    )
