"""``toolscript audit verify FILE``: check an audit log's hash chain.

Exit status 0 when the chain is intact, 1 when a line is broken (the first
broken line and the reason are printed), 2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .audit import verify

EXIT_OK = 0
EXIT_BROKEN = 1
EXIT_UNREADABLE = 2


def cmd_audit_verify(args: argparse.Namespace) -> int:
    """Verify one audit log and print the outcome."""
    try:
        report = verify(args.file)
    except (OSError, UnicodeDecodeError) as exc:
        sys.stderr.write(f"toolscript audit: cannot read {args.file}: {exc}\n")
        return EXIT_UNREADABLE
    if args.json:
        print(json.dumps({"ok": report.ok, "records": report.records, "head": report.head,
                          "broken_line": report.broken_line, "reason": report.reason}))
    elif report.ok:
        print(f"OK: {report.records} record(s), chain intact; head {report.head}")
    else:
        print(f"BROKEN at line {report.broken_line}: {report.reason} "
              f"({report.records} good record(s) before it; last good hash {report.head})")
    return EXIT_OK if report.ok else EXIT_BROKEN


def add_audit_commands(subparsers: Any) -> None:
    """Register ``toolscript audit verify FILE`` on the CLI's subparsers."""
    audit = subparsers.add_parser("audit", help="work with tool-call audit logs")
    commands = audit.add_subparsers(dest="audit_command", required=True)
    check = commands.add_parser("verify", help="check the hash chain of an audit log "
                                "and report the first broken record")
    check.add_argument("file", help="the audit log (JSON Lines)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(handler=cmd_audit_verify)
    _add_stats_command(commands)


# --- ``toolscript audit stats FILE``: tool analytics (runtime/analytics.py, issue 8) --------


def _add_stats_command(commands: Any) -> None:
    """Register ``stats`` (per-tool calls, errors, latency; tools never called)."""
    from .analytics import add_audit_stats

    add_audit_stats(commands)
