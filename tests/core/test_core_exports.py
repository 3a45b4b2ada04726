"""The package's public names: one list (``_EXPORTS`` in ``toolscript/__init__.py``), lazy imports,
and a ``TYPE_CHECKING`` block that says the same to type checkers."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import toolscript
from toolscript import errors

INIT = Path(toolscript.__file__)
TREE = ast.parse(INIT.read_text("utf-8"))


def _declared() -> dict[str, tuple[str, ...]]:
    """``_EXPORTS`` as written in the source (read, not imported: tests touch no private name)."""
    node = next(node for node in TREE.body if isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name) and node.target.id == "_EXPORTS")
    assert node.value is not None
    value: dict[str, tuple[str, ...]] = ast.literal_eval(node.value)
    return value


def _type_checking_imports() -> dict[str, tuple[str, ...]]:
    block = next(node for node in TREE.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    found: dict[str, tuple[str, ...]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module, ast.dump(node)
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name}: write `X as X` (explicit re-export)"
        found[node.module] = found.get(node.module, ()) + tuple(a.name for a in node.names)
    return found


def _expected_block() -> str:
    lines = ["if TYPE_CHECKING:"]
    for module, names in _declared().items():
        lines.append(f"    from {module} import (")
        lines += [f"        {name} as {name}," for name in sorted(names)]
        lines.append("    )")
    return "\n".join(lines)


def test_type_checking_block_names_exactly_the_exports() -> None:
    declared = {module: tuple(sorted(names)) for module, names in _declared().items()}
    seen = {module: tuple(sorted(names)) for module, names in _type_checking_imports().items()}
    assert seen == declared, "update the TYPE_CHECKING block to:\n" + _expected_block()


def test_every_export_resolves_from_its_module_and_all_is_derived() -> None:
    names = [name for group in _declared().values() for name in group]
    assert len(names) == len(set(names)), "a name is exported twice"
    assert toolscript.__all__ == sorted(names)
    assert sorted(dir(toolscript)) == sorted(names)
    for module, group in _declared().items():
        for name in group:
            value = getattr(toolscript, name)
            assert value is getattr(sys.modules[module], name)


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        toolscript.NotAToolscriptName  # noqa: B018
    except AttributeError as exc:
        assert "NotAToolscriptName" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_the_package_loads_no_host_runtime() -> None:
    code = ("import sys, toolscript, toolscript.sandbox.server\n"
            "print(sorted(m for m in sys.modules if m.startswith(('toolscript.runtime',"
            " 'toolscript.tools', 'toolscript.errors'))))")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.strip()
    assert out == "[]"




def _package_modules() -> list[str]:
    names = []
    for package in ("toolscript.runtime", "toolscript.tools", "toolscript.sandbox"):
        path = importlib.import_module(package).__path__
        names.append(package)
        names += [m.name for m in pkgutil.walk_packages(path, package + ".")
                  if not m.name.endswith("__main__")]
    return names


def test_every_public_exception_lives_in_errors() -> None:
    """A class of the package that is an exception is either in ``toolscript.errors``
    (defined or re-exported there) or named/documented as internal."""
    stray = []
    for name in _package_modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if not (inspect.isclass(value) and issubclass(value, BaseException)
                    and not issubclass(value, Warning) and value.__module__ == name):
                continue
            if getattr(errors, attr, None) is value and attr in errors.__all__:
                continue
            internal = attr.startswith("_") or (value.__doc__ or "").startswith("Internal:")
            if not internal:
                stray.append(f"{name}.{attr}")
    assert not stray, f"define these in toolscript/errors.py or mark them internal: {stray}"


def test_errors_all_names_only_exceptions_and_warnings() -> None:
    for name in errors.__all__:
        value = getattr(errors, name)
        assert inspect.isclass(value) and issubclass(value, BaseException), name
