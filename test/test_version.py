"""``__version__``: one place (package.xml), read alike by the package and by setup.py."""

import pathlib
import re
import subprocess
import sys

import pytest

import gravity_friction_comp
from gravity_friction_comp.version import package_xml_version

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_version_is_package_xml_and_setup_py_version():
    xml_text = (ROOT / "package.xml").read_text()
    in_xml = re.search(r"<version>\s*([^<\s]+)\s*</version>", xml_text).group(1)  # independent of ET
    assert gravity_friction_comp.__version__ == in_xml
    assert "__version__" in dir(gravity_friction_comp)
    proc = subprocess.run(
        [sys.executable, "setup.py", "--version"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == in_xml


def test_package_xml_without_a_version_is_refused(tmp_path):
    path = tmp_path / "package.xml"
    path.write_text("<package><name>x</name><version> </version></package>")
    with pytest.raises(ValueError, match="no <version>"):
        package_xml_version(path)
    path.write_text("<package><version>1.2.3</version></package>")
    assert package_xml_version(path) == "1.2.3"
