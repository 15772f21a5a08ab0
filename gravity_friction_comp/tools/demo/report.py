"""Demo output: the off/on comparison table, the plot (``demo.png``), ``summary.json`` and the recordings."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from gravity_friction_comp.tools.demo.metrics import JointMetrics, tracking_error
from gravity_friction_comp.tools.demo.phase import Recording
from gravity_friction_comp.tools.demo.scenario import DemoSetup

__all__ = ["build_figure", "headline", "plot", "table", "write_recordings", "write_summary"]


def table(setup: DemoSetup, off, on) -> str:
    """The per-joint comparison table (mrad)."""
    head = (
        f"{'joint':18s} {'group':8s} {'RMS off':>8s} {'RMS on':>8s} {'max off':>8s} "
        f"{'max on':>8s} {'sag off':>8s} {'sag on':>8s} {'hold off':>8s} {'hold on':>8s}"
    )
    rows = [head, "-" * len(head)]
    for j in setup.joints:
        group = "proximal" if j in setup.proximal else "distal"
        rows.append(
            f"{j:18s} {group:8s} {off[j].rms:8.2f} {on[j].rms:8.2f} {off[j].max:8.2f} "
            f"{on[j].max:8.2f} {off[j].sag:8.2f} {on[j].sag:8.2f} "
            f"{off[j].hold_error:8.2f} {on[j].hold_error:8.2f}"
        )
    return "\n".join(rows)


def headline(setup: DemoSetup, off: Mapping[str, JointMetrics], on: Mapping[str, JointMetrics]) -> str:
    """The headline figures, each a cell of :func:`table` (same joint, same rounding): the
    proximal joint of largest RMS off and the distal joint of largest RMS change, RMS off → on,
    and the worst sag on (pick and place)."""
    prox = max(setup.proximal, key=lambda j: off[j].rms)
    parts = [f"proximal {prox} RMS {off[prox].rms:.2f} → {on[prox].rms:.2f} mrad"]
    if setup.profile == "pick_place":
        sag = max(setup.joints, key=lambda j: on[j].sag)
        parts.append(f"sag on {on[sag].sag:.2f} mrad ({sag})")
    if setup.distal:
        dist = max(setup.distal, key=lambda j: on[j].rms / off[j].rms if off[j].rms > 0 else 0.0)
        parts.append(f"distal {dist} RMS {off[dist].rms:.2f} → {on[dist].rms:.2f} mrad")
    return ", ".join(parts)


def _window(t: np.ndarray, values: np.ndarray, end: float):
    keep = (t >= 0.0) & (t <= end)
    return t[keep], values[keep]


def build_figure(setup: DemoSetup, off: Recording, on: Recording, title: str = ""):
    """The demo figure (a matplotlib Figure, Agg backend).

    Layout: one row per joint (setpoint vs measured position [rad]), then the tracking error
    [mrad] of every joint, then the effort terms [N·m]; left column compensation off, right
    on, each row sharing its y-axis across the two. Only the evaluated cycle is drawn
    (``0 … cycle_time``: from the held home pose, no start-up transient). Legends sit
    right of the data; ``title`` (verdict and headline figures) on top.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(setup.joints)
    end = setup.cycle_time
    fig, axes = plt.subplots(
        n + 2, 2, figsize=(14, 2.1 * (n + 2) + 0.6), sharex=True, sharey="row", squeeze=False
    )
    for col, (name, rec) in enumerate((("compensation off", off), ("compensation on", on))):
        a = rec.arrays()
        t0 = a["setpoint_t"][0] + setup.start_delay
        ts, qs = _window(a["setpoint_t"] - t0, a["setpoint_q"], end)
        tm, qm = _window(a["state_t"] - t0, a["state_q"], end)
        for j, joint in enumerate(setup.joints):
            ax = axes[j][col]
            ax.plot(ts, qs[:, j], "k--", lw=1, label="setpoint")
            ax.plot(tm, qm[:, j], lw=1.2, label="measured")
            if col == 0:
                ax.set_ylabel(f"{joint} [rad]")
        axes[0][col].set_title(name)
        te, e = tracking_error(setup, rec)
        ax = axes[n][col]
        for j, joint in enumerate(setup.joints):
            ax.plot(te, 1e3 * e[:, j], lw=1, label=joint)
        ax.axhline(0.0, color="0.6", lw=0.6)
        if col == 0:
            ax.set_ylabel("tracking error [mrad]")
        ax = axes[n + 1][col]
        for key, tk, label, style in (
            ("command_effort", "command_t", "command", "-"),
            ("gravity", "gravity_t", "gravity", "--"),
            ("friction", "friction_t", "friction", ":"),
        ):
            if a[key].size:
                tt, vv = _window(a[tk] - t0, a[key], end)
                for j, joint in enumerate(setup.joints):
                    ax.plot(tt, vv[:, j], style, lw=1, color=f"C{j}", label=f"{label} {joint}")
        if col == 0:
            ax.set_ylabel("effort [N·m]")
        ax.set_xlabel("time since cycle start [s] (shaded: holding the payload)")
        for row in range(n + 2):
            if setup.profile == "pick_place":
                axes[row][col].axvspan(
                    setup.close_time, setup.release_time, color="tab:orange", alpha=0.08, lw=0
                )
            axes[row][col].set_xlim(0.0, end)
    for row in range(n + 2):  # legends outside the data, right of the "on" column
        handles, labels = axes[row][1].get_legend_handles_labels()
        if handles:
            axes[row][1].legend(
                handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, borderaxespad=0.0
            )
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def plot(setup: DemoSetup, off: Recording, on: Recording, path: pathlib.Path, title: str = "") -> None:
    """Write :func:`build_figure` to ``path`` (PNG)."""
    import matplotlib.pyplot as plt

    fig = build_figure(setup, off, on, title)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_recordings(out: pathlib.Path, setup: DemoSetup, off: Recording, on: Recording) -> None:
    """``recording_off.npz`` / ``recording_on.npz``: every recorded array of each run (times
    [s] on the run's clock, positions [rad], efforts [N·m]; columns = ``setup.joints``)."""
    for name, rec in (("off", off), ("on", on)):
        arrays: dict[str, Any] = rec.arrays()
        np.savez_compressed(out / f"recording_{name}.npz", **arrays)


def write_summary(
    path: pathlib.Path,
    setup: DemoSetup,
    passed: bool,
    criteria: list[str],
    off: Mapping[str, JointMetrics],
    on: Mapping[str, JointMetrics],
    runtime_s: float,
    *,
    verdict: str = "",
    timing: Mapping[str, Any] | None = None,
) -> pathlib.Path:
    """Write ``summary.json``: the setup's joints, the verdict with one line per criterion,
    the position LSB per joint [mrad], the per-joint :class:`JointMetrics` [mrad] of both
    runs, and how the run kept time (``timing``: lockstep, simulated/wall seconds, real-time
    figures). Returns ``path``."""
    summary = {
        "urdf": setup.urdf,
        "joints": list(setup.joints),
        "proximal": list(setup.proximal),
        "distal": list(setup.distal),
        "passed": passed,
        "verdict": verdict or ("ACCEPTED" if passed else "NOT ACCEPTED"),
        "criteria": criteria,
        "position_lsb_mrad": dict(setup.position_lsb),
        "exempt": dict(setup.exempt),
        "arm": setup.arm,
        "off": {j: vars(m) for j, m in off.items()},
        "on": {j: vars(m) for j, m in on.items()},
        "runtime_s": runtime_s,
        "timing": dict(timing or {}),
    }
    path.write_text(json.dumps(summary, indent=2))
    return path
