"""The package version. One place: ``<version>`` of package.xml (setup.py reads it from here).

A source checkout (package.xml beside the package directory) reads that file; an installed
package reads its installed metadata (written by setup.py from the same file).
"""

from __future__ import annotations

import importlib.metadata
import pathlib
import xml.etree.ElementTree as ET

__all__ = ["package_version", "package_xml_version"]

_SOURCE_PACKAGE_XML = pathlib.Path(__file__).resolve().parent.parent / "package.xml"


def package_xml_version(path: str | pathlib.Path) -> str:
    """The ``<version>`` text of a ROS package.xml at ``path``.

    Raises:
        OSError: the file cannot be read. ValueError: not XML (``ET.ParseError``) or no
            non-empty ``<version>`` element.
    """
    text = ET.parse(path).getroot().findtext("version")
    if not text or not text.strip():
        raise ValueError(f"{path}: no <version> element")
    return text.strip()


def package_version() -> str:
    """This package's version, e.g. ``"0.1.0"`` (``"0+unknown"`` when neither source is found)."""
    if _SOURCE_PACKAGE_XML.is_file():
        return package_xml_version(_SOURCE_PACKAGE_XML)
    try:
        return importlib.metadata.version("gravity_friction_comp")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"
