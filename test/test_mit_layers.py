"""Layer rules of mit/ and sim/, each module imported in a fresh interpreter.

The codec and motor-table modules are pure Python (no Pinocchio, no python-can), and no core
module under mit/ or sim/ imports rclpy (the nodes are the only rclpy adapters).
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import gravity_friction_comp.mit
import gravity_friction_comp.sim

#: Modules that must import with pinocchio, python-can and rclpy all unimportable.
PURE = (
    "mit.bridge_config",
    "mit.bridge_core",
    "mit.bridge_params",
    "mit.bus_load",
    "mit.codec",
    "mit.cubemars_feedback",
    "mit.damiao_feedback",
    "mit.damiao_registers",
    "mit.feedback",
    "mit.joint_motor_map",
    "mit.motor_table",
    "mit.quantize",
    "mit.special_frames",
    "sim.config",
    "sim.motor_emulator",
)


def _core_modules() -> list[str]:
    out = []
    for package in (gravity_friction_comp.mit, gravity_friction_comp.sim):
        prefix = package.__name__.rsplit(".", 1)[1]
        out += [f"{prefix}.{m.name}" for m in pkgutil.iter_modules(package.__path__)]
    return sorted(out)


def _import_without(module: str, blocked: tuple[str, ...]) -> subprocess.CompletedProcess:
    # None in sys.modules makes `import x` raise ImportError, as if x were not installed
    code = (
        "import sys\n"
        + "".join(f"sys.modules[{b!r}] = None\n" for b in blocked)
        + f"import gravity_friction_comp.{module}\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_module_lists_match_the_packages():
    # the rclpy check below walks the packages, so a new module is covered without an edit here
    assert set(PURE) <= set(_core_modules())
    assert {"mit.bus", "sim.arm", "sim.bus"} <= set(_core_modules())


@pytest.mark.parametrize("module", PURE)
def test_pure_modules_import_without_pinocchio_can_rclpy(module):
    result = _import_without(module, ("pinocchio", "can", "rclpy"))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("module", _core_modules())
def test_no_core_module_imports_rclpy(module):
    result = _import_without(module, ("rclpy",))
    assert result.returncode == 0, result.stderr


def test_blocking_works():
    # the check can fail: a module that does import python-can is refused
    result = _import_without("mit.bus", ("can",))
    assert result.returncode != 0 and "can" in result.stderr
