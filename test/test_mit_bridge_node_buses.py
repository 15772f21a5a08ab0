"""The bridge node on several buses (``bus`` per joint): one bus opened per name, frames routed
by bus, one diagnostics status per bus naming the bus and the namespace (issue 15.5)."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # starts a node
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from graph_helpers import GraphClient, fresh_domain_id  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from test_mit_bridge_node import JOINTS, RATE, _params, _sim_yaml  # noqa: E402

from gravity_friction_comp.mit.bus import CanSettings, open_bus  # noqa: E402
from gravity_friction_comp.mit.bus_load import mit_bus_load  # noqa: E402


def test_one_bridge_two_buses_routes_frames_and_reports_each_bus(tmp_path):
    from gravity_friction_comp.nodes.mit_bridge_node import MitBridgeNode

    client = GraphClient(fresh_domain_id())
    # can id 1 on both buses: only the bus tells base_yaw and shoulder_pitch apart
    params = _params(
        _sim_yaml(tmp_path / "sim.yaml"),
        can_id=[1, 1, 2],
        master_id=[17, 17, 18],
        bus=["can3", "can4", "can4"],
        **{"can.fd": True, "can.data_bitrate": 5_000_000},
    )
    node = MitBridgeNode(
        context=client.context,
        namespace="left",
        parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
    )
    base = node.settings.channel
    spies = {b: open_bus(CanSettings("virtual", f"{base}/{b}", 1_000_000, fd=True)) for b in ("can3", "can4")}
    try:
        assert set(node.simulation.buses) == {"can3", "can4"}
        client.executor.add_node(node)
        states = client.subscribe(JointState, "/left/joint_states", nodes=["/left/mit_bridge"])
        diags = client.subscribe(DiagnosticArray, "/diagnostics", nodes=["/left/mit_bridge"])
        assert client.spin_until(lambda: len(states) > 20 and len(diags) > 1, 5.0)
        assert set(states[-1].name) == set(JOINTS)
        seen = {}
        for b, spy in spies.items():
            frames = []
            while (msg := spy.recv(timeout=0.0)) is not None:
                frames.append(msg)
            seen[b] = {m.arbitration_id for m in frames}
            assert all(m.is_fd and m.bitrate_switch for m in frames)
        assert seen == {"can3": {1, 17}, "can4": {1, 2, 17, 18}}
        names = {st.name: st for st in diags[-1].status}
        assert set(names) == {f"/left/mit_bridge: {j}" for j in JOINTS} | {
            "/left/mit_bridge: bus can3",
            "/left/mit_bridge: bus can4",
        }
        assert names["/left/mit_bridge: base_yaw"].hardware_id == "can3 can_id 0x1"
        assert names["/left/mit_bridge: shoulder_pitch"].hardware_id == "can4 can_id 0x1"
        for b, n in (("can3", 1), ("can4", 2)):
            values = {kv.key: kv.value for kv in names[f"/left/mit_bridge: bus {b}"].values}
            expected = mit_bus_load(n, RATE, 1_000_000, fd=True, data_bitrate=5_000_000)
            assert values["bus"] == b and float(values["expected_bus_load"]) == pytest.approx(
                expected, abs=1e-4
            )
            assert int(values["frames_received"]) > 0
        # every motor answered on its own bus: none stale
        for j in JOINTS:
            values = {kv.key: kv.value for kv in names[f"/left/mit_bridge: {j}"].values}
            assert values["stale"] == "False" and int(values["replies"]) > 10, (j, values)
    finally:
        for spy in spies.values():
            spy.shutdown()
        client.executor.remove_node(node)
        node.destroy_node()
        client.close()
