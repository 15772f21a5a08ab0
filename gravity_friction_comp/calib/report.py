"""Calibration output: the calibrated URDF, the report (YAML + text) and a PNG a person can read."""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import yaml

from gravity_friction_comp.calib.fit import GravityFit, link_changes
from gravity_friction_comp.calib.regressor import StaticRegressor
from gravity_friction_comp.model.urdf_inertial import edit_inertials

__all__ = ["calibrated_urdf", "report_dict", "report_text", "staged_outputs", "write_outputs", "write_plot"]


def calibrated_urdf(regressor: StaticRegressor, fit: GravityFit) -> str:
    """The believed URDF's text with the fitted masses and inertial origins (only those spans
    changed; :func:`~gravity_friction_comp.calib.fit.link_changes`)."""
    return edit_inertials(regressor.model.description.xml, link_changes(regressor, fit.theta))


def report_dict(regressor: StaticRegressor, fit: GravityFit, extra: Mapping[str, Any] | None = None) -> dict:
    """Plain-data report: per-joint held-out RMS before/after [N·m], identifiability, links."""
    changes = link_changes(regressor, fit.theta)
    return {
        "joints": list(fit.joints),
        "heldout_rms_before": [float(x) for x in fit.rms_before],
        "heldout_rms_after": [float(x) for x in fit.rms_after],
        "holds_fit": fit.holds_fit,
        "holds_validation": fit.holds_validation,
        "holds_dropped": fit.holds_dropped,
        "validation_poses": list(fit.validation_poses),
        "rank": fit.rank,
        "parameters": len(fit.names),
        "condition_number": float(fit.condition),
        "condition_number_scope": (
            f"identifiable subspace: sigma_max/sigma_{fit.rank} over the {fit.rank} singular values of the "
            f"scaled regressor above {fit.rtol:g}*sigma_max; the other {len(fit.names) - fit.rank} "
            "directions are unidentifiable (full regressor: infinite)"
            if fit.rank < len(fit.names)
            else "full regressor (every direction identifiable)"
        ),
        "identifiable": list(fit.identifiable),
        "links": {
            link: {"mass": float(c["mass"]), "com": [float(v) for v in c["xyz"]]}
            for link, c in changes.items()
        },
        **(dict(extra) if extra else {}),
    }


def report_text(report: Mapping[str, Any]) -> str:
    """The report as a short table."""
    lines = [
        f"identifiable combinations: {report['rank']} of {report['parameters']} parameters "
        f"(condition number {report['condition_number']:.1f})",
        f"condition number of the {report.get('condition_number_scope', 'identifiable subspace')}",
        f"base parameters: {', '.join(report['identifiable'])}",
        f"holds: {report['holds_fit']} fitted, {report['holds_validation']} held out, "
        f"{report.get('holds_dropped', 0)} dropped (not settled)",
    ]
    if report["holds_validation"]:
        lines.append(f"{'joint':<24}{'held-out RMS before':>22}{'after':>12}  [N·m]")
    else:  # fit_gravity holds poses out only from 2·holdout (8) poses on
        lines.append(
            "no hold-out (fewer than 8 poses): the RMS below is on the fitted holds, not a validation"
        )
        lines.append(f"{'joint':<24}{'fitted RMS before':>22}{'after':>12}  [N·m]")
    for j, b, a in zip(report["joints"], report["heldout_rms_before"], report["heldout_rms_after"]):
        lines.append(f"{j:<24}{b:>22.4f}{a:>12.4f}")
    for link, c in report["links"].items():
        com = ", ".join(f"{v:.4f}" for v in c["com"])
        lines.append(f"link {link}: mass {c['mass']:.4f} kg, com [{com}] m")
    for key, value in report.items():
        if key.startswith("check_"):
            lines.append(f"{key[6:]}: {value}")
    return "\n".join(lines) + "\n"


def write_plot(path: str | os.PathLike, report: Mapping[str, Any]) -> None:
    """Bar chart of the per-joint held-out RMS before and after calibration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    joints = report["joints"]
    x = np.arange(len(joints))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(joints) + 2), 4.0))
    ax.bar(x - 0.2, report["heldout_rms_before"], 0.4, label="URDF (before)", color="tab:red")
    ax.bar(x + 0.2, report["heldout_rms_after"], 0.4, label="calibrated (after)", color="tab:green")
    ax.set_xticks(x, joints, rotation=30, ha="right")
    held = report["holds_validation"]
    ax.set_ylabel(f"{'held-out' if held else 'fitted-hold'} gravity residual RMS [N·m]")
    ax.set_title(
        f"gravity calibration: {f'{held} held-out holds' if held else 'no hold-out (< 8 poses)'}, "
        f"{report['rank']} identifiable combinations, condition {report['condition_number']:.1f}"
    )
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@contextlib.contextmanager
def staged_outputs(out_dir: str | os.PathLike) -> Iterator[pathlib.Path]:
    """A fresh temporary folder for a run's files; on success each file moves into
    ``out_dir`` (created if needed, a same-named file replaced), on an exception the
    temporary folder is removed and ``out_dir`` is left as it was (nothing half-written,
    none of the user's files removed)."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="calibrate_gravity_"))
    try:
        yield tmp
        out = pathlib.Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for f in sorted(tmp.iterdir()):
            shutil.move(str(f), str(out / f.name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_outputs(
    out_dir: str | os.PathLike, regressor: StaticRegressor, fit: GravityFit, extra=None
) -> dict:
    """Write ``calibrated.urdf``, ``report.yaml``, ``report.txt``, ``report.png``; returns the report."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    xml = calibrated_urdf(regressor, fit)  # raises before anything is written
    report = report_dict(regressor, fit, extra)
    (out / "calibrated.urdf").write_text(xml, encoding="utf-8")
    (out / "report.yaml").write_text(yaml.safe_dump(report, sort_keys=False), encoding="utf-8")
    (out / "report.txt").write_text(report_text(report), encoding="utf-8")
    write_plot(out / "report.png", report)
    return report
