"""Per-message friction compute time for a 7-joint arm, per model family.

Prints the median over timeit repeats of one ``FrictionModel.torque(velocity, load)`` call
and its ratio to the Coulomb tanh model measured in the same run. BAM models use the mx64
parameter files (``test/data/bam/mx64/``) on every joint, with a gravity-like load.

Run: ``.venv/bin/python bench/friction_compute.py [--repeat 15] [--number 2000]``
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import timeit

import numpy as np

# Run from a source checkout without installing the package.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from gravity_friction_comp.friction.bam import BamParameters  # noqa: E402
from gravity_friction_comp.friction.models import FrictionModel  # noqa: E402

N_JOINTS = 7
BAM_DIR = pathlib.Path(__file__).resolve().parents[1] / "test" / "data" / "bam" / "mx64"


def build_models() -> dict[str, FrictionModel]:
    """One model per family; the first is the baseline."""
    breakaway = [1.2, 1.8, 1.6, 0.4, 0.1, 0.1, 0.05]
    models = {
        "coulomb tanh": FrictionModel(N_JOINTS, breakaway=breakaway, eps=0.005),
        "asymmetric": FrictionModel(
            N_JOINTS, breakaway_positive=breakaway, breakaway_negative=[0.8 * b for b in breakaway], eps=0.005
        ),
        "+viscous+Stribeck+offset": FrictionModel(
            N_JOINTS,
            breakaway_positive=breakaway,
            breakaway_negative=[0.8 * b for b in breakaway],
            eps=0.005,
            viscous=0.05,
            stribeck_breakaway=0.3,
            stribeck_velocity=0.1,
            stribeck_exponent=2.0,
            offset=0.01,
        ),
        "disabled (is_zero)": FrictionModel(N_JOINTS, breakaway=breakaway, enabled=False),
    }
    for k in range(1, 7):
        params = BamParameters.from_json(BAM_DIR / f"m{k}.json")
        models[f"BAM M{k}"] = FrictionModel(N_JOINTS, model="bam", bam=[params] * N_JOINTS, eps=0.005)
    return models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    velocity = rng.uniform(-1.0, 1.0, N_JOINTS)
    load = rng.uniform(-10.0, 10.0, N_JOINTS)  # gravity feedforward [N·m]
    results = {}
    for name, model in build_models().items():
        times = timeit.repeat(
            lambda m=model: m.torque(velocity, load), repeat=args.repeat, number=args.number
        )
        results[name] = statistics.median(times) / args.number
    base = results["coulomb tanh"]
    print(f"friction torque(), {N_JOINTS} joints, median of {args.repeat}×{args.number} calls")
    print(f"{'model':<26} {'µs/call':>9} {'ratio':>7}")
    for name, t in results.items():
        print(f"{name:<26} {t * 1e6:9.2f} {t / base:7.2f}")


if __name__ == "__main__":
    main()
