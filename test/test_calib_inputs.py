"""calibrate_gravity: every bad input gives the one-line ``error:`` and exit 2 (no traceback)."""

from __future__ import annotations

import pytest

pytest.importorskip("pinocchio")

from gravity_friction_comp.calib.plan import load_plan  # noqa: E402
from gravity_friction_comp.errors import ConfigError  # noqa: E402
from gravity_friction_comp.tools import calibrate_gravity  # noqa: E402

BAD = [
    ["plan", "--dither", "nan"],
    ["plan", "--dither", "-1"],
    ["plan", "--approach", "-0.1"],
    ["plan", "--move-time", "0"],
    ["plan", "--dither-period", "0"],
    ["plan", "--dither-cycles", "0"],
    ["plan", "--margin", "nan"],
    ["--sim", "--dither-period", "0"],
    ["--sim", "--payload-mass", "nan"],
    ["record", "--plan", "p.yaml", "--rate", "0"],
    ["record", "--plan", "p.yaml", "--rate", "nan"],
    ["record", "--plan", "p.yaml", "--rate", "-5"],
]


@pytest.mark.parametrize("argv", BAD, ids=" ".join)
def test_bad_number_is_one_line_error(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert calibrate_gravity.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("calibrate_gravity: error: ")
    assert list(tmp_path.iterdir()) == []  # nothing written


def _plan_file(tmp_path, **changes):
    body = {
        "joints": ["a"],
        "home": [0.0],
        "poses": [[0.1]],
        "approach": 0.1,
        "move_time": 1.0,
        "approach_time": 0.5,
        "hold_time": 1.0,
        "settle_time": 0.5,
        "dither": 0.0,
    }
    body.update(changes)
    lines = "".join(f"  {k}: {v}\n" for k, v in body.items())
    path = tmp_path / "plan.yaml"
    path.write_text("calibration_plan:\n" + lines)
    return path


@pytest.mark.parametrize(
    "change",
    [{"dither": ".nan"}, {"dither": -1}, {"approach": ".nan"}, {"move_time": 0}, {"approach_time": -1}],
    ids=str,
)
def test_load_plan_rejects_bad_numbers(change, tmp_path):
    load_plan(_plan_file(tmp_path))  # the unedited file loads
    with pytest.raises(ConfigError):
        load_plan(_plan_file(tmp_path, **change))


def test_no_command_message_lists_payload(capsys):
    assert calibrate_gravity.main([]) == 2
    assert "plan, record, fit, payload" in capsys.readouterr().err


def test_sim_unknown_payload_parent_refused_before_recording(tmp_path, capsys):
    out = tmp_path / "calib"
    argv = ["--sim", "--payload-mass", "0.1", "--payload-parent", "nosuch", "--out-dir", str(out)]
    assert calibrate_gravity.main(argv) == 2
    err = capsys.readouterr().err
    assert "'nosuch'" in err and "links:" in err and "base_link" in err
    assert not out.exists()  # refused before the output folder or any file was written
