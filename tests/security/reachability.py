"""Host side of the reachability crawler: build the crawler script, run it, judge its report.

The crawl itself runs in the sandbox as a script (``reachability_crawl.py``), so it
sees exactly what a script sees on that backend; this module adds the roots (every
builtin name of :data:`toolscript.sandbox.inventory.BUILTINS`, every default facade
module, the tool stubs), runs it with generous limits, and compares the classes it
reached with the inventory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from toolscript.sandbox import inventory
from toolscript.sandbox.modules import DEFAULT_MODULES
from toolscript.tools import Tool
from toolscript.tools.catalog import Namespace

from toolscript import Limits, Runtime, tool

CRAWL_LIMITS = (200_000, 8, 5)
"""``(max_objects, max_depth, per_type)`` of the crawl (see ``reachability_crawl.py``)."""

RUN_LIMITS = Limits(wall_time_s=120.0, memory_mb=1024, max_output_chars=10_000,
                    max_result_bytes=5_000_000, max_tool_calls=1_000, tool_timeout_s=10.0)
"""Limits of the crawling run: the wall-clock limit is the crawl's timeout."""

SUMMARY_TYPES = 40
"""Types named in a crawl's summary line (the most visited first)."""

SCRIPT = os.path.join(os.path.dirname(__file__), "reachability_crawl.py")



@tool(read_only=True)
def echo(value: Any = None) -> Any:
    """Return the value unchanged."""
    return value


@tool
def explode(key: str = "k") -> None:
    """Raise a KeyError on the host (the script sees a tool exception)."""
    raise KeyError(key)


CRAWL_TOOLS = [echo, explode,
               # a namespace of tools (issue 28): the crawler roots at `toolns` as well
               Namespace("toolns", [Tool(echo.func, name="echo", read_only=True)])]


def crawler_source(modules: Iterable[str] = DEFAULT_MODULES) -> str:
    """The crawler script: imports, roots, the crawler, and its call as the final value."""
    modules = list(modules)
    names = sorted(inventory.BUILTINS)
    tools = [t.name for t in CRAWL_TOOLS]
    roots = ([f"({m!r}, {m})" for m in modules if "." not in m]
             + [f"({m!r}, {m})" for m in modules if "." in m]
             + [f"({n!r}, {n})" for n in names + tools])
    with open(SCRIPT, encoding="utf-8") as handle:
        body = handle.read()
    callables = [f"{t.name}.echo" if isinstance(t, Namespace) else t.name for t in CRAWL_TOOLS]
    tool_roots = ", ".join(f"({t!r}, {t})" for t in callables)
    return "\n".join([
        *(f"import {m}" for m in modules),
        body,
        f"TOOLS = [{tool_roots}]",
        "ROOTS = [" + ", ".join(roots) + "] + seeds(TOOLS)",
        f"crawl(ROOTS, {CRAWL_LIMITS!r}, OWN)",
    ])


@dataclass
class CrawlReport:
    """What one crawl reached, and what the inventory says about it."""

    backend: str
    classes: dict[str, dict[str, Any]]
    types: dict[str, int]
    raised: dict[str, int]
    functions: dict[str, int]
    stats: dict[str, int]
    disagreements: list[str]
    problems: list[tuple[str, str]] = field(default_factory=list)
    """``(class name or route, what is wrong)``."""

    @classmethod
    def from_value(cls, backend: str, value: dict[str, Any]) -> CrawlReport:
        """Judge the crawler's returned value against the inventory."""
        report = cls(backend, value["classes"], value["types"], value["raised"],
                     value["functions"], value["stats"], value["disagreements"])
        for name, entry in sorted(report.classes.items()):
            for problem in inventory.problems(name, entry["refuses_calls"]):
                report.problems.append(
                    (name, f"{problem}; reached as {' | '.join(entry['paths'])}"))
        for entry in sorted(value["functions"]):
            kind, _, qualname = entry.partition(" ")
            report.problems += [(qualname, problem)
                                for problem in inventory.callable_problems(kind, qualname)]
        report.problems += [("format", f"route disagreement: {d}") for d in report.disagreements]
        if report.stats.get("unvisited"):
            report.problems.append(("limit", f"the crawl stopped at its object limit with "
                                    f"{report.stats['unvisited']} objects left to visit"))
        return report

    def failures(self, open_entries: Iterable[str] = ()) -> list[str]:
        """The problems, except those of the named classes (known open, tested apart)."""
        skipped = set(open_entries)
        return [message for name, message in self.problems if name not in skipped]

    def summary(self) -> str:
        """One line per backend for the test output: totals, then counts by type."""
        top = sorted(self.types.items(), key=lambda item: (-item[1], item[0]))
        by_type = ", ".join(f"{name}={count}" for name, count in top[:SUMMARY_TYPES])
        if len(top) > SUMMARY_TYPES:
            by_type += f", ... {len(top) - SUMMARY_TYPES} more types"
        stats = " ".join(f"{k}={v}" for k, v in sorted(self.stats.items()))
        return (f"reachability[{self.backend}]: {stats} classes={len(self.classes)} "
                f"problems={len(self.problems)}\n  visited by type: {by_type}")


SUMMARIES: list[str] = []
"""Summary lines of this test session's crawls, printed at the end (``conftest.py``)."""


def crawl(backend: str, backend_options: dict[str, Any],
          modules: Iterable[str] = DEFAULT_MODULES, **runtime_options: Any) -> CrawlReport:
    """Run the crawler on ``backend`` (scripts may import ``modules``, and the crawler
    imports them all; ``runtime_options`` go to the Runtime, e.g. ``provenance=``)
    and judge what it reached."""
    modules = tuple(modules)
    runtime = Runtime(tools=CRAWL_TOOLS, backend=backend, limits=RUN_LIMITS,
                      backend_options=backend_options, modules=modules, **runtime_options)
    try:
        result = runtime.run(crawler_source(modules))
    finally:
        runtime.close()
    if not result.ok:
        raise AssertionError(f"the crawler did not finish on {backend}: {result.error}\n"
                             f"{result.stdout[-2000:]}")
    report = CrawlReport.from_value(backend, result.value)
    SUMMARIES.append(report.summary())
    return report
