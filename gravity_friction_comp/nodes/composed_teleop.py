"""composed_teleop: the follower's chain and the teleop link in one process, hand-offs by call.

:class:`~gravity_friction_comp.nodes.composed_chain.ComposedChain` (the follower's gravity →
friction → bridge) plus a :class:`~gravity_friction_comp.nodes.teleop_node.TeleopNode` on the
same executor; two DDS hops become calls:

- the teleop node's shaped setpoint goes straight into the follower's gravity stage
  (:attr:`TeleopNode.hand_off`);
- the follower bridge's ``joint_states`` goes to the teleop node (:meth:`TeleopNode.on_follower`)
  after the friction node's measurement.

The leader's ``joint_states``, the observer's ``external_effort`` and the feedback effort
stay topics (the leader is another arm, another process). Every topic is still published.
Parameters: one ``--params-file`` with a section per node name (``teleop``,
``gravity_compensation``, ``friction_feedforward``, ``mit_bridge``).
"""

from __future__ import annotations

from gravity_friction_comp.nodes.composed_chain import (
    CHAIN_NODES,
    ComposedChain,
    names_of,
    run_composed,
    usage,
)
from gravity_friction_comp.nodes.composed_free_drive import _StateHandOff
from gravity_friction_comp.nodes.parameters import sharing_arguments
from gravity_friction_comp.nodes.teleop_node import TeleopNode

__all__ = ["ComposedTeleop", "main"]


class ComposedTeleop(ComposedChain):
    """The follower chain + the teleop node in one process (module docstring).

    Args:
        context: rclpy context of the nodes (default context when ``None``).
        teleop, gravity, friction, bridge: Extra keyword arguments of each node's constructor.

    Raises:
        ConfigError: as each node's constructor (nodes built so far are destroyed).
    """

    def __init__(
        self,
        context=None,
        teleop: dict | None = None,
        gravity: dict | None = None,
        friction: dict | None = None,
        bridge: dict | None = None,
    ):
        with sharing_arguments(names_of(TeleopNode, *self.NODE_CLASSES)):
            super().__init__(context, gravity, friction, bridge)
            try:
                self.teleop = TeleopNode(context=context, **(teleop or {}))
            except BaseException:
                for node in (self.bridge, self.friction, self.gravity):
                    node.destroy_node()
                raise
        tp = self.teleop
        for subscription in tp.follower_subscriptions:  # the one bridge here has every joint
            tp.destroy_subscription(subscription)
        calls = [c for c in (self.bridge.state_hand_off,) if c is not None]
        self.bridge.state_hand_off = _StateHandOff([*calls, tp.on_follower], self._failed)
        self.gravity.destroy_subscription(self.gravity.setpoint_subscription)
        tp.hand_off = self._on_setpoint

    @property
    def nodes(self) -> tuple:
        """The nodes, for ``executor.add_node``."""
        return (self.teleop, self.gravity, self.friction, self.bridge)


def main(args=None) -> None:
    """Entry point of the ``composed_teleop`` executable."""
    summary = __doc__.strip().splitlines()[0]
    run_composed(
        ComposedTeleop,
        "composed_teleop",
        args,
        lambda: usage("composed_teleop", summary, (TeleopNode, *CHAIN_NODES)),
    )


if __name__ == "__main__":
    main()
