"""composed_chain: the one-process chain equals the separate-node chain bit for bit, its
terms stay on their topics and parameters, and a raising stage never stops the bridge.

Both chains run under the test's own namespace (a stranger on the domain is not heard); the
separate chain is the two stage executables in subprocesses (its ``sep``, wired as
``arm.launch.py`` wires them); the composed chain runs in this process (a python-can
``virtual`` bus is visible only inside its process, so a spy bus sees the bridge's frames).
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # graph-level: starts node processes
from conftest import REPO_ROOT  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from graph_helpers import GraphClient, fresh_domain_id, node_process, own_namespace  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from gravity_friction_comp.mit.bus import CanSettings, open_bus  # noqa: E402
from gravity_friction_comp.mit.codec import unpack_command_codes  # noqa: E402

URDF = str(REPO_ROOT / "urdf" / "palletizer.urdf")
ARM_YAML = str(REPO_ROOT / "config" / "palletizer_arm.yaml")
JOINTS = ["base_yaw", "shoulder_pitch", "beam_pitch"]
TIMEOUT = 1.0  # generous: a loaded machine delays the in-process DDS hop from the test client
GRAVITY = {"urdf_path": URDF, "payload.mass": 0.13, "payload.shape": "point", "payload.parent": "tool"}
FRICTION = {
    "joints": JOINTS,
    "arm_config": ARM_YAML,
    "velocity_source": "setpoint",
    "effort_limit": [10.0, 28.0, 10.0],
}


def _bridge(sim_yaml: str) -> dict:
    return {
        "joints": JOINTS,
        "can_id": [1, 2, 3],
        "master_id": [17, 18, 19],
        "motor_type": ["DM4310", "DM4340", "DM4310"],
        "kp": [20.0, 30.0, 15.0],
        "kd": [0.5, 1.0, 0.3],
        "effort_limit": [10.0, 28.0, 10.0],
        "rate_hz": 500.0,
        "command_timeout": TIMEOUT,
        "timeout_behavior": "damp",
        "diagnostics_rate_hz": 20.0,
        "simulate": True,
        "sim_config": sim_yaml,
        "urdf_path": URDF,
    }


def _overrides(values: dict, **kwargs) -> dict:
    return {"parameter_overrides": [Parameter(k, value=v) for k, v in values.items()], **kwargs}


def _bits(values) -> list[str]:
    return [float(x).hex() for x in values]


def _setpoint(q, v, effort, t):
    msg = JointState()
    msg.name = list(JOINTS)
    msg.position = [float(x) for x in q]
    msg.velocity = [float(x) for x in v]
    msg.effort = [float(x) for x in effort]
    msg.header.stamp.sec = int(t)
    msg.header.stamp.nanosec = int(round((t - int(t)) * 1e9))
    return msg


@contextmanager
def _running_chain(tmp_path, **bridge):
    """The composed chain on a fresh domain with its nodes on the test client's executor and
    a spy bus on the bridge's channel; ``bridge``: values over :func:`_bridge`'s."""
    from gravity_friction_comp.nodes.composed_chain import ComposedChain

    sim = tmp_path / "sim.yaml"
    joints = {n: {"initial_position": 0.1} for n in JOINTS}
    sim.write_text(
        yaml.safe_dump({"simulation": {"version": 1, "physics_rate_hz": 1000.0, "joints": joints}})
    )
    domain, ns = fresh_domain_id(), own_namespace()
    client = GraphClient(domain, ns)
    chain = ComposedChain(
        context=client.context,
        gravity=_overrides(GRAVITY, namespace=ns),
        friction=_overrides(FRICTION, namespace=ns),
        bridge=_overrides({**_bridge(str(sim)), **bridge}, namespace=ns),
    )
    for node in chain.nodes:
        client.executor.add_node(node)
    spy = open_bus(CanSettings("virtual", chain.bridge.settings.channel, 1_000_000))
    try:
        yield client, chain, spy, domain
    finally:
        spy.shutdown()
        for node in chain.nodes:
            client.executor.remove_node(node)
        chain.destroy()
        client.close()


@pytest.fixture
def composed(tmp_path):
    with _running_chain(tmp_path) as (client, chain, spy, domain):
        received: list[tuple[float, np.ndarray]] = []
        core = chain.bridge._core  # noqa: SLF001 - what the bridge stores is what it sends
        set_command = core.set_command

        def spy_set_command(q, v, tau, now):
            received.append((now, np.array(tau)))
            return set_command(q, v, tau, now)

        core.set_command = spy_set_command
        yield client, chain, spy, received, domain, tmp_path


def test_composed_equals_separate_chain_bit_for_bit(composed):
    client, chain, spy, received, domain, tmp_path = composed
    params = tmp_path / "stages.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "/**/gravity_compensation": {"ros__parameters": GRAVITY},
                "/**/friction_feedforward": {"ros__parameters": FRICTION},
            }
        )
    )
    ns = ["-r", f"__ns:={client.node.get_namespace()}/sep"]
    gravity_args = [*ns, "-r", "joint_command:=gravity/joint_command"]
    friction_args = [*ns, "-r", "joint_setpoint:=gravity/joint_command"]
    with (
        node_process("gravity_compensation_node", domain, str(params), gravity_args) as g,
        node_process("friction_feedforward_node", domain, str(params), friction_args) as f,
    ):
        sep_out = client.subscribe(JointState, "sep/joint_command")
        sep_grav = client.subscribe(JointState, "sep/gravity/joint_command")
        out = client.subscribe(JointState, "joint_command")
        grav = client.subscribe(JointState, "gravity/joint_command")
        terms = client.subscribe(JointState, "friction_feedforward/effort")
        pubs = [
            client.publisher(JointState, "sep/joint_setpoint"),
            client.publisher(JointState, "joint_setpoint"),
        ]
        for pub in pubs:
            client.wait_for_subscriber(pub, timeout=20.0, proc=g)
        t = 50.0
        rng = np.random.default_rng(18)
        probe = _setpoint([0.1] * 3, [0.0] * 3, [0.0] * 3, t)
        assert client.spin_until(lambda: (pubs[0].publish(probe) or True) and len(sep_out) > 0, 20.0, f)
        client.spin_for(0.3)
        for box in (sep_out, sep_grav, out, grav, terms, received):
            box.clear()
        compared = 0

        def by_stamp(box, stamp):
            return [m for m in box if (m.header.stamp.sec, m.header.stamp.nanosec) == stamp]

        def one(msg):
            nonlocal compared
            stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
            n = len(received)
            for pub in pubs:
                pub.publish(msg)
            assert client.spin_until(
                lambda: all(by_stamp(b, stamp) for b in (sep_out, out, sep_grav, grav)) and len(received) > n,
                10.0,
                f,
            ), "a chain published nothing"
            client.spin_for(0.02)  # a republication with the same stamp would land here
            (sep,), (comp,) = by_stamp(sep_out, stamp), by_stamp(out, stamp)
            assert _bits(sep.effort) == _bits(comp.effort) == _bits(received[-1][1])
            assert _bits(by_stamp(sep_grav, stamp)[-1].effort) == _bits(by_stamp(grav, stamp)[-1].effort)
            compared += 1

        def some(count):
            nonlocal t
            for _ in range(count):
                t += 0.002
                one(
                    _setpoint(
                        rng.uniform(-0.8, 0.8, 3), rng.uniform(-0.5, 0.5, 3), rng.uniform(-0.3, 0.3, 3), t
                    )
                )

        some(8)
        assert terms, "the friction term is still published on ~/effort"
        # ros2 param set on the stage nodes' names, both chains
        for node in ("sep/gravity_compensation", "gravity_compensation"):
            assert all(r.successful for r in client.set_parameters(node, scale=0.5))
        for node in ("sep/friction_feedforward", "friction_feedforward"):
            assert all(r.successful for r in client.set_parameters(node, enable=False))
        client.spin_for(0.3)  # republications land
        some(6)
        assert compared == 14
        last = (out[-1].header.stamp.sec, out[-1].header.stamp.nanosec)
        assert np.array_equal(
            np.array(out[-1].effort), np.array(by_stamp(grav, last)[-1].effort)
        )  # friction off
        # the bridge sent those efforts on the bus (frames to motor 1)
        frames = []
        while (m := spy.recv(timeout=0.0)) is not None:
            frames.append(m)
        assert any(m.arbitration_id == 1 for m in frames)


def _frames(spy, can_id):
    out = []
    while (m := spy.recv(timeout=0.0)) is not None:
        if m.arbitration_id == can_id:
            out.append(unpack_command_codes(bytes(m.data)))
    return out


def _stream(client, pub, seconds, period=0.004, t0=10.0, q=0.1):
    """Publish setpoints for ``seconds`` of wall time, then let the queue drain."""
    end, k = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        pub.publish(_setpoint([q] * 3, [0.0] * 3, [0.0] * 3, t0 + k * period))
        client.spin_for(period)
        k += 1
    client.spin_for(0.1)


def test_a_raising_stage_never_stops_the_bridge(composed):
    client, chain, spy, received, domain, tmp_path = composed
    diags = client.subscribe(DiagnosticArray, "/diagnostics", nodes=["mit_bridge"])
    chain_name = f"{chain.bridge.get_fully_qualified_name()}: chain"
    pub = client.publisher(JointState, "joint_setpoint")
    client.wait_for_subscriber(pub)
    _stream(client, pub, 0.3)
    assert received, "the chain delivered nothing"
    n_ok = len(received)
    _frames(spy, 2)
    stage = chain.friction.stage
    original = stage.update

    def raising(*args, **kwargs):
        raise RuntimeError("injected")

    stage.update = raising
    try:
        start = time.monotonic()
        _stream(client, pub, 0.3)  # < command_timeout: the last command goes on
        before = _frames(spy, 2)
        assert time.monotonic() - start < TIMEOUT
        assert len(received) == n_ok, "no command reached the bridge while the stage raised"
        errors = chain.errors
        assert errors > 0 and "RuntimeError: injected" in chain.last_error
        assert before and all(c.kp > 0 for c in before), "the last command kept going out"
        _stream(client, pub, TIMEOUT)  # past command_timeout: the timeout behaviour (damp, kp 0)
        after = _frames(spy, 2)
        assert after and after[-1].kp == 0
        # the bridge kept feeding the motor (500 Hz nominal; a loaded machine gets less)
        assert len(after) >= 0.1 * TIMEOUT * 500
        client.spin_for(0.15)
        chain_status = [s for a in diags for s in a.status if s.name == chain_name]
        assert chain_status and chain_status[-1].level == DiagnosticStatus.ERROR
        assert "injected" in chain_status[-1].message
    finally:
        stage.update = original
    _stream(client, pub, 0.2)
    assert len(received) > n_ok and chain.errors >= errors
    client.spin_for(0.15)
    chain_status = [s for a in diags for s in a.status if s.name == chain_name]
    assert chain_status[-1].level == DiagnosticStatus.OK
    assert _frames(spy, 2)[-1].kp > 0  # commanded again


def test_bad_input_is_dropped_by_the_stages_own_checks(composed):
    """A NaN setpoint or a missing joint: dropped by the stage as in the separate node (no
    chain error, nothing reaches the bridge), the next good one goes through."""
    client, chain, spy, received, *_ = composed
    pub = client.publisher(JointState, "joint_setpoint")
    client.wait_for_subscriber(pub)
    _stream(client, pub, 0.1)
    n = len(received)
    bad = _setpoint([float("nan"), 0.1, 0.1], [0.0] * 3, [0.0] * 3, 20.0)
    short = _setpoint([0.1, 0.1], [0.0] * 2, [0.0] * 2, 20.002)
    short.name = JOINTS[:2]
    for msg in (bad, short):
        pub.publish(msg)
        client.spin_for(0.05)
    assert len(received) == n and chain.errors == 0
    _stream(client, pub, 0.05, t0=21.0)
    assert len(received) > n


def test_spin_chain_goes_on_after_a_callback_raises_out_of_the_executor(tmp_path):
    """A callback that raises out of spin_chain's executor (3 times here) is counted, the
    bridge's own timer keeps running, and the spin ends on ``stop()``."""
    from gravity_friction_comp.nodes.composed_chain import ComposedChain, spin_chain

    sim = tmp_path / "sim.yaml"
    sim.write_text(yaml.safe_dump({"simulation": {"version": 1, "physics_rate_hz": 1000.0}}))
    client = GraphClient(fresh_domain_id())
    chain = ComposedChain(
        context=client.context,
        gravity=_overrides(GRAVITY),
        friction=_overrides(FRICTION),
        bridge=_overrides(_bridge(str(sim))),
    )
    calls = []

    def raising() -> None:
        calls.append(time.monotonic())
        if len(calls) <= 3:
            raise RuntimeError(f"injected {len(calls)}")

    chain.bridge.create_timer(0.05, raising)
    ticks = chain.bridge.send_schedule.ticks
    stopped: list[float] = []

    def stop() -> bool:
        # counts, not a wall-clock window (a loaded machine gave 83 ticks in 1 s): 8 of the
        # raising timer's calls and 100 of the 500 Hz bridge timer's ticks, 30 s at most
        counted = len(calls) >= 8 and chain.bridge.send_schedule.ticks - ticks >= 100
        if not stopped and (counted or time.monotonic() - start > 30.0):
            stopped.append(time.monotonic())
        return bool(stopped)

    try:
        start = time.monotonic()
        spin_chain(chain, stop=stop)
        ended = time.monotonic()
    finally:
        chain.destroy()
        client.close()
    assert ended - stopped[0] < 0.5  # stop() is checked at least every SPIN_WAKE
    assert chain.errors == 3 and chain.last_error == "callback: RuntimeError: injected 3"
    assert len(calls) >= 8  # the spin went on after each raise
    assert chain.bridge.send_schedule.ticks - ticks >= 100  # the bridge's timer too


