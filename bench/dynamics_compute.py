"""Inverse dynamics and mass matrix with the actuator model against bare Pinocchio.

For each model, times (median over repeats, the calls timed in turns) on the same configuration:

* baselines on the full (unreduced) Pinocchio model of the same file, no checks:
  ``pin.rnea(model, data, q, v, a)`` and ``pin.crba(model, data, q)``;
* :meth:`RobotModel.inverse_dynamics` with an actuator model (reflected rotor inertia,
  viscous and Coulomb friction on every joint, mimic joints folded), with and without
  friction, and without any actuator model;
* :meth:`RobotModel.mass_matrix` with and without the actuator model;
* one :meth:`InverseDynamicsFeedforward.update` (input checks, acceleration filter,
  inverse dynamics without friction): what the gravity node's ``inverse_dynamics`` mode does
  per setpoint apart from name mapping;
* one :meth:`GravityStage.update <gravity_friction_comp.stage.gravity.GravityStage.update>`
  in ``inverse_dynamics`` mode: the gravity node's whole numeric path per setpoint (parsing,
  name mapping, the filter, one RNEA, add and clamp).

and prints each time and its ratio to the matching bare call measured in the same run.

Run: ``.venv/bin/python bench/dynamics_compute.py [--repeat 15] [--number 3000]``
"""

from __future__ import annotations

import argparse
import array
import itertools
import pathlib
import statistics
import sys
import timeit
import warnings

import numpy as np
import pinocchio as pin

# Run from a source checkout without installing the package.
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gravity_friction_comp.model.actuator import ActuatorModel  # noqa: E402
from gravity_friction_comp.model.robot_model import RobotModel  # noqa: E402
from gravity_friction_comp.stage.gravity import GravityConfig, GravityStage  # noqa: E402
from gravity_friction_comp.stage.inverse_dynamics import InverseDynamicsFeedforward  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "urdf"
MODELS = {
    "palletizer (3 DoF, 2 mimic)": ROOT / "urdf" / "palletizer.urdf",
    "OpenArm single (7 DoF)": SHARED / "openarm" / "openarm_v10_single_nohand.urdf",
    "xArm7 + gripper (8 DoF, 5 mimic)": SHARED / "xarm" / "xarm7_gripper.urdf",
    "OpenArm bimanual (16 DoF, 2 mimic)": SHARED / "openarm" / "openarm_v10_bimanual_hand.urdf",
}


def interleaved_median_us(fns: dict, repeat: int, number: int) -> dict[str, float]:
    """Median time of one call [µs] per function, the functions timed in turns each round.

    Interleaving keeps a load change on the (shared) machine from favouring one function,
    so the ratios hold better than the absolute times.
    """
    samples = {k: [] for k in fns}
    for _ in range(repeat):
        for key, fn in fns.items():
            samples[key].append(timeit.timeit(fn, number=number))
    return {k: statistics.median(v) / number * 1e6 for k, v in samples.items()}


def bench_model(label: str, path: pathlib.Path, repeat: int, number: int) -> dict[str, float]:
    bare = RobotModel.from_urdf(path)
    rng = np.random.default_rng(0)
    nf = len(bare.full_joint_names)
    act = ActuatorModel(
        bare.full_joint_names,
        rotor_inertia=rng.uniform(1e-5, 1e-4, nf),
        gear_ratio=rng.uniform(6.0, 50.0, nf),
        viscous=0.05,
        coulomb=0.2,
    )
    model = bare.with_actuators(act)
    q, v, a = (rng.uniform(-0.5, 0.5, model.n) for _ in range(3))

    full = pin.buildModelFromUrdf(str(path))  # same file, every joint, no mimic reduction
    data = full.createData()
    g = model.coupling
    qf, vf, af = model.full_configuration(q), g @ v, g @ a
    # same numbers as the bare call, projected (sanity check, not timed)
    np.testing.assert_allclose(
        bare.inverse_dynamics(q, v, a), g.T @ pin.rnea(full, data, qf, vf, af), rtol=1e-12, atol=1e-12
    )

    ff = InverseDynamicsFeedforward(model.copy(), cutoff_hz=20.0)
    clock = (k * 1e-3 for k in itertools.count())  # 1 kHz setpoint stamps [s]
    ff.update(q, v, next(clock))
    stage = GravityStage(GravityConfig(model, mode="inverse_dynamics", effort_limit=1e9))
    names, qa, va = list(model.joint_names), array.array("d", q), array.array("d", v)
    stage.update(names, qa, va, (), next(clock))

    t = interleaved_median_us(
        {
            "rnea": lambda: pin.rnea(full, data, qf, vf, af),
            "crba": lambda: pin.crba(full, data, qf),
            "id": lambda: model.inverse_dynamics(q, v, a),
            "id_nf": lambda: model.inverse_dynamics(q, v, a, include_friction=False),
            "id_bare": lambda: bare.inverse_dynamics(q, v, a),
            "mm": lambda: model.mass_matrix(q),
            "mm_bare": lambda: bare.mass_matrix(q),
            "ff": lambda: ff.update(q, v, next(clock)),
            "stage": lambda: stage.update(names, qa, va, (), next(clock)),
        },
        repeat,
        number,
    )
    r, c = t["rnea"], t["crba"]
    print(f"{label}")
    print(f"  pin.rnea (full model)                 {r:7.2f} µs   1.00x")
    print(f"  inverse_dynamics, actuators+friction  {t['id']:7.2f} µs  {t['id'] / r:5.2f}x")
    print(f"  inverse_dynamics, actuators, no fric. {t['id_nf']:7.2f} µs  {t['id_nf'] / r:5.2f}x")
    print(f"  inverse_dynamics, no actuator model   {t['id_bare']:7.2f} µs  {t['id_bare'] / r:5.2f}x")
    print(f"  InverseDynamicsFeedforward.update     {t['ff']:7.2f} µs  {t['ff'] / r:5.2f}x")
    print(f"  GravityStage.update, inverse_dynamics {t['stage']:7.2f} µs  {t['stage'] / r:5.2f}x")
    print(f"  pin.crba (full model)                 {c:7.2f} µs   1.00x")
    print(f"  mass_matrix, actuators                {t['mm']:7.2f} µs  {t['mm'] / c:5.2f}x")
    print(f"  mass_matrix, no actuator model        {t['mm_bare']:7.2f} µs  {t['mm_bare'] / c:5.2f}x")
    return t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    print(
        f"pinocchio {pin.__version__}, numpy {np.__version__}; median of {args.repeat} x "
        f"{args.number} calls; ratios against the bare call on the full model"
    )
    for label, path in MODELS.items():
        if not path.is_file():
            print(f"{label}: skipped, {path} not found")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bench_model(label, path, args.repeat, args.number)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
