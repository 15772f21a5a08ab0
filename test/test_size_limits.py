"""Size limits of issue 27.4: a module reads in one sitting, the README is an entry page."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 600
MAX_README_BYTES = 12_000


def test_no_module_over_600_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / "gravity_friction_comp").rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_readme_is_at_most_12_kB_and_its_local_links_resolve():
    readme = ROOT / "README.md"
    assert readme.stat().st_size <= MAX_README_BYTES
    text = readme.read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(([^)#\s]+\.md)(?:#([^)\s]+))?\)", text):
        page = ROOT / target
        assert page.is_file(), target
        if anchor:  # GitHub's heading slug: lower case, punctuation dropped, spaces -> '-'
            slugs = {
                re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
                for line in page.read_text(encoding="utf-8").splitlines()
                if line.startswith("#")
            }
            assert anchor in slugs, f"{target}#{anchor}"
