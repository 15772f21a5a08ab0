"""Joint-state logs: the one record type, CSV layout, rosbag2 reader and writer of the package.

The setpoint player's replay profiles, the excitation recorder and the friction
identification all read and write joint logs through this module.

CSV layout (written by :func:`write_csv`, read by :func:`load_csv`): a header row, then one
row per sample; a ``time`` column [s], then per joint ``<joint>/position`` [rad],
``<joint>/velocity`` [rad/s] and ``<joint>/effort`` [N·m] (velocity and effort may be absent
for every joint, e.g. a setpoint stream)::

    time,shoulder_pitch/position,shoulder_pitch/velocity,shoulder_pitch/effort
    0.000,0.3001,0.0,1.532

The older setpoint-player layout ``position.<joint>``, ``velocity.<joint>``,
``effort.<joint>`` is still read (files written by earlier versions keep loading); it is
never written.

Bags: ``sensor_msgs/msg/JointState`` on one topic of a rosbag2 folder (sqlite3 or MCAP), read
with ``rosbags`` (imported on use) and written by :class:`JointStateBag` (``record``,
``calibrate_gravity record``). No rclpy import.
"""

from __future__ import annotations

import csv
import io
import os
import pathlib
import stat
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from gravity_friction_comp.errors import ConfigError, IdentificationError, Reason
from gravity_friction_comp.files import path_stat, read_text

__all__ = [
    "CSV_FIELDS",
    "JointStateBag",
    "JointStateLog",
    "check_new_output",
    "load_csv",
    "load_log",
    "load_rosbag",
    "write_csv",
]

#: Per-joint quantities of a log, in column order.
CSV_FIELDS = ("position", "velocity", "effort")
_JOINT_STATE = "sensor_msgs/msg/JointState"


class JointStateLog(NamedTuple):
    """A joint-state record, m samples of n joints.

    Attributes:
        joint_names: (n,) names. time: (m,) [s], relative to the first sample.
        position: (m, n) [rad]. velocity: (m, n) [rad/s] or ``None`` (not recorded).
        effort: (m, n) [N·m] or ``None`` (not recorded).
    """

    joint_names: tuple[str, ...]
    time: np.ndarray
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray | None

    def select(self, joints: Sequence[str]) -> JointStateLog:
        """The same log with only ``joints`` (in that order).

        Raises:
            IdentificationError: a joint not in the log (reason ``Reason.MISSING_JOINTS``; lists
                the log's joints).
        """
        missing = [j for j in joints if j not in self.joint_names]
        if missing:
            raise IdentificationError(
                f"joint(s) {missing} not in the log; joints in the log: {list(self.joint_names)}",
                reason=Reason.MISSING_JOINTS,
            )
        idx = [self.joint_names.index(j) for j in joints]
        return JointStateLog(
            tuple(joints),
            self.time,
            self.position[:, idx],
            None if self.velocity is None else self.velocity[:, idx],
            None if self.effort is None else self.effort[:, idx],
        )


# -------------------------------------------------------------------------------------------
# CSV


def write_csv(path: str | os.PathLike, log: JointStateLog) -> None:
    """Write ``log`` in the CSV layout of the module docstring (``repr`` floats: exact round
    trip); fields that are ``None`` get no columns."""
    fields = [(f, getattr(log, f)) for f in CSV_FIELDS if getattr(log, f) is not None]
    header = ["time"] + [f"{name}/{f}" for name in log.joint_names for f, _ in fields]
    data = np.empty((log.time.size, 1 + len(fields) * len(log.joint_names)))
    data[:, 0] = log.time
    for k, (_, values) in enumerate(fields):
        data[:, 1 + k :: len(fields)] = values
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        for row in data:
            w.writerow([repr(float(x)) for x in row])


def _joint_column(column: str) -> tuple[str, str] | None:
    """``(joint, field)`` of a joint column in either layout, else ``None``."""
    name, _, field = column.rpartition("/")
    if name and field in CSV_FIELDS:
        return name, field
    field, _, name = column.partition(".")
    if name and field in CSV_FIELDS:
        return name, field
    return None


