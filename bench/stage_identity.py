"""Bit-identity of the feedforward stages' outputs: this tree against a baseline tree.

For the same setpoints every output must be exactly equal (bytes of the float64 arrays,
``==`` not allclose) and every refused setpoint refused with the same error type, reason and
text. Covered, ROS-free (:class:`GravityStage`, :class:`FrictionStage`): the shipped arm
profiles (arms/*) and the palletizer xacro, gravity and ``inverse_dynamics`` modes, payload
held or not, scale 1 / 0 / 0.7 / per joint, ``enable`` false, low effort limits (clamping),
the friction models Coulomb, asymmetric, viscous, Stribeck, offset and BAM, velocity from
the setpoint, the measurement or differentiated, deadband, ``position_error`` drive and
dither; message names in model order, shuffled or with an extra joint, effort present or
not, velocity absent, and bad setpoints (NaN, a length mismatch, a missing joint, a huge
velocity, a huge position); each setpoint through ``update`` and, chained, the gravity
result handed to the friction stage as the composed chain does (``passed_on``), then
``repeat``. Node level: the composed chain (simulated bridge) with the palletizer
parameters and variants (scale, enable false, inverse dynamics, holding), every stage
publication captured as if heard (``joint_command``, ``~/effort`` of both stages) and the
friction stage's hand-off to the bridge.

Run: ``python bench/stage_identity.py [--baseline main] [--setpoints 3000]`` (exit 1 on a
difference; prints each case's count of compared outputs).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pathlib
import pickle
import subprocess
import sys
import tempfile
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _record(call):
    import numpy as np

    from gravity_friction_comp.errors import InputError

    try:
        r = call()
    except InputError as e:
        return ("err", type(e).__name__, str(e.reason), str(e))
    except (ValueError, TypeError) as e:
        return ("exc", type(e).__name__, str(e))
    if r is None:
        return ("none",)
    return ("ok", np.asarray(r.effort).tobytes(), np.asarray(r.term).tobytes(), tuple(r.clamped))


def _setpoints(rng, names, lower, upper, count):
    """(names, position, velocity, effort, t) tuples: valid ones mostly, some bad."""
    import array

    import numpy as np

    n = len(names)
    out = []
    t = 10.0
    for k in range(count):
        t += float(rng.choice([0.001, 0.001, 0.002, 0.0]))
        q = rng.uniform(lower, upper)
        v = rng.normal(0.0, 1.0, n) * rng.choice([0.0, 0.001, 0.01, 1.0])
        v[0] = 0.003 if k % 17 == 0 else v[0]
        e = rng.normal(0.0, 3.0, n) * rng.choice([0.0, 1.0, 30.0])
        order = list(range(n))
        kind = k % 10
        nm = list(names)
        if kind == 1:
            rng.shuffle(order)
        if kind == 2:  # an extra joint the stage does not model
            nm, q, v, e = nm + ["extra"], np.append(q, 0.3), np.append(v, 0.1), np.append(e, 1.0)
            order = list(range(n + 1))
        nm = [nm[i] for i in order]
        q, v, e = q[order], v[order], e[order]
        pos, vel, eff = array.array("d", q), array.array("d", v), array.array("d", e)
        if kind == 3:
            eff = array.array("d")
        if kind == 4:
            vel = array.array("d")
        if kind == 5 and k % 40 == 5:
            pos[0] = float("nan")
        if kind == 5 and k % 40 == 15:
            vel = array.array("d", list(vel)[:-1])
        if kind == 5 and k % 40 == 25:
            nm, pos = nm[:-1], pos[:-1]
            vel, eff = vel[: len(nm)], eff[: len(nm)]
        if kind == 5 and k % 40 == 35 and len(vel):
            vel[0] = 1e4
        if kind == 6 and k % 60 == 6:
            pos[0] = 1e200
        if kind == 7:
            pos, vel, eff = list(pos), list(vel), list(eff)  # lists, not array('d')
        out.append((nm, pos, vel, eff, t))
    return out


def stage_cases(setpoints: int) -> dict[str, list]:
    import numpy as np

    from gravity_friction_comp.friction.models import FrictionModel
    from gravity_friction_comp.model.payload import Payload
    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.profiles.arm_profiles import list_arms, load_arm
    from gravity_friction_comp.stage.contract import StageSettings
    from gravity_friction_comp.stage.friction import FrictionConfig, FrictionStage
    from gravity_friction_comp.stage.gravity import GravityConfig, GravityStage

    urdfs = {name: load_arm(name).urdf for name in list_arms()}
    urdfs["palletizer_xacro"] = ROOT / "urdf" / "palletizer.urdf.xacro"
    bam = ROOT / "arms" / "big_yam"
    results: dict[str, list] = {}
    for arm, urdf in sorted(urdfs.items()):
        model = RobotModel.from_urdf(str(urdf))
        names = model.joint_names
        n = model.n
        payload = model.with_payload(Payload.point(0.4, com=[0.0, 0.0, 0.05], parent=names[-1]))
        low = np.maximum(model.position_lower, -3.0)
        high = np.minimum(model.position_upper, 3.0)
        rng = np.random.default_rng(zlib.crc32(arm.encode()))
        sps = _setpoints(rng, names, low, high, setpoints)
        per_joint = np.linspace(0.5, 1.2, n)
        gravity_variants = {
            "gravity": (GravityConfig(model), StageSettings(), False),
            "payload_held": (GravityConfig(model, payload), StageSettings(scale=0.7), True),
            "per_joint_scale": (
                GravityConfig(model, effort_limit=0.5),
                StageSettings(scale=per_joint),
                False,
            ),
            "scale0": (GravityConfig(model), StageSettings(scale=0.0), False),
            "disabled": (GravityConfig(model), StageSettings(enabled=False), False),
            "inverse_dynamics": (
                GravityConfig(model, payload, mode="inverse_dynamics", effort_limit=2.0),
                StageSettings(),
                True,
            ),
        }
        bp = np.linspace(0.05, 0.3, n)
        friction_variants = {
            "coulomb": (dict(breakaway=bp, eps=0.01), {}),
            "asym_viscous_deadband": (
                dict(breakaway_positive=bp, breakaway_negative=bp * 0.5, viscous=0.03, eps_setpoint=0.004),
                dict(velocity_deadband=0.003, effort_limit=1.5),
            ),
            "stribeck_offset": (
                dict(breakaway=bp, stribeck_breakaway=0.1, stribeck_velocity=0.05, offset=0.02),
                dict(velocity_source="differentiated"),
            ),
            "measured_dither": (
                dict(breakaway=bp, viscous=0.01),
                dict(velocity_source="measured", velocity_deadband=0.01, dither=0.3),
            ),
            "position_error": (dict(breakaway=bp), dict(drive="position_error", eps_position=0.02)),
            "bam": (
                dict(
                    model="bam",
                    bam_files=[str(bam / "erob80_100_m4.json")]
                    + [""] * (n - 2)
                    + [str(bam / "erob80_100_m6.json")],
                    breakaway=[0.0] + [0.1] * (n - 2) + [0.0],
                ),
                {},
            ),
            "disabled": (dict(breakaway=bp, enabled=False), {}),
        }
        for gname, (gconfig, gsettings, holding) in gravity_variants.items():
            g = GravityStage(gconfig, gsettings, holding)
            fname = list(friction_variants)[len(results) % len(friction_variants)]
            fkw, ckw = friction_variants[fname]
            f = FrictionStage(
                FrictionConfig(FrictionModel(names, **fkw), **ckw), StageSettings(scale=per_joint)
            )
            out: list = []
            for k, (nm, pos, vel, eff, t) in enumerate(sps):
                if k % 7 == 0:
                    out.append(_record(lambda: (f.update_measured(nm, vel, pos, t), None)[1]))
                held: list = []
                rec = _record(lambda: held.append(g.update(nm, pos, vel, eff, t)) or held[0])
                out.append(rec)
                if rec[0] == "ok":
                    eff_out = held[0].effort
                    parsed = held[0].setpoint.passed_on(eff_out, f.joint_names)
                    out.append(_record(lambda: f.update(nm, pos, vel, eff_out, t, parsed=parsed)))
                else:
                    out.append(_record(lambda: f.update(nm, pos, vel, eff, t)))
                if k % 11 == 0:
                    out.append(_record(g.repeat))
                    out.append(_record(f.repeat))
                    out.append(("problem", f.measurement_problem, g.velocity_clamped))
            results[f"{arm}/{gname}+{fname}"] = out
        # every friction variant on its own, plain update
        for fname, (fkw, ckw) in friction_variants.items():
            for settings in (StageSettings(), StageSettings(scale=0.5), StageSettings(scale=per_joint)):
                try:
                    f = FrictionStage(FrictionConfig(FrictionModel(names, **fkw), **ckw), settings)
                except Exception as e:  # noqa: BLE001 - e.g. dither with a scale: recorded
                    results[f"{arm}/friction_{fname}/{settings.scale!r}"] = [
                        ("config", type(e).__name__, str(e))
                    ]
                    continue
                out = []
                for k, (nm, pos, vel, eff, t) in enumerate(sps):
                    if k % 3 == 0:
                        out.append(_record(lambda: (f.update_measured(nm, vel, pos, t - 0.0005), None)[1]))
                    out.append(_record(lambda: f.update(nm, pos, vel, eff, t)))
                results[f"{arm}/friction_{fname}/{np.asarray(settings.scale).tolist()}"] = out
    return results


def node_cases(setpoints: int) -> dict[str, list]:
    import array

    import numpy as np
    import rclpy
    from sensor_msgs.msg import JointState

    sys.path.insert(0, str(ROOT / "bench"))
    from end_to_end_latency import JOINTS, chain_parameters
    from stage_chain_cpu import composed_chain

    from gravity_friction_comp.nodes.listener_count import ListenerCount
    from gravity_friction_comp.nodes.stage_node import HandOff

    ListenerCount.heard = lambda self: True  # every publication built and captured
    variants = {
        "palletizer": ({}, {}),
        "scale_per_joint": ({"scale": [0.5, 1.1, 0.9]}, {"scale": 0.8}),
        "gravity_disabled": ({"enable": False}, {}),
        "friction_disabled": ({}, {"enable": False}),
        "inverse_dynamics_held": ({"mode": "inverse_dynamics", "payload.attached": True}, {}),
        "measured_velocity": ({}, {"velocity_source": "measured", "effort_limit": [0.5, 0.5, 0.5]}),
    }
    results: dict[str, list] = {}
    for name, (gravity_over, friction_over) in variants.items():
        params = chain_parameters(1000.0)
        params["gravity_compensation"] |= gravity_over
        params["friction_feedforward"] |= friction_over
        ctx, chain = composed_chain(params)
        out: list = []

        def capture(label):
            def publish(msg):
                out.append((label, list(msg.name), bytes(memoryview(array.array("d", msg.effort)))))

            return publish

        for node, tag in ((chain.gravity, "g"), (chain.friction, "f")):
            node._command_pub.publish = capture(tag + "/joint_command")  # noqa: SLF001
            node._effort_pub.publish = capture(tag + "/effort")  # noqa: SLF001

        def sink(o):
            sp = o.setpoint_for(tuple(JOINTS))
            out.append(
                (
                    "bridge",
                    np.asarray(o.effort).tobytes(),
                    sp.model_position().tobytes(),
                    None if sp.model_velocity() is None else sp.model_velocity().tobytes(),
                    sp.model_effort().tobytes(),
                )
            )

        chain.friction.hand_off = HandOff(
            lambda m: out.append(("msg", bytes(array.array("d", m.effort)))), sink
        )
        rng = np.random.default_rng(7)
        for k in range(setpoints):
            msg = JointState()
            msg.name = list(JOINTS) if k % 5 else [JOINTS[2], "extra", JOINTS[0], JOINTS[1]]
            m = len(msg.name)
            msg.position = rng.uniform(-1.5, 1.5, m).tolist()
            msg.velocity = (rng.normal(0, 1, m) * rng.choice([0.0, 0.002, 1.0])).tolist() if k % 7 else []
            msg.effort = rng.normal(0, 2, m).tolist() if k % 3 else []
            if k % 97 == 0:
                msg.position[0] = float("nan")
            msg.header.stamp.sec, msg.header.stamp.nanosec = 100 + k // 1000, (k % 1000) * 1_000_000
            if k % 13 == 0:
                js = JointState()
                js.name, js.position, js.velocity = (
                    list(JOINTS),
                    [0.1, 0.2, 0.3],
                    rng.normal(0, 1, 3).tolist(),
                )
                js.header.stamp = msg.header.stamp
                chain.friction.on_joint_states(js)
            chain._on_setpoint(msg)  # noqa: SLF001
            if k % 101 == 0:
                chain.gravity.republish()
                chain.friction.republish()
        out.append(("errors", chain.errors, chain.last_error))
        results[f"node/{name}"] = out
        chain.destroy()
        rclpy.try_shutdown(context=ctx)
    return results


def child(setpoints: int, dump: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))
    results = stage_cases(setpoints)
    results |= node_cases(max(setpoints // 3, 300))
    pathlib.Path(dump).write_bytes(pickle.dumps(results))


def run(tree: pathlib.Path, setpoints: int) -> dict[str, list]:
    script = tree / "bench" / "_stage_identity.py"  # the tree is a temporary copy
    script.write_text(pathlib.Path(__file__).read_text())
    helper = tree / "bench" / "stage_chain_cpu.py"
    if not helper.exists():  # a baseline from before it
        helper.write_text((ROOT / "bench" / "stage_chain_cpu.py").read_text())
    dump = tempfile.mktemp(suffix=".pickle")
    subprocess.run(
        [sys.executable, str(script), "--child", dump, "--setpoints", str(setpoints)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    script.unlink()
    return pickle.loads(pathlib.Path(dump).read_bytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git revision or directory of the baseline tree")
    parser.add_argument("--setpoints", type=int, default=3000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.setpoints, args.child)
        return
    sys.path.insert(0, str(ROOT / "bench"))
    from stage_chain_cpu import baseline_tree

    old, new = run(baseline_tree(args.baseline), args.setpoints), run(ROOT, args.setpoints)
    bad = 0
    for case in sorted(set(old) | set(new)):
        a, b = old.get(case), new.get(case)
        same = a == b
        bad += not same
        kinds = {}
        for rec in b or []:
            kinds[rec[0]] = kinds.get(rec[0], 0) + 1
        digest = hashlib.sha256(pickle.dumps(b)).hexdigest()[:10]
        print(f"{'same' if same else 'DIFFERENT'} {case:60s} {digest} {kinds}")
    print(f"{len(set(old) | set(new))} cases, {bad} different")
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
