"""The graph tests' isolation (issue 26 point 9): a domain nobody uses when the test starts,
and a namespace that keeps a stranger who joins that domain later out of the test's topics.

Independent route: the RTPS port mapping (participant ports 7400 + 250·domain + 10 + 2·id),
and the stranger's messages counted at the root namespace, where an un-namespaced test
listened before (CI and a newcomer's run saw a 16-joint ``joint_states`` there)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO_ROOT

pytest.importorskip("rclpy")
from domain_helpers import TEST_DOMAINS, bound_udp_ports, domain_in_use, free_domain  # noqa: E402
from graph_helpers import (  # noqa: E402
    GraphClient,
    fresh_domain_id,
    graph_client,
    node_process,
    own_namespace,
    write_params,
)

NAMES = ["base_yaw", "shoulder_pitch", "beam_pitch"]  # the palletizer's


def test_the_run_never_inherits_the_shells_domain():
    """A shell on domain 0 (or a real arm's): conftest sets a test domain instead."""
    code = "import os, conftest; print(os.environ['ROS_DOMAIN_ID'])"
    env = dict(os.environ, ROS_DOMAIN_ID="0", PYTHONPATH=str(REPO_ROOT / "test"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout) in TEST_DOMAINS


@pytest.mark.slow  # DDS participants
def test_a_domain_with_a_participant_is_in_use_and_skipped():
    domain = fresh_domain_id()
    assert domain in TEST_DOMAINS and not domain_in_use(domain)
    client = GraphClient(domain)
    try:
        low = 7400 + 250 * domain
        assert any(low + 10 <= p < low + 250 for p in bound_udp_ports())  # the participant's ports
        assert domain_in_use(domain)
        assert free_domain(TEST_DOMAINS.index(domain)) != domain
        assert fresh_domain_id() != domain
    finally:
        client.close()


@pytest.mark.slow  # graph-level: a node process and DDS
def test_a_stranger_on_the_domain_does_not_reach_a_namespaced_test(tmp_path):
    """A stranger keeps publishing a 16-joint ``/joint_states`` (the palletizer's joints among
    them) on the test's domain. The setpoint player in hold (latches the first joint_states
    with all its joints), run with its params and the test's client under the test's
    namespace, holds the test's measurement; the stranger is heard at the root namespace,
    where the tests listened before (and the player latched the stranger's pose)."""
    from sensor_msgs.msg import JointState

    from gravity_friction_comp.nodes.stage_node import SETPOINT_QOS

    domain, ns = fresh_domain_id(), own_namespace()
    params = dict(profile="hold", joint_names=NAMES, home=[0.0, 0.3, 0.2], hold_wait=10.0, rate_hz=200.0)
    path = write_params(tmp_path / "player.yaml", "setpoint_player", params, namespace=ns)
    names = [f"other_{k}" for k in range(13)] + NAMES
    strange = JointState(name=names, position=[0.9] * 16)
    ours = JointState(name=NAMES, position=[0.11, 0.47, -0.31])
    with (
        graph_client(domain) as stranger,
        node_process("setpoint_player", domain, path, namespace=ns) as proc,
        graph_client(domain, ns) as client,
    ):
        at_root: list = []
        client.node.create_subscription(JointState, "/joint_states", at_root.append, SETPOINT_QOS)
        setpoints = client.subscribe(JointState, "joint_setpoint")
        states = client.publisher(JointState, "joint_states")
        client.wait_for_subscriber(states, 15.0, proc)
        stranger_pub = stranger.publisher(JointState, "joint_states")

        def stranger_heard() -> bool:
            stranger_pub.publish(strange)
            return len(at_root) >= 20

        assert client.spin_until(stranger_heard, 15.0, proc), "the stranger was never heard"
        assert {len(m.name) for m in at_root} == {16}
        assert not setpoints, "the player latched a joint_states the test did not send"
        states.publish(ours)
        assert client.spin_until(lambda: len(setpoints) >= 20, 15.0, proc)
    assert all(list(m.name) == NAMES and list(m.position) == list(ours.position) for m in setpoints)


@pytest.mark.slow  # DDS participants
def test_a_stranger_on_an_absolute_topic_is_not_heard():
    """``/diagnostics`` is absolute: a namespace does not keep a stranger's off it. Ours (a
    node under its own namespace) and a stranger (same node name, root namespace) both keep
    publishing statuses; the reader keeps only ours, told by publisher GID, while a plain
    subscription in the same reader hears both."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    domain, ns = fresh_domain_id(), own_namespace()
    with (
        graph_client(domain, ns) as ours,
        graph_client(domain) as stranger,
        graph_client(domain, own_namespace()) as reader,
    ):
        kept = reader.subscribe(DiagnosticArray, "/diagnostics", nodes=[ours.node.get_fully_qualified_name()])
        heard: list = []
        reader.node.create_subscription(DiagnosticArray, "/diagnostics", heard.append, 10)
        pubs = [
            (c.publisher(DiagnosticArray, "/diagnostics"), name)
            for c, name in ((ours, "ours"), (stranger, "x"))
        ]
        for pub, _ in pubs:  # both matched with the reader's two subscriptions
            assert reader.spin_until(lambda: pub.get_subscription_count() >= 2, 15.0), pub.topic_name

        def both_heard() -> bool:
            for pub, name in pubs:
                pub.publish(DiagnosticArray(status=[DiagnosticStatus(name=name)]))
            reader.spin_for(0.02)
            return {m.status[0].name for m in heard} == {"ours", "x"} and len(kept) >= 20

        assert ours.node.get_name() == stranger.node.get_name()  # told apart by namespace, not name
        assert reader.spin_until(both_heard, 20.0), f"heard {len(heard)}, kept {len(kept)}"
    assert {m.status[0].name for m in kept} == {"ours"}
