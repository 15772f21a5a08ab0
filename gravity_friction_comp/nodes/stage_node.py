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
from gravity_friction_comp.stage.contract import MAX_SCALE, FeedforwardStage, StageSettings, Throttle

__all__ = [
    "EXECUTOR_ENV",
    "FeedforwardStageNode",
    "SETPOINT_QOS",
    "STAGE_PARAMETERS",
    "clock_ns",
    "executor_choice",
    "make_executor",
    "node_parameters",
    "publish_guarded",
    "run_node",
    "usage",
    "settings_from",
    "spin_node",
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
        #: in this process, called with each ``joint_command`` before it is published.
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

    def republish(self) -> None:
        """Recompute and publish from the last setpoint (holding/parameter change)."""
        if self._last_setpoint is not None:
            self._process(self._last_setpoint, fresh=False)

    def _process(self, msg: JointState, fresh: bool) -> None:
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
                    result = stage.update(
                        name, position, velocity, msg.effort, self.setpoint_time(header.stamp)
                    )
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
        command = self._command_msg
        command.header = header
        command.name = name
        command.position = position
        command.velocity = velocity
        command.effort = result.effort.tolist()
        if self.hand_off is not None:  # the next stage first: the CAN frame before the DDS copy
            self.hand_off(command)
        heard = self.hand_off is None or self._command_listeners.heard()
        if heard and not publish_guarded(self, self._command_pub, command):
            return
        # The term alone is for humans comparing terms: not even built when nobody listens.
        if self._effort_listeners.heard():
            term_msg = self._term_msg
            term_msg.header = header
            term_msg.name = name
            term_msg.effort = result.term.tolist()
            publish_guarded(self, self._effort_pub, term_msg)


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


#: Environment variable selecting the executor of the node executables: ``events`` (the
#: default where rclpy provides ``rclpy.experimental.EventsExecutor``, kilted and later) or
#: ``single`` (``rclpy.spin``'s SingleThreadedExecutor).
EXECUTOR_ENV = "GRAVITY_FRICTION_COMP_EXECUTOR"
EXECUTORS = ("events", "single")


def executor_choice(environ: Mapping[str, str] | None = None) -> str:
    """The executor :func:`run_node` uses: ``"events"`` or ``"single"``.

    ``events`` falls back to ``single`` when this rclpy has no EventsExecutor.

    Raises:
        ConfigError: the environment variable names another executor (valid ones listed).
    """
    import os

    environ = os.environ if environ is None else environ
    choice = environ.get(EXECUTOR_ENV, "events").strip().lower() or "events"
    if choice not in EXECUTORS:
        raise ConfigError(
            f"{EXECUTOR_ENV}={choice!r} unknown; valid choices: " + ", ".join(EXECUTORS),
            key=EXECUTOR_ENV,
            value=choice,
        )
    if choice == "events":
        try:
            from rclpy.experimental import EventsExecutor  # noqa: F401
        except ImportError:  # rclpy before kilted
            return "single"
    return choice


def make_executor(context=None, choice: str | None = None):
    """A new executor of the kind :func:`executor_choice` picks (EventsExecutor or
    SingleThreadedExecutor), for ``context`` (default context when ``None``); ``choice``
    skips reading the environment again when the caller already has it.

    Drive it with ``spin_once`` in a loop, as :func:`spin_node` does: the EventsExecutor's
    ``spin()`` did not dispatch anything with the kilted PyPI wheels (FIELD_NOTES "Executors").

    Raises:
        ConfigError: as :func:`executor_choice`.
    """
    if (choice or executor_choice()) == "events":
        from rclpy.experimental import EventsExecutor

        return EventsExecutor(context=context)
    from rclpy.executors import SingleThreadedExecutor

    return SingleThreadedExecutor(context=context)


def spin_node(node: Node, stop: Callable[[], bool] | None = None) -> None:
    """Spin ``node`` until its context shuts down or ``stop()`` turns true: a ``spin_once``
    loop on the executor :func:`executor_choice` picks (EventsExecutor, or the
    SingleThreadedExecutor of ``rclpy.spin``), waking at least every 0.2 s to check ``stop``.

    The EventsExecutor dispatches from C++ instead of rebuilding a Python wait set for every
    message: at 1 kHz it is what keeps the gravity → friction chain below the latency of a
    bare ``rclpy.spin`` relay (bench/RESULTS.md). Objects alive at this point (modules, URDF,
    Pinocchio models: ~50 000) are frozen out of the garbage collector first
    (:func:`gc.freeze`): a full collection walking them stalled the process ~14 ms about
    once a second at 1 kHz. (One ``spin_until_future_complete`` per wake dispatched the same
    events for a little less CPU, but the lockstep demo's setpoint player then went silent
    at times: 2 of ~6 runs stalled, FIELD_NOTES "Executors".)
    """
    import gc

    gc.collect()
    gc.freeze()
    stop = stop or (lambda: False)
    executor = make_executor(node.context, executor_choice())
    executor.add_node(node)
    try:
        while node.context.ok() and not stop():
            try:
                executor.spin_once(timeout_sec=SPIN_WAKE)
            except Exception:
                if node.context.ok():
                    raise
                break  # shut down between the check and the wait: a clean exit
    finally:
        executor.shutdown()


#: [s] Longest wait of :func:`spin_node` between checks of its ``stop`` (SIGINT → exit).
SPIN_WAKE = 0.2


#: The arguments every node executable takes (after its name in the usage line).
USAGE_ARGS = "[-h] [--ros-args [-p NAME:=VALUE]... [--params-file FILE] [-r FROM:=TO]...]"


def _user_args(args) -> list[str]:
    """The command-line arguments before ``--ros-args`` (ROS's own come after it)."""
    import sys

    argv = list(sys.argv[1:] if args is None else args[1:])
    return argv[: argv.index("--ros-args")] if "--ros-args" in argv else argv


def node_parameters(node_class) -> tuple:
    """``node_class.PARAMETERS``, else its module's ``PARAMETERS`` (the convention of every
    node module), else ``()``."""
    import sys

    module = sys.modules.get(node_class.__module__)
    return tuple(getattr(node_class, "PARAMETERS", None) or getattr(module, "PARAMETERS", None) or ())


def usage(node_class) -> str:
    """The ``--help`` text of a node executable: its summary, how to pass parameters, then
    every parameter of :func:`node_parameters`, as
    :func:`~gravity_friction_comp.nodes.parameters.text_table` lists them. The executable is
    ``node_class.EXECUTABLE``, default ``<NODE_NAME>_node``."""
    import sys

    from gravity_friction_comp.nodes.parameters import text_table

    name = getattr(node_class, "NODE_NAME", node_class.__name__)
    executable = getattr(node_class, "EXECUTABLE", f"{name}_node")
    module = sys.modules.get(node_class.__module__)
    module_doc = getattr(module, "__doc__", None) or name
    params = node_parameters(node_class)
    return (
        f"usage: {executable} {USAGE_ARGS}\n\n"
        f"{module_doc.strip().splitlines()[0]}\n\n"
        "Ctrl-C (SIGINT) or SIGTERM: clean shutdown, exit code 0.\n\n"
        f"parameters ({len(params)}):\n" + text_table(params)
    )


def run_node(node_class, args=None) -> None:
    """``main()`` body shared by the node executables: spin until SIGINT/SIGTERM, then clean up.

    ``-h`` / ``--help`` (before ``--ros-args``) prints :func:`usage` and exits 0. SIGINT and
    SIGTERM (Ctrl-C of ``ros2 launch`` goes to the whole process group) only ask the spin
    loop to stop: no ``KeyboardInterrupt`` mid-callback or mid-clean-up, no context shut
    down under a running callback. Then ``destroy_node`` (the bridge sends its disable
    frames and closes the bus there; a second signal does not interrupt it), then
    ``rclpy.try_shutdown``; the exit code is 0. After a stop signal both signals stay
    ignored until the process has exited (``ros2 launch`` sends its own SIGINT 40–60 ms
    after the terminal's: the default handler back in place killed the exiting process,
    exit code -2). An invalid start-up configuration (a
    refused or wrong-typed parameter, a params file rclpy cannot parse) prints a one-line
    reason (no traceback) and exits 2.
    """
    import signal
    import sys
    import threading

    if any(a in ("-h", "--help") for a in _user_args(args)):
        sys.stdout.write(usage(node_class))
        raise SystemExit(0)

    import rclpy
    from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
    from rclpy.executors import ExternalShutdownException
    from rclpy.impl.implementation_singleton import rclpy_implementation
    from rclpy.signals import SignalHandlerOptions

    requested: list[int] = []

    def request_stop(signum, frame) -> None:
        requested.append(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():  # signal.signal: main thread only
        previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    name = getattr(node_class, "NODE_NAME", node_class.__name__)
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except rclpy_implementation.RCLError as error:  # e.g. a params file that is not a mapping
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        print(f"[{name}] cannot start: {str(error).splitlines()[0]}", file=sys.stderr)
        raise SystemExit(2) from None
    node = None
    try:
        node = node_class()
        spin_node(node, stop=lambda: bool(requested))
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (
        ConfigError,
        InvalidParameterValueException,
        InvalidParameterTypeException,
        MemoryError,
        RecursionError,
    ) as error:
        # A bad start-up configuration (rclpy refuses out-of-range and wrong-typed values
        # itself, naming the parameter): say why instead of a traceback.
        print(f"[{name}] invalid configuration: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    finally:
        try:
            if node is not None:
                node.destroy_node()
            rclpy.try_shutdown()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, signal.SIG_IGN if requested else handler)
