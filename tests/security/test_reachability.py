"""Every object a script can reach is one the sandbox deliberately hands out.

The crawler (``reachability_crawl.py``, run as a script in the sandbox of each
backend) follows every route a script has from a fresh namespace with every
default facade module imported and tool stubs present, and reports the class
of everything it reached; each must be in the capability inventory
(:mod:`toolscript.sandbox.inventory`), no name may be carried by two classes
(a real class behind its facade), and a class the inventory lists as a
stand-in must refuse to be called. The tests below also keep the inventory's
own lists in step with the sandbox (builtins, modules, facade functions).
"""

from __future__ import annotations

import pytest
from backend_marks import BACKENDS, backend_options
from reachability import CrawlReport, crawl
from toolscript.sandbox import inventory
from toolscript.sandbox.guards import AbortState, Guards
from toolscript.sandbox.interpreter import Interpreter
from toolscript.sandbox.modules import DEFAULT_MODULES, OPTIONAL_MODULES, ModuleTable, build_facade
from toolscript.sandbox.policy import GUARD_NAMES

OPEN_ENTRIES: dict[str, str] = {}
"""Classes still reachable that the inventory's rule keeps out, each tested on its
own below as a strict xfail that names it (the rest of the crawl must pass)."""

_REPORTS: dict[str, CrawlReport] = {}


def _report(backend_name: str) -> CrawlReport:
    """One crawl per backend and test session."""
    if backend_name not in _REPORTS:
        _REPORTS[backend_name] = crawl(backend_name, backend_options(backend_name))
    return _REPORTS[backend_name]


def test_crawl_reaches_only_inventoried_objects(backend_name: str) -> None:
    """The crawl of every route, on each backend: nothing outside the inventory."""
    report = _report(backend_name)
    assert report.stats["objects"] > 10_000, report.summary()
    failures = report.failures(OPEN_ENTRIES)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("backend_name", BACKENDS, indirect=True)
@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=why))
    for name, why in sorted(OPEN_ENTRIES.items())])
def test_open_entry_is_closed(backend_name: str, name: str) -> None:
    """A known open entry: fails (xfail) while a script still reaches the class."""
    report = _report(backend_name)
    found = [message for entry, message in report.problems if entry == name]
    assert not found, "\n".join(found)


def test_crawl_with_the_optional_modules() -> None:
    """The optional facades (``calendar``) hand out only inventoried objects too."""
    modules = (*DEFAULT_MODULES, *OPTIONAL_MODULES)
    report = crawl("inprocess", {}, modules)
    failures = report.failures(OPEN_ENTRIES)
    assert not failures, "\n".join(failures)


class _NoHost:
    def call(self, message: dict[str, object]) -> dict[str, object]:
        raise AssertionError("no tool is called")


def test_builtins_are_the_inventory_list() -> None:
    """Every name in a script's builtins that a script can use is in ``BUILTINS``."""
    interpreter = Interpreter(_NoHost(), tools=[{"name": "lookup", "params": []}])
    names = {name for name in interpreter.namespace["__builtins__"]
             if name not in GUARD_NAMES and not name.startswith("__")}
    assert names - {"lookup"} == set(inventory.BUILTINS)


def test_every_module_has_a_decision() -> None:
    assert set(inventory.MODULES) == {*DEFAULT_MODULES, *OPTIONAL_MODULES}
    for decision in inventory.MODULES.values():
        assert decision.exposure in inventory.EXPOSURES, decision
        assert decision.rule, decision


def test_inventory_entries_are_well_formed() -> None:
    names = [entry.name for entry in inventory.CLASSES]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
    for entry in inventory.CLASSES:
        assert entry.exposure in inventory.EXPOSURES, entry
        assert entry.rule and entry.origin, entry


@pytest.mark.parametrize("module", sorted(inventory.FACADE_FUNCTIONS))
def test_facade_functions_replace_the_real_ones(module: str) -> None:
    """Each member listed as a facade function is the sandbox's, not the module's."""
    import importlib

    guards = Guards({}, AbortState())
    ModuleTable(frozenset(DEFAULT_MODULES), guards)
    facade = build_facade(module, guards)
    real = importlib.import_module(module)
    for name in inventory.FACADE_FUNCTIONS[module]:
        member = getattr(facade, name)
        assert member is not getattr(real, name, None), f"{module}.{name} is the real one"
        assert callable(member)


@pytest.mark.parametrize(("name", "refuses", "expected"), [
    ("int", [False], ""),
    ("__sandbox__.Mine", [False, False, False], ""),
    ("enum:Enum", [False, False], "different classes carry this name"),
    ("functools.cached_property", [False, False], "different classes carry this name"),
    ("function", [False], "holds the real class"),
    ("tool", [False], "holds the real class"),
    ("function", [True], ""),
    ("builtin_function_or_method", [False, True], ""),
    ("builtin_function_or_method", [False, False], "different classes carry this name"),
    ("posix.DirEntry", [False], "not in the capability inventory"),
    ("unowned:<class '__sandbox__.X'>", [False], "not in the capability inventory"),
])
def test_the_judgement_of_a_reached_class(name: str, refuses: list[bool], expected: str) -> None:
    """What the crawl fails on: an unlisted class, a real class behind its facade
    (two classes, one name), a real class where a stand-in belongs."""
    found = inventory.problems(name, refuses)
    if expected:
        assert found and expected in found[0], found
    else:
        assert found == []


def test_the_crawler_tells_two_classes_of_one_name_apart() -> None:
    """The crawl's mechanism, run here as plain Python: a class that ``repr()`` names
    like another (a facade and the real class behind it) is counted apart, and the
    judgement fails on it; an unlisted class is reported by its name."""
    import re

    import reachability_crawl

    class Shown:
        pass

    Shown.__module__, Shown.__qualname__ = "re", "Pattern"

    class Unlisted:
        pass

    value = reachability_crawl.crawl(
        [("shown", Shown), ("real", re.Pattern), ("unlisted", Unlisted)], (500, 1, 5), ())
    assert value["classes"]["re.Pattern"]["count"] == 2
    assert inventory.problems("re.Pattern", value["classes"]["re.Pattern"]["refuses_calls"])
    unlisted = [name for name in value["classes"] if name.endswith("Unlisted")]
    assert unlisted and inventory.problems(unlisted[0], [False])


@pytest.mark.parametrize(("kind", "qualname", "refused"), [
    ("method_descriptor", "str.upper", False), ("method", "_IOBase.readline", False),
    ("builtin_function_or_method", "sqrt", False), ("function", "compile", False),
    ("function", "_operator_members.<locals>.attrgetter", False),
    ("builtin_function_or_method", "eval", True), ("builtin_function_or_method", "getattr", True),
    ("builtin_function_or_method", "compile", True), ("function", "_reconstruct", True),
    ("function", "_eval_type", True), ("function", "_process_class", True),
])
def test_the_judgement_of_a_reached_function(kind: str, qualname: str, refused: bool) -> None:
    """Functions are judged by type and name: never the real eval/getattr/compile...,
    never a private function that is not a method of an inventoried class."""
    assert bool(inventory.callable_problems(kind, qualname)) is refused
