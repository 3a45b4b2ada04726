"""Timing the workloads on every engine: medians, ratios to ``exec``, value checks."""

from __future__ import annotations

import concurrent.futures
import cProfile
import gc
import io
import pstats
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .engines import Engine, Outcome, ToolscriptEngine
from .workloads import Workload, batch_items

ROOT = Path(__file__).resolve().parents[1]

_SLOW_START = ("run at {n}: a new container (or interpreter) per session starts a few to a few "
               "dozen times per second, so the full size would take most of a minute per "
               "sample")

SIZE_CAPS: dict[tuple[str, str], tuple[int, str]] = {
    ("smolagents", "compute"): (
        20_000,
        "run at 20,000 records: at 200,000 smolagents stops with \"Reached the max number of "
        "operations of 10000000\" after ~28 s (its default caps are 10 M operations and 30 s)",
    ),
    **{(name, "sessions"): (40, _SLOW_START.format(n="40 sessions"))
       for name in ("ts-docker", "ts-docker-inline")},
    **{(name, "batch"): (60, _SLOW_START.format(n="60 items"))
       for name in ("ts-docker", "ts-docker-inline")},
    ("ts-subprocess-direct", "sessions"): (50, _SLOW_START.format(n="50 sessions")),
    ("ts-subprocess-direct", "batch"): (100, _SLOW_START.format(n="100 items")),
}
"""Engines that cannot run a workload at full size with their default limits:
(engine, workload) -> (size to run instead, why). ``exec`` is measured at that
size too, so the ratio compares like with like."""

UNSUPPORTED: dict[tuple[str, str], str] = {}
"""(engine, workload) -> why the engine cannot run it at all."""


class Timer:
    """How many timed rounds to run, and the time one engine may spend on a workload."""

    def __init__(self, repeat: int, budget_s: float) -> None:
        self.repeat = repeat
        self.budget_s = budget_s


class RunFailed(Exception):
    """A run returned ``ok=False``."""


def _timed(fn: Callable[[], Outcome]) -> tuple[float, Outcome]:
    start = time.perf_counter()
    outcome = fn()
    return time.perf_counter() - start, outcome


class _Runner:
    """Runs one workload on one engine: warm session, fresh runs or a concurrent batch."""

    def __init__(self, engine: Engine, workload: Workload, n: int) -> None:
        self.engine = engine
        self.workload = workload
        self.n = n
        self.code = workload.code(n)
        self.session: Any = None
        self.samples: list[float] = []
        self.spent = 0.0
        self.outcome: Outcome | None = None
        self.error: str | None = None
        self.warmup_s = 0.0
        self.warmup_only = False

    def open(self) -> None:
        if self.workload.kind == "warm":
            if isinstance(self.engine, ToolscriptEngine):
                self.engine.warm_pool()
            self.session = self.engine.session()

    def once(self) -> tuple[float, Outcome]:
        kind = self.workload.kind
        if kind == "warm":
            return _timed(lambda: self.session.run(self.code))
        if isinstance(self.engine, ToolscriptEngine):
            self.engine.warm_pool()  # docker: every sample starts with a warm pool
        if kind == "fresh":
            return _timed(lambda: self.engine.run_fresh(self.code))
        if kind == "batch":
            items = batch_items(self.n)
            return _timed(lambda: self.engine.run_batch(self.code, items,
                                                        self.workload.concurrency))
        return self._batch()

    def _batch(self) -> tuple[float, Outcome]:
        count = self.n
        with concurrent.futures.ThreadPoolExecutor(self.workload.concurrency) as pool:
            start = time.perf_counter()
            outcomes = list(pool.map(lambda _: self.engine.run_fresh(self.code), range(count)))
            seconds = time.perf_counter() - start
        failed = [o for o in outcomes if not o.ok]
        if failed:
            return seconds, Outcome(False, error=f"{len(failed)}/{count} runs failed: "
                                    f"{failed[0].error}")
        values = {repr(o.value) for o in outcomes}
        if len(values) != 1:
            return seconds, Outcome(False, error=f"runs disagree: {sorted(values)[:3]}")
        return seconds, outcomes[0]

    def after(self) -> None:
        """Untimed clean-up between samples: drop the run's variables."""
        if self.session is not None:
            self.session.reset()

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


