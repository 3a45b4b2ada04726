"""The documentation site (mkdocs.yml: docs/ and the API reference generated
from the docstrings) builds with warnings as errors, and documents every
public name of ``toolscript``."""

from __future__ import annotations

import re
import subprocess
import sys
import zlib
from pathlib import Path

from docblocks import REPO

import toolscript

BUILD_TIMEOUT_S = 300  # about 10 s here; generous for a loaded 2-core machine


def _inventory_names(site: Path) -> set[str]:
    """The object names of the site's ``objects.inv`` (Sphinx inventory v2)."""
    header_and_body = (site / "objects.inv").read_bytes().split(b"\n", 4)
    body = zlib.decompress(header_and_body[4]).decode("utf-8")
    return {line.split(" ", 1)[0] for line in body.splitlines() if line.strip()}


def test_docs_site_builds_strict(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link, an unknown page, a docstring
    that names a parameter the signature lacks ... fail the build."""
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-6000:]}"
    assert (site / "reference" / "index.html").is_file()
    documented = _inventory_names(site)
    missing = [name for name in toolscript.__all__ if f"toolscript.{name}" not in documented]
    assert not missing, f"public names without a reference entry (docs/reference/): {missing}"


README_MAX_LINES = 250
"""The README is the front door (issue 29): what it is, set-up, a short tour,
the backends, links; everything else lives in the guide (docs/guide/)."""


def test_readme_is_a_front_door() -> None:
    """The README stays short, and every relative link in it names a file of the
    repository (mkdocs checks docs/ only: the README is outside its docs_dir)."""
    text = (REPO / "README.md").read_text("utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    relative = [t for t in targets if "://" not in t]
    assert any(t.startswith("docs/guide/") for t in relative)
    dead = [t for t in relative if not (REPO / t).exists()]
    assert not dead, f"README links to files that do not exist: {dead}"
