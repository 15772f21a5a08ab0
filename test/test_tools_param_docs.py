"""Tests of gravity_friction_comp.tools.param_docs: docs/parameters.md matches the declarations."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.nodes.parameters import Param
from gravity_friction_comp.tools import param_docs

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "parameters.md"

SAMPLE = (
    Param("rate_hz", 250.0, "publication rate", "Hz", low=0.0, high=5000.0),
    Param("joints", [""], "joint names"),
)
TEXT = "intro\n<!-- params:demo -->\nstale\n<!-- /params:demo -->\nprose kept\n"


def _node_modules():
    pytest.importorskip("rclpy", reason="node modules import rclpy")
    return {node: param_docs.parameters_of(node) for node in param_docs.NODES}


def test_docs_match_the_declarations():
    declared = _node_modules()
    text = DOCS.read_text(encoding="utf-8")
    assert param_docs.update(text, param_docs.tables(declared)) == text, (
        "docs/parameters.md is stale: run python -m gravity_friction_comp.tools.param_docs"
    )


def test_every_declared_name_appears_in_its_table():
    # Independent of the renderer: each node's section lists each parameter name once.
    text = DOCS.read_text(encoding="utf-8")
    for node, params in _node_modules().items():
        body = text.split(f"<!-- params:{node} -->")[1].split(f"<!-- /params:{node} -->")[0]
        names = [
            line.split("|")[1].strip().strip("`") for line in body.splitlines() if line.startswith("| `")
        ]
        assert names == [p.name for p in params], node


def test_check_detects_a_changed_declaration():
    text = param_docs.update(TEXT, param_docs.tables({"demo": SAMPLE}))
    assert "stale" not in text and "prose kept" in text and "| `rate_hz` | double | `250.0` | Hz |" in text
    assert param_docs.update(text, param_docs.tables({"demo": SAMPLE})) == text  # idempotent
    changed = (dataclasses.replace(SAMPLE[0], default=500.0), SAMPLE[1])
    assert param_docs.update(text, param_docs.tables({"demo": changed})) != text
    added = (*SAMPLE, Param("loop", True, "repeat"))
    assert "`loop`" in param_docs.update(text, param_docs.tables({"demo": added}))


def test_main_check_exits_1_with_a_diff_on_stale_docs(tmp_path, capsys):
    _node_modules()
    stale = tmp_path / "parameters.md"
    stale.write_text(
        DOCS.read_text(encoding="utf-8").replace(
            "| `rate_hz` | double | `500.0`", "| `rate_hz` | double | `400.0`"
        )
    )
    assert param_docs.main(["--check", "--docs", str(stale)]) == 1
    out = capsys.readouterr().out
    assert "-| `rate_hz` | double | `400.0`" in out and "+| `rate_hz` | double | `500.0`" in out
    assert param_docs.main(["--docs", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == DOCS.read_text(encoding="utf-8")
    assert param_docs.main(["--check", "--docs", str(stale)]) == 0


def test_missing_or_duplicate_markers_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="0 marker pairs"):
        param_docs.update("no markers\n", {"demo": "table\n"})
    with pytest.raises(ConfigError, match="2 marker pairs"):
        param_docs.update(TEXT + TEXT, {"demo": "table\n"})


def test_normalise_accepts_mappings_and_keeps_the_first_of_a_name():
    legacy = {"rate_hz": (250.0, "publication rate"), "joints": SAMPLE[1]}
    assert [(p.name, p.default) for p in param_docs.normalise(legacy)] == [
        ("rate_hz", 250.0),
        ("joints", [""]),
    ]
    twice = (SAMPLE[0], dataclasses.replace(SAMPLE[0], default=1.0))
    assert param_docs.normalise(twice) == (SAMPLE[0],)
    with pytest.raises(ConfigError):
        param_docs.normalise(["rate_hz"])


def test_a_pipe_in_a_description_stays_in_its_cell():
    table = param_docs.tables({"demo": (Param("effort_limit", 1.0, "|effort| bound"),)})["demo"]
    row = table.splitlines()[2]
    assert row.endswith(r"| \|effort\| bound |")
    assert len(row.replace(r"\|", "").split("|")) == 9  # 7 cells


def _listed_launch_arguments() -> list[str]:
    text = DOCS.read_text(encoding="utf-8")
    body = text.split("<!-- launch:arm.launch.py -->")[1].split("<!-- /launch:arm.launch.py -->")[0]
    return [line.split("|")[1].strip().strip("`") for line in body.splitlines() if line.startswith("| `")]


def test_launch_arguments_match_the_declarations():
    """Issue 32.8: README's launch-argument list was prose and lacked free_drive_kd_scale
    and dither_scale; now a table generated from arm.launch.py's ARGUMENTS, in
    docs/parameters.md since issue 27.4 (README <= 12 kB)."""
    text = DOCS.read_text(encoding="utf-8")
    assert param_docs.update(text, param_docs.launch_tables(), "launch") == text, (
        "docs/parameters.md launch arguments are stale: run python -m gravity_friction_comp.tools.param_docs"
    )
    assert {"free_drive_kd_scale", "dither_scale"} <= set(_listed_launch_arguments())


def test_docs_list_every_argument_the_launch_file_reads(repo_root):
    """Independent of ARGUMENTS: every launch configuration ``_setup`` reads (``cfg("x")``,
    ``given("x")``, ``_bool(context, "x")`` in the source) is in the docs table, once."""
    import re

    source = (repo_root / "launch" / "arm.launch.py").read_text(encoding="utf-8")
    read = set(re.findall(r'(?:cfg|given)\("(\w+)"\)', source))
    read |= set(re.findall(r'_bool\(context, "(\w+)"\)', source))
    read |= set(re.findall(r"PROFILE_FILES = \{(.*?)\}", source, re.S)[0].split('"')[1::4])
    listed = _listed_launch_arguments()
    assert len(listed) == len(set(listed))
    assert read <= set(listed), sorted(read - set(listed))
    assert {"free_drive_kd_scale", "dither_scale", "mode", "composed"} <= read


def test_docs_launch_table_is_the_real_launch_description(repo_root):
    """Where launch is importable: the docs table names are the DeclareLaunchArgument names of
    generate_launch_description(), defaults included."""
    from test_launch import load_launch_module, require_launch_ros

    require_launch_ros()
    from launch.actions import DeclareLaunchArgument

    description = load_launch_module(repo_root, "arm.launch.py").generate_launch_description()
    declared = [
        (a.name, "".join(s.text for s in a.default_value) if a.default_value else "")
        for a in description.entities
        if isinstance(a, DeclareLaunchArgument)
    ]
    assert [n for n, _ in declared] == _listed_launch_arguments()
    assert declared == [(n, d) for n, d, _ in param_docs.launch_arguments_of("arm.launch.py")]


def test_launch_table_escapes_pipes_and_shows_empty_defaults():
    table = param_docs.launch_table([("mode", "follow", "a | b"), ("urdf", "", "path")])
    assert table.splitlines()[2:] == ["| `mode` | `follow` | a \\| b |", '| `urdf` | `""` | path |']
