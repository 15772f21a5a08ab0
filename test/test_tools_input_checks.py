"""Bad command-line values of the tools: a one-line ``error:`` and exit code 2, before any
work starts (no traceback, no recording or identification thrown away)."""

from __future__ import annotations

import pytest


def test_record_checks_the_output_folder_before_recording(tmp_path, capsys):
    from gravity_friction_comp.tools.record import main

    (tmp_path / "file").write_text("x")
    for out in ("/nonexistdir/x.csv", "/nonexistdir/bag", str(tmp_path / "file" / "x.csv")):
        # record_bag is never reached: without the check it would start rclpy and record
        assert main(["--out", out, "--duration", "1"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("record: error: --out") and err.count("\n") == 1, err
    assert not (tmp_path / "nonexistdir").exists()


@pytest.mark.parametrize(
    "option",
    [
        ("--move-time", "0"),
        ("--move-time", "nan"),
        ("--dwell-time", "-1"),
        ("--start-delay", "nan"),
        ("--domain-id", "-1"),
        ("--domain-id", "500"),
        ("--output", "/dev/zero"),
    ],
)
def test_demo_rejects_bad_option_values_while_parsing(option, capsys):
    from gravity_friction_comp.tools.demo.options import parse_args

    with pytest.raises(SystemExit) as exit_info:
        parse_args(list(option))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"gfc_demo: error: argument {option[0]}" in err and "Traceback" not in err, err


def test_demo_accepts_the_documented_domain_range():
    from gravity_friction_comp.tools.demo.options import parse_args

    assert [parse_args(["--domain-id", d]).domain_id for d in ("0", "232")] == [0, 232]


def test_demo_reports_a_non_xml_urdf_in_one_line(tmp_path, capsys):
    from gravity_friction_comp.tools.demo.cli import main

    bad = tmp_path / "bad.urdf"
    bad.write_text("this is not XML\n")
    # build_setup raises before any rclpy start: exit 2, one line
    assert main(["--urdf", str(bad), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gfc_demo: ") and err.count("\n") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("option", [("--home", "garbage"), ("--kp", "1,x,2")])
def test_demo_reports_non_numeric_joint_values_in_one_line(option, tmp_path, capsys):
    from gravity_friction_comp.tools.demo.cli import main

    # was a ValueError traceback from float('garbage'); build_setup raises before rclpy
    assert main([*option, "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == f"gfc_demo: {option[0]} needs numbers, got {option[1]!r}\n", err


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "not a regular file"), ("/tmp", "a directory")])
def test_an_existing_non_regular_urdf_is_not_reported_missing(path, kind, tmp_path, capsys):
    from gravity_friction_comp.errors import ModelError
    from gravity_friction_comp.model.urdf import read_source
    from gravity_friction_comp.tools.demo.cli import main

    with pytest.raises(ModelError, match=kind) as info:
        read_source(path)
    assert "not found" not in str(info.value)
    # the demo's file-argument check says the same
    assert main(["--urdf", path, "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert kind in err and "no such file" not in err, err


def test_identify_friction_checks_out_dir_before_identifying(tmp_path, capsys):
    from gravity_friction_comp.tools.identify_friction import main

    (tmp_path / "file").write_text("x")
    missing_log = str(tmp_path / "no_log.csv")  # the out-dir is refused before the log is read
    for out_dir in ("/dev/zero", str(tmp_path / "file" / "sub")):
        assert main(["--csv", missing_log, "--urdf", "/no/urdf", "--out-dir", out_dir]) == 2
        err = capsys.readouterr().err
        assert err.startswith("identify_friction: error: --out-dir") and "not a directory" in err, err
        assert err.count("\n") == 1 and "Errno" not in err


def test_demo_output_under_a_file_is_refused(tmp_path, capsys):
    from gravity_friction_comp.tools.demo.options import parse_args

    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit):
        parse_args(["--output", str(tmp_path / "file" / "out")])
    assert "is not a directory" in capsys.readouterr().err


def test_excite_names_itself_and_warns_about_a_clipped_start(tmp_path, capsys):
    from conftest import REPO_ROOT

    from gravity_friction_comp.model.robot_model import RobotModel
    from gravity_friction_comp.tools.excite import main

    urdf = str(REPO_ROOT / "urdf" / "palletizer.urdf")
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    assert help_text.startswith("usage: excite ") and "start pose [rad]" in help_text
    assert "sweep speeds [rad/s]" in help_text and "CSV to write" in help_text
    assert main(["--urdf", "/no/such.urdf", "--start", "0"]) == 2
    assert capsys.readouterr().err.startswith("excite: error: ")
    out = tmp_path / "e.csv"
    args = ["--urdf", urdf, "--joints", "beam_pitch", "--speeds", "0.5", "--no-chirp", "--out", str(out)]
    assert main([*args, "--start", "9", "0.3", "0.2"]) == 0
    warnings = capsys.readouterr().err.splitlines()
    # the used value: the URDF upper limit minus the excitation margin (0.05 rad)
    upper = RobotModel.from_urdf(urdf).position_upper[0]
    assert warnings == [
        f"excite: warning: --start base_yaw: 9 rad is outside its limits, used {upper - 0.05:.4g} rad"
    ]
    assert main([*args, "--start", "0", "0.3", "0.2"]) == 0
    assert capsys.readouterr().err == ""


def test_setpoint_player_help_names_its_executable(capsys):
    pytest.importorskip("rclpy")
    from gravity_friction_comp.nodes.runtime import run_node
    from gravity_friction_comp.nodes.setpoint_player import SetpointPlayerNode

    with pytest.raises(SystemExit) as info:
        run_node(SetpointPlayerNode, ["setpoint_player", "--help"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("usage: setpoint_player [-h] ")  # setup.py's script


def test_composed_chain_help_lists_its_three_nodes_parameters(capsys):
    pytest.importorskip("rclpy")
    from gravity_friction_comp.nodes import (
        friction_feedforward_node,
        gravity_compensation_node,
        mit_bridge_node,
    )
    from gravity_friction_comp.nodes.composed_chain import main
    from gravity_friction_comp.nodes.runtime import node_parameters

    with pytest.raises(SystemExit) as info:
        main(["composed_chain", "--help"])  # without the flag check: rclpy starts, no urdf_path -> 2
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: composed_chain [-h] ")
    for cls in (
        gravity_compensation_node.GravityCompensationNode,
        friction_feedforward_node.FrictionFeedforwardNode,
        mit_bridge_node.MitBridgeNode,
    ):
        params = node_parameters(cls)
        assert f"parameters of {cls.NODE_NAME} ({len(params)}):" in out and params
        section = out.split(f"parameters of {cls.NODE_NAME} ")[1]
        assert all(f"  {p.name} (" in section for p in params)


def test_docs_give_the_demo_private_domain_range_of_the_code():
    from conftest import REPO_ROOT

    from gravity_friction_comp.tools.demo.options import PRIVATE_DOMAINS, demo_domain_id, parse_args

    assert PRIVATE_DOMAINS[0] <= demo_domain_id(parse_args([])) <= PRIVATE_DOMAINS[-1]
    assert demo_domain_id(parse_args(["--domain-id", "7"])) == 7
    text = f"{PRIVATE_DOMAINS[0]}–{PRIVATE_DOMAINS[-1]}"
    for doc in ("docs/testing.md", "docs/demo.md"):  # the README links docs/testing.md
        assert text in (REPO_ROOT / doc).read_text(), doc


def test_identification_doc_records_as_long_as_its_excitation_lasts(tmp_path, capsys, monkeypatch):
    import re
    import shlex

    from conftest import REPO_ROOT

    from gravity_friction_comp.tools.excite import main

    doc = (REPO_ROOT / "docs" / "identification.md").read_text().replace("\\\n", " ")
    excite = re.search(r"python -m gravity_friction_comp\.tools\.excite (.*)", doc).group(1)
    argv = shlex.split(excite)
    argv[argv.index("--out") + 1] = str(tmp_path / "e.csv")
    monkeypatch.chdir(REPO_ROOT)  # the doc's paths are relative to the repository root
    assert main(argv) == 0
    length = float(re.search(r": ([0-9.]+) s,", capsys.readouterr().out).group(1))
    duration = float(re.search(r"tools\.record .*--duration ([0-9.]+)", doc).group(1))
    assert length <= duration <= length + 10, (length, duration)


def test_record_refuses_an_unwritable_output_folder(tmp_path, capsys):
    import os

    from gravity_friction_comp.tools.record import main

    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    if os.access(locked, os.W_OK):
        pytest.skip("running as a user who may write anywhere (root)")
    assert main(["--out", str(locked / "x.csv"), "--duration", "1"]) == 2
    assert "is not writable" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["--arms", "big_yam"], "invalid choice: 'big_yam'"),  # no acceptance thresholds for it
        (["--duration", "-1"], "must be a finite number > 0"),
        (["--duration", "nan"], "must be a finite number > 0"),
    ],
)
def test_observer_check_refuses_bad_options_while_parsing(argv, text, capsys):
    from gravity_friction_comp.tools import observer_check

    with pytest.raises(SystemExit) as exc:
        observer_check.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: observer_check") and text in err
    assert "Traceback" not in err
