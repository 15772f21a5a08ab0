"""composed_chain: gravity → friction → MIT bridge in one process, no DDS hop between them.

The three nodes are the usual ones (:class:`GravityCompensationNode`,
:class:`FrictionFeedforwardNode`, :class:`MitBridgeNode`: same names, parameters,
validation and topics), spun by one executor. Only the hand-offs change: the gravity node's
``joint_command`` goes straight to the friction node (:attr:`FeedforwardStageNode.hand_off`),
the friction node's straight to the bridge, which sends the frames at once (its timer only
keeps the motors fed), and the bridge's ``joint_states`` straight to the friction node's
measurement. Every term is still published (``~/effort``, ``gravity/joint_command``,
``joint_command``), after the hand-off, so ``ros2 topic echo`` and ``ros2 param set
/gravity_compensation enable false`` work unchanged; the nodes' own subscriptions of those
topics are removed (each message is handled once). With their subscriptions gone those topics
usually have no listener: the stages then skip serialising them (they publish only while
heard, from the publishers' matched events:
:class:`~gravity_friction_comp.nodes.listener_count.ListenerCount`; a new ``ros2 topic echo``
gets messages as soon as it is matched). ``joint_states`` is always published.

A stage that raises (anything but the InputError it already turns into a dropped setpoint)
never stops the bridge: the setpoint is dropped, the bridge keeps its last command and
falls back to ``timeout_behavior`` after ``command_timeout`` as for a silent chain, and its
diagnostics carry an ERROR status ``<bridge fqn>: chain`` naming the error until a setpoint
passes again.

Wiring (as ``arm.launch.py`` remaps the separate nodes): gravity ``joint_setpoint`` →
``gravity/joint_command``; friction ``gravity/joint_command`` → ``joint_command``; the bridge
reads ``joint_command``. Parameters: one ``--params-file`` with a section per node name
(``gravity_compensation``, ``friction_feedforward``, ``mit_bridge``), as rcl matches them.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from sensor_msgs.msg import JointState

from gravity_friction_comp.nodes.friction_feedforward_node import FrictionFeedforwardNode
from gravity_friction_comp.nodes.gravity_compensation_node import GravityCompensationNode
from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode
from gravity_friction_comp.nodes.parameters import sharing_arguments
from gravity_friction_comp.nodes.runtime import (
    SPIN_WAKE,
    USAGE_ARGS,
    _user_args,
    apply_thread_priority,
    executor_choice,
    make_executor,
    node_parameters,
    run_process,
)
from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS, HandOff
from gravity_friction_comp.throttle import Throttle

__all__ = [
    "ComposedChain",
    "GRAVITY_TOPIC",
    "HandedOff",
    "main",
    "run_composed",
    "usage",
]

#: The gravity stage's output topic (friction's input), as ``arm.launch.py`` wires it.
GRAVITY_TOPIC = "gravity/joint_command"


def _remap(*rules: str) -> list[str]:
    return ["--ros-args", *(arg for rule in rules for arg in ("-r", rule))]


class HandedOff:
    """What a hand-off passes on: the five fields of a ``JointState`` the next stage reads.

    The sender reuses its message object, the next stage may keep this one as its last
    setpoint; the sender reassigns its fields (never mutates them), so sharing them is safe.
    A ``JointState`` costs ~10 µs to build (its Header and Time), this ~0.3 µs.
    """

    __slots__ = ("header", "name", "position", "velocity", "effort")

    def __init__(self, msg: JointState) -> None:
        self.header = msg.header
        self.name = msg.name
        self.position = msg.position
        self.velocity = msg.velocity
        self.effort = msg.effort


class ComposedChain:
    """The three nodes in one process, wired by direct calls (see the module docstring).

    Args:
        context: rclpy context of the nodes (default context when ``None``).
        gravity, friction, bridge: Extra keyword arguments of each node's constructor
            (e.g. ``parameter_overrides``).
        shaper: ``None`` (no shaper), or the keyword arguments of a
            :class:`~gravity_friction_comp.nodes.setpoint_shaper_node.SetpointShaperNode`
            put between ``joint_setpoint`` and the gravity stage: it takes the setpoints,
            and its shaped output at its ``rate_hz`` enters the chain by direct call.

    Attributes:
        gravity, friction, bridge: The nodes (add :attr:`nodes` to one executor).
        errors: Setpoints dropped because a stage raised. last_error: Its text ("" if none).

    Raises:
        ConfigError: as each node's constructor (nodes built so far are destroyed).
    """

    #: The node classes, build order (their parameters: :func:`usage`).
    NODE_CLASSES: tuple = (GravityCompensationNode, FrictionFeedforwardNode, MitBridgeNode)

    def __init__(
        self,
        context=None,
        gravity: dict | None = None,
        friction: dict | None = None,
        bridge=None,
        shaper: dict | None = None,
    ):
        self.errors = 0
        self.last_error = ""
        self._failing = False
        self._dropped = False
        self._throttle = Throttle(2.0)
        built: list = []
        try:
            with sharing_arguments(names_of(*self.NODE_CLASSES)):  # one process: -p reaches every node
                self.gravity = GravityCompensationNode(
                    context=context, cli_args=_remap(f"joint_command:={GRAVITY_TOPIC}"), **(gravity or {})
                )
                built.append(self.gravity)
                self.friction = FrictionFeedforwardNode(
                    context=context, cli_args=_remap(f"joint_setpoint:={GRAVITY_TOPIC}"), **(friction or {})
                )
                built.append(self.friction)
                self.bridge = MitBridgeNode(context=context, **(bridge or {}))
                built.append(self.bridge)
                self.shaper = None
                if shaper is not None:
                    from gravity_friction_comp.nodes.setpoint_shaper_node import SetpointShaperNode

                    self.shaper = SetpointShaperNode(context=context, **shaper)
                    built.append(self.shaper)
        except BaseException:
            for node in built:
                node.destroy_node()
            raise
        # each message handled once: by direct call, not also by the DDS subscriptions
        self.gravity.destroy_subscription(self.gravity.setpoint_subscription)
        self.friction.destroy_subscription(self.friction.setpoint_subscription)
        self.bridge.destroy_subscription(self.bridge._command_sub)  # noqa: SLF001 - its own node set
        entry = self._on_setpoint
        if self.shaper is not None:  # joint_setpoint → shaper; its output → the chain
            self.shaper.destroy_subscription(self.shaper.setpoint_subscription)
            self.shaper.hand_off = self._on_setpoint
            entry = self.shaper.on_setpoint
        self.gravity.setpoint_subscription = self.gravity.create_subscription(
            JointState, "joint_setpoint", entry, SETPOINT_QOS
        )
        # a stage hands its validated arrays on (parsed and checked once, at the gravity
        # stage); a message handed in (hand_off(msg)) is parsed as from a subscription
        self.gravity.hand_off = HandOff(
            self._to(self.friction.on_setpoint, "friction"),
            self._guarded(self.friction.on_validated, "friction"),
        )
        self.friction.hand_off = HandOff(
            self._to(self.bridge.accept_command, "bridge"),
            self._guarded(self.bridge.accept_validated, "bridge"),
        )
        self.bridge.diagnostic_sources.append(self.status)
        # the friction node's measurement from the bridge in this process (same topic only)
        states = self.bridge._state_pub.topic_name  # noqa: SLF001 - its own node set
        for sub in [s for s in self.friction.subscriptions if s.topic_name == states]:
            self.friction.destroy_subscription(sub)
            self.bridge.state_hand_off = self._to(self.friction.on_joint_states, "friction measurement")

    @property
    def nodes(self) -> tuple:
        """The nodes, for ``executor.add_node``."""
        shaper = () if self.shaper is None else (self.shaper,)
        return (*shaper, self.gravity, self.friction, self.bridge)

    def _on_setpoint(self, msg: JointState) -> None:
        """The gravity node's ``joint_setpoint`` callback: the whole chain for ``msg``."""
        self._dropped = False
        try:
            self.gravity.on_setpoint(msg)
        except Exception as error:  # noqa: BLE001 - never out of the executor: the bridge feeds the motors
            self._failed("gravity", error)
            return
        if not self._dropped:
            self._failing = False  # the whole chain ran for this setpoint

    def _to(self, call: Callable[[JointState], None], where: str) -> Callable[[JointState], None]:
        guarded = self._guarded(call, where)

        def hand_off(msg: JointState) -> None:
            guarded(HandedOff(msg))  # the five fields the next stage reads, not a new message

        return hand_off

    def _guarded(self, call: Callable[[Any], None], where: str) -> Callable[[Any], None]:
        def hand_off(msg: Any) -> None:
            try:
                call(msg)
            except Exception as error:  # noqa: BLE001 - a raising stage must not stop the bridge
                self._failed(where, error)  # the upstream stage still publishes its own output

        return hand_off

    def _failed(self, where: str, error: Exception) -> None:
        self._dropped = True
        self.errors += 1
        self._failing = True
        self.last_error = f"{where}: {type(error).__name__}: {error}"
        if self._throttle.ready(where):
            self.bridge.get_logger().error(
                f"setpoint dropped, a stage raised ({self.last_error}); the bridge keeps its "
                "last command, then its timeout behaviour"
            )

    def status(self) -> DiagnosticStatus:
        """``<bridge fqn>: chain``: ERROR while the last setpoint made a stage raise."""
        st = DiagnosticStatus()
        st.name = f"{self.bridge.get_fully_qualified_name()}: chain"
        st.hardware_id = "composed_chain"
        st.level = DiagnosticStatus.ERROR if self._failing else DiagnosticStatus.OK
        st.message = f"stage raised, setpoint dropped: {self.last_error}" if self._failing else "ok"
        st.values = [
            KeyValue(key="stage_errors", value=str(self.errors)),
            KeyValue(key="last_error", value=self.last_error),
        ]
        return st

    def destroy(self) -> None:
        """Destroy the nodes (the bridge sends its disable frames)."""
        for node in reversed(self.nodes):
            node.destroy_node()


