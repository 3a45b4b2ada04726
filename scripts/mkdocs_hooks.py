"""mkdocs hook: let mkdocstrings read the package as users import it.

The repository keeps ``runtime/``, ``sandbox/`` and ``tools/`` at the top level
and maps them to ``toolscript.runtime`` and so on (setuptools ``package-dir``),
which griffe's static analysis cannot follow. This hook lays out the installed
shape from symlinks in a temporary folder (griffe walks folders; mypy instead
gets the files under their installed names from ``scripts/typecheck.py``) and
points the python handler's ``paths`` at it, so that the reference reads the
sources, never imports them.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[1]
_TREES: list[Path] = []


def package_shape() -> Path:
    """A temporary folder holding ``toolscript/`` with the mapped subpackages inside."""
    tree = Path(tempfile.mkdtemp(prefix="toolscript-docs-"))
    _TREES.append(tree)
    package = tree / "toolscript"
    package.mkdir()
    for source in (ROOT / "toolscript").iterdir():
        if source.suffix in (".py", ".typed") or (source / "__init__.py").is_file():
            (package / source.name).symlink_to(source)
    for sub in ("runtime", "sandbox", "tools"):
        (package / sub).symlink_to(ROOT / sub, target_is_directory=True)
    return tree


@event_priority(100)  # before mkdocstrings' own on_config builds the handler
def on_config(config: Any) -> Any:
    """Point mkdocstrings' python handler at the package shape."""
    handlers = config.plugins["mkdocstrings"].config["handlers"]
    handlers.setdefault("python", {})["paths"] = [str(package_shape())]
    return config


def on_shutdown() -> None:
    """Remove the temporary package shapes."""
    while _TREES:
        shutil.rmtree(_TREES.pop(), ignore_errors=True)