def measure_group(engines: dict[str, Engine], workload: Workload, n: int,
                  timer: Timer) -> dict[str, dict[str, Any]]:
    """Time ``workload`` at size ``n`` on every engine, interleaved round by round.

    ``engines`` must include ``exec``. After one warm-up run each, every round
    runs each engine once, in order, so background load (these machines are
    shared) hits all engines alike; the ratio of an engine is the median of
    its per-round ratios to exec (paired). An engine stops repeating once it
    has spent the time budget (a warm-up slower than the budget is used as the
    only sample).
    """
    runners = {name: _Runner(engine, workload, n) for name, engine in engines.items()}
    repeat = timer.repeat * workload.repeat_factor
    if workload.kind in ("concurrent", "batch"):
        repeat = max(1, min(timer.repeat, 3))
    try:
        for runner in runners.values():
            try:
                runner.open()
                seconds, outcome = runner.once()
            except Exception as exc:
                runner.error = f"{type(exc).__name__}: {exc}"
                continue
            runner.after()
            if not outcome.ok:
                runner.error = outcome.error or "failed"
                continue
            runner.outcome, runner.warmup_s = outcome, seconds
            if seconds > timer.budget_s:
                runner.samples = [seconds]
                runner.spent = seconds
                runner.warmup_only = True
        rounds: list[dict[str, float]] = []
        for _ in range(repeat):
            row: dict[str, float] = {}
            for name, runner in runners.items():
                if runner.error or runner.outcome is None:
                    continue
                if runner.samples and (runner.spent >= timer.budget_s
                                       or len(runner.samples) >= repeat):
                    continue
                gc.collect()
                try:
                    seconds, outcome = runner.once()
                    runner.after()
                except Exception as exc:
                    runner.error = f"{type(exc).__name__}: {exc}"
                    continue
                if not outcome.ok:
                    runner.error = outcome.error or "failed"
                    continue
                runner.samples.append(seconds)
                runner.spent += seconds
                row[name] = seconds
            rounds.append(row)
    finally:
        for runner in runners.values():
            runner.close()
    return {name: _entry(runner, rounds, repeat) for name, runner in runners.items()}


def _entry(runner: _Runner, rounds: list[dict[str, float]], repeat: int) -> dict[str, Any]:
    if runner.error is not None:
        return {"status": "failed", "reason": runner.error[:600]}
    samples = runner.samples
    assert runner.outcome is not None
    note = ""
    if runner.warmup_only:
        note = "1 run (the warm-up, which exceeded the time budget)"
    elif len(samples) < repeat:
        note = f"{len(samples)} run(s): time budget"
    if (isinstance(runner.engine, ToolscriptEngine) and runner.engine.backend == "docker"
            and runner.workload.kind != "warm"):
        note = (note + "; " if note else "") + "warm pool refilled before each run"
    entry: dict[str, Any] = {
        "status": "ok",
        "median_s": statistics.median(samples),
        "min_s": min(samples),
        "samples_s": samples,
        "runs": len(samples),
        "note": note,
        "value": runner.outcome.value,
        "paired": [(row.get(runner.engine.name), row.get("exec")) for row in rounds
                   if runner.engine.name in row and "exec" in row],
    }
    if runner.workload.kind in ("concurrent", "batch"):
        entry["runs_per_s"] = runner.n / entry["median_s"]
        entry["best_runs_per_s"] = runner.n / entry["min_s"]
        entry["sessions"] = runner.n
        entry["threads"] = runner.workload.concurrency
    return entry


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
