"""The package's layers: the core imports without rclpy; the MIT codec and motor tables (all
of ``mit/`` but the bus), ``friction/`` and the root's own modules without Pinocchio or
python-can either; the root imports lazily (issue 12, point 2).

Each module is imported in a fresh interpreter in which the forbidden packages cannot be
imported (``sys.modules[name] = None`` makes ``import name`` and ``import name.sub`` raise
ImportError), so an import anywhere in the module's import-time closure fails the test,
whatever was imported before. Modules are discovered by walking the package, so a module
added later is covered without changing this file.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import pathlib
import pkgutil
import subprocess
import sys

import pytest

import gravity_friction_comp

ROOT = gravity_friction_comp.__name__
PACKAGE_DIR = pathlib.Path(gravity_friction_comp.__file__).resolve().parent
#: Subpackages allowed to import rclpy (the adapters and the programs).
ROS_SUBPACKAGES = ("nodes", "tools")
#: Subpackages that must import without Pinocchio or python-can (pure Python and numpy) ...
MIT = f"{ROOT}.mit"
PURE_SUBPACKAGES = (MIT, f"{ROOT}.friction", f"{ROOT}.profiles")
#: ... except the modules that open the python-can bus and move its frames (ARCHITECTURE.md:
#: "python-can in bus.py, frame_transport.py only").
CAN_MODULES = (f"{ROOT}.mit.bus", f"{ROOT}.mit.frame_transport")
#: Modules the pure-Python layer promises by name (issue 12): listed so that losing one
#: fails loudly instead of silently shrinking the checked set.
REQUIRED_PURE = (f"{ROOT}.mit.codec", f"{ROOT}.mit.motor_table")
#: Single modules outside those subpackages that are pure too (the emulated motor and the
#: simulator's YAML speak the codec, not the bus).
EXTRA_PURE = (f"{ROOT}.sim.config", f"{ROOT}.sim.motor_emulator")


def _walk(package: str) -> list[str]:
    """``package`` and every module and subpackage below it, importing only packages."""
    pkg = importlib.import_module(package)
    found = [package]
    if hasattr(pkg, "__path__"):
        found += [info.name for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}.")]
    return found


def core_modules() -> list[str]:
    """Every module of the package except those under ``nodes/`` and ``tools/``."""
    out = [ROOT]
    for info in pkgutil.iter_modules(gravity_friction_comp.__path__):
        if info.name not in ROS_SUBPACKAGES:
            out += _walk(f"{ROOT}.{info.name}")
    return sorted(out)


def pure_modules() -> list[str]:
    """Every module under :data:`PURE_SUBPACKAGES` except :data:`CAN_MODULES`, and the
    root's own modules (errors, validation, ...; not its subpackages)."""
    out = [f"{ROOT}.{i.name}" for i in pkgutil.iter_modules(gravity_friction_comp.__path__) if not i.ispkg]
    for package in PURE_SUBPACKAGES:
        out += [m for m in _walk(package) if m not in CAN_MODULES]
    return sorted(out + list(EXTRA_PURE))


