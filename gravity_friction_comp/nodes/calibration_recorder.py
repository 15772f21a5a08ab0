"""Play a gravity-calibration plan through the running chain and record ``joint_states``.

Publishes the plan's profile on ``joint_setpoint`` (as ``setpoint_player`` does: names,
position, velocity, stamped with the node clock, at ``rate_hz``) and records every
``joint_states`` message (position, velocity, effort) until the profile has ended. The
gravity compensation node, the bridge and the motors must already run (gravity on, the
bridge's gains low). Works with rclpy from a ROS 2 install or the pip environment.

Optionally the same messages (those recorded: from the first setpoint to the profile's
end) also go to a rosbag2 folder, through the package's one bag writer
(:class:`~gravity_friction_comp.ident.joint_log.JointStateBag`); ``use_sim_time`` puts the
recorder on ``/clock`` (a lockstep simulated chain).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.ident.joint_log import JointStateLog
from gravity_friction_comp.nodes.parameters import check_undeclared
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS
from gravity_friction_comp.trajectory.base import Profile
from gravity_friction_comp.validation import number

__all__ = ["CLOCK_WAIT_S", "MIN_RATE_HZ", "CalibrationRecorder", "check_rate", "record_on_chain"]

#: Lowest setpoint rate [Hz]: twice 1 / the bridge's default command_timeout (0.1 s), so the
#: bridge never times out between two setpoints (and a rate like 1e-9 Hz cannot wait forever
#: for its first tick).
MIN_RATE_HZ = 20.0

#: Wall time [s] ``use_sim_time`` waits for the first tick on ``/clock`` before giving up.
CLOCK_WAIT_S = 10.0


def check_rate(rate_hz: float) -> float:
    """Check the setpoint rate [Hz]: finite and ≥ :data:`MIN_RATE_HZ`.

    Raises:
        ConfigError: otherwise (key ``rate``).
    """
    rate = number("rate", rate_hz, positive=True, unit="[Hz]")
    if rate < MIN_RATE_HZ:
        raise ConfigError(
            f"rate must be ≥ {MIN_RATE_HZ:g} Hz (setpoints faster than the bridge's command_timeout), "
            f"got {rate:g}",
            key="rate",
            value=rate,
        )
    return rate


class CalibrationRecorder(Node):
    """Publishes ``profile`` on ``joint_setpoint`` and records ``joint_states``.

    ``bag``: a :class:`~gravity_friction_comp.ident.joint_log.JointStateBag` that also gets
    every recorded message (topic ``joint_states`` as resolved), or ``None``. Other
    keywords go to :class:`rclpy.node.Node` (``context``, ``parameter_overrides``).
    """

    def __init__(self, profile: Profile, rate_hz: float = 250.0, *, bag=None, **node_kwargs):
        rate_hz = check_rate(rate_hz)
        super().__init__("calibration_recorder", **node_kwargs)
        check_undeclared(self)  # it declares none: only rclpy's own may be given
        self.profile = profile
        self._bag = bag
        self._state_topic = self.resolve_topic_name("joint_states")
        if bag is not None:
            bag.add_topic(self._state_topic)
        self.done = False
        self._start_ns: int | None = None
        self._samples: list[tuple[float, dict]] = []
        self._pub = self.create_publisher(JointState, "joint_setpoint", SETPOINT_QOS)
        self.create_subscription(JointState, "joint_states", self._on_state, SETPOINT_QOS)
        self.create_timer(1.0 / rate_hz, self._tick)

    @property
    def started(self) -> bool:
        """Whether the first setpoint tick has run (on sim time: the first ``/clock``)."""
        return self._start_ns is not None

    def _tick(self) -> None:
        now = self.get_clock().now()
        if self._start_ns is None:
            self._start_ns = now.nanoseconds
        t = (now.nanoseconds - self._start_ns) * 1e-9
        if t > self.profile.period:
            self.done = True
            return
        sample = self.profile.sample(t)
        msg = JointState()
        msg.header.stamp = now.to_msg()
        msg.name = list(self.profile.joint_names)
        msg.position = [float(x) for x in sample.position]
        msg.velocity = [float(x) for x in sample.velocity]
        self._pub.publish(msg)

    def _on_state(self, msg: JointState) -> None:
        if self._start_ns is None or self.done or len(msg.effort) != len(msg.name):
            return
        t = (self.get_clock().now().nanoseconds - self._start_ns) * 1e-9
        velocity = list(msg.velocity) if len(msg.velocity) == len(msg.name) else [0.0] * len(msg.name)
        self._samples.append((t, dict(zip(msg.name, zip(msg.position, velocity, msg.effort)))))
        if self._bag is not None:
            from rclpy.serialization import serialize_message

            self._bag.write(self._state_topic, self.get_clock().now().nanoseconds, serialize_message(msg))

    def log(self, joints) -> JointStateLog:
        """The recording of ``joints`` (samples missing any of them are skipped)."""
        rows = [(t, s) for t, s in self._samples if all(j in s for j in joints)]
        arr = np.array([[s[j] for j in joints] for _, s in rows], dtype=float).reshape(-1, len(joints), 3)
        times = np.array([t for t, _ in rows], dtype=float)
        return JointStateLog(tuple(joints), times, arr[:, :, 0], arr[:, :, 1], arr[:, :, 2])


def record_on_chain(
    profile: Profile,
    joints,
    rate_hz: float = 250.0,
    *,
    bag: str | os.PathLike | None = None,
    storage: str = "mcap",
    use_sim_time: bool = False,
    clock_wait: float = CLOCK_WAIT_S,
    on_ready: Callable[[], None] | None = None,
) -> tuple[JointStateLog, bool]:
    """Spin a :class:`CalibrationRecorder` until the profile ends or SIGINT/SIGTERM arrives.

    Args:
        profile: what to play. joints: the joints recorded (the log's columns).
        rate_hz: setpoint rate [Hz].
        bag: a rosbag2 folder to create with the recorded ``joint_states`` as well
            (``None``: none); removed again when a signal stopped the run or nothing was
            recorded (nothing is written then).
        storage: the bag's storage, ``"mcap"`` or ``"sqlite3"``.
        use_sim_time: run the recorder on ``/clock`` (a lockstep simulated chain).
        clock_wait: [s] wall time to wait for the first setpoint tick (with
            ``use_sim_time``: for ``/clock``).
        on_ready: called once the signal handlers are in place and the recorder node
            exists (from then on SIGINT/SIGTERM stop the run cleanly).

    Returns (the recording, whether a signal stopped it). The signals only ask the spin loop
    to stop (as :func:`~gravity_friction_comp.nodes.runtime.run_node`): no
    ``KeyboardInterrupt`` or ``ExternalShutdownException`` traceback.

    Raises:
        ConfigError: the bag cannot be created (it exists, or its folder does not exist or
            is not writable); ``rate_hz`` below :data:`MIN_RATE_HZ` (:func:`check_rate`); no
            tick within ``clock_wait`` (no ``/clock`` with ``use_sim_time``).
    """
    import signal
    import time

    import rclpy
    from rclpy.parameter import Parameter
    from rclpy.signals import SignalHandlerOptions

    from gravity_friction_comp.ident.joint_log import JointStateBag

    check_rate(rate_hz)  # before the bag folder is created
    writer = JointStateBag(bag, storage) if bag is not None else None
    stop: list[int] = []

    def request_stop(signum, frame) -> None:
        stop.append(signum)

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    overrides = [Parameter("use_sim_time", value=True)] if use_sim_time else []
    node = None
    log = None
    try:
        node = CalibrationRecorder(profile, rate_hz, bag=writer, parameter_overrides=overrides)
        if on_ready is not None:
            on_ready()
        started = time.monotonic()
        while rclpy.ok() and not node.done and not stop:
            rclpy.spin_once(node, timeout_sec=0.1)
            if not node.started and time.monotonic() - started > clock_wait:
                # on sim time the timer waits for /clock: without a lockstep chain, forever
                raise ConfigError(
                    f"no setpoint tick in {clock_wait:g} s"
                    + (
                        " (use_sim_time: nothing publishes /clock; is the lockstep chain running?)"
                        if use_sim_time
                        else ""
                    ),
                    key="sim_time" if use_sim_time else "rate",
                )
        log = node.log(joints)
        return log, bool(stop)
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if writer is not None:
            writer.close()
            if bag is not None and (stop or log is None or log.time.size == 0):  # nothing written
                shutil.rmtree(bag, ignore_errors=True)
