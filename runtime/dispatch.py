"""Host-side handling of tool calls: the policy half of the sandbox boundary.

Every call, from a script or a classic-mode model turn, goes through
:meth:`Dispatcher.call`: budget, whitelist, JSON-schema validation, approval,
execution with the tool's timeout, conversion of the result to JSON data, and
one :class:`~toolscript.runtime.results.ToolCallRecord`. Failures become
reply errors with a stable ``type``; nothing raised by a tool crosses into the
sandbox as an object.
"""

from __future__ import annotations

import concurrent.futures
import functools
import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from toolscript.sandbox.codec import NotJSONData, to_json_data
from toolscript.tools import ArgumentError, Tool, ToolRegistry, to_jsonable

from toolscript.errors import ApprovalRequired, ToolscriptError

from .approval import ApprovalHook, ToolCallRequest, decide
from .hostcalls import BoundCall, HostCalls
from .limits import Limits
from .results import RunError, ToolCallRecord
from .workers import CallTimedOut, HandoffWorkers


class ToolTimedOut(Exception):
    """A tool call passed its timeout (distinct from a ``TimeoutError`` the tool raises)."""

Reply = dict[str, Any]
Target = Tool | BoundCall
"""What the dispatcher approves and runs: a tool, or a tool bound by HostCalls."""


class HostAbort(Exception):
    """Internal: a tool call must end the run and re-raise ``cause`` to the programmer."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


_NO_CONTEXT: Mapping[str, Any] = MappingProxyType({})


class RunContext:
    """Per-run bookkeeping shared by all calls of one run.

    ``context`` holds the host's values for injected tool parameters.
    """

    __slots__ = ("_attempts", "abort", "context", "max_tool_calls", "records", "run_id",
                 "session_id")

    def __init__(self, run_id: str, session_id: str, max_tool_calls: int,
                 context: Mapping[str, Any] | None = None) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.max_tool_calls = max_tool_calls
        self.context = _NO_CONTEXT if context is None else context
        self.records: list[ToolCallRecord] = []
        self.abort: BaseException | None = None
        self._attempts = itertools.count(1)

    def admit(self) -> bool:
        """Count one attempt; False once the budget is exhausted (thread-safe:
        ``next`` on ``itertools.count`` is atomic)."""
        return next(self._attempts) <= self.max_tool_calls


class ToolExecutor:
    """Runs tool functions, with a timeout when one applies.

    A call with a timeout runs on a parked worker thread
    (:class:`~toolscript.runtime.workers.HandoffWorkers`) so the caller can
    give up on it; a tool that never returns keeps its thread (Python cannot
    kill one). Calls without a timeout run inline. ``parallel()`` batches use
    a thread pool.
    """

    def __init__(self, max_workers: int = 64) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix="toolscript-parallel"
        )
        self._workers = HandoffWorkers()

    def run(self, tool: Target, args: dict[str, Any], timeout_s: float | None) -> Any:
        """Invoke the tool; raise :class:`ToolTimedOut` when the timeout passes."""
        if timeout_s is None:
            return tool.invoke(args)
        try:
            return self._workers.call(functools.partial(tool.invoke, args), timeout_s)
        except CallTimedOut:
            raise ToolTimedOut(f"{tool.name} did not finish within {timeout_s:g} s") from None

    def submit(self, func: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        """Run ``func`` on the pool (used for concurrent read-only calls)."""
        return self._pool.submit(func)

    def shutdown(self) -> None:
        """Stop accepting work; running tools are left to finish."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._workers.shutdown()


def _error(error_type: str, message: str, **details: Any) -> Reply:
    return {"ok": False, "error": {"type": error_type, "message": message, **details}}


