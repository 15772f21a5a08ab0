"""The friction stage's scale and the stiction dither are separate knobs (free drive, issue 19):
``scale`` s multiplies the velocity-driven friction term, the dither keeps its own amplitude
±d × breakaway at rest (0 only with s = 0 or the stage disabled).

Independent route: the amplitude by hand from the model's coefficients (Coulomb levels 0.3 /
0.2 N·m, dither 0.6: +0.18 N·m in the first half-period, −0.12 in the second) and the
velocity term s·F_c·tanh(v/eps) restated.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.stage.friction import FrictionConfig, FrictionStage
from gravity_friction_comp.stage.settings import StageSettings

JOINTS = ["a", "b"]


def _stage(scale):
    model = FrictionModel(JOINTS, breakaway_positive=[0.3, 0.1], breakaway_negative=[0.2, 0.1], eps=0.02)
    config = FrictionConfig(
        model, JOINTS, velocity_source="measured", velocity_deadband=0.02, dither=[0.6, 0.0], dither_hz=5.0
    )
    return FrictionStage(config, StageSettings(scale=scale))


def _effort(stage, t, v):
    stage.update_measured(JOINTS, v)
    return np.asarray(stage.update(JOINTS, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], t).effort)


@pytest.mark.parametrize("scale", [1.0, 0.5, 0.3, [0.5, 0.7]])
def test_the_dither_amplitude_does_not_scale(scale):
    stage = _stage(scale)
    assert _effort(stage, 0.0, [0.0, 0.0])[0] == pytest.approx(0.6 * 0.3, abs=1e-12)
    assert _effort(stage, 0.1, [0.0, 0.0])[0] == pytest.approx(-0.6 * 0.2, abs=1e-12)


@pytest.mark.parametrize("scale", [0.0, [0.0, 1.0]])
def test_scale_0_switches_the_dither_off_with_the_term(scale):
    stage = _stage(scale)
    assert _effort(stage, 0.0, [0.0, 0.0])[0] == 0.0
    assert _effort(stage, 0.1, [0.0, 0.0])[0] == 0.0


@pytest.mark.parametrize("scale", [1.0, 0.5, 0.3])
def test_the_velocity_term_scales(scale):
    stage = _stage(scale)
    v = 0.5  # beyond twice the deadband: the dither has faded out
    assert _effort(stage, 0.0, [v, -v]).tolist() == pytest.approx(
        [scale * 0.3 * math.tanh(v / 0.02), -scale * 0.1 * math.tanh(v / 0.02)], abs=1e-12
    )
