"""Sections of ``BENCHMARKS.md`` for the separate benchmark runs in ``benchmarks/results/``.

Each of those benchmarks (durable resume and fault injection, provenance cost and
AgentDojo, ...) is its own command and writes one JSON file; ``python -m benchmarks``
does not rerun them, so the report shows each file's figures as last written, with
the command that writes it. A file this module has no layout for is shown as a table of its
scalar figures per top-level key.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.markdown import md_table

RESULTS_DIR = Path(__file__).with_name("results")
NOTES_FILE = Path(__file__).with_name("report_notes.md")

COMMANDS = {
    "durable_resume": "python -m benchmarks.durable_resume",
    "durable_faults": "python -m benchmarks.durable_faults",
    "provenance_cost": "python -m benchmarks.provenance_cost",
    "agentdojo_provenance": "python -m benchmarks.agentdojo_provenance",
    "agentdojo_provenance_users": "python -m benchmarks.agentdojo_provenance",
}


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace("|", "\\|")


def _scalars(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if not isinstance(v, (dict, list))}


def _per_key_table(data: dict[str, Any]) -> str:
    """Rows = top-level keys whose values are objects; columns = their scalar figures."""
    rows = {key: _scalars(value) for key, value in data.items() if isinstance(value, dict)}
    columns: list[str] = []
    for figures in rows.values():
        columns += [name for name in figures if name not in columns]
    table = md_table(["", *columns], [[key, *(_cell(figures.get(c, "")) for c in columns)]
                                    for key, figures in rows.items()]) if columns else ""
    top = _scalars(data)
    extra = ", ".join(f"{k} {_cell(v)}" for k, v in top.items())
    return "\n\n".join(part for part in (table, extra) if part)


def _faults(data: dict[str, Any]) -> str:
    rows = []
    for backend, report in data.items():
        if not isinstance(report, dict):
            continue
        kills = report.get("kills", {})
        rows.append([backend, _cell(report.get("completed")),
                     ", ".join(f"{k} {v}" for k, v in kills.items()),
                     _cell(report.get("duplicates_journaled")),
                     _cell(report.get("duplicates_idempotent")),
                     f"{_cell(report.get('at_least_once_plain'))} of "
                     f"{_cell(report.get('in_flight_crashes'))}",
                     _cell(len(report.get("failures", [])))])
    return md_table(["backend", "scripts completed", "kills per crash point",
                   "journaled calls run twice", "idempotent calls run twice",
                   "plain writes rerun / crashes in flight", "failures"], rows)


def _agentdojo(data: dict[str, Any]) -> str:
    """Per suite and mode: user tasks done (utility) and attacks that succeeded."""
    totals: dict[str, list[int]] = {}
    rows = []

    def count(cases: Any, flag: str) -> tuple[int, int]:
        flags = [c for c in cases if isinstance(c, dict)] if isinstance(cases, list) else []
        return sum(1 for c in flags if c.get(flag)), len(flags)

    for suite, parts in data.get("suites", {}).items():
        users, attacks = parts.get("user_tasks", {}), parts.get("attacks", {})
        for mode in [*users, *(m for m in attacks if m not in users)]:
            done, tasks = count(users.get(mode), "utility")
            hits, tried = count(attacks.get(mode), "attack_succeeded")
            total = totals.setdefault(mode, [0, 0, 0, 0])
            for i, n in enumerate((done, tasks, hits, tried)):
                total[i] += n
            rows.append([suite, mode, f"{done}/{tasks}" if tasks else "",
                         f"{hits}/{tried}" if tried else ""])
    rows += [["**all**", mode, f"{t[0]}/{t[1]}" if t[1] else "", f"{t[2]}/{t[3]}" if t[3] else ""]
             for mode, t in totals.items()]
    tail = ", ".join(f"{k} {_cell(v)}" for k, v in _scalars(data).items())
    return md_table(["suite", "mode", "user tasks done (utility)", "attacks that succeeded"],
                  rows) + (f"\n\n{tail}" if tail else "")


LAYOUTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "durable_faults": _faults,
    "agentdojo_provenance": _agentdojo,
    "agentdojo_provenance_users": _agentdojo,
}


def results_sections(results_dir: Path = RESULTS_DIR) -> str:
    """The ``## Separate benchmark runs`` section: one part per ``*.json`` file."""
    files = sorted(results_dir.glob("*.json")) if results_dir.is_dir() else []
    if not files:
        return ""
    parts = ["## Separate benchmark runs (`benchmarks/results/`)", "",
             "Each is its own command (not rerun by `python -m benchmarks`); the figures "
             "are the file's as last written."]
    for path in files:
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            parts += ["", f"### {path.name}", "", f"Unreadable: {exc}."]
            continue
        if not isinstance(data, dict):
            continue
        command = COMMANDS.get(path.stem, f"benchmarks/{path.stem}.py")
        layout = LAYOUTS.get(path.stem, _per_key_table)
        parts += ["", f"### {path.stem} (`{command}`)", "", layout(data)]
    return "\n".join(parts)


def hand_written_notes(notes_file: Path = NOTES_FILE) -> str:
    """The hand-written sections kept in ``benchmarks/report_notes.md``, without its
    leading comment."""
    if not notes_file.is_file():
        return ""
    text = notes_file.read_text("utf-8")
    if text.startswith("<!--"):
        text = text[text.index("-->") + 3:]
    return text.strip()
