"""Smoke test of benchmarks/tool_retrieval.py on a small catalog (the real data)."""

from __future__ import annotations

import pytest

pytest.importorskip("agentdojo")
pytest.importorskip("botocore")


def test_retrieval_benchmark_runs_on_a_small_catalog():
    from benchmarks import tool_retrieval

    suite_tools, queries = tool_retrieval.agentdojo_tasks()
    assert len(queries) == 97 and len(suite_tools) == 74
    pool = tool_retrieval.distractors(126)
    registry = tool_retrieval.catalog(suite_tools, pool, tool_retrieval.BM25Ranker())
    assert len(registry.deferred_names()) == 200
    scores = tool_retrieval.evaluate(registry, queries[:20])
    assert 0.0 < scores["recall_at_5"] <= 1.0 and 0.0 < scores["mrr_at_20"] <= 1.0
    assert "| tools | ranker |" in tool_retrieval.markdown(
        {"queries": 20, "suite_tools": 74, "prompt_tokens": {20: 1},
         "rows": [{"tools": 200, "ranker": "bm25", **scores}]})
