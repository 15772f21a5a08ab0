"""Bad command-line values of the tools: a one-line ``error:`` and exit code 2, before any
work starts (no traceback, no recording or identification thrown away)."""

from __future__ import annotations


def test_record_checks_the_output_folder_before_recording(tmp_path, capsys):
    from gravity_friction_comp.tools.record import main

    (tmp_path / "file").write_text("x")
    for out in ("/nonexistdir/x.csv", "/nonexistdir/bag", str(tmp_path / "file" / "x.csv")):
        # record_bag is never reached: without the check it would start rclpy and record
        assert main(["--out", out, "--duration", "1"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("record: error: --out") and err.count("\n") == 1, err
    assert not (tmp_path / "nonexistdir").exists()
