"""``python -m gravity_friction_comp.tools.param_docs``: the parameter and launch-argument tables
of docs/parameters.md.

Usage::

    python -m gravity_friction_comp.tools.param_docs           # rewrite the tables
    python -m gravity_friction_comp.tools.param_docs --check   # exit 1 + diff if stale

Each table sits between ``<!-- params:NODE -->`` and ``<!-- /params:NODE -->`` and is
:func:`~gravity_friction_comp.nodes.parameters.markdown_table` of the node module's
``PARAMETERS`` declaration, so the docs and the rclpy descriptors come from one list. The
table of a launch file's arguments sits between ``<!-- launch:FILE -->`` and
``<!-- /launch:FILE -->`` and is :func:`launch_table` of the file's ``ARGUMENTS`` (what its
``DeclareLaunchArgument`` list is built from; read without importing ``launch``). The
text around the markers is left as written. Importing the node modules needs rclpy.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import pathlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.nodes.parameters import Param, markdown_table

__all__ = [
    "LAUNCH_FILES",
    "NODES",
    "launch_arguments_of",
    "launch_table",
    "launch_tables",
    "main",
    "normalise",
    "parameters_of",
    "tables",
    "update",
]

#: Node name (as in the markers) -> module whose ``PARAMETERS`` declares its parameters.
NODES: Mapping[str, str] = {
    "gravity_compensation": "gravity_friction_comp.nodes.gravity_compensation_node",
    "friction_feedforward": "gravity_friction_comp.nodes.friction_feedforward_node",
    "mit_bridge": "gravity_friction_comp.nodes.mit_bridge_node",
    "setpoint_player": "gravity_friction_comp.nodes.setpoint_player",
    "setpoint_shaper": "gravity_friction_comp.nodes.setpoint_shaper_node",
    "free_drive": "gravity_friction_comp.nodes.free_drive_node",
    "teleop": "gravity_friction_comp.nodes.teleop_node",
    "momentum_observer": "gravity_friction_comp.nodes.observer_node",
}

#: Launch files whose arguments docs/parameters.md lists (name in the markers, under ``launch/``).
LAUNCH_FILES = ("arm.launch.py", "teleop.launch.py")

_DOCS = pathlib.Path("docs") / "parameters.md"
_REPO = pathlib.Path(__file__).resolve().parents[2]


def normalise(declared: Any) -> tuple[Param, ...]:
    """``declared`` as a tuple of :class:`Param`, first declaration of each name kept.

    Accepts a sequence of ``Param``, or a mapping name -> ``Param`` or name -> ``(default,
    description)`` (older declaration styles).

    Raises:
        ConfigError: an entry that is none of these.
    """
    items: Iterable[Any]
    if isinstance(declared, Mapping):
        items = (v if isinstance(v, Param) else Param(name, v[0], v[1]) for name, v in declared.items())
    else:
        items = declared
    out: dict[str, Param] = {}
    for p in items:
        if not isinstance(p, Param):
            raise ConfigError(f"parameter declaration {p!r} is not a Param", value=p)
        out.setdefault(p.name, p)
    return tuple(out.values())


def parameters_of(node: str) -> tuple[Param, ...]:
    """The declared parameters of ``node`` (a key of :data:`NODES`), in declaration order."""
    return normalise(importlib.import_module(NODES[node]).PARAMETERS)


def tables(declarations: Mapping[str, Iterable[Param]] | None = None) -> dict[str, str]:
    """Node name -> Markdown table; ``None`` reads every node of :data:`NODES`."""
    if declarations is None:
        declarations = {node: parameters_of(node) for node in NODES}
    return {node: markdown_table(normalise(params)) for node, params in declarations.items()}


def launch_arguments_of(name: str, root: pathlib.Path | None = None) -> tuple[tuple[str, str, str], ...]:
    """``(name, default, description)`` of each argument of launch file ``launch/<name>``
    (its ``ARGUMENTS``), in declaration order; ``root``: the source tree (default this one).

    Raises:
        ConfigError: the file is missing or has no ``ARGUMENTS``.
    """
    path = (root or _REPO) / "launch" / name
    spec = importlib.util.spec_from_file_location(name.replace(".", "_"), path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ConfigError(f"launch file {str(path)!r} not found", key="launch", value=str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "ARGUMENTS"):
        raise ConfigError(f"{path} declares no ARGUMENTS", key="launch", value=str(path))
    return tuple((str(n), str(d), str(t)) for n, d, t in module.ARGUMENTS)


def launch_table(arguments: Iterable[tuple[str, str, str]]) -> str:
    """A Markdown table of launch ``arguments``: name, default (empty: ``""``), description."""
    rows = ["| argument | default | description |", "|---|---|---|"]
    for name, default, description in arguments:
        shown = f"`{default}`" if default else '`""`'
        cell = description.replace("|", r"\|")  # GFM: an escaped pipe stays in its cell
        rows.append(f"| `{name}` | {shown} | {cell} |")
    return "\n".join(rows) + "\n"


def update(text: str, node_tables: Mapping[str, str], kind: str = "params") -> str:
    """``text`` with the body between each node's markers replaced by its table.

    Args:
        text: The Markdown file.
        node_tables: Marker name (a node, or a launch file with ``kind="launch"``) -> table.
        kind: Marker prefix: ``params`` (``<!-- params:NODE -->``) or ``launch``.

    Raises:
        ConfigError: a node's marker pair is missing or appears more than once.
    """
    for node, table in node_tables.items():
        pattern = re.compile(
            rf"(<!-- {kind}:{re.escape(node)} -->\n).*?(<!-- /{kind}:{re.escape(node)} -->)", re.S
        )
        found = len(pattern.findall(text))
        if found != 1:
            raise ConfigError(f"docs: {found} marker pairs for node {node!r}, expected 1", key=node)
        text = pattern.sub(lambda m: m.group(1) + "\n" + table + "\n" + m.group(2), text)
    return text


def _default(relative: pathlib.Path) -> pathlib.Path:
    repo = _REPO / relative
    return repo if repo.exists() else relative


def launch_tables(root: pathlib.Path | None = None) -> dict[str, str]:
    """Launch file -> :func:`launch_table` of its arguments, for every :data:`LAUNCH_FILES`."""
    return {name: launch_table(launch_arguments_of(name, root)) for name in LAUNCH_FILES}


def main(argv=None) -> int:
    """Rewrite (or with ``--check``, compare) the tables. Exit 0, 1 if stale, 2 on a bad file."""
    import argparse
    import sys

    p = argparse.ArgumentParser(
        prog="python -m gravity_friction_comp.tools.param_docs",
        description="Generate the parameter and launch-argument tables of docs/parameters.md from the "
        "node and launch-file declarations.",
    )
    p.add_argument("--docs", type=pathlib.Path, default=None, help="default: docs/parameters.md")
    p.add_argument("--check", action="store_true", help="exit 1 and print a diff if the docs differ")
    args = p.parse_args(argv)
    path = args.docs or _default(_DOCS)
    try:
        old = path.read_text(encoding="utf-8")
        new = update(update(old, tables(), "params"), launch_tables(), "launch")
    except (OSError, ConfigError) as exc:
        print(f"param_docs: {path}: {exc}", file=sys.stderr)
        return 2
    if new == old:
        return 0
    if not args.check:
        path.write_text(new, encoding="utf-8")
        return 0
    diff = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), str(path), "declarations"
    )
    sys.stdout.writelines(diff)
    print(f"param_docs: {path} differs from the declarations; run without --check", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
