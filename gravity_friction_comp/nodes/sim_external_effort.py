"""The simulated hand's topic: ``sim/external_effort`` (sensor_msgs/JointState, effort by name).

Used by :class:`~gravity_friction_comp.nodes.mit_bridge_node.MitBridgeNode` when it runs the
simulated arm. Each message's effort [N·m] is the external joint torque from its stamp on
(simulated time in lockstep; names the message omits get 0; an unstamped message counts
from the node clock's now). In lockstep the driver applies it at the physics step of the
stamp (:class:`~gravity_friction_comp.sim.external_effort.ExternalEffortSchedule`), so a push
published ahead of time acts identically in every run; in real time it applies at once.
"""

from __future__ import annotations

from sensor_msgs.msg import JointState

from gravity_friction_comp.errors import DimensionError, InputError
from gravity_friction_comp.nodes.lockstep_clock import stamp_ns
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS
from gravity_friction_comp.sim.external_effort import ExternalEffortSchedule

__all__ = ["subscribe_external_effort"]


def subscribe_external_effort(node, sim, driver=None) -> ExternalEffortSchedule:
    """Subscribe ``node`` to ``sim/external_effort`` for the SimulatedMotorBus ``sim``.

    With a lockstep ``driver`` the schedule becomes its ``external``; otherwise each message
    is applied at once. Bad messages are refused with a throttled warning.
    """
    schedule = ExternalEffortSchedule(sim.arm.joint_names)

    def on_message(msg: JointState) -> None:
        t = stamp_ns(msg.header.stamp) * 1e-9 or node.get_clock().now().nanoseconds * 1e-9
        try:
            schedule.add(t, list(msg.name), list(msg.effort))
        except (InputError, DimensionError) as error:
            node.get_logger().warning(f"sim/external_effort ignored: {error}", throttle_duration_sec=2.0)
            return
        if driver is None:
            sim.set_external_effort(schedule.at(t))

    node.create_subscription(JointState, "sim/external_effort", on_message, SETPOINT_QOS)
    if driver is not None:
        driver.external = schedule
    return schedule
