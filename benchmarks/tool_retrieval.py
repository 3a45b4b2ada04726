"""Tool retrieval over large catalogs (issue 28): does ``search_tools`` find the right tool?

Queries: the 97 user-task prompts of AgentDojo's v1.2 suites (workspace,
travel, banking, slack). Relevant set of a query: the tools of its task's
ground-truth calls. Catalog: the suites' 74 tools, each in a namespace named
after its suite (``workspace.send_email``), padded with distractors up to
1,000 and 10,000 tools taken from real API definitions shipped in a package:
botocore's service models (each operation becomes a tool ``aws_<service>.<op>``
with its documentation and input members), picked by a hash of the name so
the pick is the same on every machine. Everything deferred, searched through
the product's own path (``ToolRegistry`` + ``ToolSearch``): Recall@5 (share
of relevant tools in the top 5, averaged per query) and MRR (first relevant
hit). The lexical ranker always; the embedding ranker and the fusion of both
when ``TOOLSCRIPT_EMBEDDINGS_BASE_URL`` (and ``..._MODEL``, ``..._API_KEY``)
name an OpenAI-compatible endpoint.

Also printed: prompt tokens (tiktoken) of the tool block a programmatic agent
sends (``run_script`` description) with 20, 1,000 and 10,000 deferred tools.

    python3 -m benchmarks.tool_retrieval [--sizes 1000,10000] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from toolscript.runtime import prompts
from toolscript.tools import Tool, ToolRegistry
from toolscript.tools.catalog import Namespace
from toolscript.tools.toolsearch import BM25Ranker, FusionRanker, Ranker, ToolSearch

SUITES_VERSION = "v1.2"
SIZES = (1_000, 10_000)
TOKEN_SIZES = (20, 1_000, 10_000)
GOAL_RECALL_AT_5 = 0.9
_TAG = re.compile(r"<[^>]+>")
_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _noop(**kwargs: Any) -> None:
    return None


Spec = tuple[str, str, str, dict[str, Any]]
"""A tool definition: namespace, name, description, input schema."""


def agentdojo_tasks() -> tuple[list[Spec], list[tuple[str, set[str]]]]:
    """The suites' tools (namespaced by suite) and ``(prompt, relevant tool names)``
    for every user task whose ground truth calls a tool."""
    from agentdojo.task_suite.load_suites import get_suites

    tools: list[Spec] = []
    queries: list[tuple[str, set[str]]] = []
    for suite_name, suite in sorted(get_suites(SUITES_VERSION).items()):
        env = suite.load_and_inject_default_environment({})
        for fn in suite.tools:
            schema = fn.parameters.model_json_schema()
            tools.append((suite_name, fn.name, fn.description, schema))
        for _task_id, task in sorted(suite.user_tasks.items()):
            calls = task.ground_truth(env.model_copy(deep=True))
            relevant = {f"{suite_name}.{c.function}" for c in calls}
            if relevant:
                queries.append((task.PROMPT, relevant))
    return tools, queries


def botocore_operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(name, description, input schema)`` of every botocore operation."""
    import botocore.loaders

    loader = botocore.loaders.Loader()
    for service in sorted(loader.list_available_services("service-2")):
        model = loader.load_service_model(service, "service-2")
        shapes = model.get("shapes", {})
        prefix = "aws_" + re.sub(r"[^a-z0-9]", "_", service.lower())[:24]
        for op_name, op in sorted(model.get("operations", {}).items()):
            doc = " ".join(html.unescape(_TAG.sub(" ", op.get("documentation", ""))).split())
            members = shapes.get(op.get("input", {}).get("shape", ""), {}).get("members", {})
            props = {
                m: {"type": "string", "description": " ".join(
                    html.unescape(_TAG.sub(" ", spec.get("documentation", ""))).split())[:200]}
                for m, spec in sorted(members.items())
            }
            snake = _SNAKE.sub("_", op_name).lower()
            snake = snake[:62 - len(prefix)].rstrip("_")  # the wire name fits 64
            yield (f"{prefix}.{snake}", doc[:600] or op_name,
                   {"type": "object", "properties": props})


def distractors(count: int) -> list[Spec]:
    """``count`` real tool definitions (botocore operations), a stable pick."""
    ops = sorted(botocore_operations(),
                 key=lambda op: hashlib.sha256(op[0].encode()).hexdigest())
    out: list[Spec] = []
    seen: set[str] = set()
    for name, doc, schema in ops:
        if len(out) == count:
            break
        if name in seen or not all(p.isidentifier() for p in name.split(".")):
            continue
        seen.add(name)
        namespace, short = name.split(".", 1)
        out.append((namespace, short, doc, schema))
    if len(out) < count:
        raise SystemExit(f"botocore has only {len(out)} usable operations, {count} asked")
    return out


