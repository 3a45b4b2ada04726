"""Type-check toolscript with mypy --strict as it is installed: ``python3 scripts/typecheck.py``.

The repository keeps ``runtime/``, ``sandbox/`` and ``tools/`` at the top level;
setuptools' ``package-dir`` maps them to ``toolscript.runtime``, ``toolscript.sandbox``
and ``toolscript.tools``, and the editable install's import finder resolves them.
mypy cannot follow that mapping from the folders alone, so this script asks the
import system where each module of the installed package lives (parents found
with the editable finder, children with the path finder: no module is imported
but ``toolscript`` itself, which is lazy) and hands mypy every file with its
installed module name. No copy, no link farm: mypy reads the repository's files
and reports their repository paths. Extra arguments go to mypy
(``python3 scripts/typecheck.py --no-incremental``).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import pkgutil
import sys
from pathlib import Path

from mypy import build
from mypy.main import process_options
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "toolscript"


def installed_modules(package: str = PACKAGE) -> list[tuple[str, str]]:
    """``(module name, file)`` of every module of the installed ``package``."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None or not spec.submodule_search_locations:
        raise SystemExit(f"{package} is not installed: python3 -m pip install -e '.[dev]'")
    found = [(package, spec.origin)]
    pending = [(package, list(spec.submodule_search_locations))]
    mapped = _editable_packages()
    while pending:
        parent, locations = pending.pop()
        children = {f"{parent}.{info.name}" for info in pkgutil.iter_modules(locations)}
        children |= {name for name in mapped if name.rpartition(".")[0] == parent}
        for name in sorted(children):
            child = _spec(name, locations)
            if child is None or child.origin is None:
                continue
            found.append((name, child.origin))
            if child.submodule_search_locations:
                pending.append((name, list(child.submodule_search_locations)))
    return sorted(found)


def _editable_finders() -> list[object]:
    return [finder for finder in sys.meta_path
            if "editable" in getattr(finder, "__module__", "") and hasattr(finder, "find_spec")]


def _editable_packages() -> set[str]:
    """The packages an editable install maps to folders of their own (setuptools'
    generated finder keeps them in its module's ``MAPPING``)."""
    names: set[str] = set()
    for finder in _editable_finders():
        mapping = getattr(sys.modules.get(getattr(finder, "__module__", "")), "MAPPING", {})
        names |= {name for name in mapping if name.startswith(PACKAGE + ".")}
    return names


def _spec(name: str, locations: list[str]) -> importlib.machinery.ModuleSpec | None:
    """The spec of ``name``: the editable finder's mapping first (it places
    ``toolscript.runtime`` in ``runtime/``), else the folders of its parent."""
    for finder in _editable_finders():
        spec = finder.find_spec(name, None)  # type: ignore[attr-defined]
        if spec is not None:
            return spec  # type: ignore[no-any-return]
    return importlib.machinery.PathFinder.find_spec(name, locations)


def main(argv: list[str]) -> int:
    """Run mypy on the installed package; print its report; 0 when clean."""
    _, options = process_options(
        ["--config-file", str(ROOT / "pyproject.toml"), *argv, "-c", ""],
        require_targets=False,
    )
    sources = [BuildSource(path, module) for module, path in installed_modules()]
    result = build.build(sources, options, stdout=sys.stdout, stderr=sys.stderr)
    for line in result.errors:
        print(line)
    errors = sum(1 for line in result.errors if ": error:" in line)
    if errors:
        files = len({line.split(":")[0] for line in result.errors if ": error:" in line})
        print(f"Found {errors} error{'s' * (errors != 1)} in {files} file"
              f"{'s' * (files != 1)} (checked {len(sources)} source files)")
        return 1
    print(f"Success: no issues found in {len(sources)} source files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
