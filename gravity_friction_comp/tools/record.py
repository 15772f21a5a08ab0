"""``record``: write ``joint_states`` (and optionally ``joint_command``) to a rosbag2 folder or a CSV log.

For the pip environment, where ``ros2 bag record`` is not installed: rclpy subscribes the
topics and ``rosbags`` writes the serialized messages unchanged (no re-encoding), so the
result is the bag ``ros2 bag record`` would write (MCAP or sqlite3 storage). ``--format csv``
writes the package's one joint-log CSV layout
(:mod:`gravity_friction_comp.ident.joint_log`) by recording a bag first and reading it back
with :func:`~gravity_friction_comp.ident.joint_log.load_rosbag`: one reader for both, so the
CSV holds exactly what ``identify_friction --bag`` would read (header stamps, or the receive
time for unstamped messages, relative to the first message).

Usage::

    record --out run1                      # rosbag2 folder run1/ (MCAP), until Ctrl-C
    record --out run1 --storage sqlite3 --command --duration 60
    record --out run1.csv --count 5000     # CSV: joint_states; joint_command -> run1_command.csv

Stops at ``--duration`` seconds (wall time), after ``--count`` joint_states messages, or at
Ctrl-C / SIGTERM; the file is complete in every case. Exit codes: 0 written; 2 bad input
(existing output, bad option, nothing received) with a one-line ``record: error: ...``.
Run with ``ROS_DOMAIN_ID`` / ``ROS_AUTOMATIC_DISCOVERY_RANGE`` as the chain; ``--ros-args``
passes remappings and ``use_sim_time`` to the recorder node.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence

from gravity_friction_comp.errors import ConfigError, GravityFrictionCompError
from gravity_friction_comp.ident.joint_log import JointStateBag, check_new_output

__all__ = ["RECORD_QOS_DEPTH", "main", "record_bag"]

#: Subscription history [messages]: a recorder must not drop what a 1 kHz chain publishes
#: while the writer is busy.
RECORD_QOS_DEPTH = 10000


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="record",
        description="Record joint_states (and joint_command) to a rosbag2 folder or a CSV joint log.",
    )
    p.add_argument("--out", required=True, help="bag folder to create, or a .csv file")
    p.add_argument(
        "--storage",
        choices=("mcap", "sqlite3"),
        default="mcap",
        help="rosbag2 storage (default mcap; ignored for .csv)",
    )
    p.add_argument("--topic", default="joint_states", help="measured JointState topic (default joint_states)")
    p.add_argument("--command", action="store_true", help="also record the joint_command topic")
    p.add_argument("--command-topic", default="joint_command", help="command topic (default joint_command)")
    p.add_argument("--duration", type=float, default=None, help="stop after this many seconds (wall)")
    p.add_argument("--count", type=int, default=None, help="stop after this many joint_states messages")
    return p


def _check(args) -> None:
    for key in ("duration", "count"):
        value = getattr(args, key)
        if value is not None and not value > 0:
            raise ConfigError(f"--{key} must be > 0, got {value}", key=key, value=value)
    out = pathlib.Path(args.out)
    # checked before recording, so a typo does not cost the whole run
    check_new_output(out)
    if out.suffix == ".csv" and args.command and _command_csv(out).exists():
        raise ConfigError(f"{str(_command_csv(out))!r} exists; choose a new name", key="out")


def _rcl_reason(error: Exception) -> str:
    """rclpy's message without the C source location (", at /.../file.c:73")."""
    return str(error).split(", at /")[0]


def _command_csv(out: pathlib.Path) -> pathlib.Path:
    return out.with_name(f"{out.stem}_command.csv")


