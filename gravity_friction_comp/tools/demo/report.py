"""Demo output: the off/on comparison table, the plot (``demo.png``) and ``summary.json``."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Mapping

from gravity_friction_comp.tools.demo.metrics import JointMetrics
from gravity_friction_comp.tools.demo.phase import Recording
from gravity_friction_comp.tools.demo.scenario import DemoSetup

__all__ = ["plot", "table", "write_summary"]


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


def plot(setup: DemoSetup, off: Recording, on: Recording, path: pathlib.Path) -> None:
    """Setpoint vs measured position per joint (off, on) and the on run's effort terms."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(setup.joints)
    fig, axes = plt.subplots(n + 1, 2, figsize=(13, 2.4 * (n + 1)), sharex=True, squeeze=False)
    runs = (("compensation off", off), ("compensation on", on))
    for col, (title, rec) in enumerate(runs):
        a = rec.arrays()
        t0 = a["setpoint_t"][0] + setup.start_delay
        for j, name in enumerate(setup.joints):
            ax = axes[j][col]
            ax.plot(a["setpoint_t"] - t0, a["setpoint_q"][:, j], "k--", lw=1, label="setpoint")
            ax.plot(a["state_t"] - t0, a["state_q"][:, j], lw=1.2, label="measured")
            ax.set_ylabel(f"{name} [rad]")
            if j == 0:
                ax.set_title(title)
                ax.legend(loc="upper right", fontsize=7)
            if setup.profile == "pick_place":
                ax.axvspan(setup.close_time, setup.release_time, color="tab:orange", alpha=0.08, lw=0)
        ax = axes[n][col]
        for key, label, style in (
            ("command_effort", "joint_command effort", "-"),
            ("gravity", "gravity term", "--"),
            ("friction", "friction term", ":"),
        ):
            tk = {"command_effort": "command_t", "gravity": "gravity_t", "friction": "friction_t"}[key]
            if a[key].size:
                for j, name in enumerate(setup.joints):
                    ax.plot(a[tk] - t0, a[key][:, j], style, lw=1, label=f"{label} {name}")
        ax.set_ylabel("effort [N·m]")
        ax.set_xlabel("time since cycle start [s] (shaded: holding the payload)")
        ax.legend(loc="upper right", fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_summary(
    path: pathlib.Path,
    setup: DemoSetup,
    passed: bool,
    criteria: list[str],
    off: Mapping[str, JointMetrics],
    on: Mapping[str, JointMetrics],
    runtime_s: float,
) -> pathlib.Path:
    """Write ``summary.json``: the setup's joints, the verdict with one line per criterion,
    the position LSB per joint [mrad] and the per-joint :class:`JointMetrics` [mrad] of
    both runs. Returns ``path``."""
    summary = {
        "urdf": setup.urdf,
        "joints": list(setup.joints),
        "proximal": list(setup.proximal),
        "distal": list(setup.distal),
        "passed": passed,
        "criteria": criteria,
        "position_lsb_mrad": dict(setup.position_lsb),
        "off": {j: vars(m) for j, m in off.items()},
        "on": {j: vars(m) for j, m in on.items()},
        "runtime_s": runtime_s,
    }
    path.write_text(json.dumps(summary, indent=2))
    return path
