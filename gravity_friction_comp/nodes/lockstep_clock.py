"""The bridge's lockstep side in ROS: /clock publisher, answered-setpoint matching, stall watchdog.

Used by :class:`~gravity_friction_comp.nodes.mit_bridge_node.MitBridgeNode` with
``simulate:=true sim_lockstep:=true``; the other nodes only need ``use_sim_time:=true``.
The simulated arm owns the time: this object publishes ``/clock`` (rosgraph_msgs/Clock) at
each tick of the :class:`~gravity_friction_comp.sim.lockstep.LockstepSchedule`, and runs a
tick (:class:`~gravity_friction_comp.sim.lockstep.LockstepDriver`) when the
``joint_command`` stamped with that tick has arrived. It also watches ``joint_setpoint`` (to
tell which link of the chain went silent) and runs a watchdog: it re-publishes the current
tick (``/clock`` is best effort) and raises
:class:`~gravity_friction_comp.errors.LockstepStalled` naming the silent topic when the
chain is dead, not merely slow (:func:`~gravity_friction_comp.sim.lockstep.stall_reason`):
the awaited topic lost its publishers (a node exited), or no answer came for
``stall_timeout`` [s] (before the first answer ``start_timeout``) while the machine sat
idle, or, last resort on a busy machine, for ``stall_limit`` [s].

Start-up: the clock starts at the first tick once the executor spins. Until the chain has
answered once, a setpoint that stays unanswered for :data:`IDLE_TICK_AFTER` (a stage not
up yet, launched separately) moves the clock on one tick with the arm frozen, so the
source publishes again; composed in one process (the demo) the first answer comes at once
and the run starts at the first tick, the same in every run.

One lockstep, one bridge per bus (the bimanual pair: a bridge per arm, each its own
process): the bridge owning ``/clock`` gets ``peers``, the other bridges' ``joint_states``
topics, and shows the next tick only once each of them published its state of the tick
just run (:class:`~gravity_friction_comp.sim.lockstep.TickWait`); a silent peer is judged by
the stall rules above, named by its topic. Each other bridge runs with ``follow``: it
publishes no ``/clock``, runs a tick when its answer arrives (the same ``joint_command``),
moves on with the owner's idle ticks (the answer's stamp,
:meth:`~gravity_friction_comp.sim.lockstep.LockstepSchedule.follow`) and, until its first
answer, publishes its start state every :data:`_REPUBLISH_AFTER` once its ``joint_command``
subscription is matched (the owner starts the clock once every peer did and its own
subscription is matched too, so no bridge misses the first answer). A follower whose
clock's publisher left the graph ends its run as a stall on ``/clock``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.time import Time
from rosgraph_msgs.msg import Clock as ClockMsg  # type: ignore[import-untyped]
from sensor_msgs.msg import JointState

from gravity_friction_comp.errors import ConfigError, LockstepStalled
from gravity_friction_comp.sim.lockstep import (
    LockstepDriver,
    StallCheck,
    TickWait,
    machine_busy_seconds,
    stall_reason,
)

__all__ = ["LockstepClock", "stamp_ns"]

#: /clock QoS (rclpy's TimeSource subscribes best effort, depth 1).
CLOCK_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
_WATCHDOG_PERIOD = 0.05  # [s] wall
_REPUBLISH_AFTER = 0.2  # [s] wall without progress before the tick is published again
#: [s] wall: before the first answer, an unanswered setpoint this old moves the clock on.
IDLE_TICK_AFTER = 2.0


def stamp_ns(stamp) -> int:
    """A builtin_interfaces/Time as integer nanoseconds."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


