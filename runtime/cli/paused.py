"""How the command line shows a paused run: its pending calls and continuation."""

from __future__ import annotations

from typing import Any, TextIO

__all__ = ["write_paused"]


def write_paused(result: Any, err: TextIO, journal: str | None = None) -> None:
    """What ``run --approve defer`` prints on standard error for a paused run: every
    pending call and the continuation, and how to decide."""
    from toolscript.runtime.durable.inbox.page import shown_json

    pending = list(result.pending)
    err.write(f"paused: {len(pending)} call(s) wait for approval (run {result.run_id})\n")
    for call in pending:
        err.write(f"  {call.id}  {call.tool} ({call.caller}): {call.reason or '-'}\n")
        for line in shown_json(call.arguments).splitlines():
            err.write(f"      {line}\n")
    err.write(f"continuation: {result.continuation}\n")
    where = f" --journal {journal}" if journal else ""
    first = pending[0].id if pending else "ID"
    err.write(f"decide: toolscript approvals approve {first}{where} --resume --tools ...  "
              f"(or deny {first} --reason ...; or toolscript approvals serve)\n")
