"""Batch jobs: one approved script, run once per input item.

:func:`run_batch` runs ``script`` for every item of ``items``, each in its own
session (a fresh sandbox) with the item bound to a variable (``item`` by
default), ``concurrency`` items at a time. Each item yields one result
record: the script's value, stdout and typed error, and its tool calls. One
item failing never stops the batch. With ``out`` the records go to a JSONL
file, with a checkpoint beside it so an interrupted batch resumes without
re-running finished items (see :mod:`toolscript.runtime.batch_store` for the
guarantees, and the at-least-once window of an item interrupted mid-run).

Example::

    from toolscript import Runtime
    from toolscript.runtime.batch import run_batch

    with Runtime(tools=[get_daily_revenue]) as rt:
        report = run_batch(rt, "get_daily_revenue(item['store'], item['date'])",
                           [{"store": "ST001", "date": "2026-08-24"}, ...],
                           concurrency=4, out="results.jsonl", resume=True)
    print(report.summary.render())

Items are distributed by an :class:`ItemExecutor`: :class:`LocalExecutor`
(threads over one Runtime) by default, or a Dask cluster
(:mod:`toolscript.runtime.distributed`).
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import os
import time
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolscript.errors import ApprovalRequired, ConfigurationError, ToolscriptError

from .batch_progress import Progress, make_progress
from .batch_store import BatchStore, item_sha
from .limits import Limits
from .results import RunResult

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = [
    "INFRASTRUCTURE_ERRORS",
    "BatchReport",
    "BatchSummary",
    "InvalidItem",
    "ItemExecutor",
    "ItemOptions",
    "LocalExecutor",
    "RuntimeSpec",
    "bind_source",
    "read_jsonl_items",
    "run_batch",
    "run_item",
]

INFRASTRUCTURE_ERRORS = frozenset(
    {"infrastructure", "sandbox_crashed", "protocol_error", "worker_lost"}
)
"""Error types that say the item never really ran; after an interrupt such
items are left unrecorded, so a resumed batch runs them again."""


# --- items -------------------------------------------------------------------------
@dataclass(frozen=True)
class InvalidItem:
    """An input line that is not JSON; it becomes an ``invalid_item`` result."""

    line: int
    text: str
    reason: str


def read_jsonl_items(path: str) -> tuple[Iterator[Any], int]:
    """The items of a JSONL file (``-`` for standard input) and their count.

    Blank lines are skipped; a line that is not JSON becomes an
    :class:`InvalidItem` (reported per item, never stopping the batch).
    """
    import sys

    if path == "-":
        lines = sys.stdin.read().splitlines()
    else:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]

    def items() -> Iterator[Any]:
        for number, line in numbered:
            try:
                yield json.loads(line)
            except ValueError as exc:
                yield InvalidItem(number, line[:200], str(exc))

    return items(), len(numbered)


def _check_finite(value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r} is not JSON data")
    if isinstance(value, dict):
        for key, inner in value.items():
            if not isinstance(key, str):
                raise ValueError(f"object key {key!r} is not a string")
            _check_finite(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            _check_finite(inner)
    elif not (value is None or isinstance(value, (str, int, float, bool))):
        raise ValueError(f"{type(value).__name__} is not JSON data")


def bind_source(item_var: str, item: Any) -> str:
    """Python source that binds ``item`` (JSON data) to ``item_var``.

    Raises:
        ValueError: ``item`` is not JSON data (NaN, non-string keys, objects).
    """
    if not item_var.isidentifier():
        raise ConfigurationError(f"item variable {item_var!r} is not a Python identifier")
    _check_finite(item)
    return f"{item_var} = {item!r}"


# --- one item ------------------------------------------------------------------------
@dataclass(frozen=True)
class ItemOptions:
    """How items are run and recorded.

    Attributes:
        item_var: the variable the item is bound to in the script.
        include_item: copy the item into its result record.
        full_tool_calls: record every tool call in full (args, value, error);
            otherwise only their count and failures.
    """

    item_var: str = "item"
    include_item: bool = True
    full_tool_calls: bool = False


def _error(error_type: str, message: str, **details: Any) -> dict[str, Any]:
    return {"type": error_type, "message": message, **details}


def _record(
    index: int,
    item: Any,
    options: ItemOptions,
    started: float,
    result: RunResult | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    record: dict[str, Any] = {"index": index}
    if options.include_item:
        record["item"] = item if not isinstance(item, InvalidItem) else item.text
    if result is not None:
        calls = result.tool_calls
        record.update(
            ok=result.ok,
            value=result.value,
            stdout=result.stdout,
            error=result.error.to_dict() if result.error else None,
            tool_calls=len(calls),
            tool_call_errors=sum(1 for c in calls if not c.ok),
        )
        if options.full_tool_calls:
            record["calls"] = [c.to_dict() for c in calls]
    else:
        record.update(
            ok=False, value=None, stdout="", error=error, tool_calls=0, tool_call_errors=0
        )
    record["duration_s"] = round(time.perf_counter() - started, 6)
    return record


def run_item(
    runtime: Runtime, script: str, index: int, item: Any, options: ItemOptions = ItemOptions()
) -> dict[str, Any]:
    """Run ``script`` for one item in a new session; return its result record.

    Never raises for a failure of the item (script error, tool error, sandbox
    death, approval abort, infrastructure error): the record carries it as a
    typed ``error``.
    """
    started = time.perf_counter()
    if isinstance(item, InvalidItem):
        return _record(
            index,
            item,
            options,
            started,
            error=_error(
                "invalid_item", f"input line {item.line} is not JSON: {item.reason}", line=item.line
            ),
        )
    try:
        binding = bind_source(options.item_var, item)
    except ValueError as exc:
        return _record(
            index,
            item,
            options,
            started,
            error=_error("invalid_item", f"the item is not JSON data: {exc}"),
        )
    try:
        with runtime.session() as session:
            bound = session.run(binding)
            if not bound.ok:
                message = bound.error.message if bound.error else "unknown error"
                return _record(
                    index,
                    item,
                    options,
                    started,
                    error=_error("invalid_item", f"cannot bind the item: {message}"),
                )
            result = session.run(script)
    except ApprovalRequired as exc:
        return _record(index, item, options, started, error=_error("approval_required", str(exc)))
    except ToolscriptError as exc:
        return _record(
            index,
            item,
            options,
            started,
            error=_error(
                "infrastructure", f"{type(exc).__name__}: {exc}", exception=type(exc).__name__
            ),
        )
    except Exception as exc:
        return _record(
            index,
            item,
            options,
            started,
            error=_error(
                "host_exception", f"{type(exc).__name__}: {exc}", exception=type(exc).__name__
            ),
        )
    return _record(index, item, options, started, result=result)


# --- runtimes from a spec (CLI, Dask workers) ----------------------------------------
@dataclass(frozen=True)
class RuntimeSpec:
    """Everything needed to build an equal Runtime elsewhere (a Dask worker).

    Attributes:
        tools: tool modules (``pkg.tools``) or files (``/abs/tools.py``).
        backend: ``inprocess``, ``subprocess`` or ``docker``.
        approve: a named approval policy (``allow``, ``deny``, ``default``).
        limits: keyword arguments of :class:`Limits`.
    """

    tools: tuple[str, ...]
    backend: str = "subprocess"
    approve: str = "default"
    limits: tuple[tuple[str, Any], ...] = ()

    def build(self) -> Runtime:
        """A new Runtime from this spec."""
        from toolscript.tools import load_tools

        from .approval import named_policy
        from .runtime import Runtime

        if self.approve == "ask":
            raise ConfigurationError(
                "batch jobs cannot ask at the terminal for each call: use "
                "--approve allow, deny or default"
            )
        tools = [t for spec in self.tools for t in load_tools(spec)]
        return Runtime(
            tools=tools,
            backend=self.backend,
            approve=named_policy(self.approve),
            limits=Limits(**dict(self.limits)),
        )


# --- executors -----------------------------------------------------------------------
class ItemExecutor(Protocol):
    """Runs items somewhere and hands back their records."""

    window: int
    """How many items may be in flight at once."""

    def submit(self, index: int, item: Any) -> Any:
        """Start one item; return a handle."""

    def wait(self, handles: Collection[Any], timeout: float) -> list[tuple[Any, dict[str, Any]]]:
        """The handles among ``handles`` that finished (within ``timeout``), with records."""

    def cancel_pending(self) -> None:
        """Drop items not started yet (after an interrupt)."""

    def close(self) -> None:
        """Release resources."""


class LocalExecutor:
    """Items on a thread pool over one Runtime (each item its own session)."""

    def __init__(
        self, runtime: Runtime, script: str, concurrency: int, options: ItemOptions
    ) -> None:
        if concurrency < 1:
            raise ConfigurationError("concurrency must be at least 1")
        self.runtime = runtime
        self.script = script
        self.options = options
        self.window = concurrency
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=concurrency, thread_name_prefix="toolscript-batch"
        )

    def submit(self, index: int, item: Any) -> concurrent.futures.Future[dict[str, Any]]:
        """Queue one item."""
        return self._pool.submit(run_item, self.runtime, self.script, index, item, self.options)

    def wait(self, handles: Collection[Any], timeout: float) -> list[tuple[Any, dict[str, Any]]]:
        """Finished futures with their records."""
        done, _ = concurrent.futures.wait(
            handles, timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED
        )
        out = []
        for future in done:
            if future.cancelled():
                continue
            exc = future.exception()
            record = (
                future.result()
                if exc is None
                else {
                    "ok": False,
                    "error": _error("host_exception", f"{type(exc).__name__}: {exc}"),
                }
            )
            out.append((future, record))
        return out

    def cancel_pending(self) -> None:
        """Nothing is queued beyond the window, so there is nothing to drop."""

    def close(self) -> None:
        """Let running items finish in the background; start nothing new."""
        self._pool.shutdown(wait=False, cancel_futures=True)


# --- summary -------------------------------------------------------------------------
@dataclass
class BatchSummary:
    """Counts of one batch run.

    Attributes:
        total: items in the input (None if unknown).
        skipped: items finished by an earlier run (resume).
        ok / failed: items finished by this run, by outcome.
        errors_by_type: failed items per error type.
        tool_calls / tool_call_errors: over this run's items.
        elapsed_s: wall time of this run.
        interrupted: the run was stopped before every item finished.
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

    @property
    def finished(self) -> int:
        """Items finished by this run."""
        return self.ok + self.failed

    def add(self, record: dict[str, Any]) -> None:
        """Count one item's record."""
        if record.get("ok"):
            self.ok += 1
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
        }

    def render(self) -> str:
        """A short human-readable summary."""
        rate = self.finished / self.elapsed_s if self.elapsed_s > 0 else 0.0
        lines = [
            f"{'interrupted' if self.interrupted else 'done'}: {self.finished} item(s) in "
            f"{self.elapsed_s:.1f} s ({rate:.1f} items/s): {self.ok} ok, {self.failed} failed"
            + (f", {self.skipped} already done before" if self.skipped else ""),
            f"tool calls: {self.tool_calls} ({self.tool_call_errors} failed)",
        ]
        if self.errors_by_type:
            lines.append(
                "errors by type: "
                + ", ".join(f"{name} {count}" for name, count in self.errors_by_type.most_common())
            )
        if self.total is not None:
            remaining = self.total - self.skipped - self.finished
            if remaining > 0:
                lines.append(f"{remaining} item(s) not run yet: run again with --resume")
        return "\n".join(lines)


