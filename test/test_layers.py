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
PURE_SUBPACKAGES = (MIT, f"{ROOT}.friction")
#: ... except the one module that opens the python-can bus (ARCHITECTURE.md: "python-can
#: here only").
CAN_MODULES = (f"{ROOT}.mit.bus",)
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
