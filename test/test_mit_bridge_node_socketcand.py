"""mit_bridge_node with ``simulate:=false can.interface:=socketcand`` against the simulated
palletizer served from this process (sim/socketcand_server.py): the arm behind TCP as a real
socketcand daemon would serve it. Independent route: the simulated arm's own state."""

from __future__ import annotations

import time

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: starts a node process (fast tier: -m "not slow")
from conftest import REPO_ROOT  # noqa: E402
from graph_helpers import fresh_domain_id, graph_client, node_process, own_namespace, write_params  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.sim.socketcand_server import SocketcandServer  # noqa: E402
from gravity_friction_comp.tools.sim_arm import simulated_bus_from_parameters, socketcand_channels  # noqa: E402


def test_bridge_node_over_socketcand_reads_the_sims_positions(tmp_path):
    values = yaml.safe_load((REPO_ROOT / "config" / "mit_bridge.yaml").read_text())["/**/mit_bridge"][
        "ros__parameters"
    ]
    values.update(
        urdf_path=str(REPO_ROOT / "urdf" / "palletizer.urdf"),
        sim_config=str(REPO_ROOT / "config" / "sim_palletizer.yaml"),
    )  # read_motor_limits stays true: the register reads go over socketcand too
    sim = simulated_bus_from_parameters(values)
    seen: list = []
    with SocketcandServer(sim, channels=socketcand_channels(values, sim), on_frame=seen.append) as server:
        sim.start()
        bridge = dict(values, simulate=False, **{"can.interface": "socketcand", "can.host": "127.0.0.1"})
        bridge["can.port"] = server.port
        domain, ns = fresh_domain_id(), own_namespace()
        path = write_params(tmp_path / "bridge.yaml", "mit_bridge", bridge, namespace=ns)
        try:
            with (
                node_process("mit_bridge_node", domain, path, namespace=ns) as proc,
                graph_client(domain, ns) as client,
            ):
                states = client.subscribe(JointState, "joint_states")
                assert client.spin_until(lambda: len(states) > 50, 30.0, proc), proc.stdout
                client.spin_for(0.5)  # held (startup_behavior hold) and settled
                states.clear()
                assert client.spin_until(lambda: len(states) > 5, 5.0, proc)
                truth = sim.snapshot()
                last = states[-1]
        finally:
            sim.stop()
    assert list(last.name) == values["joints"]
    # the register reads (Damiao 0x7FF, P/V/T_MAX) and MIT frames both crossed the server
    assert any(m.arbitration_id == 0x7FF for m in seen) and server.malformed == 0
    assert np.abs(truth.velocity).max() < 0.01
    assert np.asarray(last.position) == pytest.approx(truth.position, abs=1e-3)
    assert time.time() - seen[-1].timestamp < 5.0