@dataclass
class BatchReport:
    """What :func:`run_batch` returns: the summary, and the records when no
    ``out`` file was given (otherwise they are in the file)."""

    summary: BatchSummary
    results: list[dict[str, Any]] = field(default_factory=list)


# --- the loop ------------------------------------------------------------------------
def run_batch(
    runtime: Runtime | None,
    script: str,
    items: Iterable[Any],
    *,
    concurrency: int = 4,
    out: str | os.PathLike[str] | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    resume: bool = False,
    options: ItemOptions | None = None,
    progress: str | bool | Progress | None = None,
    total: int | None = None,
    executor: ItemExecutor | None = None,
    durable: bool = True,
) -> BatchReport:
    """Run ``script`` once per item; see the module docs.

    Args:
        runtime: the Runtime items run on (None only with a custom ``executor``).
        script: the script; the item is bound to ``options.item_var``.
        items: JSON data items (an iterable; consumed lazily).
        concurrency: items in flight at once (local executor).
        out: JSONL results file; enables the checkpoint and resume.
        checkpoint: checkpoint file (default ``out`` + ``.checkpoint``).
        resume: continue the batch recorded in ``out``/``checkpoint``.
        options: how items are bound and recorded (:class:`ItemOptions`).
        progress: ``"auto"``, ``"rich"``, ``"plain"``, ``None`` or a Progress.
        total: the number of items, for progress (default ``len(items)`` if known).
        executor: where items run (default: a :class:`LocalExecutor`).
        durable: fsync every line (keep on outside of tests).

    Raises:
        ConfigurationError: ``out`` exists without ``resume``, the checkpoint
            belongs to another script or other inputs, or bad options.
        KeyboardInterrupt: on a second interrupt (the first one stops
            scheduling and lets running items finish, then returns).
    """
    options = options or ItemOptions()
    if checkpoint is not None and out is None:
        raise ConfigurationError("a checkpoint needs an out file for the results")
    if executor is None:
        if runtime is None:
            raise ConfigurationError("run_batch needs a runtime or an executor")
        executor = LocalExecutor(runtime, script, concurrency, options)
    if total is None and isinstance(items, Collection):
        total = len(items)
    store = (
        BatchStore(out, script=script, checkpoint=checkpoint, resume=resume, durable=durable)
        if out is not None
        else None
    )
    summary = BatchSummary(total=total)
    report = BatchReport(summary)
    shown = make_progress(progress)
    started = time.perf_counter()
    try:
        done = store.open() if store is not None else {}
        shown.start(total, len(done))
        _drive(executor, iter(enumerate(items)), store, summary, report, shown)
    finally:
        summary.elapsed_s = time.perf_counter() - started
        shown.close()
        executor.close()
        if store is not None:
            store.close()
    return report


