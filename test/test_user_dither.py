"""A new user's dither_hz at (or above) the setpoint rate: still a zero-mean dither.

Sampled at 500 Hz setpoints, ``(-1)^floor(2·f_d·t)`` with f_d = 500 Hz is +1 at every
setpoint: a constant push of d × breakaway (0.8 × 0.12 = 0.096 N·m on palletizer base_yaw)
instead of a dither. Hand-computed expectation: the term alternates sign setpoint by
setpoint, so its sum over an even number of setpoints is 0 and its first value is +d·B.
"""

from __future__ import annotations

import numpy as np
import pytest

from gravity_friction_comp.friction.models import FrictionModel
from gravity_friction_comp.stage.dither import StictionDither

JOINTS = ["a", "b"]


@pytest.mark.parametrize("hz", [500.0, 1000.0, 1500.0, 2e6])
def test_dither_at_or_above_the_setpoint_rate_alternates_per_setpoint(hz):
    model = FrictionModel(JOINTS, breakaway=[0.12, 0.2], eps=0.02)
    dither = StictionDither(model, 0.8, 0.02, hz)
    terms = np.array([dither.torque(np.zeros(2), k / 500.0) for k in range(1000)])
    np.testing.assert_allclose(terms[0], [0.096, 0.16], rtol=0, atol=1e-15)
    np.testing.assert_allclose(terms[1::2], -terms[0::2], rtol=0, atol=1e-15)
    assert np.abs(terms.sum(axis=0)).max() < 1e-12


def test_below_the_setpoint_rate_the_wave_is_unchanged():
    # 5 Hz at 500 Hz setpoints: + on [0, 0.1) s, - on [0.1, 0.2) s, ... (module docstring)
    model = FrictionModel(JOINTS, breakaway=[0.12, 0.2], eps=0.02)
    dither = StictionDither(model, 0.5, 0.02, 5.0)
    signs = [dither.sign(k / 500.0) for k in range(500)]
    hand = [1.0 if (k // 50) % 2 == 0 else -1.0 for k in range(500)]
    assert signs == hand
