"""A new user's empty values in a profile's ``free_drive`` block: named as missing, not as NaN.

YAML reads a key without a value as null; the dither check saw it as NaN and answered
"values must be finite, got [nan, ...]" for a value the user never wrote.
"""

from __future__ import annotations

import pathlib
import shutil

import pytest

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.profiles.arm_profiles import load_arm

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "block",
    ["{}", "{dither: }", "{dither: {dof_joint1: , dof_joint2: 0.5}}", "{dither: [0.1, null, 0.1, 0, 0, 0]}"],
)
def test_free_drive_dither_without_a_value_is_named(tmp_path, block):
    d = tmp_path / "arms" / "mine"
    shutil.copytree(REPO_ROOT / "arms" / "yam_ultra", d)
    profile = d / "profile.yaml"
    lines = profile.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("free_drive:"))
    end = start + 1
    while end < len(lines) and lines[end].startswith("    "):
        end += 1
    profile.write_text("\n".join([*lines[:start], f"  free_drive: {block}", *lines[end:]]) + "\n")
    with pytest.raises(ConfigError, match=r"free_drive\.dither needs a value") as info:
        load_arm("mine", root=tmp_path / "arms")
    assert "nan" not in str(info.value)
    assert info.value.key == "free_drive.dither"
