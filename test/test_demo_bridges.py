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


def _children(pid: int) -> list[int]:
    import pathlib

    path = pathlib.Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


@pytest.mark.slow  # a bimanual demo run up to its first ticks (~20-60 s)
def test_a_bridge_process_that_exits_ends_the_demo_naming_it(repo_root, tmp_path):
    """The right arm's bridge process is stopped mid-run (SIGTERM, as a crash's exit would
    leave the graph): the demo ends with exit 4 and one line naming that bridge, no hang
    (the left bridge's clock would wait for it forever, the demo's own wall limit is off in
    lockstep)."""
    pytest.importorskip("rclpy")
    import os
    import pathlib
    import signal
    import subprocess
    import sys
    import time

    from domain_helpers import fresh_domain_id

    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "gravity_friction_comp.tools.demo", "--arm", "openarm_v10_bimanual"]
    cmd += ["--output", str(tmp_path), "--domain-id", str(fresh_domain_id())]
    log = tmp_path / "demo.log"
    with open(log, "w") as out:
        demo = subprocess.Popen(cmd, cwd=repo_root, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        right = None
        deadline = time.monotonic() + 120.0
        while right is None and time.monotonic() < deadline and demo.poll() is None:
            for pid in _children(demo.pid):
                if "__ns:=/right" in pathlib.Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                    right = pid
            time.sleep(0.2)
        assert right is not None, log.read_text()[-3000:]
        # the chain runs (simulated time goes on) before the bridge goes
        deadline = time.monotonic() + 120.0
        while "payload attached" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        os.kill(right, signal.SIGTERM)
        assert demo.wait(timeout=60.0) == 4, log.read_text()[-3000:]
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    text = log.read_text()
    assert "gfc_demo: the chain stopped answering: bridge right" in text, text[-3000:]
    assert not (tmp_path / "summary.json").exists()