class Dispatcher:
    """Validates, approves, executes and records tool calls for one runtime."""

    def __init__(
        self,
        registry: ToolRegistry,
        approve: ApprovalHook | None,
        limits: Limits,
        executor: ToolExecutor,
        audit: Callable[[ToolCallRecord, RunContext], None] | None = None,
        host_calls: HostCalls | None = None,
    ) -> None:
        self.registry = registry
        self.host_calls = host_calls or HostCalls()
        self.host_calls.register(registry)
        self.approve = approve
        self.limits = limits
        self.executor = executor
        self.audit = audit
        self._ids = itertools.count(1)

    def _next_id(self) -> str:
        return f"c{next(self._ids)}"

    # --- one call -------------------------------------------------------------
    def call(self, ctx: RunContext, name: Any, args: Any, source: str = "script") -> Reply:
        """Handle one call end to end; return the reply (``ok`` + value/error)."""
        record = ToolCallRecord(f"c{next(self._ids)}", name if type(name) is str else str(name),
                                args, started_at=time.time(), source=source)
        start = time.perf_counter()
        try:
            prepared = self._prepare(ctx, record, name, args)
            if isinstance(prepared, tuple):
                reply = self._execute(record, prepared[0], prepared[1])
            else:
                reply = prepared
        except HostAbort as exc:
            ctx.abort = exc.cause
            reply = _error("host_abort", f"the run was stopped: {exc.cause}")
        finally:
            record.duration_s = time.perf_counter() - start
        self._finish(ctx, record, reply)
        return reply

    def _prepare(
        self, ctx: RunContext, record: ToolCallRecord, name: Any, args: Any
    ) -> tuple[Target, dict[str, Any]] | Reply:
        """Budget, lookup, validation and approval: ``(tool, args)`` or an error reply."""
        source = record.source
        if ctx.abort is not None:
            return _error("host_abort", "the run was stopped by the host")
        if not ctx.admit():
            return _error(
                "tool_call_limit",
                f"the run exceeded its budget of {ctx.max_tool_calls} tool calls",
            )
        tool = self.registry.get(name) if isinstance(name, str) else None
        if tool is None:
            return _error("unknown_tool", self.registry.unknown_tool_message(str(name)),
                          available=self.registry.names())
        if source not in tool.allowed_callers:
            where = "from scripts" if source == "script" else "directly"
            return _error("caller_not_allowed", f"{tool.name} cannot be called {where}; "
                          f"allowed: {', '.join(sorted(tool.allowed_callers))}")
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError as exc:
                return _error("invalid_json", f"{tool.name}(): arguments are not valid JSON: {exc}")
            record.args = args
        try:
            tool.validate(args)
        except ArgumentError as exc:
            return _error("invalid_arguments", exc.message,
                          problems=[{"path": p.path, "reason": p.reason} for p in exc.problems])
        target: Target = tool
        if tool.host_needs is not None:  # injected params, idempotency, two-phase: hostcalls.py
            bound = self.host_calls.bind(ctx, record, tool, args, self.timeout_of(tool))
            if isinstance(bound, dict):
                return bound
            target, args = bound
        if self.approve is None and not tool.requires_approval:
            record.approved = True
            record.decided_by = "policy"
            return target, args
        request = ToolCallRequest(
            tool=tool.name, args=args, read_only=tool.read_only,
            requires_approval=tool.requires_approval, call_id=record.id,
            run_id=ctx.run_id, session_id=ctx.session_id, source=record.source,
        )
        try:
            decision, decided_by = decide(self.approve, request)
        except (ApprovalRequired, KeyboardInterrupt, SystemExit) as exc:  # Ctrl-C in a hook
            ctx.abort = exc
            record.approved = False
            record.decided_by = "hook"
            record.reason = str(exc)
            return _error("host_abort", f"the approval hook stopped the run: {exc}")
        record.approved = decision.approved
        record.decided_by = decided_by
        record.reason = decision.reason
        if not decision.approved:
            reason = f": {decision.reason}" if decision.reason else ""
            return _error("denied", f"{tool.name}() was denied{reason}")
        return target, args

    def timeout_of(self, tool: Target) -> float | None:
        """The effective timeout of one call of ``tool``."""
        return tool.timeout_s if tool.timeout_s is not None else self.limits.tool_timeout_s

    def _execute(
        self, record: ToolCallRecord, tool: Target, args: dict[str, Any], inline: bool = False
    ) -> Reply:
        timeout = None if inline else self.timeout_of(tool)
        try:
            if timeout is None:
                result = tool.invoke(args)
            else:
                result = self.executor.run(tool, args, timeout)
        except ToolTimedOut as exc:
            return _error("timeout", str(exc))
        except (ToolscriptError, KeyboardInterrupt, SystemExit) as exc:  # Ctrl-C in a tool
            raise HostAbort(exc) from exc
        except Exception as exc:
            return _error("tool_exception", f"{tool.name}: {type(exc).__name__}: {exc}",
                          exception=type(exc).__name__)
        try:
            value = to_json_data(result)
        except NotJSONData:
            try:
                value = to_json_data(to_jsonable(result))
            except (TypeError, NotJSONData) as exc:
                return _error("invalid_result",
                              f"{tool.name} returned something that is not JSON data: {exc}")
        return {"ok": True, "value": value}

    def _finish(self, ctx: RunContext, record: ToolCallRecord, reply: Reply) -> None:
        if reply["ok"]:
            record.ok = True
            record.value = reply["value"]
        else:
            record.error = RunError.from_message(reply["error"])
        ctx.records.append(record)
        if self.audit is not None:
            self.audit(record, ctx)

    # --- many calls (parallel) ----------------------------------------------------
    def call_many(
        self, ctx: RunContext, calls: Sequence[tuple[Any, Any]], source: str = "script"
    ) -> list[Reply]:
        """Handle several calls: read-only ones concurrently, writes serially in order.

        Approval is asked one call at a time, in call order, before anything
        runs; replies come back in call order.
        """
        replies: list[Reply | None] = [None] * len(calls)
        records: list[ToolCallRecord | None] = [None] * len(calls)
        starts: list[float] = [0.0] * len(calls)
        ready: list[tuple[int, Target, dict[str, Any]]] = []
        for index, (name, args) in enumerate(calls):
            record = ToolCallRecord(id=self._next_id(), name=str(name), args=args,
                                    started_at=time.time(), source=source)
            records[index] = record
            starts[index] = time.perf_counter()
            prepared = self._prepare(ctx, record, name, args)
            if type(prepared) is tuple:
                ready.append((index, prepared[0], prepared[1]))
            else:
                replies[index] = prepared  # type: ignore[assignment]

        slots = threading.BoundedSemaphore(self.limits.max_parallel)

        def run_one(index: int, tool: Target, args: dict[str, Any]) -> Reply:
            with slots:
                return self._execute(records[index], tool, args, inline=True)  # type: ignore[arg-type]

        futures = []
        for index, tool, args in ready:
            if tool.read_only:
                future = self.executor.submit(functools.partial(run_one, index, tool, args))
                futures.append((index, tool, future))
        abort: HostAbort | None = None
        for index, tool, args in ready:
            if not tool.read_only:
                try:
                    replies[index] = self._execute(records[index], tool, args)  # type: ignore[arg-type]
                except HostAbort as exc:
                    abort = abort or exc
                    replies[index] = _error("host_abort", f"the run was stopped: {exc.cause}")
        # Each concurrent call gets its own timeout, counted from when it could
        # start; waiting in the semaphore queue counts against it.
        waited_from = time.perf_counter()
        for index, tool, future in futures:
            timeout = self.timeout_of(tool)
            remaining = None
            if timeout is not None:
                batches = 1 + len(futures) // self.limits.max_parallel
                remaining = max(waited_from + timeout * batches - time.perf_counter(), 0.0)
            try:
                replies[index] = future.result(timeout=remaining)
            except concurrent.futures.TimeoutError:
                replies[index] = _error(
                    "timeout", f"{tool.name} did not finish within {timeout:g} s"
                )
            except HostAbort as exc:
                abort = abort or exc
                replies[index] = _error("host_abort", f"the run was stopped: {exc.cause}")
        for index, maybe_record in enumerate(records):
            assert maybe_record is not None
            maybe_record.duration_s = time.perf_counter() - starts[index]
            self._finish(ctx, maybe_record, replies[index])  # type: ignore[arg-type]
        if abort is not None:
            ctx.abort = abort.cause
        return [reply for reply in replies if reply is not None]
