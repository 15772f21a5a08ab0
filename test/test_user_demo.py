"""A new user's bad input to the demo tools: refused up front with one line, exit 2.

``gravity_models --calibrated`` with a URDF that does not load or has other joints used to
be found only after the full uncalibrated run (~30 s of lockstep chain); it must be refused
before any run starts.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pinocchio")


def _no_run(*args, **kwargs):
    raise AssertionError("a lockstep run was started for bad input")


@pytest.mark.parametrize(
    ("calibrated", "message"),
    [
        ("broken.urdf", "malformed URDF"),
        ("arms/yam_ultra/yam_ultra.urdf", "--calibrated joints"),
    ],
)
def test_gravity_models_refuses_a_bad_calibrated_urdf_before_any_run(
    repo_root, tmp_path, monkeypatch, capsys, calibrated, message
):
    from gravity_friction_comp.tools.demo import gravity_models

    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot name='x'><link")
    path = broken if calibrated == "broken.urdf" else repo_root / calibrated
    monkeypatch.setattr(gravity_models, "compare", _no_run)
    status = gravity_models.main(
        ["--arm", "palletizer", "--calibrated", str(path), "--output", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and message in err[0], err


@pytest.mark.parametrize("dwell", ["0", "0.05"])
def test_demo_refuses_a_pick_place_stop_too_short_to_measure_sag(tmp_path, dwell):
    # sag and hold are means over the last 70 % of a stop: an empty window gave "sag nan"
    from gravity_friction_comp.errors import ConfigError
    from gravity_friction_comp.tools.demo.options import build_setup, parse_args

    with pytest.raises(ConfigError, match="--dwell-time must be ≥ 0.2 s") as info:
        build_setup(parse_args(["--arm", "palletizer", "--dwell-time", dwell]), tmp_path)
    assert info.value.key == "dwell_time"
    # a sine run has no stops: any dwell is fine there
    build_setup(parse_args(["--arm", "palletizer", "--profile", "sine", "--dwell-time", dwell]), tmp_path)
