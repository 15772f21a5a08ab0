"""The bridge's lockstep side in ROS: /clock publisher, answered-setpoint matching, stall watchdog.

Used by :class:`~gravity_friction_comp.nodes.mit_bridge_node.MitBridgeNode` with
``simulate:=true sim_lockstep:=true``; the other nodes only need ``use_sim_time:=true``.
The simulated arm owns the time: this object publishes ``/clock`` (rosgraph_msgs/Clock) at
each tick of the :class:`~gravity_friction_comp.sim.lockstep.LockstepSchedule`, and runs a
tick (:class:`~gravity_friction_comp.sim.lockstep.LockstepDriver`) when the
``joint_command`` stamped with that tick has arrived. It also watches ``joint_setpoint`` (to
tell which link of the chain went silent) and runs a wall-clock watchdog: it re-publishes
the current tick (``/clock`` is best effort) and raises
:class:`~gravity_friction_comp.errors.LockstepStalled` naming the silent topic when no
answer came for ``stall_timeout`` [s] (before the chain's first answer: ``start_timeout``).

Start-up: the clock starts at the first tick once the executor spins. Until the chain has
answered once, a setpoint that stays unanswered for :data:`IDLE_TICK_AFTER` (a stage not
up yet, launched separately) moves the clock on one tick with the arm frozen, so the
source publishes again; composed in one process (the demo) the first answer comes at once
and the run starts at the first tick, the same in every run.
"""

from __future__ import annotations

import time

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.time import Time
from rosgraph_msgs.msg import Clock as ClockMsg  # type: ignore[import-untyped]
from sensor_msgs.msg import JointState

from gravity_friction_comp.errors import LockstepStalled
from gravity_friction_comp.sim.lockstep import LockstepDriver

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
        stall_timeout: Wall time without an answer that ends the run [s] (> 0).
        start_timeout: The same before the chain's first answer [s] (≥ stall_timeout).
        command_topic: The resolved joint_command topic (for the error message).
    """

    def __init__(
        self,
        node: Node,
        driver: LockstepDriver,
        setpoint_qos: QoSProfile,
        stall_timeout: float,
        start_timeout: float,
        command_topic: str,
    ):
        self.node, self.driver, self.schedule = node, driver, driver.schedule
        self.stall_timeout, self.start_timeout = float(stall_timeout), float(start_timeout)
        self.command_topic = command_topic
        self.setpoint_ns = -1  # newest joint_setpoint stamp seen
        self.setpoints = 0
        self._pub = node.create_publisher(ClockMsg, "/clock", CLOCK_QOS)
        self._setpoint_sub = node.create_subscription(
            JointState, "joint_setpoint", self._on_setpoint, setpoint_qos
        )
        self._started = False
        self._progress = time.monotonic()
        self._published = 0.0
        self._tick_since = 0.0  # wall time the current tick was first published
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

    def publish_clock(self) -> None:
        """Publish the tick the schedule is at."""
        msg = ClockMsg()
        msg.clock = Time(nanoseconds=self.schedule.tick_ns).to_msg()
        self._pub.publish(msg)
        self._published = time.monotonic()

    def command_received(self, stamp: int, command) -> None:
        """Queue a joint_command (stamp [ns]) and run every tick that is now answered."""
        self.schedule.add_command(stamp, command)
        advanced = False
        while self._started and self.schedule.tick_answered():
            self.driver.run_tick()
            advanced = True
        if advanced:
            self._progress = self._tick_since = time.monotonic()
            self.publish_clock()

    def _check(self) -> None:
        now = time.monotonic()
        if not self._started:  # first tick: after construction, once the executor spins
            self._started = True
            self.driver.prime()  # the start pose on joint_states (free drive starts from it)
            self._progress = self._tick_since = now
            self.publish_clock()
            return
        waited = now - self._progress
        first = self.setpoints == 0
        answered = self.driver.ticks > 0
        if waited > (self.stall_timeout if answered else self.start_timeout):
            tick = self.schedule.tick_ns * 1e-9
            if self.setpoint_ns >= self.schedule.tick_ns:
                why = (
                    f"{self.command_topic} went silent: the setpoint stamped {tick:.3f} s "
                    f"(sim time) was not answered for {waited:.1f} s (a stage crashed or a remap "
                    "is wrong?)"
                )
            elif first:
                why = (
                    f"{self.setpoint_topic} is silent: no setpoint for {waited:.1f} s since the "
                    "simulated clock started (is the setpoint source running with use_sim_time?)"
                )
            else:
                why = (
                    f"{self.setpoint_topic} went silent: no setpoint stamped {tick:.3f} s (sim time) "
                    f"for {waited:.1f} s (the source must publish once per /clock tick, "
                    "use_sim_time on, rate ≥ the bridge's sim_setpoint_rate_hz)"
                )
            self.node.get_logger().error(f"lockstep stalled: {why}")
            raise LockstepStalled(why)
        if not answered and self.setpoints and now - self._tick_since > IDLE_TICK_AFTER:
            self.schedule.step += self.schedule.tick_steps  # idle tick: the arm stays frozen
            self._tick_since = now
            self.publish_clock()
        elif now - self._published > _REPUBLISH_AFTER:
            self.publish_clock()  # /clock is best effort: a lost tick must not hang the loop

    def close(self) -> None:
        """Stop the watchdog (no further errors after shutdown)."""
        self._watchdog.cancel()