def names_of(*node_classes) -> list[str]:
    """The parameter names the node classes declare (:func:`node_parameters`), for
    :func:`~gravity_friction_comp.nodes.parameters.sharing_arguments`."""
    return [p.name for node_class in node_classes for p in node_parameters(node_class)]


def spin_chain(chain: ComposedChain, stop: Callable[[], bool]) -> None:
    """Spin the chain's nodes on one executor until ``stop()`` or the context ends.

    A callback that raises anyway (a parameter or holding change that reaches a raising
    stage) is logged and counted; the spin goes on, so the bridge keeps feeding the motors.
    """
    gc.collect()
    gc.freeze()  # as spin_node: the long-lived objects out of the collector's walk
    context = chain.bridge.context
    apply_thread_priority(chain.bridge)  # the bridge's thread_priority: the whole chain's thread
    executor = make_executor(context, executor_choice())
    for node in chain.nodes:
        executor.add_node(node)
    try:
        while context.ok() and not stop():
            try:
                executor.spin_once(timeout_sec=SPIN_WAKE)
            except Exception as error:  # noqa: BLE001 - a raising stage must not stop the bridge
                if not context.ok():
                    break
                chain._failed("callback", error)  # noqa: SLF001 - the chain's own bookkeeping
    finally:
        executor.shutdown()


