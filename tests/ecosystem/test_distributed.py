"""Batch items over a real local Dask cluster of two worker processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import eco_batch_tools
import pytest
from distributed import Client, LocalCluster
from toolscript.runtime.batch.distributed import DaskExecutor
from toolscript.runtime.batch.run import ItemOptions, RuntimeSpec, run_batch

TOOLS_FILE = str(Path(eco_batch_tools.__file__).resolve())
SCRIPT = "v = slow_square(item['n'], 0.1)\nrecord_write(str(item['n']))\nv\n"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    log = tmp_path_factory.mktemp("dask") / "writes.log"
    previous = os.environ.get("TOOLSCRIPT_TEST_WRITE_LOG")
    os.environ["TOOLSCRIPT_TEST_WRITE_LOG"] = str(log)  # inherited by the worker processes
    try:
        with LocalCluster(
            n_workers=2,
            threads_per_worker=2,
            processes=True,
            dashboard_address=None,
            silence_logs=40,
        ) as local:
            yield local, log
    finally:
        if previous is None:
            os.environ.pop("TOOLSCRIPT_TEST_WRITE_LOG", None)
        else:
            os.environ["TOOLSCRIPT_TEST_WRITE_LOG"] = previous


def test_items_spread_over_workers_with_checkpoint_and_resume(cluster, tmp_path):
    local, log = cluster
    out = tmp_path / "out.jsonl"
    spec = RuntimeSpec(tools=(TOOLS_FILE,), backend="subprocess")
    options = ItemOptions()
    items = [{"n": n} for n in range(12)] + [{"n": "bad"}]
    with Client(local) as client:
        first = run_batch(
            None,
            SCRIPT,
            items[:6],
            out=out,
            executor=DaskExecutor(client, spec, SCRIPT, options, concurrency=2),
        )
        assert first.summary.ok == 6
        report = run_batch(
            None,
            SCRIPT,
            items,
            out=out,
            resume=True,
            executor=DaskExecutor(client, spec, SCRIPT, options, concurrency=2),
        )
    summary = report.summary
    assert (summary.skipped, summary.ok, summary.failed) == (6, 6, 1)
    assert summary.errors_by_type == Counter({"tool_error": 1})
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["index"] for r in records) == list(range(13))
    assert all(r["value"] == r["index"] ** 2 for r in records if r["ok"])
    assert len({r["worker"] for r in records}) == 2  # both worker processes ran items
    writes = Counter(log.read_text().split())
    assert all(writes[str(n)] == 1 for n in range(12))  # resume never re-ran a finished item


def test_cli_cluster_option(cluster, tmp_path):
    local, _ = cluster
    (tmp_path / "script.py").write_text("slow_square(item)")
    (tmp_path / "items.jsonl").write_text("".join(f"{n}\n" for n in range(8)))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolscript",
            "batch",
            "script.py",
            "--inputs",
            "items.jsonl",
            "--tools",
            TOOLS_FILE,
            "--cluster",
            local.scheduler_address,
            "--concurrency",
            "2",
            "--out",
            "out.jsonl",
            "--progress",
            "plain",
            "--summary-json",
            "summary.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["ok"] == 8 and summary["failed"] == 0 and summary["tool_calls"] == 8
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert sorted(r["value"] for r in records) == [n * n for n in range(8)]
    assert "8/8 items" in proc.stderr
