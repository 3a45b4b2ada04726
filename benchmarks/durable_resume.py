"""What resuming a paused run costs (issue 30): resume of a 100-call journal vs a fresh run.

The script makes ``N`` (100) write calls of a trivial tool, then one call a
person must approve. Timed, per backend (median of ``--repeat``):

* ``fresh_ms``: the whole script run fresh, every call approved, no journal
  configured (the journal stays in memory: the default);
* ``fresh_journaled_ms``: the same with ``journal=`` set (every call written to
  SQLite with ``synchronous=FULL`` before its result reaches the script);
* ``resume_ms``: ``runtime.resume(continuation, decisions)`` of the run paused
  at the last call: check the continuation, claim it, read the journal, run
  the script in a fresh sandbox with its 100 calls answered from the journal,
  run the decided call, mark the continuation spent. (The pause before it is
  not timed.)

Before each timed run or resume the benchmark waits ``SETTLE_S`` so the
backend's warm pool has refilled (a resume follows a person's decision, minutes
later): both sides start from a warm sandbox.

``ratio`` is ``resume_ms / fresh_ms`` (goal: at most 2);
``ratio_vs_journaled`` is ``resume_ms / fresh_journaled_ms``.
``python3 -m benchmarks.durable_resume [--backends inprocess,subprocess,docker]``
prints the table and writes ``benchmarks/results/durable_resume.json``.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from toolscript import Decision, Runtime, tool

N = 100
SCRIPT = f"for i in range({N}):\n    write(i)\napprove_me()\n'done'\n"
KEY = "durable-benchmark-key-0123456789"
SETTLE_S = {"inprocess": 0.0, "subprocess": 0.3, "docker": 1.5}


@tool
def write(i: int) -> int:
    """A write that does nothing (the cost measured is the runtime's)."""
    return i


@tool(requires_approval=True)
def approve_me() -> str:
    """The call a person decides."""
    return "approved"


def _defer(request: Any) -> Any:
    return Decision.defer("benchmark") if request.tool == "approve_me" else True


def _allow(request: Any) -> bool:
    return True


def _timed(call: Any, settle_s: float) -> tuple[float, Any]:
    time.sleep(settle_s)
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def measure(backend: str, repeat: int) -> dict[str, float]:
    """The figures of one backend."""
    with tempfile.TemporaryDirectory(prefix="toolscript-bench-") as work:
        journal = f"sqlite:///{work}/journal.sqlite3"
        tools = [write, approve_me]
        settle = SETTLE_S.get(backend, 1.0)
        options = {"backend_options": {"pool_size": 2}} if backend == "docker" else {}
        with Runtime(tools, backend=backend, approve=_allow, continuation_key=KEY,
                     **options) as fresh, \
             Runtime(tools, backend=backend, approve=_allow, journal=journal,
                     continuation_key=KEY, **options) as journaled, \
             Runtime(tools, backend=backend, approve=_defer, journal=journal,
                     continuation_key=KEY, **options) as durable:
            for runtime in (fresh, journaled):  # warm the pools and caches
                runtime.run(SCRIPT)
            fresh_ms, journaled_ms, resume_ms = [], [], []
            for _ in range(repeat):
                took, result = _timed(lambda: fresh.run(SCRIPT), settle)
                assert result.ok, result.error
                fresh_ms.append(took)
                took, result = _timed(lambda: journaled.run(SCRIPT), settle)
                assert result.ok, result.error
                journaled_ms.append(took)
                paused = durable.run(SCRIPT)
                assert paused.status == "paused", paused.error
                decisions = {paused.pending[0].id: Decision.allow()}
                took, result = _timed(functools.partial(
                    durable.resume, paused.continuation, decisions), settle)
                assert result.ok and result.value == "done", result.error
                assert sum(call.replayed for call in result.tool_calls) == N
                resume_ms.append(took)
    fresh_median = statistics.median(fresh_ms)
    journaled_median = statistics.median(journaled_ms)
    resume_median = statistics.median(resume_ms)
    return {"calls": N, "fresh_ms": round(fresh_median, 2),
            "fresh_journaled_ms": round(journaled_median, 2),
            "resume_ms": round(resume_median, 2),
            "ratio": round(resume_median / fresh_median, 2),
            "ratio_vs_journaled": round(resume_median / journaled_median, 2)}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and write ``benchmarks/results/durable_resume.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="inprocess,subprocess")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" /
                                             "durable_resume.json"))
    args = parser.parse_args(argv)
    report = {backend: measure(backend, args.repeat) for backend in args.backends.split(",")}
    print(f"{'backend':<12}{'fresh ms':>10}{'journaled':>11}{'resume ms':>11}{'ratio':>8}"
          f"{'vs journaled':>14}")
    for backend, row in report.items():
        print(f"{backend:<12}{row['fresh_ms']:>10}{row['fresh_journaled_ms']:>11}"
              f"{row['resume_ms']:>11}{row['ratio']:>8}{row['ratio_vs_journaled']:>14}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
