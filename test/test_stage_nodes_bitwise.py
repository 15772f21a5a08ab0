"""Graph tests: the stage nodes over DDS publish exactly (bit for bit) what the core stages compute.

Each test runs a node executable and, in this process, the matching ROS-free stage built
through the public core API (``RobotModel``, ``Payload``, ``FrictionModel``, the stage
configs), feeds both the same stamped setpoints and the same changes (holding, scale,
enable, mode, velocity settings), and compares every published effort and term as float64
bit patterns.
"""

from __future__ import annotations

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
from conftest import REPO_ROOT  # noqa: E402
from graph_helpers import node_and_client, warm_up  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402

from gravity_friction_comp import (  # noqa: E402
    FrictionConfig,
    FrictionModel,
    FrictionStage,
    GravityConfig,
    GravityStage,
    Payload,
    RobotModel,
    StageSettings,
)

URDF = REPO_ROOT / "urdf" / "palletizer.urdf"
ARM_YAML = REPO_ROOT / "config" / "palletizer_arm.yaml"
PAYLOAD = dict(mass=0.13, shape="cylinder", radius=0.033, length=0.12, com=[0.0, 0.0, -0.07], parent="tool")


def _bits(values) -> list[str]:
    return [float(x).hex() for x in values]


def _setpoint(names, q, v=(), effort=(), t=0.0):
    msg = JointState()
    msg.name = list(names)
    msg.position = [float(x) for x in q]
    msg.velocity = [float(x) for x in v]
    msg.effort = [float(x) for x in effort]
    msg.header.stamp.sec = int(t)
    msg.header.stamp.nanosec = int(round((t - int(t)) * 1e9))
    return msg


def _stamp_seconds(msg) -> float:
    # the node's translation of a header stamp [s]
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


class _Mirror:
    """Drives a node and a core stage in lockstep and compares their outputs bit for bit."""

    def __init__(self, client, proc, setpoints, commands, terms, stage, node_name):
        self.client, self.proc, self.setpoints = client, proc, setpoints
        self.commands, self.terms, self.stage, self.node = commands, terms, stage, node_name
        self.compared = 0

    def _received(self, n0):
        ok = self.client.spin_until(lambda: len(self.commands) > n0 and len(self.terms) > n0, 5.0, self.proc)
        assert ok, "the node published nothing"
        assert len(self.commands) == n0 + 1 and len(self.terms) == n0 + 1
        return self.commands[-1], self.terms[-1]

    def _compare(self, out, result):
        assert _bits(out.effort) == _bits(result.effort)
        assert _bits(self.terms[-1].effort) == _bits(result.term)
        self.compared += 1

    def setpoint(self, msg):
        n0 = len(self.commands)
        self.setpoints.publish(msg)
        out, _ = self._received(n0)
        result = self.stage.update(msg.name, msg.position, msg.velocity, msg.effort, _stamp_seconds(msg))
        self._compare(out, result)
        assert list(out.name) == list(msg.name) and list(out.position) == list(msg.position)
        return result

    def republished(self, change, apply_to_stage):
        """``change()`` makes the node republish; ``apply_to_stage()`` does the same to the stage."""
        n0 = len(self.commands)
        change()
        out, _ = self._received(n0)
        apply_to_stage()
        result = self.stage.repeat()
        self._compare(out, result)
        return result

    def set(self, **values):
        def change():
            results = self.client.set_parameters(self.node, **values)
            assert all(r.successful for r in results), [r.reason for r in results]

        return change


