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
                    "## Correctness", "## Method", "## Separate benchmark runs",
                    "## smolagents executor tests"):
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


def test_separate_runs_render_known_and_unknown_result_files(tmp_path: Path) -> None:
    from benchmarks.results_report import hand_written_notes, results_sections

    (tmp_path / "durable_faults.json").write_text(json.dumps({"docker": {
        "completed": 10, "kills": {"before_call": 3}, "duplicates_journaled": 0,
        "duplicates_idempotent": 0, "at_least_once_plain": 1, "in_flight_crashes": 2,
        "failures": []}}))
    (tmp_path / "new_thing.json").write_text(json.dumps({"inprocess": {"ratio": 1.5},
                                                         "seconds": 3}))
    (tmp_path / "broken.json").write_text("{")
    text = results_sections(tmp_path)
    assert "| docker | 10 | before_call 3 | 0 | 0 | 1 of 2 | 0 |" in text
    assert "| inprocess | 1.5 |" in text and "seconds 3" in text
    assert "### broken.json" in text and "Unreadable" in text
    assert results_sections(tmp_path / "missing") == ""
    notes = tmp_path / "notes.md"
    notes.write_text("<!-- how to edit -->\n\n## Kept\n\ntext\n")
    assert hand_written_notes(notes) == "## Kept\n\ntext"
