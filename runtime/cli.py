"""The ``toolscript`` command line.

Subcommands: ``run`` (a script against tools), ``tools`` (show tools as the
model sees them), and those added by other parts (``agent``, ``image``,
``gc``) through small ``add_*_command`` hooks.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from toolscript.errors import ToolscriptError

from .approval import ApprovalHook, Decision, ToolCallRequest, named_policy
from .limits import Limits
from .results import RunResult

EXIT_OK = 0
EXIT_SCRIPT_FAILED = 1
EXIT_USAGE = 2


class TerminalApproval:
    """``--approve ask``: show each call that writes (or requires approval) and wait
    for y/n, or a = approve all calls of this tool for this run."""

    def __init__(self, stdin: TextIO | None = None, stderr: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr
        self.always: set[str] = set()

    def __call__(self, request: ToolCallRequest) -> Decision:
        if request.read_only and not request.requires_approval:
            return Decision.allow("read-only")
        if request.tool in self.always:
            return Decision.allow("approved for all calls of this tool in this run")
        args = json.dumps(request.args, ensure_ascii=False)
        if len(args) > 500:
            args = args[:500] + "..."
        self.stderr.write(f"\nApprove {request.tool}({args})? [y]es / [n]o / [a]ll calls of "
                          f"{request.tool}: ")
        self.stderr.flush()
        answer = self.stdin.readline()
        if not answer:
            return Decision.deny("no answer (end of input)")
        answer = answer.strip().lower()
        if answer in ("a", "all"):
            self.always.add(request.tool)
            return Decision.allow("approved at the terminal for all calls of this tool")
        if answer in ("y", "yes"):
            return Decision.allow("approved at the terminal")
        return Decision.deny("denied at the terminal")


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
                        choices=["inprocess", "subprocess", "docker"],
                        help="where scripts run (default: the profile's, else subprocess)")
    parser.add_argument("--approve", default=None, choices=["allow", "ask", "deny", "default"],
                        help="approval of tool calls: allow all, ask at the terminal, deny "
                        "writes, or default (deny only tools that require approval); default: "
                        "the profile's, else default")
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="wall-clock limit of a run in seconds (default 30)")
    parser.add_argument("--memory-mb", type=int, default=None, help="memory limit in MiB")


def apply_profile(args: argparse.Namespace) -> None:
    """Fill unset common options from ``--profile`` (see runtime/config.py), else defaults."""
    profile = None
    if getattr(args, "profile", None) or getattr(args, "config", None):
        from .config import load_config

        profile = load_config(args.config).profile(args.profile)
    args.profile_settings = profile
    if hasattr(args, "backend") and args.backend is None:
        args.backend = profile.backend if profile is not None else "subprocess"
    if hasattr(args, "approve") and args.approve is None:
        args.approve = profile.approve if profile is not None else "default"


def build_runtime(args: argparse.Namespace) -> Any:
    """A Runtime from the common options (over the ``--profile``'s settings, if any)."""
    from toolscript.tools import load_tools

    from .runtime import Runtime

    if not hasattr(args, "profile_settings"):
        apply_profile(args)
    profile = args.profile_settings
    kwargs: dict[str, Any] = profile.runtime_kwargs() if profile is not None else {"tools": []}
    tools = list(kwargs.pop("tools"))
    for spec in args.tools:
        tools.extend(load_tools(spec))
    changes: dict[str, Any] = {}
    if args.timeout is not None:
        changes["wall_time_s"] = args.timeout
    if args.memory_mb is not None:
        changes["memory_mb"] = args.memory_mb
    limits = kwargs.pop("limits", Limits())
    kwargs.update(backend=args.backend, approve=approval_from_name(args.approve),
                  limits=limits.with_changes(**changes))
    return Runtime(tools=tools, **kwargs)


def _print_result(result: RunResult, as_json: bool, out: TextIO) -> None:
    if as_json:
        out.write(json.dumps(result.to_dict(), ensure_ascii=False, default=str, indent=2) + "\n")
        return
    if result.stdout:
        out.write(result.stdout if result.stdout.endswith("\n") else result.stdout + "\n")
    if result.ok:
        if result.value is not None:
            out.write(json.dumps(result.value, ensure_ascii=False, indent=2) + "\n")
    else:
        assert result.error is not None
        sys.stderr.write(f"error [{result.error.type}]: {result.error.message}\n")
    calls = result.tool_calls
    if calls:
        failed = sum(1 for c in calls if not c.ok)
        sys.stderr.write(f"-- {len(calls)} tool call(s), {failed} failed, "
                         f"{result.duration_s * 1000:.0f} ms\n")


def cmd_run(args: argparse.Namespace) -> int:
    """``toolscript run SCRIPT``."""
    source = sys.stdin.read() if args.script == "-" else Path(args.script).read_text("utf-8")
    if args.approve == "ask" and args.script == "-":
        raise ToolscriptError("--approve ask reads answers from the terminal; pass the script as "
                              "a file, not on standard input")
    with build_runtime(args) as runtime:
        result = runtime.run(source)
    _print_result(result, args.json, sys.stdout)
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
    "toolscript.runtime.agent_cli:add_agent_command",
    "toolscript.runtime.image:add_image_commands",
    "toolscript.runtime.image:add_gc_command",
    "toolscript.runtime.batch_cli:add_batch_command",
    "toolscript.runtime.mcp.cli:add_mcp_command",
    "toolscript.runtime.audit_cli:add_audit_commands",
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
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a script against tools")
    run.add_argument("script", help="path of the script, or - for standard input")
    add_common_runtime_options(run)
    run.add_argument("--json", action="store_true", help="print the whole result as JSON")
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
        handler = getattr(args, "handler", None) or args.func
        code: int = handler(args)
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
