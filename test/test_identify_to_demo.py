"""Issue 7's full loop through the demo: record → identify → run.

1. Record: an excitation profile (excitation.py sweeps, every bridge joint) played through
   the MIT bridge core into the demo's simulated palletizer (config/sim_palletizer.yaml, the
   "true" friction), faster than real time: :func:`excitation.record_simulated` (the bridge's
   MIT feedback quantization, the compensator's URDF gravity as feedforward).
2. Identify: :func:`identification.identify` with the compensator's URDF model (it does not
   know the sim's mass scale or armature), :func:`identification.write_outputs` →
   ``friction_identified.yaml``.
3. Run the demo (its real code path: :func:`demo.build_setup` from demo options,
   :func:`demo.run_phase` composing the real nodes with the config files, the simulated arm
   behind the bridge, :func:`demo.evaluate`) three times on slow, small sines of the
   proximal joints, gravity compensation on in all three: friction stage off; friction
   from a YAML holding the sim's TRUE values (written here from the sim YAML); friction
   from the identified YAML (``--friction-config``).

Acceptance (issue 7): the identified YAML recovers ≥ 90 % of the improvement of the true
values, on the proximal joints' aggregate RMS error (sqrt of the sum of squares of the
per-joint RMS, as the demo's own acceptance): ``(off − identified) ≥ 0.9·(off − true)``.
The truth is the simulator's configuration, independent of the fit; the tracking errors are
measured by the demo. Runs the chain in real time (~10 s per run).
"""

from __future__ import annotations

import dataclasses
import gc
import math

import numpy as np
import pytest
import yaml

pytest.importorskip("rclpy")
pytestmark = pytest.mark.slow  # runs the demo chain in real time (fast tier: -m "not slow")


from conftest import REPO_ROOT  # noqa: E402
from graph_helpers import fresh_domain_id  # noqa: E402

from gravity_friction_comp.friction.models import FrictionModel  # noqa: E402
from gravity_friction_comp.ident.excitation import (
    ExcitationConfig,
    JointLimits,  # noqa: E402
    excitation_profile,
    record_simulated,
)
from gravity_friction_comp.ident.identify import identify  # noqa: E402
from gravity_friction_comp.ident.report import write_outputs  # noqa: E402
from gravity_friction_comp.mit.bridge_params import bridge_config_from_values  # noqa: E402
from gravity_friction_comp.model.robot_model import RobotModel  # noqa: E402
from gravity_friction_comp.sim.arm import SimulatedArm  # noqa: E402
from gravity_friction_comp.sim.config import SimConfig  # noqa: E402
from gravity_friction_comp.tools import demo  # noqa: E402

SIM_YAML = REPO_ROOT / "config" / "sim_palletizer.yaml"
# slow, small leader motions where friction matters: 0.15 rad sines of the proximal joints
# (period 8 s, peak 0.12 rad/s), the distal joint held
DEMO_OPTIONS = [
    "--profile",
    "sine",
    "--amplitude",
    "0.15",
    "--distal-amplitude",
    "0",
    "--period",
    "8",
    "--cycles",
    "1",
    "--start-delay",
    "1.0",
]
MIN_RECOVERY = 0.9
# A run whose joint_command stream pauses longer than this is starved of CPU by other
# processes (data quality, judged before any error is computed) and is run again.
MAX_COMMAND_GAP = 0.15  # [s] (~38 setpoint periods; stalls of 0.25 s and more were seen to skew the RMS)
MAX_ATTEMPTS = 3
REPEATS = 3  # runs per configuration, interleaved


def true_friction_yaml(sim: SimConfig, joints, path) -> str:
    """The sim's friction in the friction_comp schema: breakaway = Coulomb level, the
    Stribeck level above it, v_s, exponent, viscous (eps: the model default)."""
    p = [sim.joint(j) for j in joints]
    block = {
        "enabled": True,
        "model": "coulomb",
        "breakaway": [x.coulomb for x in p],
        "stribeck_breakaway": [x.stribeck_breakaway for x in p],
        "stribeck_velocity": [x.stribeck_velocity for x in p],
        "stribeck_exponent": [x.stribeck_exponent for x in p],
        "viscous": [x.viscous for x in p],
    }
    path.write_text(yaml.safe_dump({"joints": list(joints), "friction_comp": block}))
    return str(path)


def command_gap(setup, rec) -> float:
    """Longest pause in the joint_command stream over the evaluated part of the run [s]
    (250 Hz nominal): a chain starved of CPU by other processes tracks stair steps,
    whatever the friction model."""
    t = np.asarray(rec.arrival_t)
    if t.size < 2 or not rec.setpoint_t:
        return math.inf
    t = t[t >= rec.setpoint_t[0] + setup.start_delay]
    return float(np.max(np.diff(t))) if t.size > 1 else math.inf


def proximal_rms(setup, metrics) -> float:
    return math.sqrt(sum(metrics[j].rms ** 2 for j in setup.proximal))


