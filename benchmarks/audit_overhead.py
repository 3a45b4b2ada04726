"""What the audit log adds to one tool call (a benchmark, not a timed test).

Two measurements:

1. ``AuditLog.__call__`` alone on a typical record (redaction on/off, each
   ``sync`` mode, writer thread or not): the time the calling thread spends.
2. End to end on the inprocess backend (where a call is cheapest, so the log
   shows most): a script making 20,000 calls, with and without the log; the
   difference per call (this includes the writer thread's CPU, which competes
   for the GIL with the script).

Run: ``python benchmarks/audit_overhead.py``. Prints microseconds per call.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from toolscript.runtime.audit.log import AuditLog
from toolscript.runtime.events import ToolCallEvent
from toolscript.runtime.results import ToolCallRecord

from toolscript import Limits, Runtime, tool

CALLS = 20_000


@tool(read_only=True)
def get_revenue(store_id: str, date: str) -> dict[str, Any]:
    """Revenue of one store on one day."""
    return {"store_id": store_id, "date": date, "revenue_yuan": 12345.5, "orders": 120}


def per_record(path: Path, **options: Any) -> float:
    record = ToolCallRecord("c1", "get_revenue", {"store_id": "ST001", "date": "2026-08-24"},
                            approved=True, decided_by="policy", ok=True,
                            value={"store_id": "ST001", "revenue_yuan": 12345.5},
                            duration_s=1e-5, started_at=time.time())
    event = ToolCallEvent(record, "session-1", "run-1", None)
    with AuditLog(path, **options) as log:
        best = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(CALLS):
                log(record, event)
            best.append((time.perf_counter() - start) / CALLS)
    return min(best) * 1e6


def end_to_end(audit: Any) -> float:
    code = f"for i in range({CALLS}):\n    get_revenue('ST001', '2026-08-24')\n"
    runtime = Runtime([get_revenue], backend="inprocess", audit=audit,
                      limits=Limits(tool_timeout_s=None, max_tool_calls=CALLS + 1))
    with runtime, runtime.session() as session:
        session.run(code)
        times = []
        for _ in range(5):
            start = time.perf_counter()
            result = session.run(code)
            times.append(time.perf_counter() - start)
            assert result.ok, result.error
    return statistics.median(times) / CALLS * 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        print(f"AuditLog, time in the calling thread per record (best of 5 x {CALLS}):")
        for background in (True, False):
            for sync in ("buffer", "flush"):
                plain = per_record(base / f"{sync}{background}.jsonl", sync=sync,
                                   background=background)
                redacted = per_record(base / f"{sync}{background}-r.jsonl", sync=sync,
                                      background=background,
                                      redact={"get_revenue": ["store_id"]})
                print(f"  background={background!s:<5} sync={sync:<7} {plain:6.2f} us   "
                      f"with redaction {redacted:6.2f} us")
        print(f"End to end, inprocess, {CALLS} calls per run (median of 5):")
        without = end_to_end(None)
        for sync in ("buffer", "flush"):
            with AuditLog(base / f"e2e-{sync}.jsonl", sync=sync) as log:
                with_log = end_to_end(log)
            print(f"  sync={sync:<7} {without:6.2f} -> {with_log:6.2f} us per call "
                  f"(+{with_log - without:.2f} us)")


if __name__ == "__main__":
    main()
