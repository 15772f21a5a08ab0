"""teleop.launch.py's bimanual follower over DDS (issue 31.2/31.3): one bridge per bus, so one
momentum observer per bus on that bus's ``joint_states``, the teleop node taking each one's
estimate; a follower contact is fed back to the leader, and exactly 0 with feedback off.

The real node executables (the observers and ``teleop_node``), wired by the launch file's own
functions (``teleop_wiring``: the node's parameters and the observers' commands;
``teleop_remappings``), on a domain
of their own and under a namespace of the test's (``root``); the test plays the two per-bus
bridges: each publishes its bus's joints at rest at a pose, with the motor torque
``g(q) − τ_c`` (the torque holding gravity, less a contact torque τ_c the world takes), so
the observer's estimate converges to τ_c + Fo (at rest: τ_ext = g(q) − τ_motor + τ_f(0), the
arm YAML's friction at rest its offset Fo) and the feedback at the leader is
``gain · (τ_c + Fo)`` (identity map, below the cap): closed form, Fo read from the YAML. Only the test's own
teleop node's feedback is read (publisher GID, :func:`graph_helpers.subscribe_own`).
"""

from __future__ import annotations

import sys

import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("pinocchio")
pytestmark = pytest.mark.slow
from graph_helpers import fresh_domain_id, graph_client, node_process, own_namespace, write_params  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from test_teleop_launch import _module  # noqa: E402

ARM = "openarm_v10_bimanual"
#: The follower's contact per joint [N·m]: one on each bus (each observer's own estimate).
CONTACT = {"openarm_left_joint2": 3.0, "openarm_right_joint1": -2.0}
RATE = 200.0  # [Hz] the played bridges' joint_states


def _friction_at_rest() -> dict[str, float]:
    """The arm YAML's OpenArm friction at v = 0 per joint: Fo (Fo + Fv·v + Fc·tanh(0.1·k·v))."""
    import yaml

    from gravity_friction_comp.profiles.arm_profiles import load_arm

    data = yaml.safe_load(load_arm(ARM).arm_config.read_text())
    return dict(zip(data["joints"], map(float, data["FollowerArmParam"]["Fo"])))


def _buses(repo_root):
    """[(bus namespace, its joints)], the rest pose per joint and g(q) of the whole model."""
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import bus_bridges, load_arm
    from gravity_friction_comp.sim.config import SimConfig

    profile = load_arm(ARM)
    buses = [(sub, list(v["joints"])) for sub, _, v in bus_bridges(profile.bridge_values())]
    model = RobotModel.from_urdf(profile.urdf)
    sim = SimConfig.from_yaml(profile.sim_config)
    q = {j: float(sim.joint(j).initial_position) for j in model.joint_names}
    q["openarm_left_joint4"] = q["openarm_right_joint4"] = 0.6  # a bent elbow: gravity on the shoulders
    gravity = dict(zip(model.joint_names, model.gravity([q[j] for j in model.joint_names])))
    return buses, q, gravity


def test_bimanual_follower_contact_fed_back_per_bus_and_zero_when_off(repo_root, tmp_path):
    m = _module(repo_root)
    domain, root = fresh_domain_id(), own_namespace()
    buses, q, gravity = _buses(repo_root)
    # what the launch gives with feedback:=true, every topic under the test's root
    values, commands = m.teleop_wiring(ARM, ARM, sys.executable, feedback="true", root=root)
    gain = 0.75  # arms/openarm_v10_bimanual/teleop.yaml (cap 5 N·m: not reached)
    params = write_params(tmp_path / "teleop.yaml", "teleop", values, namespace=root)
    remaps = [a for src, dst in m.teleop_remappings(root) for a in ("-r", f"{src}:={dst}")]
    assert len(commands) == len(buses) == 2  # one observer per bus's bridge
    observers = []
    for cmd in commands:
        assert cmd[1:4] == ["-m", "gravity_friction_comp.nodes.observer_node", "--ros-args"], cmd
        observers.append(node_process("observer_node", domain, ros_args=cmd[4:]))
    with (
        observers[0] as p_left,
        observers[1] as p_right,
        node_process("teleop_node", domain, params, ros_args=remaps, namespace=root) as p_teleop,
        graph_client(domain, root) as client,
    ):
        procs = (p_left, p_right, p_teleop)
        feedback = client.subscribe(JointState, f"{root}/leader/feedback_effort", nodes=[f"{root}/teleop"])
        pubs = [
            (client.publisher(JointState, f"{root}/follower/{sub}/joint_states"), joints)
            for sub, joints in buses
        ]
        contact = {"on": False}

        def play():  # one joint_states per bus, as its bridge would: at rest, holding g(q) − τ_c
            stamp = client.node.get_clock().now().to_msg()
            for pub, joints in pubs:
                msg = JointState()
                msg.header.stamp = stamp
                msg.name = joints
                msg.position = [q[j] for j in joints]
                msg.velocity = [0.0] * len(joints)
                msg.effort = [gravity[j] - (CONTACT.get(j, 0.0) if contact["on"] else 0.0) for j in joints]
                pub.publish(msg)

        client.node.create_timer(1.0 / RATE, play)

        def settle(seconds: float) -> dict[str, float]:
            feedback.clear()
            client.spin_for(seconds)
            for p in procs:
                assert p.poll() is None, p.stdout.read()
            assert feedback, "no feedback_effort from the teleop node"
            last = feedback[-1]
            return dict(zip(last.name, last.effort))

        def both_observers_heard() -> bool:  # each starts on its own: one may be seconds late
            last = dict(zip(feedback[-1].name, feedback[-1].effort)) if feedback else {}
            return all(any(last.get(j, 0.0) != 0.0 for j in joints) for _, joints in buses)

        assert client.spin_until(both_observers_heard, 30.0, p_teleop), "graph did not come up"
        before = settle(1.5)
        contact["on"] = True
        during = settle(1.5)
        print(f"feedback without contact {before}\nwith contact {during}")
        # each bus's observer: gain (tau_c + Fo) on its joints (closed form), converged (K 100/s)
        fo = _friction_at_rest()
        assert set(during) == set(fo)  # every mapped joint, from the two observers
        for j in fo:
            assert abs(before[j] - gain * fo[j]) <= 2e-3, (j, before[j], gain * fo[j])
            expected = gain * (CONTACT.get(j, 0.0) + fo[j])
            assert abs(during[j] - expected) <= 2e-3, (j, during[j], expected)
        (result,) = client.set_parameters(f"{root}/teleop", feedback__enable=False)
        assert result.successful, result.reason
        off = settle(0.5)
        assert set(off) == set(during)
        recent = feedback[-20:]
        assert all(e == 0.0 for msg in recent for e in msg.effort), [list(m.effort) for m in recent]
