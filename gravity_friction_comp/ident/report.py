"""Identification output: the per-arm friction YAML, BAM JSON files and per-joint plots.

``friction_identified.yaml`` holds a ``friction_comp`` block (friction/models.py and
arm_yaml.py schema, loads with
:meth:`~gravity_friction_comp.friction.models.FrictionModel.from_yaml` as is) and an
``identification`` report section; BAM JSON files (``<joint>_m1.json``, ``_m2``, and
``_m3``–``_m6`` when fitted) in BAM's key layout; one PNG per joint (data and fitted curves,
matplotlib imported on use).
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError, IdentificationError, Reason
from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.friction.params import (
    DEFAULT_EPS,
    DEFAULT_STRIBECK_EXPONENT,
    DEFAULT_STRIBECK_VELOCITY,
    SYMMETRIC_KEYWORDS,
    FrictionParams,
)
from gravity_friction_comp.ident.bam_fit import BAM_NLS, bam_dict
from gravity_friction_comp.ident.identify import IdentificationResult

__all__ = ["write_outputs"]


def _keep(lists: dict[str, list[float]], i: int, others: FrictionParams, joint: str) -> None:
    """Entry ``i`` of the YAML's lists from ``others``' friction of ``joint``."""
    names = list(others.joint_names or ())
    if joint not in names:
        raise ConfigError(
            f"joint {joint} was not identified and the other friction has none for it", key=joint
        )
    k = names.index(joint)
    if others.bam[k] is not None or others.breakaway_positive[k] != others.breakaway_negative[k]:
        raise ConfigError(
            f"joint {joint}: the other friction is BAM or direction-dependent there; only a "
            "symmetric Coulomb/Stribeck entry can be kept",
            key=joint,
        )
    lists["breakaway"][i] = float(others.breakaway_positive[k])
    for key in SYMMETRIC_KEYWORDS[1:]:  # breakaway: set above
        lists[key][i] = float(getattr(others, key)[k])


def write_outputs(
    result: IdentificationResult,
    out_dir: str | os.PathLike,
    *,
    plots: bool = True,
    all_joints: Sequence[str] | None = None,
    others: FrictionParams | None = None,
) -> dict[str, Any]:
    """Write the per-arm YAML, BAM JSON files and per-joint PNGs into ``out_dir``.

    Args:
        result: from :func:`~gravity_friction_comp.ident.identify.identify`.
        out_dir: created if absent.
        plots: write ``<joint>_friction.png`` (matplotlib Agg).
        all_joints: joint order of the YAML's per-joint lists (default: the identified joints);
            joints not identified get zero friction, or ``others``' values.
        others: friction of the joints not identified (by name; e.g. the arm YAML's), so
            the YAML covers every joint of ``all_joints``; named in ``identification.kept``.

    Returns:
        ``{"yaml": path, "bam": {joint: {model: path}}, "plots": [paths]}``.

    Raises:
        IdentificationError: reason ``Reason.RANGE`` when the written YAML does not load with
            :meth:`~gravity_friction_comp.friction.models.FrictionModel.from_yaml` (e.g. a
            coefficient beyond friction.py's ±1e6 bound: the log's effort is in other
            units); the YAML is removed.
        OSError: ``out_dir`` cannot be created or written.
        ConfigError: a joint to take from ``others`` that it lacks, or whose friction there
            is BAM or direction-dependent (the YAML written here holds neither for it).

    The YAML holds ``joints``, the ``friction_comp`` block (``model: coulomb``; if a joint
    selected ``bam_m3``–``bam_m6``, ``model: bam`` with ``bam_files`` naming that model's
    JSON and that joint's tanh terms zero)
    and an ``identification`` section (per model validation RMS and parameter count, and the
    joint's ``warnings`` when it has any: see :attr:`JointFit.warnings`; the log's and the
    left-out joints' ``warnings``: :attr:`IdentificationResult.warnings`).
    """
    import yaml

    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    order = tuple(all_joints) if all_joints is not None else result.joints
    kw = result.friction_keywords()
    n = len(order)
    block: dict[str, Any] = {"enabled": True, "model": "coulomb"}
    lists = {k: [0.0] * n for k in kw}
    lists["eps"] = [DEFAULT_EPS] * n
    lists["stribeck_velocity"] = [DEFAULT_STRIBECK_VELOCITY] * n
    lists["stribeck_exponent"] = [DEFAULT_STRIBECK_EXPONENT] * n
    bam_paths: dict[str, dict[str, str]] = {}
    bam_files: list[str | None] = [None] * n
    report: dict[str, Any] = {}
    for idx, jf in enumerate(result.fits):
        i = order.index(jf.joint)
        for k in kw:
            lists[k][i] = kw[k][idx]
        bam_paths[jf.joint] = {}
        for name in ("coulomb_viscous", "stribeck", "bam_m3") + BAM_NLS:
            if name in jf.fits:
                d = bam_dict(name, jf.fits[name].params)
                path = out / f"{jf.joint}_{d['model']}.json"
                path.write_text(json.dumps(d, indent=2) + "\n", encoding="utf-8")
                bam_paths[jf.joint][d["model"]] = str(path)
        if jf.selected.startswith("bam_"):
            bam_files[i] = pathlib.Path(bam_paths[jf.joint][jf.selected[len("bam_") :]]).name
            for k in ("breakaway", "viscous", "stribeck_breakaway"):
                lists[k][i] = 0.0
            lists["offset"][i] = jf.best.params["offset"]
        report[jf.joint] = {
            "selected": jf.selected,
            "samples": {"train": jf.n_train, "validation": jf.n_validation},
            "models": {
                name: {
                    "validation_rms": round(m.validation_rms, 6),
                    "train_rms": round(m.train_rms, 6),
                    "n_params": m.n_params,
                    "params": {k: round(x, 6) for k, x in m.params.items()},
                    **({"notes": list(m.notes)} if m.notes else {}),
                }
                for name, m in jf.fits.items()
            },
            "skipped": dict(jf.skipped),
            **({"warnings": list(jf.warnings)} if jf.warnings else {}),
        }
    kept = [j for j in order if j not in result.joints] if others is not None else []
    for j in kept:
        _keep(lists, order.index(j), others, j)  # type: ignore[arg-type]
    block.update({k: [round(x, 6) for x in v] for k, v in lists.items()})
    # the YAML's offset carries a sign; friction.py requires the others ≥ 0
    for k in ("breakaway", "viscous", "stribeck_breakaway"):
        block[k] = [max(x, 0.0) for x in block[k]]
    if any(b is not None for b in bam_files):
        block["model"] = "bam"
        block["bam_files"] = bam_files
    doc = {
        "joints": list(order),
        "friction_comp": block,
        "identification": {
            "criterion": (
                f"smallest validation RMS; a model with more parameters only if it "
                f"lowers the validation RMS by > "
                f"{100 * result.config.improvement_threshold:g} %"
            ),
            "validation": (
                f"every {max(2, round(1 / result.config.validation_fraction))}-th "
                f"{result.config.block_duration:g} s block held out"
            ),
            "joints": report,
            **({"kept": kept} if kept else {}),
            **({"warnings": list(result.warnings)} if result.warnings else {}),
        },
    }
    yaml_path = out / "friction_identified.yaml"
    header = (
        "# Identified by identify_friction (gravity_friction_comp.ident).\n"
        "# friction_comp: tau = offset + viscous*v + (breakaway + stribeck_breakaway*"
        "exp(-|v/stribeck_velocity|^stribeck_exponent))*tanh(v/eps)\n"
    )
    yaml_path.write_text(
        header + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, allow_unicode=True),
        encoding="utf-8",
    )
    # the consumer's own check: never leave a YAML the friction node would refuse
    try:
        FrictionModel.from_yaml(yaml_path, list(order))
    except ConfigError as exc:
        yaml_path.unlink()
        raise IdentificationError(
            f"the identified friction is not a valid friction_comp block ({exc}); not "
            f"written. Check the log's effort units and scale",
            reason=Reason.RANGE,
        ) from None
    plots_out = []
    if plots:
        plots_out = _plot(result, out)
    return {"yaml": str(yaml_path), "bam": bam_paths, "plots": plots_out}


def _plot(result: IdentificationResult, out: pathlib.Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for jf in result.fits:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        ax.plot(
            jf.velocity[~jf.is_validation],
            jf.friction[~jf.is_validation],
            ".",
            ms=2,
            color="0.6",
            label="training data",
        )
        ax.plot(
            jf.velocity[jf.is_validation],
            jf.friction[jf.is_validation],
            ".",
            ms=2,
            color="tab:orange",
            label="validation data",
        )
        vmax = float(np.max(np.abs(jf.velocity)))
        vv = np.concatenate([np.linspace(-vmax, -1e-4, 300), np.linspace(1e-4, vmax, 300)])
        # curves at the median-load sample's τ_m, τ_e (the load models depend on them)
        k = int(np.argsort(jf.load)[jf.load.size // 2])
        tau_m, tau_e = np.full_like(vv, jf.tau_m[k]), np.full_like(vv, jf.tau_e[k])
        for name, m in jf.fits.items():
            style = "-" if name == jf.selected else "--"
            ax.plot(
                vv,
                m.predict(vv, tau_m=tau_m, tau_e=tau_e),
                style,
                label=f"{name} (val RMS {m.validation_rms:.4f} N·m, {m.n_params} p)"
                + (" ← selected" if name == jf.selected else ""),
            )
        ax.set_xlabel("velocity [rad/s]")
        ax.set_ylabel("friction torque [N·m]")
        ax.set_title(f"{jf.joint}: effort − model torque")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        path = out / f"{jf.joint}_friction.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(str(path))
    return paths
