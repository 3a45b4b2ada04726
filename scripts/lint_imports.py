"""``lint-imports`` on toolscript as it is installed: ``python3 scripts/lint_imports.py``.

import-linter builds its graph with grimp, which finds a package's modules by
walking the package's folder: for ``toolscript`` that is ``toolscript/`` alone,
since setuptools' ``package-dir`` maps ``toolscript.runtime``,
``toolscript.sandbox`` and ``toolscript.tools`` to the repository's top-level
``runtime/``, ``sandbox/`` and ``tools/`` (the editable install's finder resolves
them), and grimp takes only top-level packages as roots (a mapped subpackage
named as a root is refused as "not a top-level module"). grimp's package and
module finders are pluggable, though: this script asks the import system where
each package of the installed ``toolscript`` lives (``scripts/typecheck.py``'s
:func:`installed_modules`: the editable finder's mapping, the path finder below
it; nothing is imported but ``toolscript`` itself, which is lazy), hands grimp
each folder that is not inside its parent's as one more folder of
``toolscript``, named by its installed package, and then runs import-linter's
own command line (its arguments: ``--no-cache``, ``--contract``, a
configuration file ...; default ``pyproject.toml`` at the repository root). No
copy and no link farm: grimp reads the repository's files.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from grimp.adaptors.modulefinder import ModuleFinder
from grimp.adaptors.packagefinder import ImportLibPackageFinder
from grimp.application.config import settings
from typecheck import PACKAGE, installed_modules

ROOT = Path(__file__).resolve().parent.parent


def package_folders(package: str = PACKAGE) -> dict[str, str]:
    """``{folder: installed package name}`` for ``package``'s folder and each folder
    of one of its subpackages that is not inside its parent's folder."""
    folders = {name: os.path.dirname(path) for name, path in installed_modules(package)
               if os.path.basename(path) == "__init__.py"}
    roots: dict[str, str] = {}
    for name, folder in folders.items():
        parent, _, last = name.rpartition(".")
        if name == package or os.path.join(folders.get(parent, ""), last) != folder:
            roots[folder] = name
    return roots


class InstalledPackageFinder(ImportLibPackageFinder):
    """grimp's finder, plus the folders the installed package maps its subpackages to."""

    def __init__(self, folders: dict[str, str]) -> None:
        self.folders = folders

    def determine_package_directories(self, package_name: str, file_system: Any) -> set[str]:
        """The package's own folders; for ``toolscript``, the mapped ones too."""
        found = set(super().determine_package_directories(package_name, file_system))
        if package_name == PACKAGE:
            found |= set(self.folders)
        return found


class InstalledModuleFinder(ModuleFinder):
    """grimp's finder, naming the modules of a mapped folder by its installed package."""

    def __init__(self, folders: dict[str, str]) -> None:
        self.folders = folders

    def find_package(self, package_name: str, package_directory: str,
                     file_system: Any) -> Any:
        """The modules under ``package_directory``, as ``toolscript.runtime.session`` ..."""
        name = self.folders.get(package_directory, package_name)
        return super().find_package(name, package_directory, file_system)


def main(argv: list[str]) -> int:
    """Configure grimp for the installed package, then run ``lint-imports`` with ``argv``."""
    folders = package_folders()
    settings.configure(PACKAGE_FINDER=InstalledPackageFinder(folders),
                       MODULE_FINDER=InstalledModuleFinder(folders))
    from importlinter.cli import lint_imports_command

    configs = (".toml", ".cfg", ".ini", ".importlinter")
    args = argv if any(a.endswith(configs) for a in argv) else [
        str(ROOT / "pyproject.toml"), *argv]
    try:
        lint_imports_command.main(args=args, prog_name="lint-imports")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
