"""Every console script of setup.py: ``--help`` prints its usage and exits 0 at once, without
starting rclpy or any node (issue 26: ``composed_free_drive --help`` started the chain)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import REPO_ROOT

SCRIPTS = re.findall(r'f"(\w+) = \{PACKAGE\}\.([\w.]+):main"', (REPO_ROOT / "setup.py").read_text())
#: As the script runs it: sys.argv = [name, --help], then main(); a ROS argument after
#: --ros-args is ROS's, not a help request.
RUN = "import sys; sys.argv = {argv!r}; from gravity_friction_comp.{module} import main; sys.exit(main())"


def _run(name, module, *args):
    code = RUN.format(argv=[name, *args], module=module)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )


def test_every_script_is_swept():
    assert len(SCRIPTS) == 17 and ("composed_free_drive", "nodes.composed_free_drive") in SCRIPTS
    assert ("setpoint_shaper", "nodes.setpoint_shaper_node") in SCRIPTS
    assert ("composed_teleop", "nodes.composed_teleop") in SCRIPTS  # issue 31


@pytest.mark.parametrize(("name", "module"), SCRIPTS, ids=[s[0] for s in SCRIPTS])
def test_help_prints_usage_and_exits_0_without_starting(name, module):
    done = _run(name, module, "--help")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower() and name in done.stdout
    # a started node logs ([INFO] ..., a configuration error) on stderr; help writes nothing there
    assert done.stderr == ""