def load_csv(path: str | os.PathLike, require: Sequence[str] = CSV_FIELDS) -> JointStateLog:
    """Read a CSV log (module docstring layout, or the older ``position.<joint>`` one).

    UTF-8, with or without a byte-order mark (Excel's); blank lines are skipped; every other
    row has as many cells as the header. Only ``time`` and the joint columns are read;
    other columns (``<joint>/command``, ``temp/celsius``, a text column) are ignored.

    Args:
        path: the file.
        require: fields every joint must have (``"position"`` always is); a field not
            required is read when every joint has it, else it is ``None``.

    Raises:
        IdentificationError: missing, unreadable or non-UTF-8 file (``Reason.FILE``, names the
            file); no ``time`` column, no joint columns, a joint lacking a required column,
            an optional field for only some joints, a column named twice, no data rows, a
            row whose cell count differs from the header's, or a non-numeric cell in a used
            column (``Reason.FORMAT``, names the file, line and column); a NaN/inf cell
            (``nan``, ``inf``, ``1e400``) in a used column (``Reason.NOT_FINITE``, file, line,
            column); a time that does not increase from row to row (``Reason.FORMAT``, file,
            line; the player's replay needs distinct stamps too).
        ConfigError: a ``require`` field that is not one of :data:`CSV_FIELDS` (or a bare string).
    """
    require = _required(require)
    p = pathlib.Path(path)
    try:
        text = read_text(p, "CSV log")
    except ConfigError as exc:
        raise IdentificationError(str(exc), reason=Reason.FILE) from None

    def fail(message: str) -> IdentificationError:
        return IdentificationError(f"CSV {str(p)!r}: {message}", reason=Reason.FORMAT)

    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    first = next((k for k, r in enumerate(rows) if any(c.strip() for c in r)), None)
    if first is None:
        raise fail("is empty")
    header = [h.strip() for h in rows[first]]
    if "time" not in header:
        raise fail(
            f"has no 'time' column (layout: time, <joint>/position, <joint>/velocity, "
            f"<joint>/effort, ...); columns: {header}"
        )
    names: list[str] = []
    have: dict[str, set[str]] = {}
    for h in header:
        parsed = _joint_column(h)
        if parsed:
            name, field = parsed
            if name not in have:
                names.append(name)
                have[name] = set()
            have[name].add(field)
    if not names:
        raise fail(f"has no '<joint>/position' columns; columns: {header}")
    fields = []
    for field in CSV_FIELDS:
        lacking = [n for n in names if field not in have[n]]
        if field == "position" or field in require:
            if lacking:
                raise fail(f"joint {lacking[0]!r} has no column {f'{lacking[0]}/{field}'!r}")
        elif lacking and len(lacking) < len(names):
            raise fail(f"{field} columns for some joints only; none for {lacking}")
        if not lacking:
            fields.append(field)

    def column(name: str, field: str) -> str:
        slash = f"{name}/{field}"
        return slash if slash in header else f"{field}.{name}"

    used = ["time"] + [column(n, f) for f in fields for n in names]
    twice = sorted({c for c in used if header.count(c) > 1})
    if twice:
        raise fail(f"repeated column(s) {twice} appear more than once")
    idx = [header.index(c) for c in used]
    data = []
    for line, row in enumerate(rows[first + 1 :], start=first + 2):  # the file's line numbers
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise fail(
                f"line {line} has {len(row)} cells, the header has {len(header)} (a short, long or cut-off row)"
            )
        try:
            data.append([float(row[c]) for c in idx])
        except ValueError:
            bad = next(c for c in idx if not _is_float(row[c]))
            raise fail(f"line {line}, column {header[bad]!r}: not a number: {row[bad]!r}") from None
    if not data:
        raise fail("no data rows")
    arr = np.array(data, dtype=float)
    lines = [k for k, row in enumerate(rows[first + 1 :], start=first + 2) if any(c.strip() for c in row)]
    finite = np.isfinite(arr)
    if not finite.all():
        r, c = np.argwhere(~finite)[0]
        raise IdentificationError(
            f"CSV {str(p)!r}: line {lines[r]} (sample {r}), column {used[c]!r}: not finite "
            f"(NaN/inf): {rows[lines[r] - 1][idx[c]]!r}",
            reason=Reason.NOT_FINITE,
        )
    steps = np.diff(arr[:, 0])
    if (steps <= 0.0).any():
        r = int(np.flatnonzero(steps <= 0.0)[0]) + 1
        raise fail(
            f"line {lines[r]}, column 'time': {float(arr[r, 0])!r} does not increase "
            f"(previous row {float(arr[r - 1, 0])!r}); samples must be in time order, one per stamp"
        )
    n = len(names)
    blocks = {f: arr[:, 1 + k * n : 1 + (k + 1) * n] for k, f in enumerate(fields)}
    return JointStateLog(
        tuple(names), arr[:, 0], blocks["position"], blocks.get("velocity"), blocks.get("effort")
    )


