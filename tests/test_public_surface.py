"""Tests use the library through its public surface, never its private state.

A test that reads or sets a private attribute (``_name``, not a dunder) of a
library object (``session._handle``, ``pool._idle``, a tool's ``_validator``)
pins an implementation detail: it breaks when the internals move and passes
while the behaviour users see is wrong. This check parses every test file with
``ast`` and lists each such access, so a new one fails here with its place.

It flags ``x._name`` (read, write or ``del``), ``getattr``/``setattr``/
``hasattr``/``delattr`` and ``monkeypatch.setattr``/``delattr`` with a private
name, and ``from toolscript... import _name``. It does not flag:

- ``self._x`` / ``cls._x``: a test's own helper class using its own state;
- attributes of a standard-library module imported in the same file
  (``os._exit`` and ``sys._getframe`` are documented functions);
- attributes of a helper module of the test tree imported in the same file
  (``eco_async_tools._BARRIERS``): test code sharing its own state;
- the underscore API of named tuples (``_asdict``, ``_replace``, ...), which is public;
- the sandbox scripts of the conformance corpus, which are programs a model
  could write, run inside the sandbox, not test code.

Anything else needs an entry in :data:`ALLOWED` with the reason it is justified.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SKIPPED_DIRS = (TESTS / "corpus" / "scripts",)
TEST_MODULES = frozenset(path.stem for path in TESTS.rglob("*.py")) - {"__init__"}

OWN_STATE = frozenset({"self", "cls"})
NAMEDTUPLE_API = frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults"})
ATTRIBUTE_BUILTINS = frozenset({"getattr", "setattr", "hasattr", "delattr"})

# (file relative to tests/, "receiver._name") -> why this access is justified.
ALLOWED: dict[tuple[str, str], str] = {
    ("core/test_core_pool_sizing.py", "pool._waiters"): (
        "the test waits until its caller is parked on the failing start; no public state says so"
    ),
    ("security/test_boundary.py", "backend._priming"): (
        "the pool start stuck in its first run is what shutdown must kill; it has no public handle"
    ),
    ("security/test_boundary.py", "backend._pool"): (
        "the refill thread must have ended after shutdown; the pool is internal to the backend"
    ),
    ("security/test_boundary.py", "backend._pool._thread"): (
        "the refill thread must have ended after shutdown (no public accessor)"
    ),
    ("fakes/model_server.py", "server._respond"): (
        "the fake model server's request handler calls back into its own server "
        "object; both are test code"
    ),
    ("fuzz/test_properties.py", "targets._TOOL"): (
        "the tool the fuzz harness (fuzz/targets.py, test tooling) validates with; "
        "the property checks the harness's own target"
    ),
}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _stdlib_aliases(tree: ast.Module) -> set[str]:
    """Names bound in the file to standard-library modules (``import os``, ``import x as y``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in sys.stdlib_module_names:
                    names.add(alias.asname or alias.name.split(".")[0])
        elif (isinstance(node, ast.ImportFrom) and node.module and node.level == 0
              and node.module.split(".")[0] in sys.stdlib_module_names):
            # ``from os import path``: path is a stdlib module or object.
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _helper_module_aliases(tree: ast.Module) -> set[str]:
    """Names bound in the file to modules of the test tree (``import eco_async_tools``,
    ``from tests.security import walled``): test code, whose state tests may share."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                dotted = "." in alias.name
                if alias.name.rsplit(".", 1)[-1] in TEST_MODULES and (
                        not dotted or (alias.asname and alias.name.startswith("tests."))):
                    names.add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and (
                node.module == "tests" or node.module.startswith("tests.")):
            names.update(alias.asname or alias.name for alias in node.names
                         if alias.name in TEST_MODULES)
    return names


def _exempt_receiver(receiver: ast.expr, exempt: set[str]) -> bool:
    return isinstance(receiver, ast.Name) and (receiver.id in OWN_STATE or receiver.id in exempt)


def _private_accesses(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, "receiver._name") for each private access to a library object in a module."""
    exempt = _stdlib_aliases(tree) | _helper_module_aliases(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            receiver, name = node.value, node.attr
        elif (isinstance(node, ast.Call) and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and (_called_name(node.func) in ATTRIBUTE_BUILTINS
                   or _is_monkeypatch_call(node.func))):
            receiver, name = node.args[0], node.args[1].value
        elif (isinstance(node, ast.ImportFrom) and node.module
              and node.module.split(".")[0] == "toolscript"):
            for alias in node.names:
                if _is_private(alias.name):
                    yield node.lineno, f"{node.module}.{alias.name}"
            continue
        else:
            continue
        if not _is_private(name) or name in NAMEDTUPLE_API or _exempt_receiver(receiver, exempt):
            continue
        yield node.lineno, f"{ast.unparse(receiver)}.{name}"


def _called_name(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else None


def _is_monkeypatch_call(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr in {"setattr", "delattr"}
            and isinstance(func.value, ast.Name) and func.value.id == "monkeypatch")


def _test_files() -> Iterator[Path]:
    for path in sorted(TESTS.rglob("*.py")):
        if not any(path.is_relative_to(skipped) for skipped in SKIPPED_DIRS):
            yield path


def find_offenders() -> list[str]:
    """Every private access to a library object in the test tree, as ``file:line: access``."""
    offenders: list[tuple[str, int, str]] = []
    for path in _test_files():
        relative = path.relative_to(TESTS).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, access in _private_accesses(tree):
            if (relative, access) not in ALLOWED:
                offenders.append((relative, line, access))
    return [f"tests/{relative}:{line}: {access}" for relative, line, access in sorted(offenders)]


def test_no_test_reads_private_state_of_library_objects() -> None:
    offenders = find_offenders()
    assert not offenders, (
        "tests reach into private state; use the public surface (or add a documented "
        "public accessor), or justify the access in ALLOWED:\n" + "\n".join(offenders)
    )


def test_the_check_sees_each_kind_of_private_access() -> None:
    source = (
        "import os\nimport datetime as _dt\nfrom toolscript.runtime.audit.log import _digest\n"
        "session._handle\nself._state\nos._exit\nPoint(1, 2)._asdict()\n"
        "getattr(runtime, '_closed')\nmonkeypatch.setattr(tool, '_fast', None)\n"
        "backend._pool._idle\nrt.session()._handle.send\npool._start_s = 1\n"
        "x.__class__\n_dt.date\nimport corehelpers\ncorehelpers._seen\n"
        "from tests.security import walled\nwalled._state\n"
    )
    found = [access for _, access in _private_accesses(ast.parse(source))]
    assert sorted(found) == sorted([
        "toolscript.runtime.audit.log._digest", "session._handle", "runtime._closed",
        "tool._fast", "backend._pool._idle", "backend._pool", "rt.session()._handle",
        "pool._start_s",
    ])


def test_every_allowed_access_still_exists() -> None:
    """A stale allow-list entry would silently permit a future access."""
    seen = set()
    for path in _test_files():
        relative = path.relative_to(TESTS).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        seen.update((relative, access) for _, access in _private_accesses(tree))
    assert set(ALLOWED) <= seen, sorted(set(ALLOWED) - seen)
