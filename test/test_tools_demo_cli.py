"""tools/demo/cli.py: a run that recorded too little (an overloaded ``--realtime`` machine) ends
in one line and the documented exit (3 inconclusive; 4 in lockstep, where the clock waits for
the chain), not a traceback."""

from __future__ import annotations

import pytest

pytest.importorskip("pinocchio")

from demo_helpers import short_recording  # noqa: E402

from gravity_friction_comp.errors import RunIncomplete  # noqa: E402
from gravity_friction_comp.tools.demo import cli, exits  # noqa: E402
from gravity_friction_comp.tools.demo.metrics import tracking_error  # noqa: E402
from gravity_friction_comp.tools.demo.options import build_setup, parse_args  # noqa: E402


@pytest.mark.parametrize("samples", [0, 9])
def test_tracking_error_with_too_little_data_is_run_incomplete(tmp_path, samples):
    setup = build_setup(parse_args(["--output", str(tmp_path)]), tmp_path)
    with pytest.raises(
        RunIncomplete, match=f"too little data recorded: {samples} setpoints, {samples} joint_states"
    ):
        tracking_error(setup, short_recording(len(setup.joints), samples, False))
    assert issubclass(RunIncomplete, RuntimeError)  # callers that caught RuntimeError still do


@pytest.mark.parametrize(
    ("flags", "status", "text"),
    [
        (
            ["--realtime"],
            exits.EXIT_INCONCLUSIVE,
            "gfc_demo: inconclusive: the machine could not keep real time (",
        ),
        ([], exits.EXIT_STALLED, "gfc_demo: the chain stopped answering: "),
    ],
)
def test_main_with_too_little_data_is_one_line_and_the_documented_exit(
    tmp_path, monkeypatch, capsys, flags, status, text
):
    calls = []

    def run_phase(setup, compensate, domain):  # what an overloaded machine records: 3 samples
        calls.append(compensate)
        return short_recording(len(setup.joints), 3, setup.lockstep)

    monkeypatch.setattr(cli, "run_phase", run_phase)
    for name in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE"):  # main() sets them: restored after
        monkeypatch.setenv(name, "79" if name == "ROS_DOMAIN_ID" else "LOCALHOST")
    assert cli.main([*flags, "--output", str(tmp_path)]) == status
    assert calls == [False, True]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(text), err
    assert "too little data recorded: 3 setpoints, 3 joint_states" in err[0]
    assert "Traceback" not in err[0]


def test_loaded_sine_with_too_little_data_is_one_line_too(tmp_path, monkeypatch, capsys):
    """``--profile loaded_sine`` goes through the same evaluate(): same line, same exit."""
    from gravity_friction_comp.tools.demo import phase

    def run_phase(setup, compensate, domain, **kw):
        return short_recording(len(setup.joints), 3, setup.lockstep)

    monkeypatch.setattr(phase, "run_phase", run_phase)  # loaded_sine imports it when it runs
    for name in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE"):
        monkeypatch.setenv(name, "79" if name == "ROS_DOMAIN_ID" else "LOCALHOST")
    status = cli.main(["--profile", "loaded_sine", "--realtime", "--output", str(tmp_path)])
    assert status == exits.EXIT_INCONCLUSIVE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "too little data recorded: 3 setpoints, 3 joint_states" in err[0], err


def test_a_stalled_lockstep_chain_is_one_line_and_exit_4_in_both_demo_profiles(tmp_path, monkeypatch, capsys):
    """LockstepStalled (the chain went silent while the clock waited) from the default demo
    and from ``--profile loaded_sine``: the same one line and EXIT_STALLED (4, docs/demo.md)."""
    from gravity_friction_comp.errors import LockstepStalled
    from gravity_friction_comp.tools.demo import phase

    def run_phase(*args, **kw):
        raise LockstepStalled("no joint_states for 10 s at sim time 1.234 s")

    monkeypatch.setattr(cli, "run_phase", run_phase)
    monkeypatch.setattr(phase, "run_phase", run_phase)
    for name in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE"):
        monkeypatch.setenv(name, "79" if name == "ROS_DOMAIN_ID" else "LOCALHOST")
    for flags in ([], ["--profile", "loaded_sine"]):
        assert cli.main([*flags, "--output", str(tmp_path)]) == exits.EXIT_STALLED == 4
        err = capsys.readouterr().err.strip().splitlines()
        assert err == ["gfc_demo: the chain stopped answering: no joint_states for 10 s at sim time 1.234 s"]
