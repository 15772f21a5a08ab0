"""composed_chain hands validated arrays from stage to stage and into the bridge (issue 28
point 2): each setpoint is parsed once, at the gravity stage. What the bridge's core is given
must equal the route of the separate nodes (each stage parsing the previous one's message
lists: the ROS-free stages built from the chain's own configs), bit for bit, with the torque
clamped to the friction stage's limit; hostile setpoints are refused with the reason the
stage route gives; the bridge still refuses a hand-off lacking its joints or overflowing on
the motor side. The setpoints enter by the chain's subscription callback (direct calls)."""

from __future__ import annotations

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # starts the chain's nodes (a DDS domain of their own)
from test_nodes_composed_chain import JOINTS, _bits, _running_chain, _setpoint  # noqa: E402

from gravity_friction_comp import FrictionConfig, FrictionModel, FrictionStage, GravityStage  # noqa: E402
from gravity_friction_comp.errors import InputError, Reason  # noqa: E402
from gravity_friction_comp.nodes.stage_node import HandOff, StageOutput  # noqa: E402

NAMES = ["shoulder_pitch", "gripper", "beam_pitch", "base_yaw"]  # shuffled + a joint no stage has


def _message(names, q, v, effort, t):
    msg = _setpoint(q, v, effort, t)
    msg.name = list(names)
    return msg


def _spied(chain):
    """What the bridge's core is given (tau, bridge joint order) and each stage's warnings."""
    core = chain.bridge._core  # noqa: SLF001 - what the core stores is what it sends
    received: list[np.ndarray] = []
    set_command = core.set_command

    def spy(q, v, tau, now):
        set_command(q, v, tau, now)  # raises for a refused command: not received
        received.append(np.array(tau))

    core.set_command = spy
    warned: list[str] = []
    for node in (chain.gravity, chain.friction):
        node.warn_throttled = lambda key, message: warned.append(key)
    return received, warned


def _reference(chain):
    """The separate nodes' route, ROS-free, from the chain's configs: stage by stage, each
    parsing the previous output as the lists a message carries."""
    g = chain.gravity.stage
    gravity = GravityStage(g.config, g.settings, holding=g.holding)
    friction = FrictionStage(chain.friction.stage.config, chain.friction.stage.settings)

    def run(msg, t):
        fields = (msg.name, list(msg.position), list(msg.velocity))
        effort = gravity.update(*fields, list(msg.effort), t).effort.tolist()
        return friction.update(*fields, effort, t).effort

    return run


