"""The token-economy benchmark still runs and its scripted decisions are still correct.

Not a timed test: it checks correctness and that programmatic mode sends fewer
input tokens on data-heavy tasks; the ratios themselves are the benchmark's output.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "token_economy.py"


def _load():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("token_economy", BENCHMARK)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["token_economy"] = module
    spec.loader.exec_module(module)
    return module


def test_token_economy_runs_and_programmatic_saves_on_data_heavy_tasks():
    bench = _load()
    summary = bench.run(["openai"], "inprocess")
    assert summary["all_correct"]
    for row in summary["rows"]:
        if row["data_heavy"]:
            assert row["input_reduction"] > 0.8, row["task"]
            assert row["programmatic"]["turns"] <= row["classic"]["turns"]
    assert "| store_revenue_20x7 | openai |" in bench.markdown(summary)
