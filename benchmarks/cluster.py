"""Batch jobs over a Dask cluster: items/s as workers are added.

``toolscript batch --cluster`` sends each item to a Dask worker that runs it
in its own sandboxes, while the client keeps the results file and the
checkpoint (an fsync per record). This measures how that scales on a
``LocalCluster`` of 1, then 2, worker processes, with two kinds of item on
the subprocess backend:

* **remote-API items**: one call of a 50 ms tool (``slow_lookup``, like a
  remote API) and one fast call. Their cost is waiting, as in most real batch
  jobs, so this machine's two cores are not the limit and the second worker
  stands for a second machine: near-linear scaling means two workers come
  close to twice the items/s of one, with the scheduler, the client and its
  checkpoint in the path.
* **CPU-bound items**: the batch workload's two fast calls. One worker
  already keeps most of this machine busy, so adding a worker on the same
  two cores shows what the cluster path costs, not how it scales; it is
  reported without a target.

Every item also runs through the local batch runner with as many items in
flight as the cluster has: the price of going through Dask.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.workloads import BATCH_ITEM, batch_items, batch_value, get_price

TOOLS_MODULE = "benchmarks.cluster_tools"
"""The tools every worker loads (importable by name in the worker processes)."""

REMOTE_ITEM = """\
a = get_price(sku=item["a"])
b = slow_lookup(key=item["b"])
round(a["price"] + b["value"], 2)
"""
"""An item that waits on a 50 ms tool call, as a call to a remote API does."""


@dataclass(frozen=True)
class Scenario:
    """One kind of batch item and how many of it a worker runs at once."""

    name: str
    title: str
    script: str
    n: int
    threads_per_worker: int
    expected: Callable[[list[dict[str, str]]], dict[str, Any]]


def _expected_fast(items: list[dict[str, str]]) -> dict[str, Any]:
    return batch_value([round(get_price(i["a"])["price"] + get_price(i["b"])["price"], 2)
                        for i in items])


def _expected_remote(items: list[dict[str, str]]) -> dict[str, Any]:
    # slow_lookup(key) is {"value": len(key)} after its wait
    return batch_value([round(get_price(i["a"])["price"] + len(i["b"]), 2) for i in items])


SCENARIOS = (
    Scenario("remote", "remote-API items (a 50 ms call and a fast one)", REMOTE_ITEM,
             n=160, threads_per_worker=2, expected=_expected_remote),
    Scenario("cpu", "CPU-bound items (two fast calls)", BATCH_ITEM,
             n=400, threads_per_worker=2, expected=_expected_fast),
)


def _timed_batch(runtime: Any, script: str, items: list[dict[str, str]], concurrency: int,
                 executor: Any = None) -> tuple[float, dict[str, Any]]:
    """Seconds for one batch (as ``toolscript batch --out`` runs it) and its value."""
    from toolscript.runtime.batch.run import run_batch

    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        out = Path(tmp) / "results.jsonl"
        started = time.perf_counter()
        report = run_batch(runtime, script, items, concurrency=concurrency, out=out,
                           executor=executor, progress=None, stop_signals=())
        elapsed = time.perf_counter() - started
        records = [json.loads(line) for line in out.read_text("utf-8").splitlines()
                   if line.strip()]
    if report.summary.ok != len(items):
        first = next((r.get("error") for r in records if r.get("error")), None)
        raise RuntimeError(f"{report.summary.failed}/{len(items)} items failed: {first}")
    records.sort(key=lambda r: r["index"])
    return elapsed, batch_value([r["value"] for r in records])


def _rates(run: Callable[[], tuple[float, dict[str, Any]]], n: int, repeat: int,
           expected: dict[str, Any]) -> dict[str, Any]:
    """items/s of ``repeat`` timed batches of ``n`` items, each checked."""
    rates = []
    for _ in range(repeat):
        seconds, value = run()
        if value != expected:
            raise RuntimeError(f"wrong batch value {value}, expected {expected}")
        rates.append(n / seconds)
    return {"items_per_s": statistics.median(rates), "best_items_per_s": max(rates),
            "samples": rates}


def _scenario(scenario: Scenario, n: int, repeat: int,
              workers: tuple[int, ...]) -> dict[str, Any]:
    from distributed import Client, LocalCluster
    from toolscript.runtime.batch.distributed import DaskExecutor
    from toolscript.runtime.batch.run import ItemOptions, RuntimeSpec

    spec = RuntimeSpec(tools=(TOOLS_MODULE,), backend="subprocess")
    items = batch_items(n)
    expected = scenario.expected(items)
    threads = scenario.threads_per_worker
    rows: list[dict[str, Any]] = []
    for count in workers:
        with LocalCluster(n_workers=count, threads_per_worker=threads, processes=True,
                          dashboard_address=None, silence_logs=40) as cluster, \
                Client(cluster) as client:  # type: ignore[no-untyped-call]

            def on_cluster(batch: list[dict[str, str]]) -> tuple[float, dict[str, Any]]:
                # twice the worker's threads in flight, so that a worker finishing an
                # item has the next one at hand instead of waiting for a round trip
                executor = DaskExecutor(client, spec, scenario.script, ItemOptions(),
                                        concurrency=2 * threads)
                return _timed_batch(None, scenario.script, batch, 2 * threads, executor)

            on_cluster(items[: 4 * threads * count])  # warm-up: workers build their Runtime
            row: dict[str, Any] = {
                "workers": count,
                "cluster": _rates(lambda: on_cluster(items), n, repeat, expected)}
        in_flight = threads * count
        with spec.build() as runtime:

            def locally(batch: list[dict[str, str]], size: int = in_flight
                        ) -> tuple[float, dict[str, Any]]:
                return _timed_batch(runtime, scenario.script, batch, size)

            locally(items[: 4 * in_flight])
            row["local"] = _rates(lambda: locally(items), n, repeat, expected)
        row["in_flight"] = in_flight
        rows.append(row)
    first, last = rows[0]["cluster"]["items_per_s"], rows[-1]["cluster"]["items_per_s"]
    return {"title": scenario.title, "n": n, "threads_per_worker": threads, "rows": rows,
            "scaling": last / first}


def measure(quick: bool = False, repeat: int = 3,
            workers: tuple[int, ...] = (1, 2)) -> dict[str, Any]:
    """Items/s over a local Dask cluster per worker count (and locally with as many
    items in flight), per scenario; ``scaling`` is the last count's items/s over
    the first's."""
    scenarios = {s.name: _scenario(s, max(20, s.n // 8) if quick else s.n, repeat, workers)
                 for s in SCENARIOS}
    return {"status": "ok", "backend": "subprocess", "repeat": repeat,
            "workers_from": workers[0], "workers_to": workers[-1], "scenarios": scenarios}