def test_gravity_node_equals_gravity_stage_bit_for_bit(tmp_path):
    bare = RobotModel.from_urdf(URDF)
    loaded = bare.with_payload(
        Payload.cylinder(
            PAYLOAD["mass"], PAYLOAD["radius"], PAYLOAD["length"], com=tuple(PAYLOAD["com"]), parent="tool"
        )
    )
    stage = GravityStage(GravityConfig(bare, loaded))
    names = ["gripper", "beam_pitch", "base_yaw", "shoulder_pitch"]  # shuffled + a joint the model lacks
    params = {"urdf_path": str(URDF), **{f"payload.{k}": v for k, v in PAYLOAD.items()}}
    with node_and_client("gravity_compensation_node", "gravity_compensation", params, tmp_path) as (
        proc,
        client,
    ):
        commands = client.subscribe(JointState, "joint_command")
        terms = client.subscribe(JointState, "gravity_compensation/effort")
        setpoints = client.publisher(JointState, "joint_setpoint")
        holding = client.publisher(Bool, "gripper/holding")
        client.wait_for_subscriber(setpoints, proc=proc)
        client.wait_for_subscriber(holding, proc=proc)
        warm_up(client, setpoints, _setpoint(bare.joint_names, [0.0] * 3), commands, proc)
        client.spin_until(lambda: len(terms) >= 1, 2.0, proc)
        terms.clear()
        mirror = _Mirror(client, proc, setpoints, commands, terms, stage, "gravity_compensation")
        rng = np.random.default_rng(12)
        t = 100.0

        def some_setpoints(count, velocity=None):
            nonlocal t
            for _ in range(count):
                t += 0.002
                q = rng.uniform(-0.8, 0.8, 4)
                v = () if velocity is None else [0.0, *velocity(rng)]
                msg = _setpoint(names, q, v, rng.uniform(-0.3, 0.3, 4), t)
                result = mirror.setpoint(msg)
            return msg, result

        some_setpoints(3)
        mirror.republished(lambda: holding.publish(Bool(data=True)), lambda: stage.set_holding(True))
        some_setpoints(2)
        mirror.republished(mirror.set(scale=0.5), lambda: stage.set_scale(0.5))
        some_setpoints(2)
        # a clamped output: incoming effort beyond the URDF limit
        t += 0.002
        big = mirror.setpoint(_setpoint(names, [0.0, 0.3, 0.2, 0.5], (), [0.0, 1e3, -1e3, 1e3], t))
        assert big.clamped
        id_config = GravityConfig(bare, loaded, mode="inverse_dynamics")
        mirror.republished(mirror.set(mode="inverse_dynamics"), lambda: stage.set_config(id_config))
        msg, result = some_setpoints(6, velocity=lambda r: r.uniform(-1.5, 1.5, 3))
        # inverse dynamics, not gravity: M(q)q̈ + C(q, q̇)q̇ matter at these velocities
        index = [names.index(j) for j in bare.joint_names]
        q_model = np.array(msg.position)[index]
        assert not np.allclose(np.array(result.term)[index], 0.5 * loaded.gravity(q_model), atol=1e-3)
        mirror.republished(lambda: holding.publish(Bool(data=False)), lambda: stage.set_holding(False))
        some_setpoints(2, velocity=lambda r: r.uniform(-1.5, 1.5, 3))
        mirror.republished(mirror.set(enable=False), lambda: stage.set_enabled(False))
        some_setpoints(1, velocity=lambda r: r.uniform(-1.5, 1.5, 3))
        assert mirror.compared == 22
        assert proc.poll() is None


def test_friction_node_equals_friction_stage_bit_for_bit(tmp_path):
    joints = ["base_yaw", "shoulder_pitch", "beam_pitch"]
    model = FrictionModel.from_yaml(str(ARM_YAML), joints)
    stage = FrictionStage(FrictionConfig(model, joints), StageSettings())
    names = ["shoulder_pitch", "gripper", "beam_pitch", "base_yaw"]
    params = {"joints": joints, "arm_config": str(ARM_YAML)}
    with node_and_client("friction_feedforward_node", "friction_feedforward", params, tmp_path) as (
        proc,
        client,
    ):
        commands = client.subscribe(JointState, "joint_command")
        terms = client.subscribe(JointState, "friction_feedforward/effort")
        setpoints = client.publisher(JointState, "joint_setpoint")
        client.wait_for_subscriber(setpoints, proc=proc)
        warm_up(client, setpoints, _setpoint(joints, [0.0] * 3, [0.0] * 3), commands, proc)
        client.spin_until(lambda: len(terms) >= 1, 2.0, proc)
        terms.clear()
        mirror = _Mirror(client, proc, setpoints, commands, terms, stage, "friction_feedforward")
        rng = np.random.default_rng(13)
        t = 50.0
        q = np.zeros(4)

        def some_setpoints(count, with_velocity=True):
            nonlocal t, q
            for _ in range(count):
                t += 0.005
                v = rng.uniform(-0.4, 0.4, 4)
                q = q + 0.005 * v
                mirror.setpoint(_setpoint(names, q, v if with_velocity else (), rng.uniform(-1.0, 1.0, 4), t))

        some_setpoints(3)
        mirror.republished(mirror.set(scale=0.5), lambda: stage.set_scale(0.5))
        some_setpoints(2)
        deadband = FrictionConfig(model, joints, velocity_deadband=0.2)
        mirror.republished(mirror.set(velocity_deadband=0.2), lambda: stage.set_config(deadband))
        some_setpoints(2)
        differentiated = FrictionConfig(
            model, joints, velocity_source="differentiated", velocity_deadband=0.2
        )
        mirror.republished(
            mirror.set(velocity_source="differentiated"), lambda: stage.set_config(differentiated)
        )
        some_setpoints(4, with_velocity=False)
        mirror.republished(mirror.set(enable=False), lambda: stage.set_enabled(False))
        some_setpoints(1)
        assert mirror.compared == 16
        assert proc.poll() is None