def record_bag(
    bag: pathlib.Path,
    topics: Sequence[str],
    *,
    storage: str = "mcap",
    duration: float | None = None,
    count: int | None = None,
    ros_args: Sequence[str] = (),
    stop: list[bool] | None = None,
) -> dict[str, int]:
    """Record the JointState ``topics`` into the new rosbag2 folder ``bag`` until a limit.

    Args:
        bag: folder to create (must not exist).
        topics: topic names as the node sees them (remappable with ``ros_args``); the first
            one's message count is the one ``count`` limits.
        storage: ``"mcap"`` or ``"sqlite3"``.
        duration: [s] wall time limit, or ``None``.
        count: messages on ``topics[0]``, or ``None``.
        ros_args: ``--ros-args`` arguments for the recorder node.
        stop: a one-item list; recording ends when ``stop[0]`` becomes true (signal handlers).

    Returns:
        Messages written per topic (resolved names).

    Raises:
        ConfigError: ``bag`` exists or its folder cannot be written (rosbags' reason); a
            topic name rclpy refuses or two topics that resolve to one; ``ros_args`` rclpy
            refuses. Nothing is created then.
    """
    import rclpy
    from rclpy.context import Context
    from rclpy.exceptions import NameValidationException, ParameterException
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    stop = stop if stop is not None else [False]
    context = Context()
    try:
        rclpy.init(args=["record", "--ros-args", *ros_args], context=context)
        node = rclpy.create_node("record", context=context)
    except (RuntimeError, ParameterException) as exc:  # rclpy's RCLError is a RuntimeError
        rclpy.try_shutdown(context=context)
        raise ConfigError(f"--ros-args {' '.join(ros_args)!r}: {_rcl_reason(exc)}", key="ros_args") from None
    names: list[str] = []
    try:
        for topic in topics:
            try:
                name = node.resolve_topic_name(topic)  # namespace and remapping applied
            except (RuntimeError, NameValidationException) as exc:
                raise ConfigError(f"topic {topic!r}: {_rcl_reason(exc)}", key="topic", value=topic) from None
            if name in names:
                raise ConfigError(f"topic {topic!r} is recorded twice (as {name})", key="topic", value=topic)
            names.append(name)
        writer = JointStateBag(bag, storage)
    except ConfigError:
        node.destroy_node()
        rclpy.try_shutdown(context=context)
        raise
    qos = QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=RECORD_QOS_DEPTH, reliability=ReliabilityPolicy.RELIABLE
    )
    first = names[0]
    try:
        for topic, name in zip(topics, names):
            writer.add_topic(name)

            def on_message(raw: bytes, name=name) -> None:
                # the receive time on the node clock (sim time with use_sim_time), as ros2 bag
                writer.write(name, node.get_clock().now().nanoseconds, raw)

            node.create_subscription(JointState, topic, on_message, qos, raw=True)
        counts = writer.counts
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        started = time.monotonic()
        print(f"record: recording {list(counts)} to {bag}", file=sys.stderr, flush=True)
        while not stop[0] and context.ok():
            if duration is not None and time.monotonic() - started >= duration:
                break
            if count is not None and counts[first] >= count:
                break
            executor.spin_once(timeout_sec=0.05)
        executor.shutdown()
    finally:
        writer.close()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    return dict(writer.counts)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 written, 2 bad input)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ros_args: list[str] = []
    if "--ros-args" in argv:
        k = argv.index("--ros-args")
        argv, ros_args = argv[:k], argv[k + 1 :]
    args = _parser().parse_args(argv)
    stop = [False]

    def request_stop(signum, frame) -> None:
        stop[0] = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, request_stop)
    try:
        _check(args)
        return _run(args, ros_args, stop)
    except (GravityFrictionCompError, OSError) as exc:
        print(f"record: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


def _run(args, ros_args: list[str], stop: list[bool]) -> int:
    out = pathlib.Path(args.out)
    topics = [args.topic] + ([args.command_topic] if args.command else [])
    if out.suffix != ".csv":
        counts = record_bag(
            out,
            topics,
            storage=args.storage,
            duration=args.duration,
            count=args.count,
            ros_args=ros_args,
            stop=stop,
        )
        if not any(counts.values()):
            shutil.rmtree(out, ignore_errors=True)  # an empty bag is no record
            return _nothing(counts)
        print(f"record: wrote {out} ({', '.join(f'{n} {t}' for t, n in counts.items())})", file=sys.stderr)
        return 0
    from gravity_friction_comp.ident.joint_log import load_rosbag, write_csv

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="record_"))
    try:
        bag = tmp / "bag"
        counts = record_bag(
            bag,
            topics,
            storage="mcap",
            duration=args.duration,
            count=args.count,
            ros_args=ros_args,
            stop=stop,
        )
        names = list(counts)
        if not counts[names[0]]:
            return _nothing(counts)
        write_csv(out, load_rosbag(bag, names[0], require=("position",)))
        written = [str(out)]
        if args.command and counts[names[1]]:
            write_csv(_command_csv(out), load_rosbag(bag, names[1], require=("position",)))
            written.append(str(_command_csv(out)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"record: wrote {', '.join(written)} ({', '.join(f'{n} {t}' for t, n in counts.items())})",
        file=sys.stderr,
    )
    return 0


def _nothing(counts: dict[str, int]) -> int:
    print(
        f"record: error: no message received on {list(counts)} (is the chain running on this "
        "ROS_DOMAIN_ID, with ROS_AUTOMATIC_DISCOVERY_RANGE as the chain's?)",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