def _required(require: Sequence[str]) -> tuple[str, ...]:
    """``require`` as a tuple of :data:`CSV_FIELDS`; ConfigError (valid fields listed) otherwise."""
    if isinstance(require, (str, bytes)) or not isinstance(require, (Sequence, set, frozenset)):
        raise ConfigError(
            f"require must be a list of fields from {list(CSV_FIELDS)}, got {require!r}",
            key="require",
            value=require,
        )
    unknown = [f for f in require if f not in CSV_FIELDS]
    if unknown:
        raise ConfigError(
            f"require: unknown fields {unknown}; valid fields: {', '.join(CSV_FIELDS)}",
            key="require",
            value=list(require),
        )
    return tuple(require)


def _is_float(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


# -------------------------------------------------------------------------------------------
# rosbag2


def load_rosbag(
    path: str | os.PathLike,
    topic: str = "/joint_states",
    joints: Sequence[str] | None = None,
    require: Sequence[str] = CSV_FIELDS,
) -> JointStateLog:
    """Read ``sensor_msgs/msg/JointState`` messages on ``topic`` from a rosbag2 folder.

    Time is the message header stamp [s] (the record time when the stamp is zero), relative
    to the first message kept, in record order (not sorted). Joints are matched by name, so
    messages may list them in any order; a message lacking one of the joints is skipped (a
    topic shared by several publishers).

    Args:
        path: rosbag2 folder (with ``metadata.yaml``), sqlite3 or MCAP storage.
        topic: topic name; a leading ``/`` is optional.
        joints: joints to keep; ``None`` or empty: those of the first message.
        require: fields every kept message must carry for all its joints (``"position"``
            always is); a field not required is ``None`` unless every kept message has it.

    Raises:
        IdentificationError: not a readable bag (``Reason.FILE``); topic absent or without a
            usable message (``Reason.MISSING``, lists the JointState topics present); a
            message naming a joint twice, or a required array whose length is not that of
            ``name`` (``Reason.FORMAT``).
        ConfigError: a ``require`` field that is not one of :data:`CSV_FIELDS` (or a bare string).
    """
    from rosbags.rosbag2 import Reader, ReaderError
    from rosbags.typesys import Stores, get_typestore

    p = pathlib.Path(path)
    wanted = topic if topic.startswith("/") else f"/{topic}"
    names: tuple[str, ...] | None = tuple(joints) if joints else None
    require = _required(require)
    needed = [f for f in CSV_FIELDS if f == "position" or f in require]
    optional = [f for f in CSV_FIELDS if f not in needed]
    store = get_typestore(Stores.ROS2_HUMBLE)
    times: list[float] = []
    values: dict[str, list[np.ndarray]] = {f: [] for f in CSV_FIELDS}
    complete = dict.fromkeys(optional, True)
    try:
        reader = Reader(p)
        reader.open()
    except (ReaderError, OSError) as exc:  # no folder, no metadata.yaml, unknown storage
        raise IdentificationError(
            f"cannot read rosbag2 folder {str(p)!r}: {exc}", reason=Reason.FILE
        ) from None
    try:
        conns = [c for c in reader.connections if c.topic in (wanted, topic)]
        if not conns:
            present = sorted(
                {c.topic for c in reader.connections if c.msgtype == "sensor_msgs/msg/JointState"}
            )
            raise IdentificationError(
                f"bag {str(p)!r}: no topic {wanted!r}; JointState topics in the bag: {present or 'none'}",
                reason=Reason.MISSING,
            )
        for count, (conn, stamp, raw) in enumerate(reader.messages(connections=conns)):
            msg: Any = store.deserialize_cdr(raw, conn.msgtype)
            index = {n: k for k, n in enumerate(msg.name)}
            if len(index) != len(msg.name):
                raise IdentificationError(
                    f"bag {str(p)!r}: message {count} on {wanted!r} names a joint twice ({list(msg.name)})",
                    reason=Reason.FORMAT,
                )
            short = [f for f in needed if len(getattr(msg, f)) != len(msg.name)]
            if short:
                raise IdentificationError(
                    f"bag {str(p)!r}: message {count} on {wanted!r} has {len(msg.name)} joint names "
                    f"but {', '.join(f'{len(getattr(msg, f))} {f}' for f in short)} values; "
                    f"JointState messages must carry {', '.join(needed)} for every joint",
                    reason=Reason.FORMAT,
                )
            if names is None:
                names = tuple(msg.name)
            if any(n not in index for n in names):
                continue
            order = [index[n] for n in names]
            ts = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            times.append(ts if ts > 0 else stamp * 1e-9)
            for f in CSV_FIELDS:
                arr = np.asarray(getattr(msg, f), dtype=float)
                if len(arr) == len(msg.name):
                    values[f].append(arr[order])
                else:
                    complete[f] = False
    finally:
        reader.close()
    if names is None or not times:
        raise IdentificationError(
            f"bag {str(p)!r}: topic {wanted!r} has no message with the joints", reason=Reason.MISSING
        )
    time = np.asarray(times, dtype=float)

    def block(f: str) -> np.ndarray | None:
        return np.array(values[f], dtype=float) if complete.get(f, True) else None

    return JointStateLog(
        names, time - time[0], np.array(values["position"]), block("velocity"), block("effort")
    )


def load_log(
    path: str | os.PathLike, topic: str = "/joint_states", require: Sequence[str] = CSV_FIELDS
) -> JointStateLog:
    """A CSV file or a rosbag2 folder (a directory), by what ``path`` is.

    Raises:
        IdentificationError: as :func:`load_csv` / :func:`load_rosbag`; missing path
            (``Reason.FILE``).
    """
    p = pathlib.Path(path)
    info = path_stat(p)
    if info is not None and stat.S_ISDIR(info.st_mode):
        return load_rosbag(p, topic, require=require)
    if info is None:
        raise IdentificationError(f"log {str(p)!r} does not exist", reason=Reason.FILE)
    return load_csv(p, require)


def check_new_output(out: str | os.PathLike) -> None:
    """Check that ``out`` (a bag folder or file to create) does not exist and its folder
    exists and is writable.

    Raises:
        ConfigError: otherwise (key ``out``), naming the path and the reason.
    """
    out = pathlib.Path(out)
    parent = out.absolute().parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise ConfigError(f"--out {str(out)!r}: folder {str(parent)!r} {what}", key="out")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {str(out)!r}: folder {str(parent)!r} is not writable", key="out")
    if out.exists() or out.is_symlink():
        raise ConfigError(f"--out {str(out)!r} exists; choose a new name (nothing is overwritten)", key="out")


class JointStateBag:
    """A new rosbag2 folder of ``sensor_msgs/msg/JointState`` topics, written as messages arrive.

    The one bag writer of the package (``record`` and ``calibrate_gravity record``): each
    message is written serialized as received (CDR, no re-encoding) with its receive time
    on the recording node's clock [ns], as ``ros2 bag record`` does.

    Args:
        bag: folder to create (must not exist). storage: ``"mcap"`` or ``"sqlite3"``.

    Raises:
        ConfigError: ``bag`` exists, its folder does not exist (rosbags would create the
            missing folders) or cannot be written (:func:`check_new_output`, rosbags' reason).
    """

    def __init__(self, bag: str | os.PathLike, storage: str = "mcap"):
        from rosbags.rosbag2 import StoragePlugin, Writer, WriterError
        from rosbags.typesys import Stores, get_typestore

        check_new_output(bag)

        plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
        self._typestore = get_typestore(Stores.ROS2_HUMBLE)  # JointState is the same in every distro
        self._writer = Writer(pathlib.Path(bag), version=8, storage_plugin=plugin)
        self._connections: dict[str, Any] = {}
        #: Messages written per topic.
        self.counts: dict[str, int] = {}
        try:
            self._writer.open()
        except (WriterError, OSError) as exc:
            raise ConfigError(f"cannot create bag {str(bag)!r}: {exc}", key="out") from None

    def add_topic(self, name: str) -> None:
        """Declare the JointState topic ``name`` (a resolved name, e.g. ``/joint_states``)."""
        self._connections[name] = self._writer.add_connection(name, _JOINT_STATE, typestore=self._typestore)
        self.counts[name] = 0

    def write(self, name: str, time_ns: int, raw: bytes) -> None:
        """Write one serialized message of topic ``name`` received at ``time_ns``."""
        self._writer.write(self._connections[name], int(time_ns), raw)
        self.counts[name] += 1

    def close(self) -> None:
        """Finish the bag (metadata.yaml); idempotent."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None  # type: ignore[assignment]
