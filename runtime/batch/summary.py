"""What a batch run reports: :class:`BatchSummary` (counts) and :class:`BatchReport`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BatchReport", "BatchSummary"]


def _indexes(indexes: list[int], most: int = 10) -> str:
    shown = ", ".join(str(i) for i in indexes[:most])
    return shown + (f" and {len(indexes) - most} more" if len(indexes) > most else "")


@dataclass
class BatchSummary:
    """Counts of one batch run.

    Attributes:
        total: items in the input (None if unknown).
        skipped: items finished by an earlier run and not run again.
        ok / failed: items finished by this run, by outcome.
        errors_by_type: failed items per error type.
        tool_calls / tool_call_errors: over this run's items.
        elapsed_s: wall time of this run.
        interrupted: the run was stopped before every item finished.
        stop_reason: what stopped it (``SIGINT``, ``SIGTERM``, ...), if asked to.
        retried: items whose earlier result was an error, run again (``retry_failed``).
        failed_before: skipped items whose latest result is an error.
        rerun_in_doubt: items an earlier run started and never finished, run again
            by this one (their write tools may have run twice).
        abandoned: items this run left running when told to abandon them; they
            have no result and run again on resume.
        paused: items whose run paused at a call that waits for a person (recorded
            with ``status: "paused"``; once decided, ``--resume`` resumes them).
    """

    total: int | None = None
    skipped: int = 0
    ok: int = 0
    failed: int = 0
    errors_by_type: Counter[str] = field(default_factory=Counter)
    tool_calls: int = 0
    tool_call_errors: int = 0
    elapsed_s: float = 0.0
    interrupted: bool = False
    stop_reason: str | None = None
    retried: int = 0
    failed_before: int = 0
    rerun_in_doubt: list[int] = field(default_factory=list)
    abandoned: list[int] = field(default_factory=list)
    paused: int = 0

    @property
    def finished(self) -> int:
        """Items finished (or paused) by this run."""
        return self.ok + self.failed + self.paused

    @property
    def all_ok(self) -> bool:
        """Every item of the batch has finished, and none has an error as its result."""
        return (not self.interrupted and self.failed == 0 and self.failed_before == 0
                and self.paused == 0)

    def add(self, record: dict[str, Any]) -> None:
        """Count one item's record."""
        if record.get("ok"):
            self.ok += 1
        elif record.get("status") == "paused":
            self.paused += 1
        else:
            self.failed += 1
            error = record.get("error") or {}
            self.errors_by_type[str(error.get("type", "error"))] += 1
        self.tool_calls += int(record.get("tool_calls") or 0)
        self.tool_call_errors += int(record.get("tool_call_errors") or 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "total": self.total,
            "skipped": self.skipped,
            "ok": self.ok,
            "failed": self.failed,
            "errors_by_type": dict(self.errors_by_type),
            "tool_calls": self.tool_calls,
            "tool_call_errors": self.tool_call_errors,
            "elapsed_s": round(self.elapsed_s, 3),
            "interrupted": self.interrupted,
            "stop_reason": self.stop_reason,
            "retried": self.retried,
            "failed_before": self.failed_before,
            "rerun_in_doubt": list(self.rerun_in_doubt),
            "abandoned": list(self.abandoned),
            "paused": self.paused,
        }

    def render(self) -> str:
        """A short human-readable summary."""
        rate = self.finished / self.elapsed_s if self.elapsed_s > 0 else 0.0
        state = "done"
        if self.interrupted:
            state = "interrupted" + (f" ({self.stop_reason})" if self.stop_reason else "")
        lines = [
            f"{state}: {self.finished} item(s) in {self.elapsed_s:.1f} s ({rate:.1f} items/s): "
            f"{self.ok} ok, {self.failed} failed"
            + (f", {self.paused} paused" if self.paused else "")
            + (f" ({self.retried} of them retried)" if self.retried else "")
            + (f", {self.skipped} already done before" if self.skipped else ""),
            f"tool calls: {self.tool_calls} ({self.tool_call_errors} failed)",
        ]
        if self.errors_by_type:
            lines.append(
                "errors by type: "
                + ", ".join(f"{name} {count}" for name, count in self.errors_by_type.most_common())
            )
        if self.rerun_in_doubt:
            lines.append(
                f"ran again {len(self.rerun_in_doubt)} item(s) that an earlier run started and "
                f"never recorded ({_indexes(self.rerun_in_doubt)}): a write tool they had "
                "called may have run twice"
            )
        if self.abandoned:
            lines.append(
                f"abandoned {len(self.abandoned)} running item(s) ({_indexes(self.abandoned)}): "
                "they have no result and run again on --resume, so a write tool they had "
                "called may run twice"
            )
        if self.paused:
            lines.append(
                f"{self.paused} item(s) paused: their calls wait for a person (toolscript "
                "approvals list); once decided, run again with --resume to finish them"
            )
        if self.failed_before:
            lines.append(
                f"{self.failed_before} item(s) failed in an earlier run and were not run again: "
                "add --retry-failed to run them again"
            )
        if self.total is not None:
            remaining = self.total - self.skipped - self.finished
            if remaining > 0:
                lines.append(f"{remaining} item(s) not run yet: run again with --resume")
        return "\n".join(lines)


@dataclass
class BatchReport:
    """What :func:`~toolscript.runtime.batch.run.run_batch` returns: the summary, and
    the records when no ``out`` file was given (otherwise they are in the file)."""

    summary: BatchSummary
    results: list[dict[str, Any]] = field(default_factory=list)
