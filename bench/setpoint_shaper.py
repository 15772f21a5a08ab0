"""Setpoint shaper (stage/shaper.py): CPU per cycle for 7 joints, and the delay it adds.

1. CPU: one ``SetpointShaper.step`` per 1 kHz cycle on 7 joints fed a 100 Hz stream (a new
   sample every 10th cycle), measured with ``time.thread_time_ns`` (this thread's CPU, not
   wall time); median, 99th percentile and mean per cycle, split into cycles where Ruckig
   calculated a new trajectory (nearly all: the deviation from the stream's moving line
   changes every cycle) and the others.
2. Delay (simulated time, deterministic): a 100 Hz leader stream of a 0.5 Hz and a 1 Hz
   sine (0.3 rad; v_max 2 rad/s, a_max 20 rad/s², j_max 400 rad/s³) shaped at 1 kHz; the delay is the time shift ``d`` minimising
   ``Σ (q_shaped(t) − q_leader(t − d))²`` against the continuous leader signal (0.1 ms grid),
   and the same for the zero-order hold of the raw stream (what a chain without the shaper
   tracks), so the shaper's own share is their difference.

Run: ``.venv/bin/python bench/setpoint_shaper.py [--seconds 20]``
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time

import numpy as np

# Run from a source checkout without installing the package.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from gravity_friction_comp.stage.shaper import SetpointShaper  # noqa: E402

N_JOINTS = 7
DT = 1e-3  # [s] the chain's period
LEADER_HZ = 100.0


def _shaper() -> SetpointShaper:
    return SetpointShaper(2.0, 20.0, 400.0, DT, n=N_JOINTS)


def _leader(t: np.ndarray | float, hz: float = 0.5) -> np.ndarray:
    return 0.3 * np.sin(2 * math.pi * hz * np.asarray(t))


def cpu(seconds: float) -> dict[str, np.ndarray]:
    """Per-cycle CPU [µs] of cycles with and without a Ruckig recalculation."""
    shaper = _shaper()
    shaper.reset(np.zeros(N_JOINTS))
    phases = np.linspace(0.0, 1.0, N_JOINTS)
    new, same = [], []
    for k in range(1, int(seconds / DT)):
        now = k * DT
        stamp = math.floor(now * LEADER_HZ) / LEADER_HZ
        target = _leader(stamp + phases)
        before = shaper.recalculations
        t0 = time.thread_time_ns()
        shaper.step(target, now, sample_time=stamp)
        spent = (time.thread_time_ns() - t0) * 1e-3
        (new if shaper.recalculations > before else same).append(spent)
    return {"recalculated": np.array(new), "not recalc.": np.array(same)}


def delay(hz: float, seconds: float = 10.0) -> tuple[float, float]:
    """(raw zero-order-hold delay, shaped delay) [ms] behind the continuous leader (a
    ``hz`` sine of 0.3 rad)."""
    shaper = SetpointShaper(2.0, 20.0, 400.0, DT, n=1)
    shaper.reset([0.0])
    t = np.arange(1, int(seconds / DT)) * DT
    stamps = np.floor(t * LEADER_HZ) / LEADER_HZ
    shaped = np.array(
        [shaper.step(_leader([s], hz), now, sample_time=s).position[0] for now, s in zip(t, stamps)]
    )
    raw = _leader(stamps, hz)
    keep = t > 2.0  # past the start transient
    shifts = np.arange(-0.02, 0.05, 1e-4)  # a lead shows as a negative delay

    def best(signal: np.ndarray) -> float:
        cost = [np.sum((signal[keep] - _leader(t[keep] - d, hz)) ** 2) for d in shifts]
        return 1e3 * float(shifts[int(np.argmin(cost))])

    return best(raw), best(shaped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="simulated seconds of the CPU run")
    args = parser.parse_args()
    print(f"setpoint shaper, {N_JOINTS} joints, 1 kHz cycle, {LEADER_HZ:g} Hz stream (thread CPU per step)")
    results = cpu(args.seconds)
    every = np.concatenate(list(results.values()))
    for name, values in (*results.items(), ("all cycles", every)):
        print(
            f"  {name:<12} {values.size:6d} cycles: median {np.median(values):6.1f} µs, "
            f"p99 {np.percentile(values, 99):6.1f} µs, mean {values.mean():6.1f} µs"
        )
    for hz in (0.5, 1.0):  # 1 Hz × 0.3 rad: 1.9 rad/s, 11.8 rad/s², 74 rad/s³ peak: inside the limits
        raw, shaped = delay(hz)
        print(
            f"delay behind a {LEADER_HZ:g} Hz leader ({hz:g} Hz sine, 0.3 rad): raw stream (zero-order hold) "
            f"{raw:.1f} ms, shaped {shaped:.1f} ms, added by the shaper {shaped - raw:+.1f} ms"
        )


if __name__ == "__main__":
    main()
