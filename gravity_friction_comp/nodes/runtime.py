"""How a node executable runs (every node's ``main()``): ``--help``, the executor, the spin
loop, and a clean exit on SIGINT/SIGTERM or a bad start-up configuration.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from rclpy.node import Node

from gravity_friction_comp.errors import ConfigError

T = TypeVar("T")

__all__ = [
    "EXECUTORS",
    "EXECUTOR_ENV",
    "SPIN_WAKE",
    "USAGE_ARGS",
    "apply_thread_priority",
    "executor_choice",
    "make_executor",
    "node_parameters",
    "node_process",
    "run_node",
    "run_process",
    "spin_node",
    "usage",
]


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
    apply_thread_priority(node)
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


def apply_thread_priority(node: Node) -> bool:
    """Put the calling thread (the one about to spin ``node``) under ``SCHED_FIFO`` at
    ``node``'s ``thread_priority`` parameter when it has one above 0
    (:func:`~gravity_friction_comp.realtime.set_thread_priority`), before the executor is
    made, so its threads inherit the policy. Logs what was set (INFO) or why not (WARN).

    Returns:
        Whether the priority was applied.
    """
    from gravity_friction_comp.realtime import set_thread_priority

    if not node.has_parameter("thread_priority"):
        return False
    applied, message = set_thread_priority(node.get_parameter("thread_priority").value)
    if message:
        (node.get_logger().info if applied else node.get_logger().warning)(message)
    return applied


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

    :func:`run_process` with ``node_class()`` spun by :func:`spin_node`; ``-h`` / ``--help``
    prints :func:`usage`. ``destroy_node`` at the end (the bridge sends its disable frames
    and closes the bus there; a second signal does not interrupt it).
    """
    run_process(
        getattr(node_class, "NODE_NAME", node_class.__name__),
        args,
        lambda: usage(node_class),
        node_class,
        spin_node,
        lambda node: node.destroy_node(),
    )


def run_process(
    name: str,
    args,
    help_text: Callable[[], str],
    build: Callable[[], T],
    spin: Callable[[T, Callable[[], bool]], None],
    destroy: Callable[[T], None],
) -> None:
    """The body of an executable's ``main()`` (:func:`run_node`, ``composed_chain``'s
    ``run_composed``): ``-h`` / ``--help`` before ``--ros-args`` prints ``help_text()`` and
    exits 0 (rclpy not started); else, in :func:`node_process`, ``spin(build(), stop)``,
    then ``destroy`` of what was built."""
    import sys

    if any(a in ("-h", "--help") for a in _user_args(args)):
        sys.stdout.write(help_text())
        raise SystemExit(0)
    with node_process(name, args) as stop:
        built = None
        try:
            built = build()
            spin(built, stop)
        finally:
            if built is not None:
                destroy(built)


@contextlib.contextmanager
def node_process(name: str, args=None) -> Iterator[Callable[[], bool]]:
    """The process around the nodes of an executable (:func:`run_node`, ``run_composed``):
    yields the ``stop`` callable its spin loop checks.

    SIGINT and SIGTERM (Ctrl-C of ``ros2 launch`` goes to the whole process group) only ask
    the spin loop to stop: no ``KeyboardInterrupt`` mid-callback or mid-clean-up, no context
    shut down under a running callback. After the block ``rclpy.try_shutdown``; the exit code
    is 0. After a stop signal both signals stay ignored until the process has exited
    (``ros2 launch`` sends its own SIGINT 40–60 ms after the terminal's: the default handler
    back in place killed the exiting process, exit code -2). An invalid start-up
    configuration (a refused or wrong-typed parameter, a params file rclpy cannot parse)
    prints a one-line reason ``[name] invalid configuration: …`` / ``[name] cannot start: …``
    (no traceback) and exits 2.
    """
    import signal
    import sys
    import threading

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
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except rclpy_implementation.RCLError as error:  # e.g. a params file that is not a mapping
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        print(f"[{name}] cannot start: {str(error).splitlines()[0]}", file=sys.stderr)
        raise SystemExit(2) from None
    try:
        yield lambda: bool(requested)
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
            rclpy.try_shutdown()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, signal.SIG_IGN if requested else handler)