def _drive(
    executor: ItemExecutor,
    source: Iterator[tuple[int, Any]],
    store: BatchStore | None,
    summary: BatchSummary,
    report: BatchReport,
    shown: Progress,
) -> None:
    pending: dict[Any, tuple[int, str]] = {}
    stopping = False

    def refill() -> None:
        while not stopping and len(pending) < executor.window:
            try:
                index, item = next(source)
            except StopIteration:
                return
            sha = item_sha(item if not isinstance(item, InvalidItem) else item.text)
            if store is not None and store.is_done(index, sha):
                summary.skipped += 1
                continue
            pending[executor.submit(index, item)] = (index, sha)

    refill()
    while pending:
        try:
            finished = executor.wait(list(pending), timeout=0.5)
        except KeyboardInterrupt:
            if stopping:
                raise
            stopping = summary.interrupted = True
            executor.cancel_pending()
            shown.message(
                f"stopping: waiting for {len(pending)} running item(s) to finish "
                "(interrupt again to abandon them; they run again on resume)"
            )
            continue
        for handle, record in finished:
            index, sha = pending.pop(handle)
            record["index"] = index
            error_type = (record.get("error") or {}).get("type")
            if stopping and error_type in INFRASTRUCTURE_ERRORS:
                continue  # never really ran: leave it to the resumed batch
            if store is not None:
                store.record(record, sha)
            else:
                report.results.append(record)
            summary.add(record)
            shown.update(record)
        refill()
