"""Timing the workloads on every engine: medians, ratios to ``exec``, value checks."""

from __future__ import annotations

import concurrent.futures
import cProfile
import io
import pstats
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .engines import Engine, Outcome, ToolscriptEngine
from .workloads import Workload

ROOT = Path(__file__).resolve().parents[1]

SIZE_CAPS: dict[tuple[str, str], tuple[int, str]] = {
    ("smolagents", "compute"): (
        20_000,
        "run at 20,000 records: at 200,000 smolagents stops with \"Reached the max number of "
        "operations of 10000000\" after ~28 s (its default caps are 10 M operations and 30 s)",
    ),
}
"""Engines that cannot run a workload at full size with their default limits:
(engine, workload) -> (size to run instead, why). ``exec`` is measured at that
size too, so the ratio compares like with like."""

UNSUPPORTED: dict[tuple[str, str], str] = {}
"""(engine, workload) -> why the engine cannot run it at all."""


class Timer:
    """Repeats a measurement until ``repeat`` samples or a time budget is spent."""

    def __init__(self, repeat: int, budget_s: float) -> None:
        self.repeat = repeat
        self.budget_s = budget_s

    def samples(self, once: Callable[[], tuple[float, Outcome]],
                warmup: tuple[float, Outcome] | None) -> tuple[list[float], str]:
        """Timed samples of ``once`` (seconds); reuses a slow warm-up as the only sample."""
        if warmup is not None and warmup[0] > self.budget_s:
            return [warmup[0]], "1 run (the warm-up, which exceeded the time budget)"
        samples: list[float] = []
        spent = 0.0
        while len(samples) < self.repeat and (not samples or spent < self.budget_s):
            seconds, outcome = once()
            if not outcome.ok:
                raise RunFailed(outcome.error or "failed")
            samples.append(seconds)
            spent += seconds
        note = "" if len(samples) >= self.repeat else f"{len(samples)} runs (time budget)"
        return samples, note


class RunFailed(Exception):
    """A run returned ``ok=False``."""


def _timed(fn: Callable[[], Outcome]) -> tuple[float, Outcome]:
    start = time.perf_counter()
    outcome = fn()
    return time.perf_counter() - start, outcome


def measure_engine(engine: Engine, workload: Workload, n: int, timer: Timer) -> dict[str, Any]:
    """Median seconds of ``workload`` at size ``n`` on ``engine``, with the value produced."""
    code = workload.code(n)
    if workload.kind == "warm":
        if isinstance(engine, ToolscriptEngine):
            engine.warm_pool()
        with engine.session() as session:
            warmup = _timed(lambda: session.run(code))
            if not warmup[1].ok:
                raise RunFailed(warmup[1].error or "failed")
            samples, note = timer.samples(lambda: _timed(lambda: session.run(code)), warmup)
        return _entry(samples, note, warmup[1])
    if workload.kind == "fresh":
        def fresh() -> tuple[float, Outcome]:
            if isinstance(engine, ToolscriptEngine):
                engine.warm_pool()  # docker: every sample sees a warm pool
            return _timed(lambda: engine.run_fresh(code))

        warmup = fresh()
        if not warmup[1].ok:
            raise RunFailed(warmup[1].error or "failed")
        samples, note = timer.samples(fresh, warmup)
        if isinstance(engine, ToolscriptEngine) and engine.backend == "docker":
            note = (note + "; " if note else "") + "warm pool refilled before each run"
        return _entry(samples, note, warmup[1])
    if workload.kind == "concurrent":
        return _concurrent(engine, workload, n, code, timer)
    raise ValueError(workload.kind)


def _concurrent(engine: Engine, workload: Workload, n: int, code: str,
                timer: Timer) -> dict[str, Any]:
    threads = workload.concurrency

    def batch() -> tuple[float, Outcome]:
        if isinstance(engine, ToolscriptEngine):
            engine.warm_pool()
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            start = time.perf_counter()
            outcomes = list(pool.map(lambda _: engine.run_fresh(code), range(n)))
            seconds = time.perf_counter() - start
        failed = [o for o in outcomes if not o.ok]
        if failed:
            return seconds, Outcome(False, error=f"{len(failed)}/{n} runs failed: "
                                    f"{failed[0].error}")
        values = {repr(o.value) for o in outcomes}
        if len(values) != 1:
            return seconds, Outcome(False, error=f"runs disagree: {sorted(values)[:3]}")
        return seconds, outcomes[0]

    quick_timer = Timer(max(1, min(timer.repeat, 3)), timer.budget_s)
    warmup = batch()
    if not warmup[1].ok:
        raise RunFailed(warmup[1].error or "failed")
    samples, note = quick_timer.samples(batch, warmup)
    entry = _entry(samples, note, warmup[1])
    entry["runs_per_s"] = n / entry["median_s"]
    entry["sessions"] = n
    entry["threads"] = threads
    return entry


def _entry(samples: list[float], note: str, outcome: Outcome) -> dict[str, Any]:
    return {
        "status": "ok",
        "median_s": statistics.median(samples),
        "min_s": min(samples),
        "samples_s": samples,
        "runs": len(samples),
        "note": note,
        "value": outcome.value,
    }


def profile_chain(engine: Engine, code: str, top: int = 14) -> list[dict[str, Any]]:
    """cProfile of one run of ``code`` in a warm session: the top functions by own time."""
    with engine.session() as session:
        session.run(code)
        profiler = cProfile.Profile()
        profiler.enable()
        session.run(code)
        profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    rows = []
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    for (filename, line, func), (_cc, nc, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append({"function": f"{_short(filename)}:{line}({func})", "calls": nc,
                     "tottime_s": tt, "cumtime_s": ct, "share": tt / total if total else 0.0})
    rows.sort(key=lambda r: -r["tottime_s"])
    return rows[:top]


def _short(filename: str) -> str:
    filename = re.sub(r"^.*/lib/python3\.\d+/(site-packages/)?", "", filename)
    return filename.replace(f"{ROOT}/", "")
