"""What provenance labels cost (issue 27): labels off vs on, side by side in one run.

* compute: a pure-Python script (loops, arithmetic, string building, dicts) -
  the ratio of its run time with labels on to off; measured with no untrusted
  value in play (the helpers' fast path) and with one (every operation checks);
* per call: a loop of N calls of a trivial tool, per call, off vs on (the
  tool's result is untrusted when labels are on, so every later call carries
  labels).

Runs alternate off/on and the median of ``--repeat`` is reported.
``python3 -m benchmarks.provenance_cost [--backends inprocess,subprocess]``
prints the table and writes ``benchmarks/results/provenance_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from toolscript.runtime.provenance import Provenance

from toolscript import Runtime, tool

COMPUTE = """
total = 0
words = {}
for i in range(20000):
    total += (i * 7) % 13
    key = "k" + str(i % 50)
    words[key] = words.get(key, 0) + 1
text = ",".join(f"{k}={v}" for k, v in sorted(words.items()))
[total, len(text)]
"""

UNTRUSTED = "seed = note()\n"
CALLS = "for i in range(N):\n    ping(i)\n"


@tool(read_only=True, returns="untrusted")
def note() -> str:
    """Some untrusted text."""
    return "hello"


@tool(read_only=True)
def ping(i: int) -> int:
    """Returns its argument."""
    return i


def _time(session: Any, code: str) -> float:
    started = time.perf_counter()
    result = session.run(code)
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise RuntimeError(result.error)
    return elapsed


def measure(backend: str, repeat: int, calls: int) -> dict[str, Any]:
    """The figures of one backend."""
    off = Runtime(tools=[note, ping], backend=backend)
    on = Runtime(tools=[note, ping], backend=backend, provenance=Provenance())
    figures: dict[str, list[float]] = {k: [] for k in (
        "compute_off", "compute_on", "compute_on_untrusted", "calls_off", "calls_on")}
    try:
        with off.session() as s_off, on.session() as s_on, on.session() as s_taint:
            _time(s_taint, UNTRUSTED)
            loop = CALLS.replace("N", str(calls))
            for _ in range(repeat):
                figures["compute_off"].append(_time(s_off, COMPUTE))
                figures["compute_on"].append(_time(s_on, COMPUTE))
                figures["compute_on_untrusted"].append(_time(s_taint, COMPUTE + "seed\n"))
                figures["calls_off"].append(_time(s_off, loop) / calls)
                figures["calls_on"].append(_time(s_taint, loop) / calls)
    finally:
        off.close()
        on.close()
    median = {k: statistics.median(v) for k, v in figures.items()}
    return {
        "compute_ratio": round(median["compute_on"] / median["compute_off"], 2),
        "compute_ratio_untrusted": round(median["compute_on_untrusted"]
                                         / median["compute_off"], 2),
        "per_call_us_off": round(median["calls_off"] * 1e6, 1),
        "per_call_us_on": round(median["calls_on"] * 1e6, 1),
        "compute_ms_off": round(median["compute_off"] * 1e3, 1),
        "compute_ms_on": round(median["compute_on"] * 1e3, 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="inprocess,subprocess")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--out", default="benchmarks/results/provenance_cost.json")
    args = parser.parse_args(argv)
    report = {name: measure(name, args.repeat, args.calls) for name in args.backends.split(",")}
    print("backend      compute on/off  (untrusted in play)  per call off  per call on")
    for name, row in report.items():
        print(f"{name:<12} {row['compute_ratio']:>8}x {row['compute_ratio_untrusted']:>14}x"
              f" {row['per_call_us_off']:>12} us {row['per_call_us_on']:>10} us")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
