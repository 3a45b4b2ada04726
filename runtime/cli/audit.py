"""``toolscript audit verify FILE [--head HASH]``: check an audit log.

The key comes from ``TOOLSCRIPT_AUDIT_KEY`` (as for the writers); ``--no-key``
checks an old unkeyed log while the variable is set. Exit status: 0 when the
log is intact (a keyed log checked with its key, or an unkeyed one: the output
then says "unkeyed"), 1 when a line is broken or ``--head`` is not in the file
(the first broken line and the reason are printed), 2 when the file cannot be
read or the key is unusable, 3 when a keyed log is checked without its key
(never reported valid).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolscript.runtime.audit.chain import FROM_ENV, VerifyReport, verify

from toolscript.errors import ConfigurationError

EXIT_OK = 0
EXIT_BROKEN = 1
EXIT_UNREADABLE = 2
EXIT_UNVERIFIED = 3


def cmd_audit_verify(args: argparse.Namespace) -> int:
    """Verify one audit log and print the outcome."""
    try:
        report = verify(args.file, key=None if args.no_key else FROM_ENV, head=args.head)
    except (OSError, UnicodeDecodeError) as exc:
        sys.stderr.write(f"toolscript audit: cannot read {args.file}: {exc}\n")
        return EXIT_UNREADABLE
    except ConfigurationError as exc:
        sys.stderr.write(f"toolscript audit: {exc}\n")
        return EXIT_UNREADABLE
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        print(describe(report))
    if report.status == "unverified":
        return EXIT_UNVERIFIED
    return EXIT_OK if report.ok else EXIT_BROKEN


def describe(report: VerifyReport) -> str:
    """One line saying what :func:`verify` found."""
    if report.status == "broken":
        where = f"at line {report.broken_line}" if report.broken_line else "(truncated)"
        return (f"BROKEN {where}: {report.reason} ({report.records} good record(s) before it; "
                f"last good hash {report.head})")
    if report.status == "unverified":
        return f"NOT VERIFIED: {report.reason} ({report.records} record(s); chain links intact)"
    kind = (f"keyed (HMAC-SHA256, key id {report.key_id})" if report.keyed
            else "unkeyed (SHA-256 only)")
    text = f"OK: {report.records} record(s), chain intact, {kind}; head {report.head}"
    if report.head_found:
        text += "; the given --head is in the log"
    if report.reason:
        text += f"\nnote: {report.reason}"
    return text


def add_audit_commands(subparsers: Any) -> None:
    """Register ``toolscript audit verify FILE`` on the CLI's subparsers."""
    audit = subparsers.add_parser("audit", help="work with tool-call audit logs")
    commands = audit.add_subparsers(dest="audit_command", required=True)
    check = commands.add_parser(
        "verify", help="check an audit log's chain and seals and report the first broken record",
        description="Check every line's seal and link. The key is read from "
        "TOOLSCRIPT_AUDIT_KEY; a keyed log is never reported valid without it (exit 3).",
    )
    check.add_argument("file", help="the audit log (JSON Lines)")
    check.add_argument("--head", metavar="HASH", default=None,
                       help="a hash kept elsewhere (AuditLog.head, or the head printed by an "
                       "earlier verify): the log must still contain that record (detects "
                       "truncation)")
    check.add_argument("--no-key", action="store_true",
                       help="check an unkeyed log even though TOOLSCRIPT_AUDIT_KEY is set")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(handler=cmd_audit_verify)
    _add_stats_command(commands)


# --- ``toolscript audit stats FILE``: tool analytics (runtime/audit/stats.py) -------------


def _add_stats_command(commands: Any) -> None:
    """Register ``stats`` (per-tool calls, errors, latency; tools never called)."""
    from toolscript.runtime.audit.stats import add_audit_stats

    add_audit_stats(commands)
