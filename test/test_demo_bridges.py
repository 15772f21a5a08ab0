"""tools/demo/bridges.py, ROS-free: whole states merged from the per-bus bridges' partial
joint_states, and when the demo starts one bridge process per bus."""

from __future__ import annotations

import pytest

from gravity_friction_comp.profiles.arm_profiles import load_arm
from gravity_friction_comp.tools.demo.bridges import StateMerge
from gravity_friction_comp.tools.demo.phase import per_bus
from gravity_friction_comp.tools.demo.scenario import DemoSetup


def test_states_merged_by_stamp_once_each_in_order():
    out = []
    merge = StateMerge(["l1", "l2", "r1"], lambda ns, q: out.append((ns, q)))
    merge.add(4, ["l1", "l2"], [0.1, 0.2])  # the left bridge's start state
    merge.add(4, ["r1"], [0.3])  # the right one's: complete
    merge.add(4, ["r1"], [0.3])  # sent again until answered: dropped
    merge.add(5, ["l1", "l2"], [0.11, 0.21])
    merge.add(6, ["l1", "l2"], [0.12, 0.22])  # the left one runs ahead
    merge.add(5, ["r1"], [0.31])
    merge.add(6, ["r1", "extra"], [0.32, 9.0])  # names beyond the whole state are ignored
    merge.add(7, ["l1", "l2"], [1.0])  # a malformed message (lengths differ): ignored
    assert out == [(4, [0.1, 0.2, 0.3]), (5, [0.11, 0.21, 0.31]), (6, [0.12, 0.22, 0.32])]


def _setup(**kw) -> DemoSetup:
    return DemoSetup("", "", "", "", "", "", (), (), (), (), (), (), (), **kw)


def test_one_bridge_process_per_bus_in_lockstep_unless_asked_otherwise():
    pytest.importorskip("yaml")
    bimanual = load_arm("openarm_v10_bimanual").bridge_values()
    single = load_arm("yam_ultra").bridge_values()
    assert per_bus(_setup(), bimanual, lockstep=True)
    assert not per_bus(_setup(one_bridge=True), bimanual, lockstep=True)
    assert not per_bus(_setup(), bimanual, lockstep=False)  # real time: one bridge node
    assert not per_bus(_setup(), single, lockstep=True)