#: The nodes of ``composed_chain``, in call order.
CHAIN_NODES = ComposedChain.NODE_CLASSES


def usage(executable: str = "composed_chain", summary: str | None = None, node_classes=CHAIN_NODES) -> str:
    """The ``--help`` text of a composed executable: ``summary`` (default this module's),
    then the parameters of each of ``node_classes`` (one ``--params-file`` section per node name)."""
    from gravity_friction_comp.nodes.parameters import text_table

    parts = [
        f"usage: {executable} {USAGE_ARGS}\n\n{summary or __doc__.strip().splitlines()[0]}\n\n"
        "Parameters: one --params-file section (or one file) per node name below; -p NAME:=VALUE "
        "sets NAME in every node that declares it.\n"
        "Ctrl-C (SIGINT) or SIGTERM: clean shutdown, exit code 0.\n"
    ]
    for node_class in node_classes:
        params = node_parameters(node_class)
        parts.append(f"\nparameters of {node_class.NODE_NAME} ({len(params)}):\n" + text_table(params))
    return "".join(parts)


def main(args=None) -> None:
    """Entry point of the ``composed_chain`` executable (SIGINT/SIGTERM: clean shutdown;
    ``-h`` / ``--help`` prints :func:`usage` and exits 0). ``--shaper`` (before
    ``--ros-args``) puts the setpoint shaper before the gravity stage (its parameters: the
    file's ``setpoint_shaper`` section; ``arm.launch.py shaper:=true composed:=true``)."""
    shaper: dict | None = {} if "--shaper" in _user_args(args) else None
    run_composed(lambda: ComposedChain(shaper=shaper), "composed_chain", args, usage)


def run_composed(
    factory: Callable[[], ComposedChain], name: str, args=None, help_text: Callable[[], str] = usage
) -> None:
    """Build ``factory()`` and spin it until SIGINT/SIGTERM (clean shutdown, exit 0), in
    :func:`~gravity_friction_comp.nodes.runtime.run_process` as every node executable: a
    refused or wrong-typed parameter or an unparsable params file is one line
    ``[name] invalid configuration: …`` / ``[name] cannot start: …`` and exit 2.
    ``-h`` / ``--help`` before ``--ros-args`` prints ``help_text()`` and exits 0 (rclpy not started)."""
    run_process(name, args, help_text, factory, spin_chain, lambda chain: chain.destroy())


if __name__ == "__main__":
    main()
