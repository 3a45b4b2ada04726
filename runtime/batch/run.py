"""Batch jobs: one approved script, run once per input item.

:func:`run_batch` runs ``script`` for every item of ``items``, each in its own
session (a fresh sandbox) with the item bound to a variable (``item`` by
default), ``concurrency`` items at a time. Each item yields one result
record: the script's value, stdout and typed error, and its tool calls. One
item failing never stops the batch. With ``out`` the records go to a JSONL
file, with a checkpoint beside it, so an interrupted batch resumes without
re-running finished items (:mod:`toolscript.runtime.batch.store` states the
guarantees, and the at-least-once window of an item left running).

Stopping: the first stop request (Ctrl-C, or SIGTERM from the command line,
or :meth:`BatchStop.request`) takes no new items and lets the running ones
finish and be recorded; a second one abandons the running items
(:mod:`toolscript.runtime.batch.stop`).

Example::

    from toolscript import Runtime
    from toolscript.runtime.batch.run import run_batch

    with Runtime(tools=[get_daily_revenue]) as rt:
        report = run_batch(rt, "get_daily_revenue(item['store'], item['date'])",
                           [{"store": "ST001", "date": "2026-08-24"}, ...],
                           concurrency=4, out="results.jsonl", resume=True)
    print(report.summary.render())

Durable approvals: an item whose run pauses (its approval hook answered
``Decision.defer``, e.g. ``--approve defer``) is recorded with ``status``
``"paused"``, its pending calls and its continuation; the rest of the batch goes
on. Once a person decided its calls (``toolscript approvals``), a run with
``resume=True`` resumes it (:func:`resume_item`: its calls before the pause are
answered from the journal) instead of running it again; an item still waiting
stays paused.

Items are distributed by an :class:`ItemExecutor`: :class:`LocalExecutor`
(threads over one Runtime) by default, or a Dask cluster
(:mod:`toolscript.runtime.batch.distributed`).
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from toolscript.runtime.batch.items import (
    InvalidItem,
    bind_source,
    check_item_variable,
    check_script_syntax,
    read_jsonl_items,
)
from toolscript.runtime.batch.progress import Progress, make_progress
from toolscript.runtime.batch.stop import BatchStop, stop_on_signals
from toolscript.runtime.batch.store import BatchStore, item_sha
from toolscript.runtime.batch.summary import BatchReport, BatchSummary
from toolscript.runtime.limits import Limits
from toolscript.runtime.results import RunResult

from toolscript.errors import ApprovalRequired, ConfigurationError, ToolscriptError

if TYPE_CHECKING:
    from toolscript.runtime.runtime import Runtime

__all__ = [
    "INFRASTRUCTURE_ERRORS",
    "BatchReport",
    "BatchStop",
    "BatchSummary",
    "InvalidItem",
    "ItemExecutor",
    "ItemOptions",
    "LocalExecutor",
    "PausedItem",
    "RuntimeSpec",
    "bind_source",
    "read_jsonl_items",
    "resume_item",
    "run_batch",
    "run_item",
]

INFRASTRUCTURE_ERRORS = frozenset(
    {"infrastructure", "sandbox_crashed", "protocol_error", "worker_lost"}
)
"""Error types that say the item's script may never have run (the machinery
failed): a useful ``retry_failed`` selection (``--retry-failed
infrastructure,sandbox_crashed,...``)."""

POLL_S = 0.1
"""How often the batch loop looks for a stop request while items run."""


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
    session_id: str = "",
) -> dict[str, Any]:
    record: dict[str, Any] = {"index": index}
    if options.include_item:
        record["item"] = item if not isinstance(item, InvalidItem) else item.text
    if result is not None:
        calls = result.tool_calls
        record.update(
            status=getattr(result, "status", "ok" if result.ok else "error"),
            ok=result.ok,
            value=result.value,
            stdout=result.stdout,
            error=result.error.to_dict() if result.error else None,
            tool_calls=len(calls),
            tool_call_errors=sum(1 for c in calls if not c.ok),
        )
        if options.full_tool_calls:
            record["calls"] = [c.to_dict() for c in calls]
        if record["status"] == "paused":
            record.update(pending=[p.to_dict() for p in getattr(result, "pending", [])],
                          continuation=getattr(result, "continuation", None),
                          run_id=result.run_id, session_id=session_id)
    else:
        record.update(
            status="error", ok=False, value=None, stdout="", error=error, tool_calls=0,
            tool_call_errors=0
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
    if isinstance(item, PausedItem):
        return resume_item(runtime, index, item, options)
    if isinstance(item, InvalidItem):
        return _record(
            index,
            item,
            options,
            started,
            error=_error("invalid_item", f"input line {item.line}: {item.reason}", line=item.line),
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
            session_id = str(session.id)
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
    return _record(index, item, options, started, result=result, session_id=session_id)


@dataclass(frozen=True)
class PausedItem:
    """An item whose earlier run paused, handed to :func:`run_item` to resume.

    Attributes:
        item: the item (JSON data).
        record: its paused result record (``pending``, ``continuation``,
            ``run_id``, ``session_id``).
    """

    item: Any
    record: dict[str, Any]


def resume_item(runtime: Runtime, index: int, paused: PausedItem,
                options: ItemOptions = ItemOptions()) -> dict[str, Any]:
    """Resume a paused item once every one of its pending calls is decided (in the
    runtime's journal store); else its record stays as it was (still paused).

    The item is bound again in a session under the paused run's session id, then
    :meth:`Runtime.resume <toolscript.Runtime.resume>` runs the script there:
    the calls it made before the pause are answered from the journal.
    """
    started = time.perf_counter()
    record, item = paused.record, paused.item
    pending = [str(p.get("id")) for p in record.get("pending") or []]
    try:
        decisions = runtime.durability.store.decisions(str(record.get("run_id")))
        if not pending or any(pid not in decisions for pid in pending):
            return dict(record)
        continuation = str(record.get("continuation"))
        with runtime.session(resuming=continuation) as session:  # the run's id and hash seed
            bound = session.run(bind_source(options.item_var, item))
            if not bound.ok:
                message = bound.error.message if bound.error else "unknown error"
                return _record(index, item, options, started,
                               error=_error("invalid_item", f"cannot bind the item: {message}"))
            result = runtime.resume(continuation, {pid: decisions[pid] for pid in pending},
                                    session=session)
            session_id = str(session.id)
    except ToolscriptError as exc:
        return _record(index, item, options, started, error=_error(
            "resume_refused" if type(exc).__name__ == "ContinuationError" else "infrastructure",
            f"{type(exc).__name__}: {exc}", exception=type(exc).__name__))
    except Exception as exc:
        return _record(index, item, options, started, error=_error(
            "host_exception", f"{type(exc).__name__}: {exc}", exception=type(exc).__name__))
    return _record(index, item, options, started, result=result, session_id=session_id)


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
        from toolscript.runtime.approval.hooks import named_policy
        from toolscript.runtime.runtime import Runtime
        from toolscript.tools import load_tools

        if self.approve == "ask":
            raise ConfigurationError(
                "batch jobs cannot ask at the terminal for each call: use "
                "--approve allow, defer, deny or default"
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
    """How many items may be in flight at once (the batch never submits more, so a
    stop request leaves at most this many items to finish)."""

    def submit(self, index: int, item: Any) -> Any:
        """Start one item; return a handle."""

    def wait(self, handles: Collection[Any], timeout: float) -> list[tuple[Any, dict[str, Any]]]:
        """The handles among ``handles`` that finished (within ``timeout``), with records."""

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

    def close(self) -> None:
        """Start nothing new; items still running (abandoned) finish in the background."""
        self._pool.shutdown(wait=False, cancel_futures=True)


# --- the loop ------------------------------------------------------------------------
def _retry_rule(retry_failed: bool | Collection[str]) -> Callable[[str], bool]:
    if isinstance(retry_failed, bool):
        return lambda error_type: retry_failed
    if isinstance(retry_failed, str):
        raise ConfigurationError("retry_failed takes True or a collection of error types")
    types = frozenset(retry_failed)
    return lambda error_type: error_type in types


def run_batch(
    runtime: Runtime | None,
    script: str,
    items: Iterable[Any],
    *,
    concurrency: int = 4,
    out: str | os.PathLike[str] | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    resume: bool = False,
    retry_failed: bool | Collection[str] = False,
    options: ItemOptions | None = None,
    progress: str | bool | Progress | None = None,
    total: int | None = None,
    executor: ItemExecutor | None = None,
    durable: bool = True,
    stop: BatchStop | None = None,
    stop_signals: Collection[int] = (signal.SIGINT,),
) -> BatchReport:
    """Run ``script`` once per item; see the module docs.

    Args:
        runtime: the Runtime items run on (None only with a custom ``executor``).
        script: the script; the item is bound to ``options.item_var``.
        items: JSON data items (an iterable; consumed lazily).
        concurrency: items in flight at once (local executor).
        out: JSONL results file; enables the checkpoint and resume.
        checkpoint: checkpoint file (default ``out`` + ``.checkpoint``).
        resume: continue the batch recorded in ``out``/``checkpoint``: finished
            items are skipped, items left running (in doubt) run again.
        retry_failed: also run again items whose recorded result is an error:
            ``True`` for every error type, or a collection of error types.
            Implies ``resume``.
        options: how items are bound and recorded (:class:`ItemOptions`).
        progress: ``"auto"``, ``"rich"``, ``"plain"``, ``None`` or a Progress.
        total: the number of items, for progress (default ``len(items)`` if known).
        executor: where items run (default: a :class:`LocalExecutor`).
        durable: fsync every result line (keep on outside of tests).
        stop: a :class:`BatchStop` another thread (or a signal handler) may request.
        stop_signals: signals that request a stop while the batch runs (when
            called from the main thread); ``()`` installs no handler.

    A stop request (``stop``, or one of ``stop_signals``) ends the batch
    gracefully: no new items start, running items finish and are recorded,
    and the report says ``interrupted``. A second request abandons the
    running items: the call returns at once and ``summary.abandoned`` names
    them (they keep running in the background until they end; a resumed
    batch runs them again).

    Raises:
        ConfigurationError: ``out`` exists without ``resume``, the checkpoint
            belongs to another script or other inputs, the script is not
            Python, the item variable cannot be assigned, or bad options.
    """
    options = options or ItemOptions()
    try:
        check_item_variable(options.item_var)
        check_script_syntax(script)
        retry = _retry_rule(retry_failed)
        if out is None and (checkpoint is not None or retry_failed):
            raise ConfigurationError(
                "a checkpoint and retry_failed need an out file for the results"
            )
    except ConfigurationError:
        if executor is not None:
            executor.close()  # it was handed over to run this batch
        raise
    if retry_failed:
        resume = True
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
    stop = stop or BatchStop()
    summary = BatchSummary(total=total)
    report = BatchReport(summary)
    shown = make_progress(progress)
    started = time.perf_counter()
    complete = False
    with stop_on_signals(stop, stop_signals):
        try:
            if store is not None:
                store.open()
                _announce_resume(store, retry, shown, total)
            else:
                shown.start(total, 0)
            complete = _Loop(executor, store, summary, report, shown, stop, retry).run(
                iter(enumerate(items))
            )
        finally:
            summary.elapsed_s = time.perf_counter() - started
            shown.close()
            executor.close()
            if store is not None:
                store.close(compact=complete)
    return report


def _announce_resume(
    store: BatchStore, retry: Callable[[str], bool], shown: Progress, total: int | None
) -> None:
    retried = sum(1 for error_type in store.failed.values() if retry(error_type))
    shown.start(total, len(store.done) - retried)
    if store.in_doubt:
        shown.message(
            f"{len(store.in_doubt)} item(s) started in an earlier run and were never recorded; "
            "they run again (a write tool they had called may run twice)"
        )


class _Loop:
    """Keeps ``executor.window`` items in flight and records each as it finishes."""

    def __init__(
        self,
        executor: ItemExecutor,
        store: BatchStore | None,
        summary: BatchSummary,
        report: BatchReport,
        shown: Progress,
        stop: BatchStop,
        retry: Callable[[str], bool],
    ) -> None:
        self.executor = executor
        self.store = store
        self.summary = summary
        self.report = report
        self.shown = shown
        self.stop = stop
        self.retry = retry
        self.in_doubt = frozenset(store.in_doubt) if store is not None else frozenset()
        self.pending: dict[Any, tuple[int, str]] = {}
        self.exhausted = False
        self.announced = False
        self.source_error: Exception | None = None

    def run(self, source: Iterator[tuple[int, Any]]) -> bool:
        """Run the items of ``source``; True when every one of them finished.

        An exception from ``source`` itself (a caller's generator) stops the
        intake; the running items still finish and are recorded, then it is
        raised.
        """
        self.refill(source)
        while self.pending and not self.stop.abandoning:
            self.note_stop()
            for handle, record in self.executor.wait(list(self.pending), timeout=POLL_S):
                self.finish(handle, record)
            self.refill(source)
        if self.pending:
            # Abandoning: record what has finished by now; the rest stay unrecorded.
            for handle, record in self.executor.wait(list(self.pending), timeout=0):
                self.finish(handle, record)
            self.summary.abandoned = sorted(index for index, _ in self.pending.values())
        if self.source_error is not None:
            self.summary.interrupted = True
            raise self.source_error
        if self.stop.stopping and not self.exhausted:
            self.exhausted = next(source, None) is None
        if self.stop.stopping and (not self.exhausted or self.summary.abandoned):
            self.note_stop()
            self.summary.interrupted = True
            self.summary.stop_reason = self.stop.reason
        return self.exhausted and not self.summary.abandoned

    def refill(self, source: Iterator[tuple[int, Any]]) -> None:
        """Submit items until the window is full (none once a stop was asked for)."""
        store, summary = self.store, self.summary
        while (not self.stop.stopping and self.source_error is None
               and len(self.pending) < self.executor.window):
            try:
                index, item = next(source)
            except StopIteration:
                self.exhausted = True
                return
            except Exception as exc:
                self.source_error = exc
                return
            sha = item_sha(item if not isinstance(item, InvalidItem) else item.text)
            if store is not None:
                if store.is_done(index, sha) and index in store.paused:
                    item = PausedItem(item, store.paused[index])  # resumed once decided
                elif store.is_done(index, sha):
                    error_type = store.failed.get(index)
                    if error_type is None or not self.retry(error_type):
                        summary.skipped += 1
                        summary.failed_before += error_type is not None
                        continue
                    summary.retried += 1
                if index in self.in_doubt:
                    summary.rerun_in_doubt.append(index)
                store.started(index, sha)
            self.pending[self.executor.submit(index, item)] = (index, sha)

    def note_stop(self) -> None:
        """Say once that a stop was asked for (progress, and the checkpoint)."""
        if not self.stop.stopping or self.announced:
            return
        self.announced = True
        if self.store is not None:
            self.store.stopping(self.stop.reason or "stop requested")
        self.shown.message(
            f"stopping ({self.stop.reason}): no new items; waiting for {len(self.pending)} "
            "running item(s) to finish (interrupt again to abandon them; they would run "
            "again on resume)"
        )

    def finish(self, handle: Any, record: dict[str, Any]) -> None:
        """Record one finished item."""
        index, sha = self.pending.pop(handle)
        record["index"] = index
        if self.store is not None:
            self.store.record(record, sha)
        else:
            self.report.results.append(record)
        self.summary.add(record)
        self.shown.update(record)