@pytest.mark.parametrize("gear", [0.5, 2.0, 10.0])
def test_a_command_that_overflows_on_the_motor_side_is_refused_by_the_bridge_not_a_stage_error(
    tmp_path, gear
):
    """Issue 26 point 1 in the composed chain. The stages drop or clamp a ±1e308 setpoint
    field themselves (gravity: absurd position; friction: implausible velocity; effort
    clamped to effort_limit), so what reaches the bridge is its hand-off from the friction
    stage: a command there whose field overflows once mapped to the motor (position,
    velocity × r; effort / r) is refused by the bridge (counted, the previous command kept
    on the bus), not a chain error; the chain status stays OK."""
    import math

    gains = {"gear_ratio": [gear] * 3, "kp": [2.0] * 3, "kd": [0.05] * 3}
    with _running_chain(tmp_path, **gains) as (client, chain, spy, _):
        pub = client.publisher(JointState, "joint_setpoint")
        client.wait_for_subscriber(pub)
        # through the stages: each huge field is dropped or clamped before the bridge
        for k, field in enumerate(("position", "velocity", "effort")):
            values = {"position": [0.1] * 3, "velocity": [0.0] * 3, "effort": [0.0] * 3}
            values[field][1] = 1e308
            pub.publish(_setpoint(values["position"], values["velocity"], values["effort"], 30.0 + k))
            client.spin_for(0.05)
        assert chain.errors == 0, chain.last_error
        # the bridge's hand-off, as the friction stage calls it
        good = _setpoint([0.1] * 3, [0.0] * 3, [0.0] * 3, 40.0)
        chain.friction.hand_off(good)
        rejected0, expected = chain.bridge._rejected, 0  # noqa: SLF001 - what the bridge counted
        for field in ("position", "velocity", "effort"):
            for value in (1e308, -1e308):
                values = {"position": [0.1] * 3, "velocity": [0.0] * 3, "effort": [0.0] * 3}
                values[field][1] = value
                motor = value * gear if field != "effort" else value / gear  # θ = r·q, θ̇ = r·q̇, τ_θ = τ/r
                expected += math.isinf(motor)
                chain.friction.hand_off(
                    _setpoint(values["position"], values["velocity"], values["effort"], 41.0)
                )
                assert chain.bridge._rejected - rejected0 == expected, (field, value)  # noqa: SLF001
                if math.isinf(motor):  # refused: the good command goes out again
                    _frames(spy, 2)
                    sent: list = []
                    assert client.spin_until(lambda: sent.extend(_frames(spy, 2)) or len(sent) >= 3, 5.0)
                    assert {c.p for c in sent} == {_frames_code(gear)}
                chain.friction.hand_off(good)
        assert expected == (2 if gear < 1 else 4)  # effort at 0.5; position and velocity at 2, 10
        assert chain.errors == 0, chain.last_error
        assert chain.status().level == DiagnosticStatus.OK


def _frames_code(gear: float) -> int:
    """Position code of 0.1 rad at the joint on a DM4340 (P_MAX 12.5 rad, 16 bits): θ = r·0.1."""
    return round((gear * 0.1 + 12.5) / 25.0 * 65535)
