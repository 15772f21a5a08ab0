"""tools/demo/report.py and metrics.py on synthetic recordings: the plot's layout, the
headline, the fixed evaluation window and the real-time timing check (no ROS needed)."""

from __future__ import annotations

import numpy as np
import pytest

from gravity_friction_comp.tools.demo import metrics
from gravity_friction_comp.tools.demo.phase import Recording
from gravity_friction_comp.tools.demo.scenario import DemoSetup

JOINTS = ("a", "b")


def _setup(**kw) -> DemoSetup:
    base = dict(
        urdf="u",
        arm_config="c",
        motor_map="m",
        sim_config="s",
        gravity_params="g",
        friction_params="f",
        joints=JOINTS,
        all_joints=JOINTS,
        home=(0.0, 0.0),
        pick=(0.3, 0.1),
        place=(-0.3, -0.1),
        proximal=("a",),
        distal=("b",),
        start_delay=1.0,
    )
    base.update(kw)
    return DemoSetup(**base)


def _recording(setup: DemoSetup, offset: float, *, lockstep=True, extra_s=0.0, startup=0.0) -> Recording:
    """Setpoint q = sin(t); measured = setpoint + offset (a constant error [rad]), plus a
    start-up transient of ``startup`` [rad] before the cycle starts."""
    rec = Recording()
    end = setup.start_delay + setup.cycle_time + extra_s
    for k in range(int(end / 0.004) + 1):
        t = 10.0 + 0.004 * k
        q = [np.sin(t), 0.5 * np.sin(t)]
        rec.setpoint_t.append(t)
        rec.setpoint_q.append(q)
        rec.arrival_t.append(t)
        rec.command_stamp_t.append(t)
        rec.arrival_q.append(q)
        rec.command_t.append(t)
        rec.command_effort.append([0.1, 0.2])
    for k in range(int(end / 0.002) + 1):
        t = 10.0 + 0.002 * k
        bump = startup if t < 10.0 + setup.start_delay else 0.0
        qs = [np.sin(t - setup.delay), 0.5 * np.sin(t - setup.delay)]
        rec.state_t.append(t)
        rec.state_q.append([qs[0] + offset + bump, qs[1] + offset + bump])
    rec.timing = {"lockstep": lockstep, "sim_s": end, "wall_s": end}
    return rec


def test_error_window_is_fixed_and_matches_the_constant_offset():
    setup = _setup()
    short = metrics.evaluate(setup, _recording(setup, 0.002, extra_s=0.1))
    longer = metrics.evaluate(setup, _recording(setup, 0.002, extra_s=0.5))
    assert short == longer  # recording past the cycle does not change the figures
    assert short["a"].rms == pytest.approx(2.0, abs=1e-3)  # [mrad] (linear interpolation of a sine)
    assert short["b"].max == pytest.approx(2.0, abs=1e-3)


def test_thresholds_in_one_place_and_printed():
    assert (metrics.MIN_PROXIMAL_DROP, metrics.MAX_SAG_MRAD, metrics.MAX_DISTAL_GROWTH) == (0.70, 1.0, 0.10)
    setup = _setup(profile="sine")
    off = metrics.evaluate(setup, _recording(setup, 0.010))
    on = metrics.evaluate(setup, _recording(setup, 0.0035))  # -65 %: not enough now
    ok, lines = metrics.acceptance(setup, off, on)
    assert not ok and lines[-1] == metrics.thresholds_text()
    assert "≥ 70%" in lines[-1] and "≤ 1 mrad" in lines[-1]
    on = metrics.evaluate(setup, _recording(setup, 0.0025))  # -75 %
    assert metrics.acceptance(setup, off, on)[0]


def test_timing_problems_only_in_real_time():
    setup = _setup()
    rec = _recording(setup, 0.0, lockstep=False)
    rec.timing.update(overruns=0, max_lateness_s=0.001)
    assert metrics.timing_problems(rec, 250.0)[0] == []
    rec.timing["max_lateness_s"] = 0.080
    rec.setpoint_t[100:] = [t + 0.05 for t in rec.setpoint_t[100:]]  # a 54 ms gap
    rec.arrival_t = [t + 0.05 for t in rec.arrival_t]  # every command 50 ms old
    problems, figures = metrics.timing_problems(rec, 250.0)
    assert len(problems) == 3
    assert figures["max_lateness_ms"] == pytest.approx(80.0)
    assert figures["max_setpoint_gap_ms"] == pytest.approx(54.0)
    assert figures["late_command_fraction"] == 1.0
    rec.timing["lockstep"] = True
    assert metrics.timing_problems(rec, 250.0) == ([], {})


def test_headline_figures_are_table_cells():
    """Two proximal joints (errors 10 and 4 mrad off, 1 and 3 on): the title names the worst
    one with its table figures (the old root-sum-square 10.8 → 3.2 was in no table cell)."""
    import re

    from gravity_friction_comp.tools.demo.report import headline, table

    setup = _setup(profile="sine", proximal=("a", "b"), distal=())
    off = metrics.evaluate(setup, _two_errors(setup, 0.010, 0.004))
    on = metrics.evaluate(setup, _two_errors(setup, 0.001, 0.003))
    title = headline(setup, off, on)
    assert title == "proximal a RMS 10.00 → 1.00 mrad"
    row_a = next(r for r in table(setup, off, on).splitlines() if r.startswith("a "))
    for figure in re.findall(r"\d+\.\d+", title):
        assert figure in row_a.split()


def _two_errors(setup: DemoSetup, err_a: float, err_b: float) -> Recording:
    """:func:`_recording` with a constant error per joint [rad]."""
    rec = _recording(setup, 0.0)
    rec.state_q = [[qa + err_a, qb + err_b] for qa, qb in rec.state_q]
    return rec


def test_plot_layout():
    pytest.importorskip("matplotlib")
    from gravity_friction_comp.tools.demo.report import build_figure, headline

    setup = _setup(profile="sine")
    off_rec = _recording(setup, 0.010, startup=1.0)  # a 1 rad transient before the cycle
    on_rec = _recording(setup, 0.001)
    off, on = metrics.evaluate(setup, off_rec), metrics.evaluate(setup, on_rec)
    title = f"ACCEPTED: {headline(setup, off, on)}"
    assert "proximal a RMS 10.00 → 1.00 mrad" in title and "distal b RMS 10.00 → 1.00 mrad" in title
    fig = build_figure(setup, off_rec, on_rec, title)
    axes = np.array(fig.axes).reshape(len(JOINTS) + 2, 2)
    assert fig._suptitle.get_text() == title
    for row in axes:
        assert row[0].get_shared_y_axes().joined(row[0], row[1])  # off and on share y
        assert row[0].get_xlim() == (0.0, setup.cycle_time)
    # no transient sets the scale: the first joint's axis spans the sine, not the 1 rad bump
    assert axes[0][0].get_ylim()[1] < 1.5
    assert axes[len(JOINTS)][0].get_ylabel() == "tracking error [mrad]"
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for row in axes:
        legend = row[1].get_legend()
        assert legend is not None
        assert legend.get_window_extent(renderer).x0 >= row[1].get_window_extent(renderer).x1  # outside
