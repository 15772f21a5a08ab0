"""Tests of gravity_friction_comp.realtime and the bridge's ``thread_priority`` parameter.

Each priority is set in a thread of its own (the policy is per thread on Linux), read back with
``os.sched_getscheduler``/``os.sched_getparam`` in that thread. Whether this process may use
SCHED_FIFO at all is read independently of the code under test: ``CAP_SYS_NICE`` in
``/proc/self/status`` or an ``RLIMIT_RTPRIO`` soft limit.
"""

from __future__ import annotations

import os
import resource
import threading

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.realtime import (
    MAX_THREAD_PRIORITY,
    set_thread_priority,
    validate_thread_priority,
)

CAP_SYS_NICE = 23


def _may_use_fifo(priority: int) -> bool:
    with open("/proc/self/status", encoding="ascii") as status:
        cap_eff = next(int(line.split()[1], 16) for line in status if line.startswith("CapEff:"))
    soft, _ = resource.getrlimit(resource.RLIMIT_RTPRIO)
    return bool(cap_eff >> CAP_SYS_NICE & 1) or soft == resource.RLIM_INFINITY or soft >= priority


def _in_thread(fn):
    """``fn()`` run in a new thread; its result, and the thread's (policy, priority) after it."""
    out = {}

    def body():
        out["result"] = fn()
        out["policy"] = os.sched_getscheduler(0), os.sched_getparam(0).sched_priority

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    return out["result"], out["policy"]


@pytest.mark.parametrize("value", [0, 1, 50, MAX_THREAD_PRIORITY])
def test_valid_priorities_pass(value):
    assert validate_thread_priority(value) == value


@pytest.mark.parametrize("value", [-1, 100, 1.5, True, "50", None])
def test_invalid_priorities_are_refused_with_the_key(value):
    with pytest.raises(ConfigError) as info:
        validate_thread_priority(value)
    assert info.value.key == "thread_priority"
    with pytest.raises(ConfigError):
        set_thread_priority(value)  # type: ignore[arg-type]


def test_zero_leaves_the_thread_alone():
    before = os.sched_getscheduler(0), os.sched_getparam(0).sched_priority
    (applied, message), after = _in_thread(lambda: set_thread_priority(0))
    assert (applied, message) == (False, "")
    assert after == before


def test_fifo_is_set_on_the_calling_thread_only_and_inherited():
    main_policy = os.sched_getscheduler(0)

    def set_then_spawn():
        result = set_thread_priority(7)
        _, child = _in_thread(lambda: None)  # a thread started afterwards (an executor's)
        return result, child

    ((applied, message), child), policy = _in_thread(set_then_spawn)
    assert os.sched_getscheduler(0) == main_policy  # per thread: the test's thread unchanged
    if _may_use_fifo(7):
        assert applied and "SCHED_FIFO priority 7" in message
        assert policy == (os.SCHED_FIFO, 7)
        assert child == (os.SCHED_FIFO, 7)
    else:
        assert not applied and "rtprio" in message
        assert policy[0] == main_policy


def test_no_permission_is_a_reason_not_an_error(monkeypatch):
    def refuse(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    applied, message = set_thread_priority(50)
    assert not applied
    assert "thread_priority 50 not applied" in message and "CAP_SYS_NICE" in message


def test_the_bridge_parameter_and_spin_apply_it(context):
    """``thread_priority`` as the bridge declares it (range from the declaration), applied by
    :func:`spin_node` on the thread that spins, before the executor exists."""
    from rclpy.node import Node

    from gravity_friction_comp.nodes.mit_bridge_parameters import BRIDGE_PARAMETERS
    from gravity_friction_comp.nodes.parameters import declare
    from gravity_friction_comp.nodes.runtime import spin_node

    (param,) = [p for p in BRIDGE_PARAMETERS if p.name == "thread_priority"]
    assert (param.default, param.low, param.high, param.read_only) == (0, 0, MAX_THREAD_PRIORITY, True)
    node = Node("thread_priority_test", context=context, parameter_overrides=[])
    try:
        declare(node, (param,))
        from rclpy.parameter import Parameter

        refused = node.set_parameters([Parameter("thread_priority", value=100)])[0]
        assert not refused.successful  # the IntegerRange of the declaration
        node2 = Node(
            "thread_priority_test2",
            context=context,
            parameter_overrides=[Parameter("thread_priority", value=3)],
        )
        try:
            declare(node2, (param,))
            _, policy = _in_thread(lambda: spin_node(node2, stop=lambda: True))
            expected = (os.SCHED_FIFO, 3) if _may_use_fifo(3) else (os.sched_getscheduler(0), 0)
            assert policy == expected
        finally:
            node2.destroy_node()
        _, policy = _in_thread(lambda: spin_node(node, stop=lambda: True))  # 0: unchanged
        assert policy[0] == os.sched_getscheduler(0)
    finally:
        node.destroy_node()


def test_the_composed_chain_takes_the_bridges_priority(context):
    """:func:`spin_chain` puts its thread under the bridge node's ``thread_priority`` (one
    executor thread runs the whole chain)."""
    from types import SimpleNamespace

    from rclpy.node import Node
    from rclpy.parameter import Parameter

    from gravity_friction_comp.nodes.composed_chain import spin_chain
    from gravity_friction_comp.nodes.mit_bridge_parameters import BRIDGE_PARAMETERS
    from gravity_friction_comp.nodes.parameters import declare

    bridge = Node(
        "chain_priority_test", context=context, parameter_overrides=[Parameter("thread_priority", value=5)]
    )
    try:
        declare(bridge, [p for p in BRIDGE_PARAMETERS if p.name == "thread_priority"])
        chain = SimpleNamespace(bridge=bridge, nodes=(bridge,))
        _, policy = _in_thread(lambda: spin_chain(chain, stop=lambda: True))  # type: ignore[arg-type]
        assert policy == ((os.SCHED_FIFO, 5) if _may_use_fifo(5) else (os.sched_getscheduler(0), 0))
    finally:
        bridge.destroy_node()
