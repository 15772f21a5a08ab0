"""free_drive_node under a namespace (the bimanual OpenArm pairs run under /left and /right):
its gain switch reaches the bridge of its own namespace, ``/<ns>/mit_bridge`` (before: the
absolute ``/mit_bridge/set_parameters``, a service nobody offers there, so the bridge kept its
follow gains in free drive)."""

from __future__ import annotations

import pytest

rclpy = pytest.importorskip("rclpy")

from graph_helpers import fresh_domain_id, graph_client, node_process, own_namespace, write_params  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.param_files import first_node_parameters  # noqa: E402

FREE_KD = [0.11, 0.12, 0.13]  # free drive's kd, distinct from the file's kd [0.5, 1.0, 0.3]


@pytest.mark.parametrize(
    ("namespace", "bridge_node", "service"),
    [
        ("/left", "mit_bridge", "/left/mit_bridge/set_parameters_atomically"),
        ("/", "mit_bridge", "/mit_bridge/set_parameters_atomically"),
        ("/left", "/right/mit_bridge", "/right/mit_bridge/set_parameters_atomically"),  # absolute stays so
    ],
)
def test_bridge_service_resolved_in_the_nodes_namespace(context, namespace, bridge_node, service):
    from rclpy.parameter import Parameter

    from gravity_friction_comp.nodes.free_drive_node import FreeDriveNode

    values = {"joints": ["a", "b"], "free_drive_kd": [0.1, 0.2], "bridge_node": bridge_node}
    node = FreeDriveNode(
        context=context,
        namespace=namespace,
        parameter_overrides=[Parameter(k, value=v) for k, v in values.items()],
        start_parameter_services=False,
    )
    try:
        assert node._bridge_client().srv_name == service
    finally:
        node.destroy_node()


@pytest.mark.slow
def test_free_drive_gains_reach_the_bridge_under_a_namespace(repo_root, tmp_path):
    """The simulated bridge and free_drive_node as processes under one namespace: once free
    drive publishes, the bridge's kp/kd (read back over its get_parameters service there)
    are the ones free drive set: kp 0, kd = free_drive_kd."""
    pytest.importorskip("pinocchio")
    _, bridge = first_node_parameters(repo_root / "config" / "mit_bridge.yaml")
    bridge |= {
        "simulate": True,
        "urdf_path": str(repo_root / "urdf" / "palletizer.urdf"),
        "sim_config": str(repo_root / "config" / "sim_palletizer.yaml"),
        "read_motor_limits": False,
        "command_timeout": 1.0,  # generous: a loaded machine delays DDS
    }
    joints = list(bridge["joints"])
    free = {
        "joints": joints,
        "mode": "free_drive",
        "stale_timeout": 1.0,
        "free_drive_kd": FREE_KD,
        "follow_kp": list(bridge["kp"]),
        "follow_kd": list(bridge["kd"]),
    }
    domain, ns = fresh_domain_id(), own_namespace()
    bridge_file = write_params(tmp_path / "bridge.yaml", "mit_bridge", bridge, namespace=ns)
    free_file = write_params(tmp_path / "free.yaml", "free_drive", free, namespace=ns)
    with (
        node_process("mit_bridge_node", domain, bridge_file, namespace=ns) as bridge_proc,
        node_process("free_drive_node", domain, free_file, namespace=ns) as free_proc,
        graph_client(domain, ns) as client,
    ):
        setpoints = client.subscribe(JointState, "joint_setpoint")
        assert client.spin_until(lambda: len(setpoints) > 5, 30.0, free_proc), "free drive published nothing"
        assert bridge_proc.poll() is None, bridge_proc.stdout.read()

        def gains():
            got = client.get_parameters("mit_bridge", "kp", "kd")
            return got["kp"], got["kd"]

        assert client.spin_until(lambda: gains() == ([0.0] * len(joints), FREE_KD), 10.0, free_proc), gains()