@pytest.fixture(scope="module")
def identified(tmp_path_factory):
    """Record the excitation on the simulated palletizer and identify; returns the output."""
    out = tmp_path_factory.mktemp("identified")
    model = RobotModel.from_urdf(str(REPO_ROOT / "urdf" / "palletizer.urdf"))
    sim = SimConfig.from_yaml(SIM_YAML)
    arm = SimulatedArm(model, sim)
    _, bridge_values = demo.load_node_parameters(REPO_ROOT / "config" / "mit_bridge.yaml")
    bridge = bridge_config_from_values(bridge_values)
    joints = tuple(m.name for m in bridge.motors)
    ex = ExcitationConfig(
        joints=joints,
        speeds=(0.03, 0.06, 0.12, 0.3, 0.8),
        amplitude=0.5,
        max_sweep_duration=1.0,
        chirp=False,
        hold_time=0.1,
        rate_hz=500.0,
        acceleration=3.0,
    )
    profile = excitation_profile(JointLimits.from_model(model), arm.position, ex)
    log = record_simulated(
        profile,
        arm,
        bridge,
        feedforward=lambda q, v: model.gravity(q),
        channel=f"identify_to_demo/{fresh_domain_id()}",
    )
    result = identify(log, model, joints)
    paths = write_outputs(result, out, plots=False, all_joints=list(model.joint_names))
    for jf in result.fits:
        print(jf.joint, jf.selected, {k: round(x, 4) for k, x in jf.best.params.items()})
    return model, sim, paths["yaml"]


def test_identified_yaml_recovers_demo_tracking_improvement(identified, tmp_path):
    model, sim, identified_yaml = identified
    # the identified YAML is what the friction node loads as is; sanity against the truth
    # (independent: the simulator's sliding friction) before spending time on the demo
    names = list(model.joint_names)
    fm = FrictionModel.from_yaml(identified_yaml, names)
    v = np.array([0.2, -0.2, 0.2])
    truth = np.sign(v) * SimulatedArm(model, sim).friction_budget(v)
    # odd part: the fitted offset also absorbs the gravity model's error (sim mass × 1.05)
    odd = 0.5 * (fm.torque(v) - fm.torque(-v))
    assert odd == pytest.approx(truth, abs=0.02)

    true_yaml = true_friction_yaml(sim, names, tmp_path / "friction_true.yaml")
    args = demo.parse_args(DEMO_OPTIONS + ["--output", str(tmp_path)])
    setup = demo.build_setup(args, tmp_path)
    assert setup.proximal == ("base_yaw", "shoulder_pitch") and setup.profile == "sine"
    domain = fresh_domain_id()
    configs = (("off", "", False), ("true", true_yaml, True), ("identified", identified_yaml, True))
    # Real-time runs on 2 cores scatter (stick-slip is timing-sensitive): the three
    # configurations are run in turn REPEATS times and compared by their median error.
    errors = {label: [] for label, _, _ in configs}
    runs = {}
    for _ in range(REPEATS):
        for label, friction_yaml, friction_on in configs:
            s = dataclasses.replace(setup, friction_config=friction_yaml)
            for _attempt in range(MAX_ATTEMPTS):
                # the previous runs' data stay in this process: collect them now, not as a
                # garbage-collector pause in the middle of the real-time run
                gc.collect()
                gc.freeze()
                rec = demo.run_phase(s, True, domain, gravity=True, friction=friction_on)
                gc.unfreeze()
                gap = command_gap(s, rec)
                print(f"  {label}: longest joint_command pause {1e3 * gap:.0f} ms")
                if gap <= MAX_COMMAND_GAP:
                    break
            else:
                pytest.skip(
                    f"{label} run starved of CPU {MAX_ATTEMPTS} times (joint_command "
                    f"pause {1e3 * gap:.0f} ms > {1e3 * MAX_COMMAND_GAP:.0f} ms): "
                    "machine overloaded"
                )
            runs[label] = demo.evaluate(s, rec)
            errors[label].append(proximal_rms(setup, runs[label]))
            if friction_on:  # the friction stage really ran and published its term
                assert len(rec.friction_t) > 100
    err = {k: float(np.median(v)) for k, v in errors.items()}
    print("\nsine tracking on the demo (gravity on), proximal aggregate RMS error [mrad] per run:")
    for label, values in errors.items():
        print(f"  {label:10s} " + " ".join(f"{x:6.2f}" for x in values) + f"   median {err[label]:6.2f}")
    print(f"last run per joint: {'joint':16s} {'off':>8s} {'true':>8s} {'ident.':>8s}")
    for j in setup.joints:
        print(f"{j:16s} " + " ".join(f"{runs[k][j].rms:8.2f}" for k in ("off", "true", "identified")))
    recovered = (err["off"] - err["identified"]) / (err["off"] - err["true"])
    print(
        f"proximal aggregate {list(setup.proximal)} (medians): off {err['off']:.2f}, true "
        f"{err['true']:.2f}, identified {err['identified']:.2f} mrad; identified recovers "
        f"{100 * recovered:.1f} % of the true-friction improvement"
    )
    # the friction feedforward matters on this profile, else the ratio means nothing
    assert err["off"] - err["true"] > 0.3 * err["off"], err
    assert err["off"] - err["identified"] >= MIN_RECOVERY * (err["off"] - err["true"]), err
