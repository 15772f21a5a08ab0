"""Per-setpoint gravity compute time of the node's path against a bare Pinocchio call.

For each model, times (median over timeit repeats):

* ``bare``: ``pin.computeGeneralizedGravity(model, data, q)`` on the model Pinocchio's URDF
  parser builds from the same file (no mimic reduction, no checks) — the baseline;
* ``gravity()``: :meth:`RobotModel.gravity` alone (input checks, mimic reduction);
* ``minimal path``: name mapping through a precomputed index array (JointState names in a
  shuffled order, with one extra non-model joint), the gravity kernel, clamp to the URDF
  effort limits, scatter back into message order -- no validation, nothing else: the floor
  of the issue's "name mapping + gravity + clamp" in numpy;
* ``kernel``: :meth:`RobotModel.gravity_kernel` alone -- the unchecked Pinocchio call on the
  model the node evaluates (Pinocchio's mimic model with the payload where it exists);
* ``node path``: exactly what the node runs per setpoint: ``parse_setpoint`` (length,
  duplicate-name and finiteness checks, cached name mapping), ``RobotModel.gravity`` (which
  also drops absurd magnitudes), ``apply_stage`` (add, finiteness; the clamp is skipped when
  ``RobotModel.gravity_bound`` proves it a no-op, as the node does).

and prints each time and its ratio to ``bare``. Goal (issue 2): node path <= 3x bare (see
bench/RESULTS.md for where it stands).

Run: ``.venv/bin/python bench/gravity_compute.py [--repeat 15] [--number 5000]``
"""

from __future__ import annotations

import argparse
import array
import pathlib
import random
import statistics
import sys
import timeit
import warnings

import numpy as np
import pinocchio as pin

# Run from a source checkout without installing the package.
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gravity_friction_comp.payload import Payload  # noqa: E402
from gravity_friction_comp.robot_model import RobotModel  # noqa: E402

from gravity_friction_comp.stage import (JointMap, apply_stage, clamp_free_scale,  # noqa: E402
                                         parse_setpoint)

SHARED = ROOT.parent / "shared" / "data" / "urdf"
MODELS = {
    "palletizer (3 DoF, 2 mimic)": (ROOT / "urdf" / "palletizer.urdf", "tool"),
    "xArm7 + gripper (8 DoF, 5 mimic)": (SHARED / "xarm" / "xarm7_gripper.urdf", None),
    "OpenArm bimanual (16 DoF, 2 mimic)": (SHARED / "openarm" / "openarm_v10_bimanual_hand.urdf", None),
}


def median_us(fn, repeat: int, number: int) -> float:
    """Median time of one call [µs]."""
    return statistics.median(timeit.repeat(fn, repeat=repeat, number=number)) / number * 1e6


def bench_model(label: str, path: pathlib.Path, payload_parent: str | None, repeat: int, number: int):
    model = RobotModel.from_urdf(path)
    if payload_parent is not None:  # the default config: a 0.13 kg can 7 cm below the tool
        model = model.with_payload(
            Payload.cylinder(0.13, 0.033, 0.12, com=(0.0, 0.0, -0.07), parent=payload_parent)
        )
    rng = np.random.default_rng(0)
    q_model = rng.uniform(-0.5, 0.5, model.n)

    # JointState-like message: model joints shuffled plus one joint the model lacks
    names = list(model.joint_names) + ["conveyor_belt"]
    random.Random(0).shuffle(names)
    by_name = dict(zip(model.joint_names, q_model))
    position = array.array("d", [by_name.get(n, 0.0) for n in names])  # rclpy stores array('d')
    index = JointMap.for_names(names, model.joint_names).index
    limit = np.array(model.effort_limits)
    neg_limit = -limit
    n_msg = len(names)
    velocity = array.array("d", [0.0] * n_msg)
    no_effort = array.array("d")

    kernel = model.gravity_kernel()

    def minimal_path():
        """Mapping + gravity + clamp + scatter with nothing else (a lower bound)."""
        q = np.frombuffer(position)[index]
        g = kernel(q)
        np.minimum(np.maximum(g, neg_limit, out=g), limit, out=g)
        effort = np.zeros(n_msg)
        effort[index] = g
        return effort

    model_names = model.joint_names
    within = clamp_free_scale(model.gravity_bound, limit) >= 1.0  # the node's set-up rule

    def node_path():
        """Exactly what the node runs per setpoint: validate + map, gravity, add + clamp."""
        setpoint = parse_setpoint(names, position, velocity, no_effort, model_names)
        term = model.gravity(setpoint.model_position())
        return apply_stage(setpoint, term, 1.0, limit, within_limits=within).effort

    expected = np.zeros(n_msg)
    expected[index] = np.clip(model.gravity(q_model), neg_limit, limit)
    np.testing.assert_array_equal(node_path(), expected)
    np.testing.assert_array_equal(minimal_path(), expected)

    bare_model = pin.buildModelFromUrdf(str(path))
    bare_data = bare_model.createData()
    q_bare = pin.neutral(bare_model)
    q_bare[:] = rng.uniform(-0.5, 0.5, bare_model.nq) if bare_model.nq == bare_model.nv else q_bare

    t_bare = median_us(lambda: pin.computeGeneralizedGravity(bare_model, bare_data, q_bare), repeat, number)
    t_grav = median_us(lambda: model.gravity(q_model), repeat, number)
    t_kernel = median_us(lambda: kernel(q_model), repeat, number)
    t_min = median_us(minimal_path, repeat, number)
    t_node = median_us(node_path, repeat, number)
    print(
        f"{label:36s} bare {t_bare:5.2f} µs | kernel {t_kernel:5.2f} µs ({t_kernel / t_bare:4.2f}x)"
        f" | gravity() {t_grav:5.2f} µs ({t_grav / t_bare:4.2f}x)"
        f" | minimal path {t_min:5.2f} µs ({t_min / t_bare:4.2f}x)"
        f" | node path {t_node:5.2f} µs ({t_node / t_bare:4.2f}x, clamp "
        f"{'skipped' if within else 'run'})"
    )
    return t_node / t_bare


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=5000)
    args = parser.parse_args()
    print(f"pinocchio {pin.__version__}, numpy {np.__version__}; median of {args.repeat} x {args.number} calls")
    ratios = []
    for label, (path, parent) in MODELS.items():
        if not path.is_file():
            print(f"{label:36s} skipped: {path} not found")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ratios.append(bench_model(label, path, parent, args.repeat, args.number))
    if ratios:
        print(f"worst node-path ratio {max(ratios):.2f}x (goal <= 3x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
