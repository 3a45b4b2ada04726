"""Host-side handling of tool calls: the policy half of the sandbox boundary.

Every call, from a script or a classic-mode model turn, goes through
:meth:`Dispatcher.call`: budget, whitelist, JSON-schema validation, approval,
execution with the tool's timeout, conversion of the result to JSON data, and
one :class:`~toolscript.runtime.results.ToolCallRecord`. Failures become
reply errors with a stable ``type``; nothing raised by a tool crosses into the
sandbox as an object.
"""

from __future__ import annotations

import functools
import itertools
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolscript.runtime.approval.hooks import ApprovalHook, ToolCallRequest, decide
from toolscript.sandbox.codec import NotJSONData, to_json_data
from toolscript.tools import ArgumentError, Tool, ToolRegistry, to_jsonable
from toolscript.tools.binding import ordered_copy
from toolscript.tools.validation import ValidationTimeout

from toolscript.errors import ApprovalRequired, ToolscriptError

from ..events import AuditCallback, EventHooks, ToolCallEvent, emit
from ..limits import Limits
from ..results import RunError, ToolCallRecord
from .batchrecords import BatchRecords
from .executor import ToolExecutor
from .fanout import Fanout, FanoutJob
from .hostsupply import BoundCall, HostSupply, NotStarted
from .messages import builtin_exception_of, clean_message, safe_str
from .runcontext import NO_CONTEXT, RunContext
from .workers import AbandonCounter, Overloaded, ToolTimedOut

if TYPE_CHECKING:
    from ..provenance import ProvenanceGate


class CallAbandoned(BaseException):
    """Internal: an inline call passed its timeout and was answered on its behalf.

    Raised in the thread that ran the call once the tool finally returns; that
    thread must then leave the run alone (another thread serves it now).
    """


Takeover = Callable[[dict[str, Any]], None]
"""Continues a run whose inline call was abandoned: called on a fresh thread with
the call's ``timeout`` reply (its record already finished)."""

Reply = dict[str, Any]
Target = Tool | BoundCall
"""What the dispatcher approves and runs: a tool, or a tool bound by HostSupply."""


class HostAbort(Exception):
    """Internal: a tool call must end the run and re-raise ``cause`` to the programmer."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


MAX_NAME_CHARS = 200
"""Characters of a called name kept (a tool name is at most 64; a forged one is cut)."""


def _name_of(name: Any) -> str:
    text = name if type(name) is str else safe_str(name)
    return text if len(text) <= MAX_NAME_CHARS else text[:MAX_NAME_CHARS] + "..."


def _error(error_type: str, message: str, **details: Any) -> Reply:
    return {"ok": False, "error": {"type": error_type, "message": message, **details}}


REDACTED = "[redacted]"


def _injected_view(tool: Tool, injected: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The injected values as the approval hook sees them (``Inject(redact=True)``
    ones replaced by ``"[redacted]"``), read-only."""
    needs = tool.host_supplied
    if not injected or needs is None:
        return NO_CONTEXT
    return MappingProxyType({
        param.name: REDACTED if param.redact else injected[param.name]
        for param in needs.injected if param.name in injected
    })


