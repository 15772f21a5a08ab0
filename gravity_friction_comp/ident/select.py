"""Model selection: which fitted friction candidate a joint gets (validation RMS, 5 % rule).

Smallest validation RMS [N·m], except that a model with more parameters is chosen over a
simpler one only if it lowers the validation RMS by more than ``improvement_threshold``
(5 %) relative to the simpler one (models visited in order of parameter count).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gravity_friction_comp.ident.fit import ModelFit

__all__ = ["CANDIDATE_MODELS", "select_model"]

#: Candidate model names in order of parameter count (:mod:`~gravity_friction_comp.ident.fit`).
CANDIDATE_MODELS = ("coulomb_viscous", "bam_m3", "coulomb_tanh", "stribeck", "bam_m4", "bam_m5", "bam_m6")


def select_model(fits: Mapping[str, ModelFit], improvement_threshold: float = 0.05) -> str:
    """Name of the chosen model (module docstring).

    Visiting models by parameter count (ties in :data:`CANDIDATE_MODELS` order), the current
    choice is replaced by a model with more parameters only if that model's validation RMS
    is below ``(1 − improvement_threshold)`` × the current choice's.
    """
    order = sorted(fits.values(), key=lambda m: (m.n_params, CANDIDATE_MODELS.index(m.name)))
    chosen = order[0]
    for m in order[1:]:
        if m.n_params == chosen.n_params:
            if m.validation_rms < chosen.validation_rms:
                chosen = m
        elif m.validation_rms < (1.0 - improvement_threshold) * chosen.validation_rms:
            chosen = m
    return chosen.name
