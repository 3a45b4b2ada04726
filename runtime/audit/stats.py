"""Tool analytics from an audit log: ``toolscript audit stats FILE``.

Per tool: calls, error rate and errors by class, validation failures,
timeouts, denials, latency percentiles; and the registered tools that were
never called, and names the model called that do not exist: the signals that
show which descriptions or schemas mislead a model.

The input is JSON Lines, one tool call per line, as the audit log writes
them (:class:`~toolscript.runtime.audit.log.AuditLog`: ``tool``, ``outcome``,
``error``, ``approved``, ``duration_s``) or as
:meth:`ToolCallRecord.to_dict` gives them (``name``, ``ok``, ...). Lines that
are not tool calls are counted as skipped.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

__all__ = ["ToolStats", "add_audit_stats", "compute_stats", "format_stats", "read_calls"]

VALIDATION_ERRORS = frozenset({"invalid_arguments", "invalid_json"})


@dataclass
class ToolStats:
    """What the log says about one tool."""

    name: str
    calls: int = 0
    ok: int = 0
    errors_by_type: dict[str, int] = field(default_factory=dict)
    validation_failures: int = 0
    timeouts: int = 0
    denials: int = 0
    durations_s: list[float] = field(default_factory=list)

    @property
    def errors(self) -> int:
        """Calls that did not succeed."""
        return self.calls - self.ok

    @property
    def error_rate(self) -> float:
        """Failed calls / calls."""
        return self.errors / self.calls if self.calls else 0.0

    def percentile_ms(self, q: float) -> float | None:
        """Latency percentile ``q`` (0-100) in milliseconds (nearest rank)."""
        if not self.durations_s:
            return None
        ordered = sorted(self.durations_s)
        rank = max(math.ceil(q / 100 * len(ordered)) - 1, 0)
        return ordered[rank] * 1000

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {
            "tool": self.name,
            "calls": self.calls,
            "ok": self.ok,
            "errors": self.errors,
            "error_rate": round(self.error_rate, 4),
            "errors_by_type": dict(sorted(self.errors_by_type.items())),
            "validation_failures": self.validation_failures,
            "timeouts": self.timeouts,
            "denials": self.denials,
            "latency_ms": {f"p{q}": _round(self.percentile_ms(q)) for q in (50, 90, 99)},
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass
class Stats:
    """Per-tool stats plus the set-level signals."""

    tools: dict[str, ToolStats]
    never_called: list[str]
    unknown_names: dict[str, int]
    skipped_lines: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "tools": [t.to_dict() for t in self.tools.values()],
            "never_called": self.never_called,
            "unknown_tools_called": dict(sorted(self.unknown_names.items())),
            "skipped_lines": self.skipped_lines,
        }


def _call_fields(entry: Mapping[str, Any]) -> tuple[str, bool, str | None, bool | None, Any] | None:
    """``(tool, ok, error type, approved, duration_s)`` of one log entry, or None."""
    body: Mapping[str, Any] = entry
    for nested in ("call", "record", "tool_call"):
        if isinstance(entry.get(nested), Mapping):
            body = entry[nested]
            break
    name = body.get("tool", body.get("name"))
    if not isinstance(name, str) or ("ok" not in body and "outcome" not in body):
        return None
    ok = bool(body["ok"]) if "ok" in body else body.get("outcome") == "ok"
    error = body.get("error")
    error_type = error.get("type") if isinstance(error, Mapping) else error
    if error_type is None and not ok and isinstance(body.get("outcome"), str):
        error_type = body["outcome"]
    duration = body.get("duration_s", body.get("duration"))
    approved = body.get("approved")
    return name, ok, error_type if isinstance(error_type, str) else None, (
        approved if isinstance(approved, bool) else None), duration


def read_calls(path: str | Path) -> tuple[list[Mapping[str, Any]], int]:
    """The JSON objects of a JSONL file and the number of lines that were not JSON."""
    entries: list[Mapping[str, Any]] = []
    bad = 0
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if isinstance(value, dict):
                entries.append(value)
            else:
                bad += 1
    return entries, bad


def compute_stats(entries: Iterable[Mapping[str, Any]], known_tools: Iterable[str] = ()) -> Stats:
    """Aggregate log entries; ``known_tools`` lets it report tools never called."""
    known = list(known_tools)
    tools: dict[str, ToolStats] = {}
    unknown: dict[str, int] = {}
    skipped = 0
    for entry in entries:
        fields = _call_fields(entry)
        if fields is None:
            skipped += 1
            continue
        name, ok, error_type, approved, duration = fields
        if error_type == "unknown_tool":
            unknown[name] = unknown.get(name, 0) + 1
            continue
        stats = tools.setdefault(name, ToolStats(name))
        stats.calls += 1
        if ok:
            stats.ok += 1
        elif error_type:
            stats.errors_by_type[error_type] = stats.errors_by_type.get(error_type, 0) + 1
        if error_type in VALIDATION_ERRORS:
            stats.validation_failures += 1
        if error_type == "timeout":
            stats.timeouts += 1
        if error_type == "denied" or approved is False:
            stats.denials += 1
        if isinstance(duration, (int, float)) and not isinstance(duration, bool):
            stats.durations_s.append(float(duration))
    never = sorted(set(known) - set(tools))
    ordered = dict(sorted(tools.items(), key=lambda kv: (-kv[1].calls, kv[0])))
    return Stats(ordered, never, unknown, skipped)


def format_stats(stats: Stats) -> str:
    """A plain-text table with the set-level signals below it."""
    header = (f"{'tool':<28} {'calls':>6} {'err%':>6} {'valid.':>6} {'t/out':>5} {'denied':>6} "
              f"{'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}  errors by type")
    lines = [header, "-" * len(header)]
    for t in stats.tools.values():
        cells = [_ms(t.percentile_ms(q)) for q in (50, 90, 99)]
        by_type = ", ".join(f"{k}={v}" for k, v in sorted(t.errors_by_type.items())) or "-"
        lines.append(
            f"{t.name:<28} {t.calls:>6} {t.error_rate * 100:>5.1f}% {t.validation_failures:>6} "
            f"{t.timeouts:>5} {t.denials:>6} {cells[0]:>8} {cells[1]:>8} {cells[2]:>8}  {by_type}"
        )
    if not stats.tools:
        lines.append("(no tool calls in the log)")
    lines.append("")
    if stats.never_called:
        lines.append("never called: " + ", ".join(stats.never_called)
                     + "  (descriptions may not say when to use them)")
    if stats.unknown_names:
        lines.append("unknown tools the model called: " + ", ".join(
            f"{k} ({v})" for k, v in sorted(stats.unknown_names.items()))
            + "  (names or descriptions may mislead)")
    return "\n".join(lines).rstrip() + "\n"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def cmd_audit_stats(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``toolscript audit stats FILE [--tools MODULE] [--json]``."""
    import sys

    from toolscript.tools import load_tools

    stream = out or sys.stdout
    known: list[str] = []
    for spec in args.tools or []:
        known.extend(t.name for t in load_tools(spec))
    entries, bad = read_calls(args.file)
    stats = compute_stats(entries, known)
    stats.skipped_lines += bad
    if args.json:
        stream.write(json.dumps(stats.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        stream.write(format_stats(stats))
    return 0


def add_audit_stats(subparsers: Any) -> None:
    """Add ``stats`` to the ``audit`` command group's subparsers."""
    stats = subparsers.add_parser(
        "stats", help="per-tool calls, errors, validation failures, timeouts, denials, latency"
    )
    stats.add_argument("file", help="audit log (JSON Lines)")
    stats.add_argument("--tools", action="append", default=[], metavar="MODULE_OR_FILE",
                       help="the registered tools, to list those never called; repeatable")
    stats.add_argument("--json", action="store_true", help="print JSON instead of a table")
    stats.set_defaults(handler=cmd_audit_stats)
