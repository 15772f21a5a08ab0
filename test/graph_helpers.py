"""Helpers for graph-level tests: start real node executables, talk to them over DDS.

Every process started here gets ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and a domain
of its own (:func:`fresh_domain_id`: free when the test starts), so tests never reach another
machine or each other. A stranger may still join that domain later; a test that runs its
nodes and its :class:`GraphClient` under :func:`own_namespace` (``namespace=``) subscribes
only to its own nodes' topics, so a stranger's ``/joint_states`` never reaches it. On an
absolute topic (``/diagnostics``, ``/clock``) a namespace does not help: the test reads it
with :func:`subscribe_own` (``GraphClient.subscribe(..., nodes=)``), which keeps only its own
nodes' messages, and checks with :func:`publishers_of` that it is the only ``/clock``.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import yaml
from domain_helpers import fresh_domain_id  # noqa: F401 (the tests import it from here)

_NAMESPACES = itertools.count()


def own_namespace() -> str:
    """A ROS namespace nobody else uses (``/t<pid>_<n>``, a new one per call) for one test's
    nodes, its :class:`GraphClient` and its :func:`write_params` file."""
    return f"/t{os.getpid()}_{next(_NAMESPACES)}"


def namespace_args(namespace: str) -> list[str]:
    """The ROS arguments that run a process's nodes under ``namespace``."""
    return ["--ros-args", "-r", f"__ns:={namespace}"]


def write_params(path, node_name: str, params: dict[str, Any], namespace: str | None = None) -> str:
    """Write a ``ros2 param dump``-format file for ``node_name`` (under ``namespace``, when the
    node runs there) and return its path."""
    key = f"{namespace.rstrip('/')}/{node_name}" if namespace else node_name
    path.write_text(yaml.safe_dump({key: {"ros__parameters": params}}))
    return str(path)


@contextmanager
def node_process(
    module: str,
    domain_id: int,
    params_file: str | None = None,
    ros_args: list[str] | None = None,
    env: dict[str, str] | None = None,
    process_group: int | None = None,
    namespace: str | None = None,
):
    """Run ``python -m gravity_friction_comp.nodes.<module>`` for the duration of a test
    (under ``namespace`` if given: its relative topics then live there).

    ``process_group``: 0 starts a new process group (its id is the pid), a pgid joins one
    (as ``ros2 launch`` runs its nodes: Ctrl-C signals the whole group)."""
    env = dict(
        os.environ,
        **(env or {}),
        ROS_DOMAIN_ID=str(domain_id),
        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
        PYTHONUNBUFFERED="1",
    )
    cmd = [sys.executable, "-m", f"gravity_friction_comp.nodes.{module}", "--ros-args"]
    if params_file:
        cmd += ["--params-file", params_file]
    cmd += ros_args or []
    if namespace:
        cmd += namespace_args(namespace)[1:]
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, process_group=process_group
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(2)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def node_and_client(module: str, node_name: str, params: dict[str, Any], folder, **kwargs):
    """The usual graph test: ``node_process(module)`` with ``params`` (written to ``folder``)
    and a :class:`GraphClient`, on a fresh domain and both under :func:`own_namespace`, so
    only the node is heard. ``kwargs`` go to :func:`node_process`.

    Yields:
        ``(proc, client)``.
    """
    domain, ns = fresh_domain_id(), own_namespace()
    path = write_params(folder / f"{node_name}.yaml", node_name, params, namespace=ns)
    with (
        node_process(module, domain, path, namespace=ns, **kwargs) as proc,
        graph_client(domain, ns) as client,
    ):
        yield proc, client


class GraphClient:
    """An rclpy node in its own context, on the test's domain; under ``namespace`` if given
    (relative topic and node names in :meth:`subscribe`, :meth:`publisher` and
    :meth:`set_parameters` then resolve there, so only the test's own nodes are heard)."""

    def __init__(self, domain_id: int, namespace: str | None = None):
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        self.rclpy = rclpy
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node(f"test_client_{os.getpid()}", namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.received: dict[str, list] = {}

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.rclpy.try_shutdown(context=self.context)

    def subscribe(self, msg_type, topic: str, nodes: list[str] | None = None) -> list:
        """Subscribe to ``topic``; return the list its messages are appended to (only those
        of ``nodes``, when given: see :func:`subscribe_own`)."""
        from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

        box = self.received.setdefault(topic, [])
        if nodes is None:
            self.node.create_subscription(msg_type, topic, box.append, SETPOINT_QOS)
        else:
            subscribe_own(self.node, msg_type, topic, nodes, box.append)
        return box

    def publishers_of(self, topic: str) -> list[str]:
        return publishers_of(self.node, topic)

    def publisher(self, msg_type, topic: str, qos=None):
        from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

        return self.node.create_publisher(msg_type, topic, qos or SETPOINT_QOS)

    def spin_until(
        self, predicate: Callable[[], bool], timeout: float = 10.0, proc: subprocess.Popen | None = None
    ) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            if proc is not None and proc.poll() is not None:
                raise AssertionError(f"node exited with {proc.returncode}:\n{proc.stdout.read()}")
            self.executor.spin_once(timeout_sec=0.01)
        return predicate()

    def spin_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)

    def wait_for_subscriber(self, pub, timeout: float = 10.0, proc=None) -> None:
        assert self.spin_until(lambda: pub.get_subscription_count() > 0, timeout, proc), (
            f"no subscriber on {pub.topic_name}"
        )

    def set_parameters(self, node_name: str, **values):
        """Call ``/<node>/set_parameters`` (the service ``ros2 param set`` uses).

        Returns:
            The list of ``SetParametersResult`` (``successful``, ``reason``).
        """
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter

        client = self.node.create_client(SetParameters, f"{node_name}/set_parameters")
        assert self.spin_until(client.service_is_ready, 10.0), "parameter service not ready"
        request = SetParameters.Request()
        request.parameters = [
            Parameter(k.replace("__", "."), value=v).to_parameter_msg() for k, v in values.items()
        ]
        future = client.call_async(request)
        assert self.spin_until(future.done, 10.0), "set_parameters timed out"
        self.node.destroy_client(client)
        return future.result().results

    def get_parameters(self, node_name: str, *names: str) -> dict[str, Any]:
        """Call ``<node>/get_parameters`` (the service ``ros2 param get`` uses).

        Returns:
            name → value (Python types; arrays as lists).
        """
        from rcl_interfaces.srv import GetParameters
        from rclpy.parameter import parameter_value_to_python

        client = self.node.create_client(GetParameters, f"{node_name}/get_parameters")
        assert self.spin_until(client.service_is_ready, 10.0), "parameter service not ready"
        future = client.call_async(GetParameters.Request(names=list(names)))
        assert self.spin_until(future.done, 10.0), "get_parameters timed out"
        self.node.destroy_client(client)
        values = [parameter_value_to_python(v) for v in future.result().values]
        return {
            n: list(v) if not isinstance(v, (str, bool, int, float)) and v is not None else v
            for n, v in zip(names, values)
        }


