"""composed_chain with the setpoint shaper (issue 30 point 2): joint_setpoint goes to the shaper,
its shaped output at its own rate enters gravity → friction → bridge by direct call."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("ruckig")
pytestmark = pytest.mark.slow  # builds the whole chain with a simulated bridge

from conftest import REPO_ROOT  # noqa: E402
from graph_helpers import GraphClient, fresh_domain_id, own_namespace  # noqa: E402
from rclpy.time import Time  # noqa: E402
from test_nodes_composed_chain import FRICTION, GRAVITY, JOINTS, URDF, _bridge, _overrides  # noqa: E402


def test_the_shaper_feeds_the_chain_and_its_output_reaches_the_bridge(tmp_path):
    from test_nodes_setpoint_shaper import _setpoint

    from gravity_friction_comp.nodes.composed_chain import ComposedChain
    from gravity_friction_comp.nodes.setpoint_shaper_node import SetpointShaperNode

    sim = tmp_path / "sim.yaml"
    joints = {n: {"initial_position": 0.1} for n in JOINTS}
    sim.write_text(
        yaml.safe_dump({"simulation": {"version": 1, "physics_rate_hz": 1000.0, "joints": joints}})
    )
    ns = own_namespace()
    client = GraphClient(fresh_domain_id(), ns)
    shaper_values = {
        "urdf_path": URDF,
        "arm_config": str(REPO_ROOT / "config" / "palletizer_arm.yaml"),
        "use_sim_time": True,
    }
    chain = ComposedChain(
        context=client.context,
        gravity=_overrides(GRAVITY, namespace=ns),
        friction=_overrides(FRICTION, namespace=ns),
        bridge=_overrides(_bridge(str(sim)), namespace=ns),
        shaper=_overrides(shaper_values, namespace=ns),
    )
    try:
        assert isinstance(chain.shaper, SetpointShaperNode) and chain.nodes[0] is chain.shaper
        assert chain.shaper.hand_off is not None
        entry = chain.gravity.setpoint_subscription
        assert entry.topic_name == f"{ns}/joint_setpoint" and entry.callback == chain.shaper.on_setpoint
        received = []
        core = chain.bridge._core  # noqa: SLF001 - what the bridge stores is what it sends
        set_command = core.set_command

        def spy(q, v, tau, now):
            received.append((np.array(q), np.array(v), np.array(tau)))
            return set_command(q, v, tau, now)

        core.set_command = spy
        # measured at 0.1 rad (the simulated arm's start), one setpoint 0.2 rad away on
        # base_yaw: the shaper starts on the measured position and moves within its limits
        chain.shaper._on_joint_states(_setpoint(0.0, [0.1, 0.1, 0.1]))
        chain.shaper.on_setpoint(_setpoint(0.001, [0.3, 0.1, 0.1]))
        for k in range(1, 1001):
            chain.shaper.get_clock().set_ros_time_override(Time(nanoseconds=k * 1_000_000))
            chain.shaper._tick()
        q = np.array([r[0] for r in received])
        v = np.array([r[1] for r in received])
        assert len(received) == 1000  # every shaped output reached the bridge
        np.testing.assert_allclose(q[0], [0.1, 0.1, 0.1], atol=1e-6)  # from the measured position
        np.testing.assert_allclose(q[-1], [0.3, 0.1, 0.1], atol=1e-9)
        assert 0.0 < np.max(v[:, 0]) <= 3.0 + 1e-9  # the URDF's base_yaw velocity limit
        assert np.all(np.isfinite([r[2] for r in received]))  # gravity + friction terms
    finally:
        chain.destroy()
        client.close()
