"""Smoke test of the benchmark harness: tiny sizes, exec + inprocess only.

Checks that ``python -m benchmarks --quick`` runs end to end and writes a
report with the expected structure. No timing is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_run_writes_a_complete_report(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--engines", "exec,inprocess",
         "--repeat", "2", "--corpus-limit", "4", "--skip", "tokens,audit",
         "--output", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]

    report = (out / "BENCHMARKS.md").read_text("utf-8")
    for heading in ("# Benchmarks", "## Targets", "## Workloads", "## Tool calls",
                    "## Start-up", "## Many short sessions", "## Batch over a Dask cluster",
                    "## Correctness", "## Method"):
        assert heading in report, heading
    for engine in ("CPython exec", "toolscript inprocess", "toolscript inprocess (inline tools)"):
        assert f"| {engine} |" in report, engine
    assert "Quick mode" in report

    results = json.loads((out / "results.json").read_text("utf-8"))
    assert results["mode"] == "quick"
    assert set(results["engines"]) == {"exec", "ts-inprocess", "ts-inprocess-inline"}
    assert results["machine"]["cores"] >= 1 and results["machine"]["python"]
    for name, workload in results["workloads"].items():
        for engine, entry in workload["engines"].items():
            assert entry["status"] == "ok", (name, engine, entry)
            if engine != "exec":
                assert entry["ratio"] > 0
                assert entry["value_matches_exec"], (name, engine)
    assert set(results["tool_calls"]["engines"]) == set(results["engines"])
    assert "us" in results["transport"]["pipe"]
    cluster = results["cluster"]
    assert cluster["status"] == "ok", cluster
    for scenario in cluster["scenarios"].values():
        assert [row["workers"] for row in scenario["rows"]] == [1, 2]
        assert scenario["scaling"] > 0
    corpus = results["correctness"]
    assert corpus["scripts"] == 4
    assert all(e["status"] == "ok" for e in corpus["engines"].values())
    assert results["targets"], "targets are evaluated"

    plots = {p.name for p in (out / "plots").glob("*.png")}
    if "not installed" not in results["machine"]["packages"]["matplotlib"]:
        assert {"ratio_to_exec.png", "tool_call_us.png", "startup.png"} <= plots
        for name in plots:
            assert f"plots/{name}" in report