def _fqn(namespace: str, name: str) -> str:
    return f"{namespace.rstrip('/')}/{name}"


def publishers_of(node, topic: str) -> list[str]:
    """The fully qualified names of the nodes publishing ``topic`` on ``node``'s domain, sorted
    (a lockstep test checks it is its bridge alone on the absolute ``/clock``)."""
    infos = node.get_publishers_info_by_topic(node.resolve_topic_name(topic))
    return sorted(_fqn(e.node_namespace, e.node_name) for e in infos)


def subscribe_own(node, msg_type, topic: str, nodes: list[str], callback: Callable[[Any], None], qos=None):
    """Subscribe ``node`` to ``topic`` and pass ``callback`` only the messages published by
    ``nodes`` (names relative to ``node``'s namespace, or fully qualified ``/ns/name``), told
    by the publisher's GID (``publisher_gid`` of the message info against the graph's
    endpoints). For absolute topics (``/diagnostics``, ``/clock``) a namespace does not keep
    a stranger out; this does. Messages of a publisher the graph cannot name yet (its node
    info lags its first messages) wait, in order, until it can. Spin ``node`` with a
    SingleThreadedExecutor: rclpy 9.1.2's EventsExecutor fails on a callback that takes the
    message info ("SystemError: null argument to internal routine").

    Returns:
        The ``Subscription``.
    """
    from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

    own = {n if n.startswith("/") else _fqn(node.get_namespace(), n) for n in nodes}
    resolved = node.resolve_topic_name(topic)
    verdicts: dict[bytes, bool] = {}  # publisher GID -> published by one of ``own``
    waiting: dict[bytes, list] = {}  # messages of publishers not named yet, by GID

    def on_message(msg, info) -> None:
        waiting.setdefault(bytes(info["publisher_gid"]["data"]), []).append(msg)
        if any(g not in verdicts for g in waiting):
            for e in node.get_publishers_info_by_topic(resolved):
                if not e.node_name.startswith("_"):  # "_NODE_NAME_UNKNOWN_": not told yet
                    verdicts[bytes(e.endpoint_gid)] = _fqn(e.node_namespace, e.node_name) in own
        for gid in [g for g in waiting if g in verdicts]:
            messages = waiting.pop(gid)
            if verdicts[gid]:
                for m in messages:
                    callback(m)

    return node.create_subscription(msg_type, topic, on_message, qos or SETPOINT_QOS)


@contextmanager
def graph_client(domain_id: int, namespace: str | None = None):
    client = GraphClient(domain_id, namespace)
    try:
        yield client
    finally:
        client.close()


def warm_up(client: GraphClient, publisher, msg, received: list, proc=None, timeout: float = 15.0) -> None:
    """Publish ``msg`` until something arrives in ``received`` (discovery complete end to
    end), then let stragglers land and clear ``received``."""
    import time as _time

    deadline = _time.monotonic() + timeout
    while _time.monotonic() < deadline:
        publisher.publish(msg)
        if client.spin_until(lambda: len(received) > 0, 0.05, proc):
            break
    assert received, f"nothing arrived after publishing on {publisher.topic_name}"
    client.spin_for(0.2)
    received.clear()


class InProcessGraph:
    """A test's nodes in this process: one context (``context``), one SingleThreadedExecutor
    (``executor``) spinning ``nodes``, a ``listener`` node; the lockstep graph tests' base."""

    context: Any
    executor: Any
    nodes: list
    listener: Any

    def add(self, node):
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def destroy(self, node):
        """Remove ``node`` from the graph (as its process exiting would)."""
        self.executor.remove_node(node)
        self.nodes.remove(node)
        node.destroy_node()

    def spin(self, seconds: float, until: Callable[[], bool] = lambda: False) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not until():
            self.executor.spin_once(timeout_sec=0.01)

    def clock_publishers(self) -> list[str]:
        """The nodes publishing ``/clock`` on the domain (a bridge alone, unless a stranger)."""
        return publishers_of(self.listener, "/clock")

    def close(self) -> None:
        import rclpy

        self.executor.shutdown(timeout_sec=1.0)
        for node in reversed(self.nodes):
            node.destroy_node()
        rclpy.try_shutdown(context=self.context)
