"""The simulator's step and frame path give the same numbers as before their CPU cut.

Two routes: (1) the per-step arrays of test/sim_step_scenarios.py against
test/reference/sim_step_reference.npz, recorded from the step at commit 8c293fe (before the
cut; test/reference/README.md); (2) :func:`_sticking_step` against the pre-cut function,
copied below unchanged, on random inputs that reach every stuck/free pattern of 4 joints,
bit for bit.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sim_step_scenarios import REFERENCE, record

from gravity_friction_comp.mit.codec import MitCommand, decode_command, encode_command
from gravity_friction_comp.mit.motor_table import motor_limits
from gravity_friction_comp.mit.special_frames import ENABLE_FRAME
from gravity_friction_comp.sim.arm import _sticking_step
from gravity_friction_comp.sim.motor_emulator import EmulatedMotor


def _sticking_step_before(mass, rhs, v, budget, dt):
    """gravity_friction_comp/sim/arm.py _sticking_step at commit 8c293fe, verbatim."""
    n = rhs.shape[0]
    stop = mass.diagonal() / dt * v + rhs
    stuck = np.abs(stop) <= budget
    slide_friction = np.sign(stop) * budget
    if not stuck.any():
        return np.linalg.solve(mass, rhs - slide_friction), slide_friction, stuck
    for _ in range(n + 1):
        free = ~stuck
        a = np.empty(n)
        a[stuck] = -v[stuck] / dt
        friction = np.where(free, slide_friction, 0.0)
        if free.any():
            m_ff = mass[np.ix_(free, free)]
            b_f = rhs[free] - friction[free] - mass[np.ix_(free, stuck)] @ a[stuck]
            a[free] = np.linalg.solve(m_ff, b_f)
        if not stuck.any():
            return a, friction, stuck
        need = rhs[stuck] - mass[stuck] @ a
        friction[stuck] = need
        over = np.abs(need) > budget[stuck] * (1.0 + 1e-12)
        if not over.any():
            return a, friction, stuck
        idx = np.flatnonzero(stuck)[over]
        stuck[idx] = False
        slide_friction[idx] = np.sign(need[over]) * budget[idx]
    return a, friction, stuck


@pytest.fixture(scope="module")
def recorded():
    return record()


def test_scenarios_cover_every_branch(recorded):
    """All joints stuck, some, none; and motor replies for every step (else the comparison
    below would not exercise the rewritten paths)."""
    stuck = recorded["arm_mimic_payload/stuck"]
    assert stuck.all(1).any() and (stuck.any(1) & ~stuck.all(1)).any() and (~stuck.any(1)).any()
    assert recorded["bus_palletizer/replies"].shape == (800, 24)


def test_trajectories_equal_the_recorded_ones(recorded):
    ref = np.load(REFERENCE)
    assert sorted(ref.files) == sorted(recorded)
    for key, value in recorded.items():
        if key.endswith(("/stuck", "/replies")):
            np.testing.assert_array_equal(value, ref[key], err_msg=key)
        else:  # bit-identical here; a tolerance of 1e-12 for other CPUs' BLAS/LAPACK kernels
            np.testing.assert_allclose(value, ref[key], rtol=0.0, atol=1e-12, err_msg=key)


def test_sticking_step_equals_the_previous_code_bit_for_bit():
    rng = np.random.default_rng(7)
    patterns, released = set(), 0
    for _ in range(3000):
        n = int(rng.integers(1, 5))
        x = rng.normal(size=(n, n))
        mass = x @ x.T + n * np.eye(n)
        rhs = rng.normal(0.0, 2.0, n)
        v = rng.normal(0.0, 0.01, n) * rng.integers(0, 2, n)
        budget = rng.uniform(0.0, 3.0, n)
        got = _sticking_step(mass, rhs.copy(), v, budget, 1e-3)
        want = _sticking_step_before(mass, rhs.copy(), v, budget, 1e-3)
        for g, w in zip(got, want):
            assert g.tobytes() == w.tobytes()
        if n == 4:
            patterns.add(tuple(got[2].tolist()))
        first_guess = np.abs(mass.diagonal() / 1e-3 * v + rhs) <= budget
        released += bool((first_guess & ~got[2]).any())  # the coupled pass freed a joint
    assert patterns == set(itertools.product((False, True), repeat=4))
    assert released > 100


def test_a_repeated_command_frame_gives_the_command_decoded_anew():
    """The emulator decodes a repeated frame once; every frame still yields decode_command's
    command, also after other frames and a direct assignment in between."""
    limits = motor_limits("DM4310")
    motor = EmulatedMotor(limits, 1, 0x11)
    frames = [encode_command(p, 0.0, 5.0, 0.2, t, limits) for p, t in ((0.1, 0.0), (0.1, 0.0), (-0.3, 0.5))]
    for data in (*frames, ENABLE_FRAME, frames[2], frames[0]):
        motor.command = MitCommand(9.0, 9.0, 9.0, 9.0, 9.0)  # a stale value must not survive
        motor.handle_frame(data)
        if data != ENABLE_FRAME:
            assert motor.command == decode_command(data, limits)