#: The children import the same package as this process (a source tree or an install).
_ENV = dict(
    os.environ,
    PYTHONPATH=os.pathsep.join(
        [str(PACKAGE_DIR.parent)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    ),
)

CORE = core_modules()
PURE = pure_modules()

#: Child program: block the packages in argv[2] (JSON list), import argv[1], print what of
#: the blocked set ended up loaded (must be nothing) and the imported file.
_CHILD = """
import importlib, json, sys
blocked = json.loads(sys.argv[2])
for name in blocked:
    sys.modules[name] = None
module = importlib.import_module(sys.argv[1])
loaded = sorted(m for m in sys.modules if sys.modules[m] is not None
                and m.split('.')[0] in blocked)
print(json.dumps([loaded, module.__file__]))
"""


def import_without(module: str, blocked: tuple[str, ...]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _CHILD, module, json.dumps(list(blocked))],
        env=_ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_imports_without(module: str, blocked: tuple[str, ...]) -> None:
    proc = import_without(module, blocked)
    assert proc.returncode == 0, (
        f"{module} cannot be imported without {list(blocked)}:\n{proc.stderr[-2500:]}"
    )
    loaded, path = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == []
    # the child checked this process's copy of the package
    assert pathlib.Path(path).resolve().is_relative_to(PACKAGE_DIR)


def test_discovery_covers_the_layers():
    print(f"\ncore modules checked without rclpy ({len(CORE)}): {CORE}")
    print(f"modules checked without rclpy, pinocchio, can ({len(PURE)}): {PURE}")
    for m in (ROOT, f"{ROOT}.errors", f"{ROOT}.validation", f"{ROOT}.model.robot_model", *REQUIRED_PURE):
        assert m in CORE, f"{m} is gone: update the layer test's lists"
    for m in (*REQUIRED_PURE, *CAN_MODULES):
        assert m in _walk(MIT), f"{m} is gone: update the layer test's lists"
    for m in EXTRA_PURE:
        assert m in CORE, f"{m} is gone: update the layer test's lists"
    assert set(REQUIRED_PURE) | {f"{ROOT}.errors", f"{ROOT}.validation"} <= set(PURE)
    assert not any(m.split(".")[1] in ROS_SUBPACKAGES for m in CORE[1:])
    assert not set(CAN_MODULES) & set(PURE) and set(PURE) <= set(CORE)
    assert f"{ROOT}.model.robot_model" not in PURE


def test_the_blocking_works():
    # the route itself: a module that imports rclpy fails, the same module is fine without
    assert import_without("json", ("rclpy",)).returncode == 0
    assert import_without(f"{ROOT}.nodes.stage_node", ("rclpy",)).returncode != 0
    assert import_without(CAN_MODULES[0], ("can",)).returncode != 0
    assert import_without(f"{ROOT}.model.robot_model", ("pinocchio",)).returncode != 0


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_without_rclpy(module):
    assert_imports_without(module, ("rclpy",))


@pytest.mark.parametrize("module", PURE)
def test_pure_module_imports_without_pinocchio_can_rclpy(module):
    assert_imports_without(module, ("rclpy", "pinocchio", "can"))


def test_root_import_loads_no_heavy_dependency():
    code = (
        "import json, sys, gravity_friction_comp; "
        "print(json.dumps(sorted(m for m in ('pinocchio', 'can', 'rclpy') if m in sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=_ENV, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_every_public_name_resolves():
    names = gravity_friction_comp.__all__
    assert len(names) == len(set(names)) and names
    failed = {}
    for name in names:
        try:
            getattr(gravity_friction_comp, name)
        except Exception as error:  # noqa: BLE001 - report every name that does not resolve
            failed[name] = f"{type(error).__name__}: {error}"
    assert failed == {}
    with pytest.raises(AttributeError):
        gravity_friction_comp.no_such_name  # noqa: B018
    namespace: dict = {}
    exec(f"from {ROOT} import *", namespace)
    assert set(names) <= set(namespace)


def test_type_checking_block_matches_the_lazy_exports():
    # what static checkers see (the TYPE_CHECKING imports) is what the root exports lazily
    tree = ast.parse(pathlib.Path(gravity_friction_comp.__file__).read_text())
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
    )
    seen = {}
    for node in ast.walk(block):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                seen[alias.asname or alias.name] = node.module.removeprefix(f"{ROOT}.")
    assert seen == gravity_friction_comp._EXPORTS


def test_dir_of_the_root_is_the_public_names_and_dunders():
    listed = dir(gravity_friction_comp)
    extra = [n for n in listed if n not in gravity_friction_comp.__all__ and not n.startswith("__")]
    assert extra == []  # no Any, TYPE_CHECKING, annotations, importlib, subpackages
    assert set(gravity_friction_comp.__all__) <= set(listed) and "__version__" not in extra


# --- import directions between the package's own subpackages (issue 27, point 2) ----------

#: The layers, low to high (docs/ARCHITECTURE.md "Layers"): a module may import modules of its
#: own layer and of the layers below, never above. ``""`` is the root's own modules (errors,
#: validation, ...); the root ``__init__`` is the lazy facade over every layer and is exempt.
LAYER_ORDER = (
    "",
    "model",
    "friction",
    "stage",
    "mit",
    "observer",
    "profiles",
    "sim",
    "ident",
    "trajectory",
    "calib",
    "teleop",
    "nodes",
    "tools",
)
#: Upward edges tolerated today, each with its reason: the test fails on any other one and
#: when one of these is gone (then drop it here).
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def package_modules() -> dict[str, pathlib.Path]:
    """Every module of the package (dotted name -> file), from the source tree."""
    out = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports_of(module: str, source: str, is_package: bool, modules, typing: bool = True) -> set[str]:
    """The package's modules that ``module`` imports anywhere (module level, in a function,
    under ``TYPE_CHECKING`` unless ``typing`` is false), relative imports resolved;
    ``from a import b`` counts as ``a.b`` when that is a module, else as ``a``."""
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    annotation_only = set()
    if not typing:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                annotation_only |= {id(sub) for stmt in node.body for sub in ast.walk(stmt)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in annotation_only:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            stem = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                stem = ".".join(base + ([stem] if stem else []))
            names = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in modules else stem for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:  # ``import a.b.Name``-like: the module it is in
                name = name.rpartition(".")[0]
            if name.split(".")[0] == ROOT and name != module:
                found.add(name)
    return found


def layer_of(module: str, modules) -> str:
    """The subpackage ``module`` belongs to (``tools.demo`` is ``tools``), ``""`` for the
    root's own modules."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and modules[module].name == "__init__.py"):
        return parts[1]
    return ""


def import_graph(typing: bool = True) -> dict[str, set[str]]:
    modules = package_modules()
    return {
        m: imports_of(m, path.read_text(), path.name == "__init__.py", modules, typing)
        for m, path in modules.items()
    }


def upward_edges(graph: dict[str, set[str]], modules) -> set[tuple[str, str]]:
    """The edges ``(importer, imported)`` from a layer to one above it (or to the facade)."""
    rank = {name: i for i, name in enumerate(LAYER_ORDER)}
    out = set()
    for importer, targets in graph.items():
        if importer == ROOT:
            continue
        for target in targets:
            if target == ROOT or rank[layer_of(target, modules)] > rank[layer_of(importer, modules)]:
                out.add((importer, target))
    return out


def cycles_within_layers(graph: dict[str, set[str]], modules) -> list[list[str]]:
    """Import cycles among the modules of one layer (strongly connected components of more
    than one module, Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        for t in sorted(graph[m]):
            if layer_of(t, modules) != layer_of(m, modules) or t == ROOT:
                continue
            if t not in index:
                visit(t)
                low[m] = min(low[m], low[t])
            elif t in stack:
                low[m] = min(low[m], index[t])
        if low[m] == index[m]:
            component = []
            while True:
                t = stack.pop()
                component.append(t)
                if t == m:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for m in sorted(graph):
        if m not in index and m != ROOT:
            visit(m)
    return found


def test_every_subpackage_has_a_layer():
    modules = package_modules()
    subpackages = {layer_of(m, modules) for m in modules if m != ROOT}
    assert subpackages == set(LAYER_ORDER)


def test_the_import_reader_resolves_every_form():
    # the route itself, on a made-up module of stage/: function-local and relative imports
    modules = package_modules()
    source = (
        "import gravity_friction_comp.mit.codec\n"
        "from gravity_friction_comp.friction.params import FRICTION_KEYWORDS\n"
        "def f():\n"
        "    from ..sim import bus\n"
        "    from . import settings\n"
        "    from .contract import JointMap\n"
        "    import numpy\n"
        "if TYPE_CHECKING:\n"
        "    from gravity_friction_comp.model.urdf import load_urdf\n"
    )
    found = imports_of(f"{ROOT}.stage.made_up", source, False, modules)
    assert found == {
        f"{ROOT}.mit.codec",
        f"{ROOT}.friction.params",
        f"{ROOT}.sim.bus",
        f"{ROOT}.stage.settings",
        f"{ROOT}.stage.contract",
        f"{ROOT}.model.urdf",
    }
    assert f"{ROOT}.model.urdf" not in imports_of(
        f"{ROOT}.stage.made_up", source, False, modules, typing=False
    )
    graph = {f"{ROOT}.stage.made_up": found}
    assert upward_edges(
        graph, {**modules, f"{ROOT}.stage.made_up": PACKAGE_DIR / "stage" / "made_up.py"}
    ) == {
        (f"{ROOT}.stage.made_up", f"{ROOT}.mit.codec"),
        (f"{ROOT}.stage.made_up", f"{ROOT}.sim.bus"),
    }
    cyclic = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    names = {f"{ROOT}.stage.{k}": {f"{ROOT}.stage.{v}" for v in vs} for k, vs in cyclic.items()}
    files = {m: PACKAGE_DIR / "stage" / f"{m.rsplit('.', 1)[1]}.py" for m in names}
    assert cycles_within_layers(names, files) == [sorted(f"{ROOT}.stage.{k}" for k in "abc")]


def test_no_upward_import_between_layers():
    modules = package_modules()
    graph = import_graph()
    assert graph[f"{ROOT}.sim.bus"] >= {f"{ROOT}.mit.bus", f"{ROOT}.sim.arm"}  # it sees the edges
    upward = upward_edges(graph, modules)
    assert sorted(upward - set(KNOWN_UPWARD)) == []
    assert sorted(set(KNOWN_UPWARD) - upward) == []  # fixed: drop it from KNOWN_UPWARD


def test_no_import_cycle_within_a_layer():
    # annotation-only imports (TYPE_CHECKING: friction.bam <-> bam_solver) never run
    assert cycles_within_layers(import_graph(typing=False), package_modules()) == []


def test_architecture_doc_gives_the_layer_order():
    text = (PACKAGE_DIR.parent / "docs" / "ARCHITECTURE.md").read_text()
    assert "Layer order, low to high: " + " → ".join(n or "root modules" for n in LAYER_ORDER) in text


def test_node_runtime_and_throttle_stand_apart():
    # issue 27.3: the executables' runtime needs no stage, the log throttle no stage contract
    graph = import_graph()
    # (realtime: the ROS-free SCHED_FIFO call of the bridge's thread_priority)
    assert graph[f"{ROOT}.nodes.runtime"] <= {
        f"{ROOT}.errors",
        f"{ROOT}.nodes.parameters",
        f"{ROOT}.realtime",
    }
    assert graph[f"{ROOT}.realtime"] == {f"{ROOT}.errors"}
    assert graph[f"{ROOT}.throttle"] == set()
    users = {m for m, targets in graph.items() if f"{ROOT}.nodes.runtime" in targets}
    # the node executables run through it
    assert {
        f"{ROOT}.nodes.{n}_node" for n in ("gravity_compensation", "friction_feedforward", "free_drive")
    } <= users