class Dispatcher:
    """Validates, approves, executes and records tool calls for one runtime.

    Each finished call goes to the ``audit`` callback (``(record, event)``; what
    it raises leaves the dispatcher) and then to the ``tool_call`` hooks of
    ``events`` (see :mod:`toolscript.runtime.events`).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        approve: ApprovalHook | None,
        limits: Limits,
        executor: ToolExecutor,
        audit: AuditCallback | None = None,
        host_supply: HostSupply | None = None,
        events: EventHooks | None = None,
    ) -> None:
        self.registry = registry
        self.lookup = registry.lookup
        """The tool of a name, or None (the registry's own mapping lookup)."""
        self.host_supply = host_supply or HostSupply()
        self.host_supply.register(registry)
        self.approve = approve
        self.limits = limits
        self.executor = executor
        self.audit = audit
        self.events = events if events is not None else EventHooks()
        self.runtime_id = uuid.uuid4().hex[:12]
        self.provenance: ProvenanceGate | None = None
        """Set by ``Runtime(provenance=...)``: the flow policy and result labels."""
        executor.workers.abandoned.limit = limits.max_abandoned_threads
        self._ids = itertools.count(1)

    def _next_id(self) -> str:
        return f"c{next(self._ids)}"

    # --- one call -------------------------------------------------------------
    def call(self, ctx: RunContext, name: Any, args: Any, source: str = "script",
             labels: dict[str, list[str]] | None = None) -> Reply:
        """Handle one call end to end; return the reply (``ok`` + value/error)."""
        reply = self.call_inline(ctx, name, args, source, labels=labels)
        assert reply is not None
        return reply

    def call_inline(self, ctx: RunContext, name: Any, args: Any, source: str = "script",
                    takeover: Takeover | None = None,
                    labels: dict[str, list[str]] | None = None) -> Reply | None:
        """:meth:`call`, run in this thread whatever its timeout when ``takeover`` is given.

        The call's deadline then goes to the runtime's watchdog; should it pass,
        the watchdog answers the call ``timeout`` (its record is finished) and
        calls ``takeover(reply)`` on a fresh thread, and this method returns
        None once the tool finally returns: the calling thread must then leave
        the run alone. Without ``takeover`` a call with a timeout runs on a
        worker thread (see :class:`ToolExecutor`). ``labels``: provenance on,
        the untrusted sources of each argument (:mod:`toolscript.runtime.provenance`).
        """
        record = ToolCallRecord(f"c{next(self._ids)}",
                                name if type(name) is str and len(name) <= 64 else _name_of(name),
                                args, started_at=time.time(), source=source)
        start = time.perf_counter()
        try:
            prepared = self._prepare(ctx, record, name, args, labels)
            if isinstance(prepared, tuple):
                reply = self._execute(record, prepared[0], prepared[1], ctx=ctx,
                                      takeover=takeover)
            else:
                reply = prepared
        except HostAbort as exc:
            ctx.stop(exc.cause)
            reply = self._stopped(exc)
        except CallAbandoned:
            return None
        record.duration_s = time.perf_counter() - start
        self._finish(ctx, record, reply)
        if self.provenance is not None:  # issue 27: the result's untrusted sources
            reply = self.provenance.label_reply(record.name, reply, labels, record.args)
        return reply

    def _prepare(
        self, ctx: RunContext, record: ToolCallRecord, name: Any, args: Any,
        labels: dict[str, list[str]] | None = None,
    ) -> tuple[Target, dict[str, Any]] | Reply:
        """Budget, lookup, binding and approval: ``(target, values)`` or an error reply.

        The arguments are bound first (validated, converted, defaults filled:
        :meth:`Tool.bind`); the approval hook, the record and the tool all get
        those final arguments, and ``target`` runs with exactly ``values``.
        """
        source = record.source
        if ctx.abort is not None:
            return _error("host_abort", "the run was stopped by the host")
        if not ctx.admit():
            return _error(
                "tool_call_limit",
                f"the run exceeded its budget of {ctx.max_tool_calls} tool calls",
            )
        tool = self.lookup(name) if isinstance(name, str) else None
        if tool is None:
            return _error("unknown_tool", self.registry.unknown_tool_message(_name_of(name)),
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
            bound = tool.bind(args)
        except ArgumentError as exc:
            return _error("invalid_arguments", clean_message(exc.message, self._text_limit,
                                                             paths=False),
                          problems=[{"path": p.path, "reason": p.reason} for p in exc.problems])
        except ValidationTimeout:
            return _error("timeout", f"{tool.name}(): validating the arguments did not finish "
                          "before the run's wall-clock limit")
        record.args = bound.shown
        values = bound.values
        untrusted: dict[str, list[str]] | None = None
        if self.provenance is not None:  # issue 27: untrusted data may not choose this call
            refused = self.provenance.check(tool, values, labels)
            if refused is not None:  # refused, or (Provenance(ask=True)) the hook's to decide
                untrusted = self.provenance.approval_chain(refused)
                if not untrusted or self.approve is None:
                    return refused
        journal = ctx.journal  # issue 30: numbered, and answered from the journal on a resume
        step = None
        hook = self.approve
        if journal is not None:
            step = journal.step(tool.name, bound.shown, record.id)
            if step.reply is not None:
                record.replayed = True
                return step.reply
            hook = step.hook(hook)
        target: Target = tool
        shown = bound.shown
        injected: dict[str, Any] | None = None
        if tool.host_supplied is not None:  # injected params, idempotency, two-phase: hostsupply.py
            hosted = self.host_supply.bind(ctx, record, tool, bound, self.timeout_of(tool))
            if isinstance(hosted, dict):
                return hosted
            target, shown = hosted
            injected = hosted[0].injected
        elif not bound.direct:  # converted values: run them as they are, no second conversion
            target = BoundCall(tool, functools.partial(tool.call_bound, values))
        if hook is None and not tool.requires_approval:
            record.approved = True
            record.decided_by = "policy"
            return target, values
        request = ToolCallRequest(
            tool=tool.name, args=ordered_copy(shown, [p.name for p in tool.params]),
            read_only=tool.read_only, requires_approval=tool.requires_approval,
            call_id=record.id, run_id=ctx.run_id, session_id=ctx.session_id,
            source=record.source, injected=_injected_view(tool, injected),
            script_sha256=ctx.script_sha256, agent_run_id=ctx.agent_run_id,
            runtime_id=self.runtime_id, untrusted=untrusted if untrusted is not None else {},
        )
        try:
            decision, decided_by = decide(hook, request)
        except (ApprovalRequired, KeyboardInterrupt, SystemExit) as exc:  # Ctrl-C in a hook
            ctx.stop(exc)
            record.approved = False
            record.decided_by = "hook"
            record.reason = str(exc)
            return _error("host_abort", f"the approval hook stopped the run: {exc}")
        record.approved = decision.approved
        record.decided_by = decided_by
        record.reason = decision.reason
        if decision.deferred:  # issue 30: the run pauses at this call
            caller = "script" if record.source == "script" else f"classic tool call {record.id}"
            if journal is None or step is None:
                return _error("paused", f"{tool.name}() waits for a person's approval, but "
                              "this call cannot pause: it keeps no journal (a direct call, or a "
                              "run that started with no approval hook set)")
            return journal.pause(step.seq, tool.name, request.args, caller, decision.reason)
        if not decision.approved:
            reason = f": {decision.reason}" if decision.reason else ""
            return _error("denied", f"{tool.name}() was denied{reason}")
        return target, values

    def timeout_of(self, tool: Target) -> float | None:
        """The effective timeout of one call of ``tool``."""
        return tool.timeout_s if tool.timeout_s is not None else self.limits.tool_timeout_s

    @property
    def _text_limit(self) -> int:
        return self.limits.max_output_chars

    def _stopped(self, exc: HostAbort) -> Reply:
        text = clean_message(f"the run was stopped: {safe_str(exc.cause)}", self._text_limit)
        return _error("host_abort", text)

    def _execute(
        self, record: ToolCallRecord, tool: Target, args: dict[str, Any], inline: bool = False,
        ctx: RunContext | None = None, takeover: Takeover | None = None,
    ) -> Reply:
        timeout = None if inline else self.timeout_of(tool)
        run: AbandonCounter | None = None
        by_deadline = False
        if ctx is not None:
            if ctx.abort is not None:  # stopped since it was approved (Ctrl-C, another call)
                return _error("host_abort", f"{tool.name}() was not started: the run was "
                              "stopped by the host", started=False)
            run = ctx.abandoned
            deadline = ctx.deadline
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return _error("timeout", f"{tool.name}() was not started: the run reached "
                                  "its wall-clock limit", started=False)
                if timeout is not None and remaining < timeout:
                    timeout, by_deadline = remaining, True
            if self.audit is not None:
                self._record_start(ctx, record)
        try:
            if timeout is None:
                result = tool.invoke(args)
            elif takeover is not None and ctx is not None:
                result = self._invoke_watched(ctx, record, tool, args, timeout, by_deadline,
                                              takeover)
            else:
                result = self.executor.run(tool, args, timeout, run)
        except CallAbandoned:
            raise
        except ToolTimedOut as exc:
            if by_deadline:
                return _error("timeout", f"{tool.name} was still running when the run reached "
                              "its wall-clock limit")
            return _error("timeout", str(exc))
        except Overloaded as exc:
            return _error("overloaded", f"{tool.name}() did not start: {exc}", started=False)
        except NotStarted as exc:
            return _error(exc.error_type, clean_message(str(exc), self._text_limit),
                          started=False)
        except (ToolscriptError, KeyboardInterrupt, SystemExit) as exc:  # Ctrl-C in a tool
            raise HostAbort(exc) from exc
        except Exception as exc:
            original = safe_str(exc)
            text = f"{tool.name}: {type(exc).__name__}: {original}"
            return _error("tool_exception", clean_message(text, self._text_limit),
                          exception=type(exc).__name__,
                          builtin_exception=builtin_exception_of(exc),
                          exception_message=clean_message(original, self._text_limit))
        try:
            value = to_json_data(result)
        except NotJSONData:
            try:
                value = to_json_data(to_jsonable(result))
            except (TypeError, ValueError, RecursionError) as exc:
                text = f"{tool.name} returned something that is not JSON data: {safe_str(exc)}"
                return _error("invalid_result", clean_message(text, self._text_limit))
        return {"ok": True, "value": value}

    def _record_start(self, ctx: RunContext, record: ToolCallRecord) -> None:
        """Tell an audit that records attempts (``AuditLog(sync="fsync")``) that the
        tool is about to run; if it cannot record that, the call does not run."""
        started = getattr(self.audit, "call_started", None)
        if started is None:
            return
        try:
            started(record, ToolCallEvent(record, ctx.session_id, ctx.run_id, ctx.agent_run_id))
        except Exception as exc:
            raise HostAbort(exc) from exc

    def _invoke_watched(self, ctx: RunContext, record: ToolCallRecord, tool: Target,
                        args: dict[str, Any], timeout: float, by_deadline: bool,
                        takeover: Takeover) -> Any:
        """Run the tool in this thread with its deadline on the watchdog.

        Raises:
            Overloaded: too many earlier calls are still running past their timeout.
            CallAbandoned: the deadline passed first (the call was answered for it).
        """
        workers = self.executor.workers
        workers.check(ctx.abandoned)
        counters = workers.counters(ctx.abandoned)
        deadlines = self.executor.deadlines
        entry = deadlines.add(time.monotonic() + timeout, functools.partial(
            self._abandon, ctx, record, counters, tool.name, timeout, by_deadline, takeover))
        try:
            return tool.invoke(args)
        finally:
            if not deadlines.cancel(entry):
                for counter in counters:  # counted by _abandon; this thread is free again
                    counter.remove()
                raise CallAbandoned  # the tool's outcome is dropped on purpose

    def _abandon(self, ctx: RunContext, record: ToolCallRecord,
                 counters: tuple[AbandonCounter, ...], name: str, timeout: float,
                 by_deadline: bool, takeover: Takeover) -> None:
        """The watchdog's action for an inline call past its deadline (never blocks)."""
        text = (f"{name} was still running when the run reached its wall-clock limit"
                if by_deadline else f"{name} did not finish within {timeout:g} s")
        for counter in counters:
            counter.add()

        def answer() -> None:
            reply = _error("timeout", text)
            record.duration_s = max(time.time() - record.started_at, 0.0)
            self._finish(ctx, record, reply)
            takeover(reply)

        self.executor.workers.spawn(answer)

    def _finish(self, ctx: RunContext, record: ToolCallRecord, reply: Reply,
                keep: bool = True) -> None:
        """A call ended: its outcome goes into its journal, its record, its audit line
        and hooks, and (``keep``) the record into the run's records. (In process the
        wall-limit abort is held off meanwhile: ``RunServer.call``.)"""
        try:
            if ctx.journal is not None:  # issue 30: durable before the script sees the reply
                ctx.journal.finished(record.id, reply)
            if reply["ok"]:
                record.ok = True
                record.value = reply["value"]
            else:
                record.error = RunError.from_message(reply["error"])
            audit = self.audit
            hooks = self.events.tool_call
            if audit is not None or hooks:
                event = ToolCallEvent(record, ctx.session_id, ctx.run_id, ctx.agent_run_id)
                try:
                    if audit is not None:
                        audit(record, event)
                finally:
                    if hooks:
                        emit(hooks, event)
        finally:
            if keep:
                ctx.keep_one(record)

    def _settle(self, ctx: RunContext, record: ToolCallRecord, reply: Reply) -> None:
        """:meth:`_finish` without adding the record to the run's (a batch adds its
        records at its end, in call order)."""
        self._finish(ctx, record, reply, keep=False)

    @staticmethod
    def _must_stop(ctx: RunContext) -> tuple[str, str] | None:
        """Why calls of a batch may no longer start: the run was stopped or is out of time."""
        if ctx.abort is not None:
            return ("host_abort", "the run was stopped by the host")
        if ctx.deadline is not None and time.monotonic() >= ctx.deadline:
            return ("timeout", "the run reached its wall-clock limit")
        return None

    # --- many calls (parallel) ----------------------------------------------------
    @staticmethod
    def batch_refusal(ctx: RunContext, count: int) -> Reply | None:
        """The ``tool_call_limit`` reply to a batch of ``count`` calls larger than the
        run's remaining budget (which it spends), or None when the batch fits. Such
        a batch is refused whole: none of its calls runs and no record is built."""
        if ctx.reserve(count):
            return None
        return _error("tool_call_limit",
                      f"the run exceeded its budget of {ctx.max_tool_calls} tool calls: a "
                      f"parallel() batch of {count} calls does not fit what was left of it, "
                      "and none of them ran")

    def call_many(
        self, ctx: RunContext, calls: Sequence[tuple[Any, ...]], source: str = "script"
    ) -> list[Reply]:
        """Handle several calls: read-only ones concurrently, writes serially in order.

        Approval is asked one call at a time, in call order, before anything
        runs; replies come back in call order. Once the run is stopped (a
        ``ToolAuthorizationError``, Ctrl-C, an approval hook's
        ``ApprovalRequired``) or reaches its deadline, no further call of the
        batch starts: those calls reply ``host_abort`` or ``timeout``.
        """
        refusal = self.batch_refusal(ctx, len(calls))
        if refusal is not None:
            return [refusal] * len(calls)
        replies: list[Reply | None] = [None] * len(calls)
        batch = BatchRecords(ctx, self._settle)
        records = batch.records
        ready: list[tuple[int, Target, dict[str, Any]]] = []
        for index, (name, args, *labelled) in enumerate(calls):
            record = ToolCallRecord(id=self._next_id(), name=_name_of(name), args=args,
                                    started_at=time.time(), source=source)
            batch.add(record)
            stop = self._must_stop(ctx)
            if stop is not None and stop[0] == "timeout":
                replies[index] = _error("timeout", f"{record.name}() was not started: {stop[1]}",
                                        started=False)
                continue
            prepared = self._prepare(ctx, record, name, args,
                                     labelled[0] if labelled else None)
            if type(prepared) is tuple:
                ready.append((index, prepared[0], prepared[1]))
            else:
                replies[index] = prepared  # type: ignore[assignment]
        for index, reply in enumerate(replies):
            if reply is not None:  # refused before anything ran: recorded now
                batch.finish(index, reply)

        jobs: list[FanoutJob] = [
            (index, tool.name, functools.partial(self._run_read_only, ctx, records[index], tool,
                                                 args), self.timeout_of(tool))
            for index, tool, args in ready if tool.read_only
        ]
        fanout = Fanout(self.executor.workers, jobs, self.limits.max_parallel,
                        functools.partial(self._must_stop, ctx), ctx.deadline, ctx.abandoned,
                        on_reply=batch.finish)
        try:
            fanout.start()
            for index, tool, args in ready:
                if tool.read_only:
                    continue
                stop = self._must_stop(ctx)
                if stop is not None:
                    replies[index] = _error(stop[0], f"{tool.name}() was not started: {stop[1]}",
                                            started=False)
                else:
                    try:
                        replies[index] = self._execute(records[index], tool, args, ctx=ctx)
                    except HostAbort as exc:
                        ctx.stop(exc.cause)
                        replies[index] = self._stopped(exc)
                batch.finish(index, replies[index])  # type: ignore[arg-type]
            finished = fanout.finish()
        except (KeyboardInterrupt, SystemExit) as exc:  # Ctrl-C while waiting for the batch
            ctx.stop(exc)
            finished = fanout.cancel("host_abort", "the run was stopped by the host")
            for index, _tool, _args in ready:
                if replies[index] is None and index not in finished:
                    replies[index] = _error("host_abort", "the run was stopped by the host")
        for index, reply in finished.items():
            replies[index] = reply
        for index, reply in enumerate(replies):  # Ctrl-C left some unsettled
            if reply is not None and not batch.settled(index):
                batch.finish(index, reply)
        batch.keep_all()
        gate = self.provenance  # issue 27: each result's untrusted sources
        return [reply if gate is None else gate.label_reply(
                    records[i].name, reply, calls[i][2] if len(calls[i]) > 2 else None,
                    records[i].args)
                for i, reply in enumerate(replies) if reply is not None]

    def _run_read_only(self, ctx: RunContext, record: ToolCallRecord, tool: Target,
                       args: dict[str, Any]) -> Reply:
        """One concurrent call of a batch (on a worker thread; its timeout is the fanout's)."""
        try:
            return self._execute(record, tool, args, inline=True, ctx=ctx)
        except HostAbort as exc:
            ctx.stop(exc.cause)
            return self._stopped(exc)
