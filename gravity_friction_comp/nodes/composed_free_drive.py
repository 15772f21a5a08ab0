"""composed_free_drive: free drive in the one-process chain, the measured state handed over without DDS.

:class:`~gravity_friction_comp.nodes.composed_chain.ComposedChain` (gravity → friction →
bridge by direct calls; this class extends it) plus a :class:`~gravity_friction_comp.nodes.free_drive_node.FreeDriveNode`
on the same executor. Two more hand-offs replace DDS hops:

- the bridge's ``joint_states`` message goes straight to the friction node
  (:meth:`FrictionFeedforwardNode.on_joint_states`, the measured velocity) and then to the
  free-drive node (:meth:`FreeDriveNode.on_state`), after its DDS copy is published
  (the bridge's ``state_hand_off``);
- the free-drive setpoint goes straight into the chain (:attr:`FreeDriveNode.hand_off`).

So the command that answers a measured state is computed inside the bridge's exchange that
received it: the freshest pose the chain can have. A state published while the chain is
still answering the previous one (the bridge's own exchange on the command's arrival) is
published but not handed over again (no recursion). Every topic is still published
(``joint_setpoint``, ``gravity/joint_command``, ``joint_command``, ``joint_states``); the
replaced subscriptions are removed so each message is handled once. ``follow_setpoint`` and
``sim/external_effort`` stay topics.

Parameters: one ``--params-file`` with a section per node name (``free_drive``,
``gravity_compensation``, ``friction_feedforward``, ``mit_bridge``), as ``composed_chain``.
Started by ``arm.launch.py mode:=free_drive composed:=true``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sensor_msgs.msg import JointState

from gravity_friction_comp.nodes.composed_chain import (
    CHAIN_NODES,
    ComposedChain,
    names_of,
    run_composed,
    usage,
)
from gravity_friction_comp.nodes.free_drive_node import FreeDriveNode
from gravity_friction_comp.nodes.parameters import sharing_arguments

__all__ = ["ComposedFreeDrive", "main"]


class _StateHandOff:
    """The bridge's ``state_hand_off``: each ``joint_states`` message to ``calls`` in order,
    not again while they run (the chain's command makes the bridge exchange and publish)."""

    def __init__(self, calls: Sequence[Callable[[JointState], None]], failed):
        self._calls = tuple(calls)
        self._failed = failed
        self._busy = False

    def __call__(self, msg: JointState) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            for call in self._calls:
                call(msg)
        except Exception as error:  # noqa: BLE001 - a raising stage must not stop the bridge
            self._failed("free_drive", error)
        finally:
            self._busy = False


class ComposedFreeDrive(ComposedChain):
    """Free drive + gravity + friction + bridge in one process (module docstring).

    Args:
        context: rclpy context of the nodes (default context when ``None``).
        free_drive, gravity, friction, bridge: Extra keyword arguments of each node's
            constructor (e.g. ``parameter_overrides``).

    Attributes:
        free_drive: The free-drive node; gravity, friction, bridge, errors, last_error: as
            :class:`ComposedChain`.

    Raises:
        ConfigError: as each node's constructor (nodes built so far are destroyed).
    """

    def __init__(
        self,
        context=None,
        free_drive: dict | None = None,
        gravity: dict | None = None,
        friction: dict | None = None,
        bridge: dict | None = None,
    ):
        with sharing_arguments(names_of(FreeDriveNode, *self.NODE_CLASSES)):  # one process: -p reaches all
            super().__init__(context, gravity, friction, bridge)
            try:
                self.free_drive = FreeDriveNode(context=context, **(free_drive or {}))
            except BaseException:
                for node in (self.bridge, self.friction, self.gravity):
                    node.destroy_node()
                raise
        fd = self.free_drive
        fd.destroy_subscription(fd.state_subscription)
        # after the friction node's measurement, which ComposedChain already hands over
        calls = [c for c in (self.bridge.state_hand_off,) if c is not None]
        self.bridge.state_hand_off = _StateHandOff([*calls, fd.on_state], self._failed)
        # the setpoint source is in this process: gravity takes it by call, not by topic
        self.gravity.destroy_subscription(self.gravity.setpoint_subscription)
        fd.hand_off = self._on_setpoint

    @property
    def nodes(self) -> tuple:
        """The nodes, for ``executor.add_node``."""
        return (self.free_drive, self.gravity, self.friction, self.bridge)


def main(args=None) -> None:
    """Entry point of the ``composed_free_drive`` executable (SIGINT/SIGTERM: clean shutdown;
    ``-h`` / ``--help`` prints the usage and the four nodes' parameters, exits 0)."""
    summary = __doc__.strip().splitlines()[0]
    run_composed(
        ComposedFreeDrive,
        "composed_free_drive",
        args,
        lambda: usage("composed_free_drive", summary, (FreeDriveNode, *CHAIN_NODES)),
    )


if __name__ == "__main__":
    main()
