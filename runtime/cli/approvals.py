"""``toolscript approvals list | show | approve | deny | serve``: decide paused runs.

A run started with ``--approve defer`` (or any hook answering
``Decision.defer``) pauses at a call that needs a person and leaves its
pending calls and continuation in the journal store (``--journal URL``, else
``$TOOLSCRIPT_JOURNAL``, else ``~/.local/state/toolscript/journal.sqlite3``).
These commands read that store, from any process:

* ``list``: every pending call (id, tool, caller, reason, age, decision);
* ``show ID``: one call, its arguments whole, as the tool will receive them;
* ``approve ID`` / ``deny ID --reason R``: store the decision; with
  ``--resume`` (and the run's ``--tools``), resume the run once every call of
  it is decided, and print its result as ``toolscript run`` does;
* ``serve``: the web inbox (:mod:`toolscript.runtime.durable.inbox`).

Exit status: 0 done (a resumed run finished), 1 a resumed run failed, 2 a
usage error (unknown id, a refused continuation ...), 3 a resumed run paused
again (:data:`EXIT_PAUSED`, as for ``toolscript run``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from toolscript.errors import ToolscriptError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PAUSED = 3
"""A run (or resumed run) paused: calls wait for a decision."""


# --- printing --------------------------------------------------------------------------
def _age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _rows(store: Any, run_id: str | None = None) -> list[tuple[Any, Any, Any]]:
    """``(paused run, pending call, decision or None)`` for every pending call."""
    rows: list[tuple[Any, Any, Any]] = []
    for run in store.paused(run_id=run_id):
        decided = store.decisions(run.run_id)
        rows.extend((run, call, decided.get(call.id)) for call in run.pending)
    return rows


def _decision_text(decision: Any) -> str:
    if decision is None:
        return "undecided"
    verdict = "approved" if decision.approved else "denied"
    return f"{verdict}: {decision.reason}" if decision.reason else verdict


def _find(store: Any, pending_id: str) -> tuple[Any, Any, Any]:
    run_id = pending_id.rsplit(":", 1)[0] if ":" in pending_id else None
    for row in _rows(store, run_id):
        if row[1].id == pending_id:
            return row
    raise ToolscriptError(f"no pending call {pending_id!r} in the journal "
                          "(see `toolscript approvals list`)")


# --- commands --------------------------------------------------------------------------
def _store(args: argparse.Namespace) -> Any:
    from toolscript.runtime.durable import open_store

    return open_store(args.journal)


def cmd_list(args: argparse.Namespace) -> int:
    """``toolscript approvals list``."""
    store = _store(args)
    try:
        rows = _rows(store)
    finally:
        store.close()
    if args.ids:
        for _, call, decision in rows:
            if decision is None:
                print(call.id)
        return EXIT_OK
    if args.json:
        print(json.dumps([{**call.to_dict(), "session_id": run.session_id,
                           "created_at": run.created_at, "expires_at": run.expires_at,
                           "decision": None if d is None else
                           {"approved": d.approved, "reason": d.reason}}
                          for run, call, d in rows], ensure_ascii=False, indent=2))
        return EXIT_OK
    if not rows:
        print("nothing waits for approval")
        return EXIT_OK
    now = time.time()
    table = [("ID", "TOOL", "CALLER", "WAITING", "DECISION", "REASON")]
    table.extend((call.id, call.tool, call.caller, _age(now - run.created_at),
                  _decision_text(d), call.reason or "-") for run, call, d in rows)
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row[:5], widths, strict=True))
              + "  " + row[5])
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    """``toolscript approvals show ID``."""
    from toolscript.runtime.durable.inbox.page import shown_json

    store = _store(args)
    try:
        run, call, decision = _find(store, args.id)
    finally:
        store.close()
    if args.json:
        print(json.dumps({**call.to_dict(), "session_id": run.session_id,
                          "created_at": run.created_at, "expires_at": run.expires_at,
                          "decision": None if decision is None else
                          {"approved": decision.approved, "reason": decision.reason}},
                         ensure_ascii=False, indent=2))
        return EXIT_OK
    stamp = "%Y-%m-%d %H:%M:%S UTC"
    print(f"pending call {call.id}")
    print(f"  tool:      {call.tool}")
    print(f"  caller:    {call.caller}")
    print(f"  reason:    {call.reason or '-'}")
    print(f"  run:       {run.run_id} (session {run.session_id})")
    print(f"  paused:    {time.strftime(stamp, time.gmtime(run.created_at))}")
    print(f"  expires:   {time.strftime(stamp, time.gmtime(run.expires_at))}")
    print(f"  decision:  {_decision_text(decision)}")
    print("  arguments (JSON, exactly as the tool receives them; invisible characters "
          "escaped):")
    for line in shown_json(call.arguments).splitlines():
        print(f"    {line}")
    return EXIT_OK


def cmd_decide(args: argparse.Namespace) -> int:
    """``toolscript approvals approve|deny ID``: store the decision, maybe resume."""
    from toolscript.runtime.approval.hooks import Decision

    approve = args.verdict == "approve"
    store = _store(args)
    try:
        run, call, decision = _find(store, args.id)
        if decision is not None:
            raise ToolscriptError(f"{call.id} is already decided ({_decision_text(decision)})")
        store.decide(call.id, Decision.allow(args.reason) if approve
                     else Decision.deny(args.reason), by=args.by)
        decided = store.decisions(run.run_id)
        sys.stderr.write(f"{call.id}: {'approved' if approve else 'denied'}\n")
        waiting = [c.id for c in run.pending if c.id not in decided]
        if waiting:
            sys.stderr.write(f"run {run.run_id} still waits on {', '.join(waiting)}\n")
            return EXIT_OK
        if not args.resume:
            sys.stderr.write(f"every call of run {run.run_id} is decided; resume it with "
                             f"--resume (and the run's --tools), or from code with "
                             "runtime.resume(continuation, decisions)\n")
            return EXIT_OK
        return _resume(args, store, run.continuation, decided)
    finally:
        store.close()


def _resume(args: argparse.Namespace, store: Any, continuation: str,
            decisions: dict[str, Any]) -> int:
    from .main import _print_result, build_runtime, config_in_force

    with build_runtime(args) as runtime:
        result = runtime.resume(continuation, decisions)
    _print_result(result, args.json, sys.stdout, sys.stderr, config_in_force(args))
    if getattr(result, "status", "") == "paused":
        return EXIT_PAUSED
    return EXIT_OK if result.ok else EXIT_FAILED


def cmd_serve(args: argparse.Namespace) -> int:
    """``toolscript approvals serve``: the web inbox, until Ctrl-C."""
    from toolscript.runtime.durable.inbox import InboxServer

    runtime = None
    store = _store(args)
    try:
        if args.tools:
            from .main import build_runtime

            runtime = build_runtime(args)
        token = None
        if args.token_env:
            import os

            token = os.environ.get(args.token_env) or None
            if token is None:
                raise ToolscriptError(f"--token-env {args.token_env}: the variable is not set")
        inbox = InboxServer(store, resume=runtime.resume if runtime is not None else None,
                            host=args.host, port=args.port, token=token)
        print(f"approval inbox: {inbox.login_url}", flush=True)
        sys.stderr.write("open that address in a browser on this machine (it carries the "
                         "token once, then a cookie does); Ctrl-C stops the inbox\n"
                         + ("decided runs resume here\n" if runtime is not None else
                            "decisions are stored; start with --tools to resume runs here\n"))
        sys.stderr.flush()
        try:
            inbox.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            inbox.httpd.server_close()
    finally:
        if runtime is not None:
            runtime.close()
        store.close()
    return EXIT_OK


# --- parser ----------------------------------------------------------------------------
def _journal_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--journal", default=None, metavar="URL",
                        help="journal store: sqlite:///path, postgresql://..., or a path "
                        "(default: $TOOLSCRIPT_JOURNAL, else "
                        "~/.local/state/toolscript/journal.sqlite3)")


def _runtime_options(parser: argparse.ArgumentParser) -> None:
    from .main import add_common_runtime_options

    add_common_runtime_options(parser)
    # A continuation is bound to the approval configuration of its run: runs pause
    # under defer, so resumes default to it (not to the profile's mode).
    parser.set_defaults(approve="defer")


def add_approvals_command(subparsers: Any) -> None:
    """Register ``toolscript approvals``."""
    top = subparsers.add_parser(
        "approvals", help="list, show, approve or deny calls that wait for a person",
        description=__doc__.split("\n\n")[1] if __doc__ else None)
    sub = top.add_subparsers(dest="approvals_command", required=True)

    listing = sub.add_parser("list", help="every pending call of every paused run")
    _journal_option(listing)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument("--ids", action="store_true",
                         help="print only the ids of the undecided calls, one a line")
    listing.set_defaults(handler=cmd_list)

    show = sub.add_parser("show", help="one pending call, its arguments whole")
    show.add_argument("id", metavar="ID", help="a pending call id (from list)")
    _journal_option(show)
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=cmd_show)

    for verdict in ("approve", "deny"):
        cmd = sub.add_parser(verdict, help=f"{verdict} a pending call (and maybe resume its run)")
        cmd.add_argument("id", metavar="ID", help="a pending call id (from list)")
        cmd.add_argument("--reason", default="", required=verdict == "deny",
                         help="recorded with the decision (the script sees it on a denial)")
        cmd.add_argument("--by", default="cli", help="who decided (stored with the decision)")
        cmd.add_argument("--resume", action="store_true",
                         help="resume the run when every call of it is decided; needs the "
                         "run's --tools and --approve (the continuation is bound to them)")
        cmd.add_argument("--json", action="store_true",
                         help="print the resumed run's result as one JSON document")
        _journal_option(cmd)
        _runtime_options(cmd)
        cmd.set_defaults(handler=cmd_decide, verdict=verdict)

    serve = sub.add_parser("serve", help="a local web page to decide pending calls")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8470, help="port (default 8470; 0: any)")
    serve.add_argument("--token-env", default=None, metavar="VAR",
                       help="read the token from this environment variable (default: a "
                       "fresh random token, printed in the address)")
    _journal_option(serve)
    _runtime_options(serve)
    serve.set_defaults(handler=cmd_serve)
