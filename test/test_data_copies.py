"""test/data: every copied file is listed with its source and license, and is byte-identical to
the original it was copied from: on every clone by the originals' SHA-256 recorded in
``test/data/SHA256SUMS``, and (where the project's shared data is present) by the originals."""

from __future__ import annotations

import hashlib
import os
import pathlib
import re

import pytest
from conftest import REPO_ROOT, TEST_DATA

#: The originals; ``GFC_SHARED_DATA`` points elsewhere (an empty value: as on a user's clone).
_SHARED = os.environ.get("GFC_SHARED_DATA", str(REPO_ROOT.parent / "shared" / "data"))
SHARED_DATA = pathlib.Path(_SHARED) if _SHARED else None
#: Flat copies made before test/data kept the shared layout (read by tests under these names).
RENAMED = {
    "damiao_mit_codec_vectors.json": "mit/damiao_mit_codec_vectors.json",
    "arms/i2rt_yam_ultra.yml": "arms/i2rt/config_friction_comp_pr/yam_ultra.yml",
    "arms/openarm_follower.yaml": "arms/openarm_teleop/follower.yaml",
}
COPIES = sorted(p.relative_to(TEST_DATA).as_posix() for p in TEST_DATA.rglob("*") if p.is_file())
COPIES.remove("README.md")
COPIES.remove("SHA256SUMS")
#: ``sha256sum`` format, a line per copy: ``<hex digest>  <path under test/data>``.
SUMS = TEST_DATA / "SHA256SUMS"


def _recorded() -> dict[str, str]:
    return {name: digest for digest, name in (line.split("  ", 1) for line in SUMS.read_text().splitlines())}


def _sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_copy_has_a_source_line():
    """Each file is named in the README's table, itself or by its folder (``urdf/openarm/``)."""
    rows = [line for line in (TEST_DATA / "README.md").read_text().splitlines() if line.startswith("| `")]
    named = {cell.strip("`") for row in rows for cell in re.findall(r"`[^`]+`", row.split("|")[1])}
    missing = [c for c in COPIES if not any(c == n or (n.endswith("/") and c.startswith(n)) for n in named)]
    assert not missing, f"test/data/README.md has no source/license row for {missing}"
    assert len(COPIES) >= 70


def test_copies_equal_the_recorded_originals():
    """Runs on a clone without ``../shared``: each copy hashes to its original's recorded digest."""
    recorded = _recorded()
    assert sorted(recorded) == COPIES, "test/data/SHA256SUMS must list exactly the copies"
    differ = [c for c in COPIES if _sha256(TEST_DATA / c) != recorded[c]]
    assert not differ, f"test/data copies differ from their originals (SHA256SUMS): {differ}"


def test_recorded_digests_are_the_shared_originals():
    """Where the originals are present, SHA256SUMS records their digests (not the copies')."""
    if SHARED_DATA is None or not SHARED_DATA.is_dir():
        pytest.skip(f"the project's shared data is not at {SHARED_DATA} (a user's clone)")
    recorded = _recorded()
    differ = [c for c in COPIES if recorded.get(c) != _sha256(SHARED_DATA / RENAMED.get(c, c))]
    assert not differ, f"test/data/SHA256SUMS differs from the originals in {SHARED_DATA}: {differ}"