def catalog(suite_tools: list[Spec], extra: list[Spec], ranker: Ranker) -> ToolRegistry:
    """Every tool deferred, in its namespace (suite, or ``aws_<service>``)."""
    groups: dict[str, list[Tool]] = {}
    for namespace, short, doc, schema in [*suite_tools, *extra]:
        groups.setdefault(namespace, []).append(
            Tool.from_schema(_noop, name=short, description=doc, input_schema=schema))
    items: list[Any] = [Namespace(ns, tools, deferred=True) for ns, tools in sorted(groups.items())]
    return ToolRegistry([*items, ToolSearch(ranker)])


def evaluate(registry: ToolRegistry, queries: list[tuple[str, set[str]]]) -> dict[str, float]:
    """Recall@5 and MRR of ``registry``'s search over ``queries``."""
    search = registry.search
    assert search is not None
    recall = mrr = 0.0
    for prompt, relevant in queries:
        names = [hit["name"] for hit in search.search(prompt, k=5)]
        deep = [hit["name"] for hit in search.search(prompt, k=20)]
        recall += len(relevant & set(names)) / len(relevant)
        rank = next((i for i, n in enumerate(deep, 1) if n in relevant), None)
        mrr += 1.0 / rank if rank else 0.0
    return {"recall_at_5": recall / len(queries), "mrr_at_20": mrr / len(queries)}


def embedding_ranker() -> Ranker | None:
    """The embedding ranker of the configured endpoint, or None."""
    base_url = os.environ.get("TOOLSCRIPT_EMBEDDINGS_BASE_URL")
    if not base_url:
        return None
    import openai
    from toolscript.runtime.toolsearch import EmbeddingRanker

    client = openai.OpenAI(base_url=base_url,
                           api_key=os.environ.get("TOOLSCRIPT_EMBEDDINGS_API_KEY", "none"))
    return EmbeddingRanker(client, os.environ.get("TOOLSCRIPT_EMBEDDINGS_MODEL",
                                                  "text-embedding-3-small"))


def prompt_tokens(suite_tools: list[Spec], pool: list[Spec]) -> dict[int, int]:
    """Tokens of the ``run_script`` description with N tools, all deferred."""
    from benchmarks.token_economy import TokenCounter

    counter = TokenCounter()
    out = {}
    for size in TOKEN_SIZES:
        tools = (suite_tools + pool)[:size]
        registry = catalog(tools[:min(size, len(suite_tools))], tools[len(suite_tools):],
                           BM25Ranker())
        text = prompts.run_script_description(registry.render_stubs())
        out[size] = counter.count(text)
    return out


def run(sizes: tuple[int, ...] = SIZES, queries_limit: int | None = None) -> dict[str, Any]:
    """Measure every size with every available ranker."""
    suite_tools, queries = agentdojo_tasks()
    queries = queries[:queries_limit] if queries_limit else queries
    pool = distractors(max(max(sizes), max(TOKEN_SIZES)) - len(suite_tools))
    rankers: dict[str, Any] = {"bm25": BM25Ranker}
    if embedding_ranker() is not None:
        rankers["embedding"] = embedding_ranker
        rankers["bm25+embedding"] = lambda: FusionRanker(BM25Ranker(), embedding_ranker())
    results: dict[str, Any] = {"queries": len(queries), "suite_tools": len(suite_tools),
                               "rows": []}
    for size in sizes:
        for ranker_name, make in rankers.items():
            registry = catalog(suite_tools, pool[:size - len(suite_tools)], make())
            row = {"tools": len(registry.deferred_names()), "ranker": ranker_name,
                   **evaluate(registry, queries)}
            results["rows"].append(row)
    results["prompt_tokens"] = prompt_tokens(suite_tools, pool)
    return results


def markdown(results: dict[str, Any]) -> str:
    """The figures as a Markdown table."""
    lines = [f"{results['queries']} AgentDojo {SUITES_VERSION} queries, "
             f"{results['suite_tools']} suite tools + botocore distractors, all deferred.", "",
             "| tools | ranker | Recall@5 | MRR |", "|---:|---|---:|---:|"]
    lines += [f"| {r['tools']:,} | {r['ranker']} | {r['recall_at_5']:.3f} | "
              f"{r['mrr_at_20']:.3f} |" for r in results["rows"]]
    lines += ["", "| tools (deferred) | prompt tokens of the tool block |", "|---:|---:|"]
    lines += [f"| {n:,} | {t:,} |" for n, t in results["prompt_tokens"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    results = run(tuple(int(s) for s in args.sizes.split(",")))
    print(markdown(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
