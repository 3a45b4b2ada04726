"""The ``toolscript`` command line.

Subcommands: ``run`` (a script against tools), ``tools`` (show tools as the
model sees them), and those the other modules of this package add (``agent``,
``batch``, ``mcp``, ``audit``, ``doctor``, ``image``, ``gc``) through their
``add_*_command(subparsers)`` functions. Every command's handler is
``cmd_*(args) -> int`` (the exit code), set with ``set_defaults(handler=...)``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from toolscript.runtime.approval.hooks import ApprovalHook, named_policy
from toolscript.runtime.approval.prompt import TerminalApproval
from toolscript.runtime.limits import Limits
from toolscript.runtime.names import APPROVAL_MODES, BACKEND_NAMES
from toolscript.runtime.results import RunResult

from toolscript.errors import ToolscriptError

EXIT_OK = 0
EXIT_SCRIPT_FAILED = 1
EXIT_USAGE = 2
EXIT_PAUSED = 3
"""``run --approve defer``: the run paused; its calls wait in the journal for a person."""


def approval_from_name(name: str) -> ApprovalHook | None:
    """Turn ``--approve`` into a hook."""
    if name == "ask":
        return TerminalApproval()
    return named_policy(name)


def add_common_runtime_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by every command that builds a Runtime."""
    parser.add_argument("--tools", action="append", default=[], metavar="MODULE_OR_FILE",
                        help="module (pkg.tools) or file (./tools.py) defining tools; repeatable")
    parser.add_argument("--backend", default=None,
                        choices=BACKEND_NAMES,
                        help="where scripts run (default: the profile's, else subprocess)")
    parser.add_argument("--approve", default=None, choices=APPROVAL_MODES,
                        help="approval of tool calls, from the most to the least permissive: "
                        "allow (every call), default (all but tools that require approval), "
                        "ask (read-only calls; every other call is asked at the terminal), "
                        "defer (read-only calls; at every other call the run pauses until a "
                        "person decides: toolscript approvals), "
                        "deny (read-only calls of tools that do not require approval); "
                        "default: the profile's, else default")
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="wall-clock limit of a run in seconds (default 30)")
    parser.add_argument("--memory-mb", type=int, default=None, help="memory limit in MiB")
    parser.add_argument("--audit", default=None, metavar="PATH",
                        help="append a record of every tool call to this audit log (keyed "
                        "with $TOOLSCRIPT_AUDIT_KEY when set; default: the profile's)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="say which profile and settings the command runs with")
    parser.set_defaults(builds_runtime=True)


def apply_profile(args: argparse.Namespace) -> None:
    """Resolve the profile in force and fill unset common options from it.

    A command that builds a Runtime always looks for one (``--profile``, else
    ``TOOLSCRIPT_PROFILE``, else the configuration's ``default_profile`` or
    only profile; see :func:`~toolscript.runtime.config.select_profile`);
    other commands only with ``--profile`` or ``--config``.
    """
    profile = None
    if (getattr(args, "builds_runtime", False) or getattr(args, "profile", None)
            or getattr(args, "config", None)):
        from toolscript.runtime.config import select_profile

        profile = select_profile(getattr(args, "profile", None), getattr(args, "config", None))
    args.profile_settings = profile
    if hasattr(args, "backend") and args.backend is None:
        args.backend = profile.backend if profile is not None else "subprocess"
    if hasattr(args, "approve") and args.approve is None:
        args.approve = profile.approve if profile is not None else "default"
    if profile is not None:  # every command says which configuration is in force
        line = profile.describe(approve=getattr(args, "approve", None),
                                backend=getattr(args, "backend", None))
        sys.stderr.write(f"toolscript: {line}\n")
        sys.stderr.flush()


def runtime_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments for :class:`~toolscript.Runtime`: the whole resolved profile
    (tools, backend, approval, limits, modules, backend options, context,
    idempotency store, audit log) with the command line's options over it.

    The one place the command line turns a profile into a Runtime: ``run``,
    ``batch``, ``agent`` and ``mcp serve`` all build theirs here.
    """
    from toolscript.tools import load_tools

    if not hasattr(args, "profile_settings"):
        apply_profile(args)
    profile = args.profile_settings
    audit_path = getattr(args, "audit", None)
    kwargs: dict[str, Any] = (profile.runtime_kwargs(audit=audit_path is None)
                              if profile is not None else {"tools": []})
    tools = list(kwargs.pop("tools"))
    for spec in args.tools:
        tools.extend(load_tools(spec))
    if profile is not None and args.backend != profile.backend:
        kwargs.pop("backend_options", None)  # they were written for the profile's backend
    changes: dict[str, Any] = {}
    if args.timeout is not None:
        changes["wall_time_s"] = args.timeout
    if args.memory_mb is not None:
        changes["memory_mb"] = args.memory_mb
    limits = kwargs.pop("limits", Limits())
    kwargs.update(tools=tools, backend=args.backend, approve=approval_from_name(args.approve),
                  limits=limits.with_changes(**changes))
    if getattr(args, "journal", None):  # durable runs (--approve defer, approvals --resume)
        kwargs["journal"] = args.journal
    if audit_path is not None:
        from toolscript.runtime.audit.log import AuditLog

        kwargs["audit"] = AuditLog(audit_path)
    if getattr(args, "verbose", False) or getattr(args, "global_verbose", False):
        sys.stderr.write(describe_settings(profile, kwargs, args.approve) + "\n")
        sys.stderr.flush()
    return kwargs


def describe_settings(profile: Any, kwargs: dict[str, Any], approve: str) -> str:
    """One line for ``-v``: the profile in force (and how it was chosen), and the
    settings the Runtime is built with."""
    if profile is None:
        head = "toolscript: no profile (no configuration file found)"
    else:
        head = (f"toolscript: profile {profile.name!r} (chosen by {profile.chosen_by}) "
                f"from {profile.source}")
    audit = kwargs.get("audit")
    audit_text = "none" if audit is None else (
        f"{getattr(audit, 'path', audit)}"
        + (" (keyed)" if getattr(audit, "keyed", False) else " (unkeyed)"))
    limits = kwargs["limits"]
    context = sorted(kwargs.get("context") or {})
    return (f"{head}; backend {kwargs['backend']}, approve {approve}, "
            f"{len(kwargs['tools'])} tool(s), audit {audit_text}, "
            f"wall_time_s={limits.wall_time_s}, max_tool_calls={limits.max_tool_calls}, "
            f"memory_mb={limits.memory_mb}"
            + (f", context keys {', '.join(context)}" if context else "")
            + (f", required isolation {kwargs['require_isolation']}"
               if kwargs.get("require_isolation") else ""))


def build_runtime(args: argparse.Namespace) -> Any:
    """A Runtime from the resolved profile and the common options (:func:`runtime_kwargs`)."""
    from toolscript.runtime.runtime import Runtime

    kwargs = runtime_kwargs(args)
    try:
        return Runtime(**kwargs)
    except BaseException:
        closer = getattr(kwargs.get("audit"), "close", None)
        if callable(closer):
            closer()
        raise


def config_in_force(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``config`` field of ``--json`` outputs: the configuration and profile in
    force (:meth:`~toolscript.runtime.config.Profile.to_dict`), or None."""
    profile = getattr(args, "profile_settings", None)
    if profile is None:
        return None
    data = dict(profile.to_dict())
    for key in ("approve", "backend"):  # what the command line made of them
        data[key] = getattr(args, key, None) or data[key]
    return data


RUN_OUTPUT = (
    "output: standard output holds only the JSON value of the script's final expression "
    "(nothing when it has none), so it can be piped; what the script printed, errors and "
    "the call summary go to standard error. --json prints one JSON document instead: "
    "value, stdout, error and tool calls."
)


def _print_result(result: RunResult, as_json: bool, out: TextIO, err: TextIO,
                 config: dict[str, Any] | None = None, journal: str | None = None) -> None:
    """Write a run's outcome: its JSON value alone on ``out``, the script's printed
    output, error and call summary on ``err``; or, ``as_json``, the whole result
    as one JSON document on ``out``."""
    if as_json:
        data = {**result.to_dict(), "config": config}
        out.write(json.dumps(data, ensure_ascii=False, default=str, indent=2) + "\n")
        return
    if result.stdout:
        err.write(result.stdout if result.stdout.endswith("\n") else result.stdout + "\n")
    if result.stdout_truncated:
        err.write("-- the script's printed output was cut at the output limit\n")
    if result.ok:
        if result.value is not None:
            out.write(json.dumps(result.value, ensure_ascii=False, indent=2) + "\n")
    elif getattr(result, "status", "") == "paused":  # --approve defer: calls wait for a person
        from .paused import write_paused

        write_paused(result, err, journal)
    else:
        assert result.error is not None
        err.write(f"error [{result.error.type}]: {result.error.message}"
                  f"{result.error.location}\n")
    calls = result.tool_calls
    if calls:
        failed = sum(1 for c in calls if not c.ok)
        err.write(f"-- {len(calls)} tool call(s), {failed} failed, "
                  f"{result.duration_s * 1000:.0f} ms\n")


def cmd_run(args: argparse.Namespace) -> int:
    """``toolscript run SCRIPT``."""
    source = sys.stdin.read() if args.script == "-" else Path(args.script).read_text("utf-8")
    if args.approve == "ask" and args.script == "-":
        raise ToolscriptError("--approve ask reads answers from the terminal; pass the script as "
                              "a file, not on standard input")
    with build_runtime(args) as runtime:
        result = runtime.run(source)
    _print_result(result, args.json, sys.stdout, sys.stderr, config_in_force(args),
                  getattr(args, "journal", None))
    if getattr(result, "status", "") == "paused":
        return EXIT_PAUSED
    return EXIT_OK if result.ok else EXIT_SCRIPT_FAILED


def cmd_tools(args: argparse.Namespace) -> int:
    """``toolscript tools MODULE_OR_FILE`` (``--lint``: check them against the guidance)."""
    from toolscript.tools import ToolRegistry, load_tools

    tools = []
    for spec in args.modules:
        tools.extend(load_tools(spec))
    registry = ToolRegistry(tools)
    if args.lint:
        from toolscript.tools.lint import format_findings, lint_tools

        findings = lint_tools(registry)
        if args.json:
            print(json.dumps([f.to_dict() for f in findings], indent=2, ensure_ascii=False))
        else:
            sys.stdout.write(format_findings(findings))
        return EXIT_SCRIPT_FAILED if any(f.severity != "info" for f in findings) else EXIT_OK
    if args.json:
        print(json.dumps(registry.function_specs(), indent=2, ensure_ascii=False))
    else:
        print(registry.render_stubs())
    return EXIT_OK


CommandHook = Callable[[Any], None]
_EXTRA_COMMANDS: list[str] = [
    "toolscript.runtime.cli.agent:add_agent_command",
    "toolscript.runtime.cli.image:add_image_commands",
    "toolscript.runtime.cli.image:add_gc_command",
    "toolscript.runtime.cli.batch:add_batch_command",
    "toolscript.runtime.cli.mcp:add_mcp_command",
    "toolscript.runtime.cli.audit:add_audit_commands",
    "toolscript.runtime.cli.doctor:add_doctor_command",
    "toolscript.runtime.cli.approvals:add_approvals_command",
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(
        prog="toolscript",
        description="Run model-written Python that chains whitelisted tools, in a sandbox.",
    )
    parser.add_argument("--profile", default=None,
                        help="configuration profile from toolscript.toml or [tool.toolscript] "
                        "in pyproject.toml (default: $TOOLSCRIPT_PROFILE or default_profile)")
    parser.add_argument("--config", default=None, metavar="FILE",
                        help="configuration file (default: found from the working directory)")
    parser.add_argument("-v", "--verbose", dest="global_verbose", action="store_true",
                        help="say which profile and settings a command runs with")
    from toolscript import __version__

    parser.add_argument("--version", action="version", version=f"toolscript {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a script against tools", epilog=RUN_OUTPUT)
    run.add_argument("script", help="path of the script, or - for standard input")
    add_common_runtime_options(run)
    run.add_argument("--json", action="store_true",
                     help="print the whole result as one JSON document")
    run.add_argument("--journal", default=None, metavar="URL",
                     help="journal store of durable runs (--approve defer): sqlite:///path, "
                     "postgresql://... or a path (default: $TOOLSCRIPT_JOURNAL, else "
                     "~/.local/state/toolscript/journal.sqlite3)")
    run.set_defaults(handler=cmd_run)

    tools = sub.add_parser("tools", help="show tools as Python stubs, as a model sees them")
    tools.add_argument("modules", nargs="+", metavar="MODULE_OR_FILE")
    tools.add_argument("--json", action="store_true", help="print JSON function specs instead")
    tools.add_argument("--lint", action="store_true",
                       help="check the tools against tool-design guidance; exit 1 on warnings")
    tools.set_defaults(handler=cmd_tools)

    import importlib

    for target in _EXTRA_COMMANDS:
        module_name, func_name = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        getattr(module, func_name)(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolscript`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        apply_profile(args)
        code: int = args.handler(args)
        return code
    except ToolscriptError as exc:
        sys.stderr.write(f"toolscript: {exc}\n")
        return EXIT_USAGE
    except FileNotFoundError as exc:
        sys.stderr.write(f"toolscript: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        sys.stderr.write("toolscript: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
