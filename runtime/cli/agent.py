"""``toolscript agent "TASK"``: let a model solve a task with the tools.

Prints the answer on standard output and a short trace of the turns and tool
calls on standard error (``--json`` prints everything as JSON instead). The
profile's ``model`` section gives the defaults of ``--provider``, ``--model``,
``--base-url``, ``--mode`` and ``--max-turns`` (and the API key, from the
variable its ``api_key_env`` names, its timeout, temperature and token cap);
the options given on the command line win.
The core CLI (:mod:`.cli`) registers this command through
:func:`add_agent_command`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO, cast

from toolscript.runtime.agent import (
    MODES,
    Agent,
    AgentLimits,
    AgentResult,
    Endpoint,
    ModelSettings,
)
from toolscript.runtime.agent.format import to_json
from toolscript.runtime.providers import PROVIDER_NAMES

__all__ = [
    "add_agent_command",
    "agent_options",
    "api_key_variables",
    "cmd_agent",
    "group_agent_options",
    "print_trace",
]


def api_key_variables() -> list[str]:
    """Every environment variable a provider reads its API key from, in the order
    the dialects and endpoint profiles name them (what ``agent --help`` lists)."""
    from toolscript.runtime.providers.clients import GEMINI_KEY_ENV
    from toolscript.runtime.providers.profiles import PROFILES

    names = [profile.api_key_env for profile in PROFILES.values()]
    names += ["ANTHROPIC_API_KEY", *GEMINI_KEY_ENV]
    return list(dict.fromkeys(names))


def add_agent_command(subparsers: Any) -> None:
    """Add the ``agent`` subcommand to the ``toolscript`` parser."""
    from toolscript.runtime.cli.main import add_common_runtime_options

    parser = subparsers.add_parser(
        "agent",
        help="let a model solve a task by calling the tools",
        description="Run the agent loop: the model writes scripts (programmatic mode) or "
        "calls tools one by one (classic mode) until it answers. API keys come from the "
        f"usual environment variables ({', '.join(api_key_variables())}).",
    )
    parser.add_argument("task", help="the task, in words")
    add_common_runtime_options(parser)
    parser.add_argument("--provider", default=None, choices=PROVIDER_NAMES,
                        help="API dialect or endpoint profile (default: the profile's model "
                        "section, else openai)")
    parser.add_argument("--model", default=None,
                        help="model name (default: the profile's model section)")
    parser.add_argument("--base-url", default=None, help="endpoint URL (default: the profile's, "
                        "else the provider's)")
    parser.add_argument("--mode", default=None, choices=MODES,
                        help="programmatic (run_script), classic (one tool per call) or mixed "
                        "(default: the profile's, else programmatic)")
    parser.add_argument("--max-turns", type=int, default=None,
                        help="model requests per run (default: the profile's, else 20)")
    parser.add_argument("--token-budget", type=int, default=None,
                        help="input+output tokens after which the model must answer")
    parser.add_argument("--strict", action="store_true", help="strict-mode tool schemas")
    parser.add_argument("--json", action="store_true",
                        help="print the answer, usage and steps as JSON")
    parser.set_defaults(handler=cmd_agent)


def agent_options(args: argparse.Namespace) -> dict[str, Any]:
    """``Agent`` keyword arguments: the profile's model section, the options over it,
    grouped as ``Agent`` takes them (``limits``, ``model_settings``, ``endpoint``).

    Raises:
        ConfigurationError: no model is named, the profile's ``api_key_env``
            names a variable that is not set, or a value is out of range.
    """
    from toolscript.errors import ConfigurationError

    profile = getattr(args, "profile_settings", None)
    model = profile.model if profile is not None else None
    flat: dict[str, Any] = model.agent_options() if model is not None else {}
    given = {"provider": args.provider, "model": args.model, "base_url": args.base_url,
             "mode": args.mode, "max_turns": args.max_turns,
             "token_budget": getattr(args, "token_budget", None)}
    flat.update({name: value for name, value in given.items() if value is not None})
    if getattr(args, "strict", False):
        flat["strict"] = True
    if not flat.get("model"):
        raise ConfigurationError("name the model with --model, or in the profile's model "
                                 "section (model = \"...\")")
    return group_agent_options(flat)


_LIMIT_FIELDS = ("max_turns", "token_budget")
_ENDPOINT_FIELDS = ("base_url", "api_key")
_SETTING_FIELDS = ("timeout_s", "temperature", "max_tokens", "strict")


def group_agent_options(flat: dict[str, Any]) -> dict[str, Any]:
    """Flat settings (a profile's model section and the flags) as ``Agent`` arguments."""
    settings = cast(ModelSettings, {name: flat[name] for name in _SETTING_FIELDS
                                    if flat.get(name) is not None})
    limits = {name: flat[name] for name in _LIMIT_FIELDS if flat.get(name) is not None}
    endpoint = {name: flat[name] for name in _ENDPOINT_FIELDS if flat.get(name) is not None}
    return {
        "provider": flat.get("provider", "openai"),
        "model": flat["model"],
        "mode": flat.get("mode", "programmatic"),
        "limits": AgentLimits(**limits),
        "model_settings": settings,
        "endpoint": Endpoint(**endpoint),
    }


def cmd_agent(args: argparse.Namespace) -> int:
    """Handle ``toolscript agent``."""
    from toolscript.runtime.cli.main import build_runtime, config_in_force

    options = agent_options(args)
    with build_runtime(args) as runtime:
        agent = Agent(runtime, **options)
        result = agent.run(args.task)
    if args.json:
        data = {**result_to_dict(result), "config": config_in_force(args)}
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(result.answer.rstrip("\n") + "\n")
        print_trace(result, sys.stderr)
    return 0


def result_to_dict(result: AgentResult) -> dict[str, Any]:
    """A JSON-able summary of an agent run."""
    return {
        "answer": result.answer,
        "turns": result.turns,
        "stopped_by": result.stopped_by,
        "usage": {
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "cache_read_tokens": result.usage.cache_read_tokens,
        },
        "steps": [
            {
                "name": step.name,
                "arguments": step.arguments,
                "executed": step.executed,
                "ok": step.ok,
                "output": step.output,
                "tool_calls": [
                    {"name": r.name, "args": r.args, "ok": r.ok,
                     "error": str(r.error) if r.error else None}
                    for r in step.records
                ],
            }
            for step in result.steps
        ],
    }


def print_trace(result: AgentResult, out: TextIO) -> None:
    """A short trace: each model call, its host tool calls, then the totals."""
    for step in result.steps:
        status = "ok" if step.ok else ("skipped" if not step.executed else "error")
        if step.name == "run_script":
            counts: dict[str, int] = {}
            for record in step.records:
                counts[record.name] = counts.get(record.name, 0) + 1
            calls = ", ".join(f"{name} x{n}" for name, n in counts.items()) or "no tool calls"
            out.write(f"  run_script [{status}]: {calls}\n")
        else:
            args = to_json(step.arguments) if not isinstance(step.arguments, str) else (
                step.arguments
            )
            out.write(f"  {step.name}({_short(args)}) [{status}]\n")
        if not step.ok:
            out.write(f"    {_short(step.output.splitlines()[0] if step.output else '')}\n")
    usage = result.usage
    out.write(
        f"-- {result.turns} turn(s), {len(result.tool_calls)} tool call(s), "
        f"{usage.input_tokens} input / {usage.output_tokens} output tokens"
        f"{'' if result.stopped_by == 'answer' else f', stopped by {result.stopped_by}'}\n"
    )


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