def test_the_hand_offs_equal_the_stage_route_and_the_torque_is_clamped(tmp_path):
    with _running_chain(tmp_path) as (client, chain, spy, _):
        assert isinstance(chain.gravity.hand_off, HandOff) and isinstance(chain.friction.hand_off, HandOff)
        received, warned = _spied(chain)
        reference = _reference(chain)
        limits = dict(zip(JOINTS, chain.friction.stage.config.effort_limits.tolist()))
        rng = np.random.default_rng(282)
        at_limit = 0
        for k in range(120):
            t = 60.0 + 0.002 * k
            q, v = rng.uniform(-0.8, 0.8, 4), rng.uniform(-0.5, 0.5, 4)
            effort = rng.uniform(-40.0, 40.0, 4) if k % 5 else []  # beyond the limits: clamped
            msg = _message(NAMES, q, v, effort, t)
            chain.gravity.setpoint_subscription.callback(msg)  # as the executor calls it
            expected = dict(zip(NAMES, reference(msg, t).tolist()))
            assert len(received) == k + 1, chain.last_error
            assert _bits(received[-1]) == _bits([expected[j] for j in JOINTS])
            assert all(abs(expected[j]) <= limits[j] for j in JOINTS)
            at_limit += any(abs(expected[j]) == limits[j] for j in JOINTS)
        assert at_limit > 20 and "clamped" in warned
        assert chain.errors == 0 and chain.bridge._rejected == 0  # noqa: SLF001


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"position": [float("nan"), 0.1, 0.1, 0.1]}, Reason.NOT_FINITE),
        ({"effort": [0.0, 0.0, float("inf"), 0.0]}, Reason.NOT_FINITE),
        ({"names": ["shoulder_pitch", "gripper", "beam_pitch", "beam_pitch"]}, Reason.DUPLICATE_NAMES),
        ({"names": ["shoulder_pitch", "gripper", "beam_pitch", "wrist"]}, Reason.MISSING_JOINTS),
        ({"velocity": [1e6, 0.0, 0.0, 0.0]}, Reason.RANGE),  # passes gravity, refused by friction
    ],
)
def test_a_hostile_setpoint_is_refused_with_the_reason_of_the_stage_route(tmp_path, change, reason):
    with _running_chain(tmp_path) as (client, chain, spy, _):
        received, warned = _spied(chain)
        good = _message(NAMES, [0.1] * 4, [0.0] * 4, [0.0] * 4, 70.0)
        chain.gravity.setpoint_subscription.callback(good)
        assert len(received) == 1
        fields = {"names": NAMES, "position": [0.1] * 4, "velocity": [0.0] * 4, "effort": [0.0] * 4}
        fields |= change
        bad = _message(fields["names"], fields["position"], fields["velocity"], fields["effort"], 70.002)
        with pytest.raises(InputError) as error:  # the stage route
            _reference(chain)(bad, 70.002)
        assert error.value.reason == reason
        warned.clear()
        chain.gravity.setpoint_subscription.callback(bad)
        assert warned == [reason] and len(received) == 1  # dropped: the bridge keeps the last
        assert chain.errors == 0
        chain.gravity.setpoint_subscription.callback(_message(NAMES, [0.2] * 4, [0.0] * 4, [0.0] * 4, 70.004))
        assert len(received) == 2


@pytest.mark.parametrize("gear", [2.0])
def test_the_bridge_still_refuses_a_validated_hand_off_it_cannot_send(tmp_path, gear, repo_root):
    """A hand-off past the stages that overflows once mapped to the motor (position × r), or
    that lacks a bridge joint, is refused by the bridge with the reason its message route
    gives (counted; nothing stored), not a chain error."""
    with _running_chain(tmp_path, gear_ratio=[gear] * 3, kp=[2.0] * 3, kd=[0.05] * 3) as (
        client,
        chain,
        spy,
        _,
    ):
        received, _ = _spied(chain)
        core = chain.bridge._core  # noqa: SLF001
        warnings: list[str] = []
        chain.bridge._warn = lambda key, message: warnings.append(key)  # noqa: SLF001

        def output(stage, names, q, t):
            result = stage.update(names, q, [0.0] * len(q), [0.0] * len(q), t)
            msg = _message(names, q, [0.0] * len(q), [], t)
            return StageOutput(msg.header, msg.name, msg.position, msg.velocity, result)

        friction = FrictionStage(chain.friction.stage.config, chain.friction.stage.settings)
        chain.friction.hand_off.validated(output(friction, JOINTS, [0.1, 0.1, 0.1], 80.0))
        assert len(received) == 1
        huge = output(friction, JOINTS, [0.1, 1e308, 0.1], 80.002)  # finite at the joint
        with pytest.raises(InputError) as error:  # the bridge's message route refuses it so
            core.checked_command([0.1, 1e308, 0.1], None, None)
        assert error.value.reason == Reason.RANGE
        rejected = core.rejected_commands
        chain.friction.hand_off.validated(huge)
        assert core.rejected_commands == rejected + 1 and warnings == [f"command_{Reason.RANGE}"]
        # a friction stage on two joints hands on a setpoint without beam_pitch
        model = FrictionModel.from_yaml(str(repo_root / "config" / "palletizer_arm.yaml"), JOINTS[:2])
        two = FrictionStage(FrictionConfig(model, JOINTS[:2]))
        chain.friction.hand_off.validated(output(two, JOINTS[:2], [0.1, 0.1], 80.004))
        assert warnings[-1] == f"command_{Reason.MISSING_JOINTS}"
        assert chain.bridge._rejected == 2 and len(received) == 1  # noqa: SLF001
        assert chain.errors == 0, chain.last_error
