"""Tracking-error metrics of a demo run, the acceptance criteria and the real-time timing check.

Tracking error per joint is ``e = q_measured − q_command``: the ``joint_command`` position
where the bridge applies it (lockstep: at its stamp + the modelled delay; real time: as it
arrives; the chain's real transport delay is measured by ``bench/pipeline_latency.py``, not
counted here) interpolated at each ``joint_states`` stamp, one clock for both, over the
cycle after the start delay: RMS and max |e| [mrad]; static sag while holding = |mean e|
over the pick dwell (gripper closed, setpoint still), after the first 30 % of the dwell.

Acceptance (issue 14; the thresholds are the constants below, printed with the verdict):
with compensation on, RMS on the proximal joints drops ≥ :data:`MIN_PROXIMAL_DROP` against
off, sag ≤ :data:`MAX_SAG_MRAD` on every joint, and no distal joint's RMS grows by more than
:data:`MAX_DISTAL_GROWTH` beyond one feedback code. A joint in ``setup.exempt`` (an arm
profile's ``demo.exempt``, a physical reason) is reported with that reason but required by
none of the three; the thresholds stay the same for every other joint. In real time, :func:`timing_problems`
says when the machine could not keep real time (the verdict is then inconclusive).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from gravity_friction_comp.errors import RunIncomplete
from gravity_friction_comp.tools.demo.phase import Recording
from gravity_friction_comp.tools.demo.scenario import DemoSetup

__all__ = [
    "MAX_COMMAND_AGE_PERIODS",
    "MAX_DISTAL_GROWTH",
    "MAX_LATE_FRACTION",
    "MAX_PHYSICS_LATENESS_S",
    "MAX_SAG_MRAD",
    "MAX_SETPOINT_GAP_PERIODS",
    "MIN_PROXIMAL_DROP",
    "JointMetrics",
    "acceptance",
    "evaluate",
    "thresholds_text",
    "timing_problems",
    "tracking_error",
]

#: Acceptance thresholds (issue 14: what lockstep lets the design promise).
MIN_PROXIMAL_DROP = 0.70
MAX_SAG_MRAD = 1.0
MAX_DISTAL_GROWTH = 0.10

#: Real-time timing limits (``--realtime``): beyond any of them the run is inconclusive.
#: The simulated arm's worst step lateness [s] and late-step re-anchors (overruns, > 50 ms).
MAX_PHYSICS_LATENESS_S = 0.010
#: Largest gap between two setpoints, in setpoint periods.
MAX_SETPOINT_GAP_PERIODS = 5.0
#: A joint_command older than this many setpoint periods on arrival counts as late ...
MAX_COMMAND_AGE_PERIODS = 5.0
#: ... and more than this fraction of late commands makes the run inconclusive.
MAX_LATE_FRACTION = 0.01


def thresholds_text() -> str:
    """One line naming the acceptance thresholds (printed with the verdict)."""
    return (
        f"thresholds (tools/demo/metrics.py): proximal RMS drop ≥ {MIN_PROXIMAL_DROP:.0%}, sag while "
        f"holding ≤ {MAX_SAG_MRAD:g} mrad, distal RMS ≤ +{MAX_DISTAL_GROWTH:.0%} + 1 feedback code"
    )


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


def tracking_error(setup: DemoSetup, rec: Recording) -> tuple[np.ndarray, np.ndarray]:
    """``(t, e)``: cycle time (k,) [s] (0 = cycle start) and tracking error (k, n) [rad] of
    ``setup.joints`` at each joint_states stamp of the evaluated window.

    Raises:
        RunIncomplete: fewer than 10 setpoints or joint_states were recorded.
    """
    a = rec.arrays()
    if a["setpoint_t"].size < 10 or a["state_t"].size < 10:
        raise RunIncomplete(
            f"too little data recorded: {a['setpoint_t'].size} setpoints, {a['state_t'].size} joint_states"
        )
    # Reference: joint_command positions at their arrival (what the bridge tracks), so the
    # transport delay of the chain (bench/pipeline_latency.py) is not counted as error.
    if a["arrival_t"].size < 10:
        ref_t, ref_q = a["setpoint_t"], a["setpoint_q"]
    elif rec.timing.get("lockstep"):  # applied at stamp + modelled delay (deterministic)
        ref_t, ref_q = a["command_stamp_t"] + setup.delay, a["arrival_q"]
    else:
        ref_t, ref_q = a["arrival_t"], a["arrival_q"]
    t0 = a["setpoint_t"][0] + setup.start_delay
    t = a["state_t"]
    # a fixed window: how far past its end a run was recorded must not change the figures
    keep = (t >= max(t0, ref_t[0])) & (t <= min(ref_t[-1], t0 + setup.cycle_time))
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
    t, e = tracking_error(setup, rec)
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
    """Check the three criteria; returns (passed, one line per criterion and the thresholds)."""
    lines, ok = [], True
    exempt = setup.exempt
    proximal = [j for j in setup.proximal if j not in exempt]
    rms_off = sum(off[j].rms ** 2 for j in proximal)
    rms_on = sum(on[j].rms ** 2 for j in proximal)
    drop = 1.0 - math.sqrt(rms_on / rms_off) if rms_off > 0 else 0.0
    good = drop >= MIN_PROXIMAL_DROP
    ok &= good
    lines.append(
        f"[{'PASS' if good else 'FAIL'}] proximal RMS error drop {drop:.0%} "
        f"(≥ {MIN_PROXIMAL_DROP:.0%}) on {proximal}"
    )
    for j in setup.joints:
        if j in exempt:
            change = on[j].rms / off[j].rms - 1.0 if off[j].rms > 0 else 0.0
            lines.append(
                f"[EXEMPT] {j}: RMS {change:+.0%}, sag {on[j].sag:.2f} mrad, not required: {exempt[j]}"
            )
    if setup.profile == "pick_place":
        worst = max(on[j].sag for j in setup.joints if j not in exempt)
        good = bool(worst <= MAX_SAG_MRAD)
        ok &= good
        lines.append(
            f"[{'PASS' if good else 'FAIL'}] sag while holding ≤ {MAX_SAG_MRAD:g} mrad: "
            f"worst {worst:.2f} mrad"
        )
    else:
        lines.append(f"[ -- ] sag while holding: not measured ({setup.profile} profile, no payload)")
    for j in setup.distal:
        if j in exempt:
            continue
        growth = on[j].rms / off[j].rms - 1.0 if off[j].rms > 0 else 0.0
        # "not worse by more than 10 %", beyond what the feedback can resolve (one LSB)
        lsb = setup.position_lsb.get(j, 0.0)
        good = on[j].rms <= (1.0 + MAX_DISTAL_GROWTH) * off[j].rms + lsb
        ok &= good
        lines.append(
            f"[{'PASS' if good else 'FAIL'}] distal {j}: RMS {growth:+.0%} "
            f"(≤ +{MAX_DISTAL_GROWTH:.0%} + 1 position LSB = {lsb:.2f} mrad)"
        )
    lines.append(thresholds_text())
    return ok, lines


def timing_problems(rec: Recording, setpoint_rate_hz: float) -> tuple[list[str], dict[str, float]]:
    """How a real-time run failed to keep time: (one line per limit exceeded, the figures).

    Figures: the simulated arm's ``overruns`` and ``max_lateness_ms``, the largest setpoint gap
    ``max_setpoint_gap_ms``, and ``late_command_fraction`` (joint_command older than
    :data:`MAX_COMMAND_AGE_PERIODS` setpoint periods on arrival). A lockstep run has none.
    """
    if rec.timing.get("lockstep"):
        return [], {}
    a = rec.arrays()
    period = 1.0 / setpoint_rate_hz
    gaps = np.diff(a["setpoint_t"]) if a["setpoint_t"].size > 1 else np.zeros(1)
    age = a["arrival_t"] - a["command_stamp_t"] if a["arrival_t"].size else np.zeros(1)
    figures = {
        "overruns": float(rec.timing.get("overruns", 0)),
        "max_lateness_ms": 1e3 * float(rec.timing.get("max_lateness_s", 0.0)),
        "max_setpoint_gap_ms": 1e3 * float(gaps.max()),
        "late_command_fraction": float(np.mean(age > MAX_COMMAND_AGE_PERIODS * period)),
    }
    problems = []
    if figures["overruns"] > 0 or figures["max_lateness_ms"] > 1e3 * MAX_PHYSICS_LATENESS_S:
        problems.append(
            f"physics steps late by up to {figures['max_lateness_ms']:.1f} ms "
            f"(limit {1e3 * MAX_PHYSICS_LATENESS_S:g} ms), {figures['overruns']:.0f} overrun(s)"
        )
    if figures["max_setpoint_gap_ms"] > MAX_SETPOINT_GAP_PERIODS * 1e3 * period:
        problems.append(
            f"setpoint gap up to {figures['max_setpoint_gap_ms']:.1f} ms "
            f"(limit {MAX_SETPOINT_GAP_PERIODS:g} periods = {MAX_SETPOINT_GAP_PERIODS * 1e3 * period:g} ms)"
        )
    if figures["late_command_fraction"] > MAX_LATE_FRACTION:
        problems.append(
            f"{figures['late_command_fraction']:.1%} of commands older than {MAX_COMMAND_AGE_PERIODS:g} "
            f"periods on arrival (limit {MAX_LATE_FRACTION:.0%})"
        )
    return problems, figures