class LockstepClock:
    """Publishes the simulated clock and advances the driver when a tick is answered.

    Args:
        node: The bridge node (publisher, subscription and timer are created on it).
        driver: The :class:`LockstepDriver` (its schedule is the simulated time).
        setpoint_qos: QoS of the setpoint watch.
        stall_timeout: Wall time without an answer, the machine idle, that ends the run [s] (> 0).
        start_timeout: The same before the chain's first answer [s] (≥ stall_timeout).
        command_topic: The resolved joint_command topic (for the error message).
        stall_limit: Wall time without an answer that ends the run however busy the
            machine [s] (the last resort: minutes).
        peers: The other bridges' state topics this clock waits for (one bridge per bus; the
            module docstring); empty: this bridge alone.
        follow: This bridge follows another bridge's clock (publishes no ``/clock``).
        command_subscription: The bridge's ``joint_command`` subscription (its matched
            publishers gate the start with ``peers`` or ``follow``).

    Raises:
        ConfigError: ``peers`` with ``follow``, ``follow`` or ``peers`` without the command
            subscription, or peers the schedule cannot wait for (:class:`TickWait`).
    """

    def __init__(
        self,
        node: Node,
        driver: LockstepDriver,
        setpoint_qos: QoSProfile,
        stall_timeout: float,
        start_timeout: float,
        command_topic: str,
        stall_limit: float = 300.0,
        *,
        peers: Sequence[str] = (),
        follow: bool = False,
        command_subscription=None,
    ):
        self.node, self.driver, self.schedule = node, driver, driver.schedule
        self.stall_timeout, self.start_timeout = float(stall_timeout), float(start_timeout)
        self.stall_limit = float(stall_limit)
        self.command_topic = command_topic
        self.follow = bool(follow)
        if (peers or follow) and command_subscription is None:
            raise ConfigError("several bridges in one lockstep: the command subscription is needed")
        if peers and follow:
            raise ConfigError(
                "sim_lockstep_follow:=true follows another bridge's clock; sim_lockstep_peers is "
                "for the bridge owning it",
                key="sim_lockstep_peers",
                value=list(peers),
            )
        self._command_sub = command_subscription
        self.peers = TickWait(self.schedule, list(peers)) if peers else None
        self.setpoint_ns = -1  # newest joint_setpoint stamp seen
        self.setpoints = 0
        self._pub = None if self.follow else node.create_publisher(ClockMsg, "/clock", CLOCK_QOS)
        self._setpoint_sub = node.create_subscription(
            JointState, "joint_setpoint", self._on_setpoint, setpoint_qos
        )
        self._peer_subs = [
            node.create_subscription(JointState, topic, self._on_peer(topic), setpoint_qos)
            for topic in (self.peers.newest if self.peers else ())
        ]
        #: the resolved topics of the peers, in order (the error messages name them)
        self.peer_topics = [sub.topic_name for sub in self._peer_subs]
        self.shown_ns = self.schedule.tick_ns  # the tick /clock shows (the owner: waits for peers)
        self._started = False
        self._primed = 0.0  # wall time of the last start state (follow: sent until answered)
        self._progress = time.monotonic()
        self._published = 0.0
        self._tick_since = 0.0  # wall time the current tick was first published
        self._busy_mark: tuple[float, float | None] = (0.0, None)  # (wall, machine busy CPU s)
        self._had_publisher: set[str] = set()
        self._no_publisher_since: dict[str, float] = {}
        self._watchdog = node.create_timer(
            _WATCHDOG_PERIOD, self._check, clock=Clock(clock_type=ClockType.STEADY_TIME)
        )

    @property
    def setpoint_topic(self) -> str:
        """The resolved joint_setpoint topic the watch listens to."""
        return self._setpoint_sub.topic_name

    def _on_setpoint(self, msg: JointState) -> None:
        self.setpoints += 1
        self.setpoint_ns = max(self.setpoint_ns, stamp_ns(msg.header.stamp))

    def _on_peer(self, topic: str):
        def on_state(msg: JointState) -> None:
            assert self.peers is not None
            self.peers.seen(topic, stamp_ns(msg.header.stamp))
            if self._started and self.shown_ns != self.schedule.tick_ns and not self.peers.not_done():
                self._show_tick()

        return on_state

    def publish_clock(self) -> None:
        """Publish the tick /clock shows (:attr:`shown_ns`; nothing when following)."""
        if self._pub is None:
            return
        msg = ClockMsg()
        msg.clock = Time(nanoseconds=self.shown_ns).to_msg()
        self._pub.publish(msg)
        self._published = time.monotonic()

    def _show_tick(self) -> None:
        """The schedule's tick on /clock (every peer has run the previous one)."""
        self.shown_ns = self.schedule.tick_ns
        self._progress = self._tick_since = time.monotonic()
        self.publish_clock()

    def command_received(self, stamp: int, command) -> None:
        """Queue a joint_command (stamp [ns]) and run every tick that is now answered."""
        if self.follow and self.driver.ticks == 0:
            self.schedule.follow(stamp)  # the owner's idle ticks before the first answer
        self.schedule.add_command(stamp, command)
        advanced = False
        while self._started and self.schedule.tick_answered():
            self.driver.run_tick()
            advanced = True
        if advanced:
            if self.peers is None or not self.peers.not_done():
                self._show_tick()
            else:  # /clock moves on once every peer has run this tick too
                self._progress = time.monotonic()

    def _ready(self) -> bool:
        """Several bridges: this one's joint_command subscription is matched and (owner) every
        peer has published its start state; one bridge: at once."""
        if self._command_sub is None:
            return True
        return self._command_sub.get_publisher_count() > 0 and not (self.peers and self.peers.not_ready())

    def _check(self) -> None:
        now = time.monotonic()
        if not self._started and self._ready():  # first tick, once the executor spins
            self._started = True
            self.driver.prime()  # the start pose on joint_states (free drive starts from it)
            self._progress = self._tick_since = self._primed = now
            self.publish_clock()
            return
        waited = now - self._progress
        first = self.setpoints == 0
        answered = self.driver.ticks > 0
        if self._busy_mark[0] < self._progress:  # the wait's start (within one watchdog period)
            self._busy_mark = (now, machine_busy_seconds())
        if waited > _REPUBLISH_AFTER:
            self._judge(now, waited, first, answered)
        if not self._started:
            return
        if self.follow:
            if not answered and now - self._primed > _REPUBLISH_AFTER:
                self.driver.prime()  # again: the owner's subscription may have missed it
                self._primed = now
        elif not answered and self.setpoints and now - self._tick_since > IDLE_TICK_AFTER:
            self.schedule.step += self.schedule.tick_steps  # idle tick: the arm stays frozen
            self.shown_ns = self.schedule.tick_ns
            self._tick_since = now
            self.publish_clock()
        elif now - self._published > _REPUBLISH_AFTER:
            self.publish_clock()  # /clock is best effort: a lost tick must not hang the loop

    def _judge(self, now: float, waited: float, first: bool, answered: bool) -> None:
        """Raise :class:`LockstepStalled` when the topic the clock waits for is dead."""
        topic, had, kind = self._awaited(first, answered)
        reason = stall_reason(
            self._observe(topic, now, waited, had), self.stall_timeout, self.start_timeout, self.stall_limit
        )
        if reason is not None:
            tick = (self.schedule.tick_ns if self.follow else self.shown_ns) * 1e-9
            why = self._why(reason, topic, kind, first, tick, waited, now)
            self.node.get_logger().error(f"lockstep stalled: {why}")
            raise LockstepStalled(why)

    def _awaited(self, first: bool, answered: bool) -> tuple[str, bool, str]:
        """``(topic, had a publisher, kind)`` of what the clock waits for now."""
        if self.peers is not None:
            if not self._started:
                waiting, had = self.peers.not_ready(), False
            else:  # this bridge ran the tick /clock shows: the peers' states are awaited
                waiting = self.peers.not_done() if self.shown_ns != self.schedule.tick_ns else []
                had = True
            if waiting:
                return self._peer_topic(waiting[0]), had, "peer"
        if not self._started:
            return self.command_topic, False, "unmatched"
        if self.setpoint_ns >= self.schedule.tick_ns:  # the setpoint came, no command
            return self.command_topic, answered, "command"
        if self.follow:
            return "/clock", answered, "clock"
        return self.setpoint_topic, not first, "setpoint"

    def _peer_topic(self, peer: str) -> str:
        assert self.peers is not None
        return self.peer_topics[list(self.peers.newest).index(peer)]

    def _observe(self, topic: str, now: float, waited: float, had: bool) -> StallCheck:
        publishers = self.node.count_publishers(topic)
        if publishers:
            self._had_publisher.add(topic)
            self._no_publisher_since.pop(topic, None)
        since = self._no_publisher_since.setdefault(topic, now) if not publishers else now
        start, busy0 = self._busy_mark
        busy = machine_busy_seconds()
        cores = (
            (busy - busy0) / (now - start) if busy is not None and busy0 is not None and now > start else None
        )
        return StallCheck(
            waited=waited,
            busy_cores=cores,
            publishers=publishers,
            had_publisher=had or topic in self._had_publisher,
            no_publisher_for=now - since,
            answered=self.driver.ticks > 0,
        )

    def _why(
        self, reason: str, topic: str, kind: str, first: bool, tick: float, waited: float, now: float
    ) -> str:
        """The LockstepStalled message for ``reason`` (:func:`stall_reason`), naming ``topic``
        (``kind``: what it is, :meth:`_awaited`)."""
        if reason == "gone":
            gone = now - self._no_publisher_since[topic]
            return (
                f"{topic} went silent: its last publisher left the graph {gone:.1f} s ago (a node "
                f"exited or crashed) while the tick at {tick:.3f} s (sim time) waited for it"
            )
        if reason == "limit":
            return (
                f"{topic} went silent: no answer to the tick at {tick:.3f} s (sim time) for "
                f"{waited:.0f} s wall (sim_stall_limit) although a node publishes it (a stage hung?)"
            )
        if kind == "peer" and not self._started:
            return (
                f"{topic} is silent: the bridge publishing it has not sent its start state for "
                f"{waited:.1f} s, the machine idle (is it running with sim_lockstep_follow:=true?)"
            )
        if kind == "peer":
            return (
                f"{topic} went silent: that bridge did not publish its state of the tick at "
                f"{tick:.3f} s (sim time) for {waited:.1f} s with the machine idle (a bridge hung, "
                "or its joint_command is remapped away?)"
            )
        if kind == "unmatched":
            return (
                f"{topic} has had no publisher for {waited:.1f} s, the machine idle: the clock "
                "does not start (is the chain's last stage running?)"
            )
        if kind == "command":
            return (
                f"{topic} went silent: the setpoint stamped {tick:.3f} s (sim time) was not answered "
                f"for {waited:.1f} s with the machine idle (a stage crashed or a remap is wrong?)"
            )
        if kind == "clock":
            return (
                f"/clock went silent: no tick after {tick:.3f} s (sim time) for {waited:.1f} s with "
                "the machine idle (is the bridge owning the clock running?)"
            )
        if first:
            return (
                f"{topic} is silent: no setpoint for {waited:.1f} s since the simulated clock "
                "started, the machine idle (is the setpoint source running with use_sim_time?)"
            )
        return (
            f"{topic} went silent: no setpoint stamped {tick:.3f} s (sim time) for {waited:.1f} s "
            "with the machine idle (the source must publish once per /clock tick, use_sim_time "
            "on, rate ≥ the bridge's sim_setpoint_rate_hz)"
        )

    def close(self) -> None:
        """Stop the watchdog (no further errors after shutdown)."""
        self._watchdog.cancel()
