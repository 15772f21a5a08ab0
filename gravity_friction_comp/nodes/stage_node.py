"""Shared ROS 2 plumbing of a feedforward stage (gravity, friction).

A stage subscribes ``joint_setpoint`` and publishes ``joint_command`` (incoming effort +
scale·term) and its term alone on ``~/effort``. The numbers live in the ROS-free stage objects
(:mod:`gravity_friction_comp.stage.gravity`, :mod:`gravity_friction_comp.stage.friction`, on
:class:`~gravity_friction_comp.stage.contract.FeedforwardStage`); this class only translates
messages and parameters (declared once, :data:`STAGE_PARAMETERS` and each node's
``PARAMETERS``), validates parameter changes before they are accepted (the reason
is what ``ros2 param set`` prints), and republishes from the last setpoint whenever its
output changes without a new setpoint.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import ROSClock
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from gravity_friction_comp.errors import ConfigError, InputError
from gravity_friction_comp.nodes.listener_count import ListenerCount
from gravity_friction_comp.nodes.parameters import Param, check, check_undeclared, declare
from gravity_friction_comp.stage.contract import (
    MAX_SCALE,
    FeedforwardStage,
    Setpoint,
    StageResult,
    StageSettings,
)
from gravity_friction_comp.throttle import Throttle

__all__ = [
    "FeedforwardStageNode",
    "HandOff",
    "SETPOINT_QOS",
    "StageOutput",
    "STAGE_PARAMETERS",
    "clock_ns",
    "publish_guarded",
    "settings_from",
]

#: Setpoints and commands: keep-last, small depth, reliable (ARCHITECTURE.md).
SETPOINT_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)

#: Parameters every stage node declares (:class:`StageSettings`).
STAGE_PARAMETERS: tuple[Param, ...] = (
    Param("enable", True, "false: term 0, the stage passes effort through unchanged"),
    Param(
        "scale",
        1.0,
        "multiplier on the term: one number, or a double[] with one per model joint (model order)",
        unit="-",
        low=-MAX_SCALE,
        high=MAX_SCALE,
        per_joint=True,
    ),
)


class StageOutput:
    """A stage's output handed to the next stage in this process (composed chain).

    The five ``JointState`` fields the next stage reads: ``header``, ``name``, ``position``,
    ``velocity`` as the stage received them, ``effort`` its outgoing (m,) [N·m] array
    (finite, clamped); and the stage's parsed setpoint, so the next stage maps the joints
    (:meth:`setpoint_for`) instead of parsing and checking the fields again. A new one per
    setpoint, never changed: the next stage may keep it as its last setpoint and republish
    from it as from a message.
    """

    __slots__ = ("header", "name", "position", "velocity", "effort", "_setpoint")

    def __init__(self, header, name, position, velocity, result: StageResult) -> None:
        self.header = header
        self.name = name
        self.position = position
        self.velocity = velocity
        self.effort = result.effort
        self._setpoint = result.setpoint

    def setpoint_for(self, model_names) -> Setpoint:
        """This output as :func:`~gravity_friction_comp.stage.contract.parse_setpoint` would
        parse it against ``model_names`` (:meth:`Setpoint.passed_on`).

        Raises:
            InputError: ``Reason.MISSING_JOINTS`` (as the parse).
        """
        assert self._setpoint is not None  # a stage's result always carries it
        return self._setpoint.passed_on(self.effort, model_names)


class HandOff:
    """The next stage in this process, as :attr:`FeedforwardStageNode.hand_off`.

    ``hand_off(msg)``: a ``JointState``-shaped message, taken as from a subscription (any
    caller). ``hand_off.validated(out)``: a stage's :class:`StageOutput` (what a stage calls
    when given one: nothing parsed or built twice).
    """

    __slots__ = ("message", "validated")

    def __init__(self, message: Callable[[Any], None], validated: Callable[[StageOutput], None]) -> None:
        self.message = message
        self.validated = validated

    def __call__(self, msg) -> None:
        self.message(msg)


def settings_from(values: Mapping[str, Any]) -> StageSettings:
    """The :class:`StageSettings` of the ``enable`` and ``scale`` values (raises ConfigError)."""
    return StageSettings(enabled=values["enable"], scale=values["scale"])


class FeedforwardStageNode(Node):
    """Base class: ``joint_setpoint`` → ``joint_command`` + ``~/effort``, around a core stage.

    The numbers are those of :attr:`stage` (a
    :class:`~gravity_friction_comp.stage.contract.FeedforwardStage`); this class translates
    messages and parameters. Subclasses list their parameters in :attr:`PARAMETERS`
    (:data:`STAGE_PARAMETERS` included), turn the parameter values into a validated config in
    :meth:`build_config` (raising :class:`ConfigError` with a reason), give its joint count
    in :meth:`joint_count` (a per-joint ``scale`` is checked against it) and apply both to
    the stage in :meth:`configure_stage`.
    """

    #: Every parameter the node declares, once (docs are generated from it).
    PARAMETERS: tuple[Param, ...] = STAGE_PARAMETERS

    def __init__(self, node_name: str, **kwargs):
        super().__init__(node_name, **kwargs)
        self._throttle = Throttle(2.0)
        self._last_setpoint: JointState | None = None
        self._pending: Any = None
        self._config: Any = None
        #: The core stage (``None`` until a config exists, e.g. no robot model yet).
        self.stage: FeedforwardStage | None = None
        self._declaring = True
        # Callbacks first, so launch-file values go through the same validation.
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._post_set_parameters)
        declare(self, self.PARAMETERS)
        check_undeclared(self)
        self._declaring = False
        self._parameter_names = tuple(p.name for p in self.PARAMETERS)
        values = self._current_values()
        check(self.PARAMETERS, values)
        config = self.build_config(values, set(values), None)
        self._configure(self.stage_settings(values, set(values), config), config, values, set(values))
        # Reused for every publication: publish() serialises at once, so nothing aliases.
        # The fields are set from typed values only (the incoming message, array('d'),
        # lists of float), so the generated per-assignment type assertions are skipped.
        self._command_msg = JointState(check_fields=False)
        self._term_msg = JointState(check_fields=False)
        # With a hand-off (the composed chain: the next stage takes the command by direct
        # call) the command is not serialised while nobody listens (a DDS publish is ~60 µs
        # at 1 kHz). Without one it always is: the next stage's subscription may be matched
        # before this node's executor has seen the matched event.
        self._command_listeners = ListenerCount()
        self._command_pub = self._command_listeners.publisher(self, JointState, "joint_command", SETPOINT_QOS)
        self._effort_listeners = ListenerCount()
        self._effort_pub = self._effort_listeners.publisher(self, JointState, "~/effort", SETPOINT_QOS)
        #: The ``joint_setpoint`` subscription (the composed chain feeds a stage directly instead).
        self.setpoint_subscription = self.create_subscription(
            JointState, "joint_setpoint", self._on_setpoint, SETPOINT_QOS
        )
        #: Composed chain (:mod:`~gravity_friction_comp.nodes.composed_chain`): the next stage
        #: in this process, called with each ``joint_command`` before it is published (a
        #: :class:`HandOff`: with the :class:`StageOutput` instead of a message).
        self.hand_off: Callable[[JointState], None] | None = None

    # ----------------------------------------------------------------- subclass hooks
    def build_config(self, values: Mapping[str, Any], changed: set[str], previous: Any) -> Any:
        """Return the subclass's config for these parameter values.

        Args:
            values: Every declared parameter's value, with the proposed changes applied.
            changed: Names of the parameters that differ from ``previous``'s source.
            previous: The config in force (``None`` at start-up); reuse what did not change.

        Raises:
            ConfigError: the change is rejected with ``str(error)`` as the reason.
        """
        raise NotImplementedError

    def configure_stage(
        self, settings: StageSettings, config: Any, values: Mapping[str, Any], changed: set[str]
    ) -> None:
        """Create :attr:`stage` or hand it the accepted settings and config (together: a
        per-joint scale may change length with the joints)."""
        raise NotImplementedError

    def joint_count(self, config: Any) -> int | None:
        """Number of model joints of ``config`` (``None``: not known yet, e.g. no model)."""
        return None

    def stage_settings(self, values: Mapping[str, Any], changed: set[str], config: Any) -> StageSettings:
        """The :class:`StageSettings` for these parameter values and the config built from them.

        Raises:
            ConfigError: an invalid ``enable`` / ``scale``.
            DimensionError: a per-joint ``scale`` whose length is not :meth:`joint_count`.
        """
        settings = settings_from(values)
        n = self.joint_count(config)
        if n is not None:
            settings.scale_for(n)
        return settings

    def after_update(self) -> None:
        """Hook run after the stage accepted a new setpoint (warnings about its state)."""

    def no_stage(self) -> None:
        """Hook run for a setpoint that arrives while there is no stage."""

    def setpoint_time(self, stamp) -> float:
        """[s] a setpoint's stamp, or this node's clock for an unstamped (zero) one."""
        seconds = stamp.sec + 1e-9 * stamp.nanosec
        if seconds == 0.0:  # unstamped setpoint: time of arrival instead
            seconds = clock_ns(self.get_clock()) * 1e-9
        return seconds

    # ----------------------------------------------------------------- parameters
    def _current_values(self) -> dict[str, Any]:
        return {p.name: p.value for p in self.get_parameters(list(self._parameter_names))}

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        if self._declaring:
            # Start-up values are validated together once all are declared.
            return SetParametersResult(successful=True)
        for p in params:
            if p.type_ == Parameter.Type.NOT_SET:
                # `ros2 param delete`: an undeclared parameter would break every later set
                return SetParametersResult(
                    successful=False, reason=f"{p.name} cannot be deleted; set a value instead"
                )
        values = self._current_values()
        proposed = {p.name: p.value for p in params}
        values.update(proposed)
        try:
            check(self.PARAMETERS, proposed)
            config = self.build_config(values, set(proposed), self._config)
            settings = self.stage_settings(values, set(proposed), config)
        except ConfigError as error:
            return SetParametersResult(successful=False, reason=str(error))
        except (TypeError, ValueError) as error:
            return SetParametersResult(successful=False, reason=f"invalid value: {error}")
        except (MemoryError, RecursionError) as error:  # a file or value too big to build from
            return SetParametersResult(
                successful=False,
                reason=f"invalid value: too large or nested too deeply ({type(error).__name__})",
            )
        self._pending = (settings, config, values, set(proposed))
        return SetParametersResult(successful=True)

    def _post_set_parameters(self, params: list[Parameter]) -> None:
        if self._pending is None:
            return
        pending, self._pending = self._pending, None
        self._configure(*pending)
        self.republish()

    def _configure(self, settings: StageSettings, config: Any, values: Mapping[str, Any], changed: set[str]):
        self._config = config
        self.configure_stage(settings, config, values, changed)

    # ----------------------------------------------------------------- data path
    def warn_throttled(self, key: str, message: str) -> None:
        """Log a warning at most every 2 s per ``key`` (a flood of bad input stays readable)."""
        if self._throttle.ready(key):
            self.get_logger().warning(message)

    def _on_setpoint(self, msg: JointState) -> None:
        self._process(msg, fresh=True)

    def on_setpoint(self, msg: JointState) -> None:
        """Process ``msg`` as a setpoint arriving on ``joint_setpoint`` (composed chain)."""
        self._process(msg, fresh=True)

    def on_validated(self, out: StageOutput) -> None:
        """Process the previous stage's output in this process (composed chain) as
        :meth:`on_setpoint` would the same fields, without parsing them again."""
        self._process(out, fresh=True, handed=True)

    def republish(self) -> None:
        """Recompute and publish from the last setpoint (holding/parameter change)."""
        if self._last_setpoint is not None:
            self._process(self._last_setpoint, fresh=False)

    def _process(self, msg: Any, fresh: bool, handed: bool = False) -> None:
        stage = self.stage
        if stage is None:
            if fresh:
                self._last_setpoint = msg
            self.no_stage()
            return
        # each field read once: a message's fields are Python properties
        header, name, position, velocity = msg.header, msg.name, msg.position, msg.velocity
        try:
            if fresh:
                kept = stage.kept
                try:
                    t = self.setpoint_time(header.stamp)
                    if handed:  # the previous stage parsed it: only the joint map is new
                        parsed = msg.setpoint_for(stage.joint_names)
                        result = stage.update(name, position, velocity, msg.effort, t, parsed=parsed)
                    else:
                        result = stage.update(name, position, velocity, msg.effort, t)
                finally:
                    if stage.kept is not kept:  # accepted (even if its term then failed)
                        self._last_setpoint = msg
                        self.after_update()
            else:
                result = stage.evaluate(name, position, velocity, msg.effort)
        except InputError as error:
            self.warn_throttled(error.reason, f"setpoint dropped: {error}")
            return
        if result.clamped:
            self.warn_throttled("clamped", f"effort clamped to the limit for {list(result.clamped)}")
        hand_off = self.hand_off
        command = None
        if isinstance(hand_off, HandOff):  # the next stage first: the CAN frame before the DDS copy
            hand_off.validated(StageOutput(header, name, position, velocity, result))
        elif hand_off is not None:
            command = self._command(header, name, position, velocity, result)
            hand_off(command)
        if hand_off is None or self._command_listeners.heard():  # built only to be published
            if command is None:
                command = self._command(header, name, position, velocity, result)
            if not publish_guarded(self, self._command_pub, command):
                return
        # The term alone is for humans comparing terms: not even built when nobody listens.
        if self._effort_listeners.heard():
            term_msg = self._term_msg
            term_msg.header = header
            term_msg.name = name
            term_msg.effort = result.term.tolist()
            publish_guarded(self, self._effort_pub, term_msg)

    def _command(self, header, name, position, velocity, result: StageResult) -> JointState:
        command = self._command_msg
        command.header = header
        command.name = name
        command.position = position
        command.velocity = velocity
        command.effort = result.effort.tolist()
        return command


def clock_ns(clock) -> int:
    """[ns] ``clock.now()``, read as ``time.time_ns()`` when that is what it gives (a ROS
    clock without ``/clock`` is the system time): ~2 µs instead of ~8 µs per call."""
    if not isinstance(clock, ROSClock) or clock.ros_time_is_active:  # use_sim_time: /clock
        return clock.now().nanoseconds
    return time.time_ns()


def publish_guarded(node: Node, publisher, msg) -> bool:
    """``publisher.publish(msg)``, or nothing once ``node``'s context is shut down.

    A callback still running while the process shuts down (SIGINT/SIGTERM) must not die
    with "Failed to publish: publisher's context is invalid"; any failure while the
    context is still up is raised as before. For every node's publishers (the bridge's
    timers too).

    Returns:
        ``True`` when published, ``False`` when skipped because of the shutdown.
    """
    try:
        publisher.publish(msg)
    except Exception:
        if node.context.ok():
            raise
        return False
    return True
