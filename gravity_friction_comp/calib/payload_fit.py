"""Payload calibration: the held object's mass and centre of mass from static holds.

With the arm known (its calibrated URDF), what the holds measure beyond the arm's gravity
is the payload's, linear in its mass and first moment in the payload's parent frame:

.. math::

    \\bar\\tau - g_{arm}(q) = Y_b(q)\\,T\\,(m,\\ m\\,c)^T,\\qquad
    T = \\begin{pmatrix}1 & 0\\\\ p & R\\end{pmatrix}

``Y_b`` is the 4 static-regressor columns of the parent's body (:mod:`.regressor`), ``(R,
p)`` the parent frame's placement in that body's joint frame (a link fixed to the body, or
the joint itself). Solved by least squares (truncated SVD) around a prior (the
minimum-norm change, so a direction the holds cannot see keeps the prior's value: e.g. a
tool that only translates, as on the palletizer's 4-bar, shows its payload's mass but not
its centre of mass, whose moment arm never changes); the result is written
as the gravity node's ``payload.*`` parameters (``ros2 param dump`` format, shape
``point``: the rotational inertia is not seen by static holds).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import yaml

from gravity_friction_comp.calib.fit import Holds, hold_regressors
from gravity_friction_comp.calib.regressor import PARAMS_PER_BODY, StaticRegressor
from gravity_friction_comp.errors import ConfigError, IdentificationError, Reason

__all__ = ["PayloadFit", "fit_payload", "write_payload_params"]


@dataclass(frozen=True)
class PayloadFit:
    """Fitted payload: mass [kg], com (3,) [m] in ``parent``'s frame, per-joint RMS [N·m] of the
    residual before (no payload) and after, the condition number of the fit over its
    identifiable part, and which of ``mass``, ``com.x``, ``com.y``, ``com.z`` the holds see."""

    mass: float
    com: np.ndarray
    parent: str
    rms_before: np.ndarray
    rms_after: np.ndarray
    condition: float
    identifiable: tuple[str, ...]


def _links(full) -> list[str]:
    import pinocchio as pin

    return [f.name for f in full.frames if f.type == pin.FrameType.BODY]


def check_parent(regressor: StaticRegressor, parent: str) -> None:
    """Raise ConfigError (naming the joints and links) unless ``parent`` is a joint or link of the model."""
    _placement(regressor, parent)


def _placement(regressor: StaticRegressor, parent: str) -> tuple[int, np.ndarray, np.ndarray]:
    full = regressor.model.full_model
    if parent in regressor.joints:
        return full.getJointId(parent), np.eye(3), np.zeros(3)
    if full.existFrame(parent):
        frame = full.frames[full.getFrameId(parent)]
        return frame.parentJoint, np.array(frame.placement.rotation), np.array(frame.placement.translation)
    raise ConfigError(
        f"payload parent {parent!r} is neither a joint nor a link of the model; joints: {', '.join(regressor.joints)}; "
        f"links: {', '.join(_links(full))}",
        key="payload.parent",
        value=parent,
    )


def fit_payload(
    regressor: StaticRegressor, holds: Holds, parent: str, prior_mass: float = 0.0, prior_com=(0.0, 0.0, 0.0)
) -> PayloadFit:
    """Fit the payload from holds recorded while holding it (module docstring).

    Args:
        regressor: Static regressor of the (calibrated) arm without payload.
        holds: Hold averages of the recording with the payload held.
        parent: Link or joint the payload hangs from.
        prior_mass, prior_com: [kg], (3,) [m]: kept in the directions the holds do not see.

    Raises:
        ConfigError: unknown parent. IdentificationError: the parent's body is fixed to
            the base (nothing moves it), or a fitted mass ≤ 0.
    """
    jid, rot, p = _placement(regressor, parent)
    if jid == 0:
        raise IdentificationError(
            f"payload parent {parent!r} does not move: nothing to fit", reason=Reason.RANGE
        )
    cols = slice(PARAMS_PER_BODY * (jid - 1), PARAMS_PER_BODY * jid)
    t = np.zeros((4, 4))
    t[0, 0] = 1.0
    t[1:, 0] = p
    t[1:, 1:] = rot
    rows = list(holds.measured)
    ys = hold_regressors(regressor, holds)  # linear in θ: the window mean is exact
    a = np.vstack([y[rows][:, cols] @ t for y in ys])
    arm = np.array([(y @ regressor.prior)[rows] for y in ys])
    r = (holds.effort - arm).reshape(-1)
    x0 = float(prior_mass) * np.concatenate([[1.0], np.asarray(prior_com, dtype=float)])
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    rank = int((s > 1e-6 * s[0]).sum()) if s[0] > 0 else 0
    # truncated pseudo-inverse: directions below the rank keep the prior
    x = x0 + vt[:rank].T @ ((u[:, :rank].T @ (r - a @ x0)) / s[:rank])
    seen = np.linalg.norm(vt[:rank], axis=0) > 0.99  # unit vector e_k within the row space
    names = ("mass", "com.x", "com.y", "com.z")
    if x[0] <= 0.0:
        raise IdentificationError(
            f"payload mass fitted as {x[0]:.4g} kg (≤ 0): the efforts do not show a held payload on {parent!r}",
            reason=Reason.RANGE,
        )
    residual = (r - a @ x).reshape(len(holds.position), -1)
    return PayloadFit(
        mass=float(x[0]),
        com=x[1:] / x[0],
        parent=parent,
        rms_before=np.sqrt(np.mean(r.reshape(residual.shape) ** 2, axis=0)),
        rms_after=np.sqrt(np.mean(residual**2, axis=0)),
        condition=float(s[0] / s[rank - 1]) if rank else float("inf"),
        identifiable=tuple(n for n, ok in zip(names, seen) if ok),
    )


def write_payload_params(
    path: str | os.PathLike, fit: PayloadFit, node: str = "gravity_compensation"
) -> None:
    """Write ``payload.mass``, ``payload.com``, ``payload.shape: point``, ``payload.parent``
    as a ``ros2 param dump`` file for ``node``, keyed ``/**/<node>`` (as the shipped
    ``config/`` files: it applies in any namespace)."""
    body = {
        "mass": round(fit.mass, 6),
        "shape": "point",
        "com": [round(float(v), 6) for v in fit.com],
        "parent": fit.parent,
    }
    text = "# Payload fitted by calibrate_gravity payload (static holds): mass [kg], com [m] in parent.\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(
            text + yaml.safe_dump({f"/**/{node}": {"ros__parameters": {"payload": body}}}, sort_keys=False)
        )
