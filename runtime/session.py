"""A session: one sandbox, a persistent namespace, and the host-side policy.

:meth:`Session.run` sends a script to the sandbox and serves the tool calls
it makes through the runtime's :class:`~toolscript.runtime.calls.dispatch.Dispatcher`
until the result arrives. If the sandbox dies or overruns its wall clock it
is killed and replaced on the next run (the result says so: its variables are
gone). Sessions are not shared between threads: one run at a time.
"""

from __future__ import annotations

import contextvars
import functools
import itertools
import logging
import secrets
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolscript.sandbox.guards import SandboxAbort
from toolscript.sandbox.protocol import FrameError
from toolscript.sandbox.wirecheck import ack_message, sandbox_message
from toolscript.tools.asynctools import waiting_sync
from toolscript.tools.validation import swap_bounds

from toolscript.errors import ProtocolError

from .backends.base import SandboxDied, SandboxHandle, SandboxSpec
from .calls import stopping
from .calls.dispatch import RunContext
from .calls.messages import cap_text, clean_message, crash_detail
from .durable.durability import ends_run
from .events import RunEndEvent, RunStartEvent, emit
from .provenance.render import render_result
from .results import RunError, RunResult, ToolCallRecord

if TYPE_CHECKING:
    from .runtime import Runtime

HARD_KILL_GRACE_S = 2.0
"""How long after its wall-clock limit a sandbox may take to stop by itself."""

_log = logging.getLogger("toolscript")

_DEATH_MESSAGES = {
    "memory_limit": "the sandbox ran out of memory (limit {memory} MiB) and was stopped",
    "cpu_limit": "the sandbox exceeded its CPU time limit and was stopped",
    "pids_limit": "the sandbox hit its process/thread limit and was stopped",
    "killed": "the sandbox was stopped",
    "protocol_error": "the sandbox broke the wire protocol and was stopped ({detail})",
}


class _Serving:
    """One remote run as its serving threads and its waiting caller share it.

    One serving thread at a time talks to the sandbox, under ``io``; a thread
    whose call was abandoned never touches it again. The thread that gets the
    run's outcome :meth:`settle` s it, which wakes the caller.
    """

    __slots__ = ("_settled", "context", "ctx", "deadline", "done", "fresh", "handle", "io",
                 "kill", "killed", "outcome", "stopped", "wire_id")

    def __init__(self, handle: SandboxHandle, ctx: RunContext, deadline: float,
                 fresh: bool, wire_id: str) -> None:
        self.handle = handle
        self.ctx = ctx
        self.wire_id = wire_id
        """The id of this run on the wire: frames of any other run are a protocol error."""
        self.deadline = deadline
        """When the host stops waiting for the sandbox (``time.monotonic()``)."""
        self.fresh = fresh
        self.context = contextvars.copy_context()
        """The caller's context variables (e.g. the host loop of async tools)."""
        self.io = threading.Lock()
        self.done = threading.Lock()
        self.done.acquire()
        self._settled = threading.Lock()
        self.outcome: tuple[dict[str, Any], bool] | BaseException | None = None
        self.kill = False
        """The sandbox must be replaced (the caller kills it)."""
        self.stopped = False
        """The caller gave up waiting (Ctrl-C): serving threads leave the run."""
        self.killed = False

    def settle(self, outcome: tuple[dict[str, Any], bool] | BaseException) -> None:
        """Hand the run's outcome to the caller (the first one counts)."""
        if self._settled.acquire(blocking=False):
            self.outcome = outcome
            self.done.release()

    def kill_sandbox(self) -> None:
        """Kill the sandbox of a run the caller gave up on (call with ``io`` held)."""
        if not self.killed:
            self.killed = True
            self.handle.kill()


class _RunCalls:
    """One run's tool calls for a sandbox that makes them as direct calls (a
    :class:`~toolscript.runtime.backends.base.CallServer`): the same dispatcher
    entry points the message loop uses."""

    __slots__ = ("dispatcher", "end_run", "serving", "tools")

    def __init__(self, session: Session, serving: _Serving) -> None:
        self.dispatcher = session.runtime.dispatcher
        self.tools = session.runtime.registry
        self.serving = serving
        self.end_run = functools.partial(session._end_run, serving)

    def call(self, tool: Any, args: Any,
             labels: dict[str, list[str]] | None = None) -> dict[str, Any] | None:
        """One call: a ``blocking`` tool's on a worker thread (a timeout is
        answered and the script goes on), any other inline, where its timeout
        ends the run (see ``Session._end_run``)."""
        target = self.tools.get(tool) if type(tool) is str else None
        try:
            if target is not None and target.blocking:
                return self.dispatcher.call(self.serving.ctx, tool, args, labels=labels)
            return self.dispatcher.call_inline(self.serving.ctx, tool, args,
                                               takeover=self.end_run, labels=labels)
        except SandboxAbort:  # the sandbox's own limit landed here: the script's to handle
            raise
        except BaseException as exc:
            self._host_failed(exc)
            return None

    def call_many(self, calls: list[tuple[Any, ...]]) -> list[dict[str, Any]] | None:
        """A ``parallel()`` batch."""
        try:
            return self.dispatcher.call_many(self.serving.ctx, calls)
        except SandboxAbort:  # the sandbox's own limit landed here: the script's to handle
            raise
        except BaseException as exc:
            self._host_failed(exc)
            return None

    def _host_failed(self, exc: BaseException) -> None:
        """The host itself failed serving a call (an audit hook raised, Ctrl-C in a
        tool): the caller gets the exception, as from a process backend's serving
        thread, and the script stops instead of handling it as a script error."""
        self.serving.kill = True
        self.serving.settle(exc)


class Session:
    """Runs scripts in one sandbox whose variables persist between runs."""

    def __init__(self, runtime: Runtime, context: Mapping[str, Any] | None = None) -> None:
        self.runtime = runtime
        merged = {**getattr(runtime, "context", {}), **(context or {})}
        self.context: Mapping[str, Any] = MappingProxyType(merged)
        """Values for injected tool parameters (the runtime's, then this session's)."""
        self.id = uuid.uuid4().hex[:12]
        self.agent_run_id: str | None = None
        """Set by ``Agent.run()`` while it drives this session (approval hooks see it)."""
        self._runs = itertools.count(1)
        self._lock = threading.Lock()
        self._handle: SandboxHandle | None = None
        self._closed = False

    # --- lifecycle ------------------------------------------------------------------
    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        from toolscript.tools.asynctools import offload

        await offload(self.close)

    async def run_async(self, code: str) -> RunResult:
        """:meth:`run` for async code: the sandbox I/O runs in a worker thread while
        the event loop stays free, and ``async def`` tools run on this loop.

        Cancelled (as ``asyncio.run`` cancels it on Ctrl-C), it stops the run
        before the cancellation goes on: no call of the run starts after that,
        and its sandbox is replaced."""
        result: RunResult = await stopping.stoppable(self.run, code)
        return result

    async def call_tool_async(self, name: str, args: Any) -> ToolCallRecord:
        """:meth:`call_tool` for async code (see :meth:`run_async`)."""
        record: ToolCallRecord = await stopping.stoppable(self.call_tool, name, args)
        return record

    def close(self) -> None:
        """Stop the sandbox. Idempotent."""
        self._closed = True
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.close()

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    @property
    def sandbox(self) -> SandboxHandle | None:
        """The transport handle of this session's running sandbox, for diagnostics
        and tooling (its ``ready_info`` holds the pid and the walls it reported;
        docker handles name their container); None before the first run, after
        :meth:`restart` or :meth:`close`. Runs and calls never go through it."""
        return self._handle

    def _configure_message(self, apply_process_limits: bool) -> dict[str, Any]:
        limits = self.runtime.limits
        bounds = limits.wire_bounds()
        return {
            "type": "configure",
            "tools": self.runtime.registry.describe_for_sandbox(),
            "modules": list(self.runtime.modules),
            "process_limits": {
                "apply": apply_process_limits,
                "memory_bytes": limits.memory_mb * 1024 * 1024,
                "cpu_s_per_run": limits.effective_cpu_time_s,
            },
            "wire": {"max_bytes": bounds.max_bytes, "max_items": bounds.max_items,
                     "max_depth": bounds.max_depth},
            **({"provenance": True} if self.runtime.provenance is not None else {}),
        }

    def _ensure_sandbox(self) -> bool:
        """Start the sandbox if needed; True if it replaced one that had died
        since the last run (its variables are lost)."""
        if self._closed:
            raise RuntimeError("this session is closed")
        if self._handle is not None and self._handle.is_alive():
            return False
        replaced = self._handle is not None
        if self._handle is not None:
            self._handle.kill()
            self._handle = None
        handle = self.runtime.acquire_sandbox(
            SandboxSpec(limits=self.runtime.limits),
            # A sandbox in the host's process must not lower the host's own limits.
            self._configure_message(not self.runtime.backend.in_host_process),
        )
        handle.set_wire_bounds(self.runtime.limits.wire_bounds())
        self._handle = handle
        return replaced

    def restart(self) -> None:
        """Kill the sandbox; the next run starts a fresh one (variables are lost)."""
        if self._handle is not None:
            self._handle.kill()
            self._handle = None

    def reset(self) -> None:
        """Forget every variable the scripts of this session defined."""
        with self._lock:
            if self._handle is not None and self._handle.is_alive():
                self._handle.send({"type": "reset"})
                try:
                    ack_message(self._handle.recv(10.0), "reset_done")
                except FrameError as exc:
                    self.restart()
                    raise ProtocolError(str(exc)) from None

    # --- runs -----------------------------------------------------------------------
    def run(self, code: str) -> RunResult:
        """Run one script in this session's namespace and return its result.

        The runtime's ``run_start`` and ``run_end`` event hooks fire around the
        whole run, on this thread (see :mod:`toolscript.runtime.events`).
        """
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        run_id = f"{self.id}-{next(self._runs)}"
        events = self.runtime.events
        if not (events.run_start or events.run_end):
            return self._run(code, run_id)
        fields = (self.id, run_id, self.agent_run_id, self.runtime.backend_name, code)
        if events.run_start:
            emit(events.run_start, RunStartEvent(*fields))
        try:
            result = self._run(code, run_id)
        except BaseException as exc:
            if events.run_end:
                emit(events.run_end, RunEndEvent(*fields, None, exc))
            raise
        if events.run_end:
            emit(events.run_end, RunEndEvent(*fields, result))
        return result

    def _run(self, code: str, run_id: str) -> RunResult:
        """The body of :meth:`run`."""
        with self._lock, waiting_sync():
            limits = self.runtime.limits
            started = time.perf_counter()
            replaced = self._ensure_sandbox()
            ctx = RunContext(run_id, self.id, limits.max_tool_calls, self.context,
                             script=code, agent_run_id=self.agent_run_id, limits=limits,
                             deadline=time.monotonic() + limits.wall_time_s)
            ctx.journal = self.runtime.durability.attach(self.runtime, ctx)  # issue 30
            stopper = stopping.take()
            previous = swap_bounds(ctx.bounds)
            try:
                if stopper is not None:
                    stopper.arm(ctx.stop)
                message, restarted = self._run_in_sandbox(code, ctx, stopper)
            finally:
                swap_bounds(previous)
                if stopper is not None:
                    stopper.arm(None)
            restarted = restarted or replaced
            if ctx.abort is not None and not ends_run(ctx.abort):  # a pause is a result
                raise ctx.abort
            if self.runtime.provenance is not None:  # issue 27: untrusted text as references
                message = render_result(message, self.runtime.provenance.show_untrusted)
            error = message["error"]
            result = RunResult(
                ok=message["ok"] and error is None,
                value=message["value"],
                stdout=cap_text(message["stdout"], limits.max_output_chars),
                stdout_truncated=message["stdout_truncated"],
                error=self._run_error(error) if error else None,
                tool_calls=ctx.records,
                duration_s=time.perf_counter() - started,
                session_restarted=restarted,
                run_id=run_id,
            )
            return self.runtime.durability.finish(self.runtime, ctx, result)  # issue 30

    def _run_error(self, error: Any) -> RunError:
        """The run's error as the sandbox reported it, its texts capped at
        ``max_output_chars`` (a sandbox may send megabytes)."""
        limit = self.runtime.limits.max_output_chars
        if isinstance(error, dict):
            error = {key: cap_text(value, limit) if isinstance(value, str) else value
                     for key, value in error.items()}
        return RunError.from_message(error)

    def _send_reply(self, handle: SandboxHandle, reply: dict[str, Any]) -> None:
        """Send a reply; one that cannot be encoded (an integer of more than
        4,300 digits, a frame over the size limit) becomes an error reply."""
        try:
            handle.send(reply)
            return
        except (ValueError, RecursionError, FrameError) as exc:
            problem = exc
        if "results" in reply:
            reply = {**reply, "results": [self._sendable(r, problem) for r in reply["results"]]}
        else:
            reply = {"type": "reply", "id": reply.get("id"), **self._sendable(
                {k: v for k, v in reply.items() if k not in ("type", "id")}, problem)}
        try:
            handle.send(reply)
        except (ValueError, RecursionError, FrameError):
            replies = reply.get("results")
            failure = self._undeliverable(problem)
            handle.send({"type": "reply", "id": reply.get("id"),
                         **({"results": [failure] * len(replies)}
                            if isinstance(replies, list) else failure)})

    def _sendable(self, one: dict[str, Any], problem: BaseException) -> dict[str, Any]:
        from toolscript.sandbox.protocol import encode_frame

        try:
            encode_frame(one)
        except (ValueError, RecursionError, FrameError):
            return self._undeliverable(problem)
        return one

    def _undeliverable(self, problem: BaseException) -> dict[str, Any]:
        text = clean_message(f"the tool's reply could not be sent to the sandbox: {problem}",
                             self.runtime.limits.max_output_chars)
        return {"ok": False, "error": {"type": "invalid_result", "message": text}}

    def _run_in_sandbox(self, code: str, ctx: RunContext,
                        stopper: stopping.Stopper | None = None) -> tuple[dict[str, Any], bool]:
        """Send the script, then serve its calls on a worker thread until the result.

        The run's calls execute inline in the serving thread (one hand-off per
        run, none per call), whether they arrive as messages or, from an
        inprocess sandbox, as direct calls (:class:`_RunCalls`); should a call
        pass its timeout, the runtime's watchdog answers it and a fresh thread
        continues serving (see :meth:`Dispatcher.call_inline`) - or, when the
        call shares the script's thread, ends the run - so this thread only
        waits.
        """
        handle = self._handle
        assert handle is not None
        limits = self.runtime.limits
        deadline = time.monotonic() + limits.wall_time_s + HARD_KILL_GRACE_S
        # A fresh id the sandbox cannot guess before the run: a frame it sent for
        # another run (a late result, a call queued between runs) cannot pass as this one's.
        wire_id = secrets.token_hex(8)
        run_message = {"type": "run", "id": wire_id, "code": code,
                       "limits": limits.run_message()}
        fresh = False
        try:
            try:
                handle.send(run_message)
            except SandboxDied:
                # It died before it could read the script (between runs, after
                # the liveness check): nothing ran, so a fresh sandbox runs it.
                self.restart()
                self._ensure_sandbox()
                replacement = self._handle
                assert replacement is not None
                handle = replacement
                handle.send(run_message)
                fresh = True
        except SandboxDied as exc:
            self.restart()
            return self._death_failure(exc, handle, ctx), True
        except BaseException:  # Ctrl-C, an unencodable script: never reuse this sandbox
            self.restart()
            raise
        serving = _Serving(handle, ctx, deadline, fresh, wire_id)
        handle.attach_calls(_RunCalls(self, serving) if handle.calls_inline else None)
        self.runtime.dispatcher.executor.workers.spawn(
            functools.partial(serving.context.copy().run, self._serve, serving, None))
        if stopper is not None:
            stopper.arm(functools.partial(self._give_up, serving))
        try:
            settled = serving.done.acquire(
                timeout=max(deadline - time.monotonic(), 0.0) + HARD_KILL_GRACE_S)
        except BaseException as exc:  # Ctrl-C while waiting: the sandbox is mid-run
            ctx.stop(exc)  # before the caller sees it: no call of the run starts from now
            self._abandon_run(serving)
            raise
        if not settled:  # a hook or the host's own work held the serving thread too long
            self._abandon_run(serving)
            return self._wall_limit_failure(), True
        if serving.kill:
            self.restart()
        outcome = serving.outcome
        if isinstance(outcome, BaseException):
            raise outcome
        assert outcome is not None
        return outcome

    def _give_up(self, serving: _Serving, cause: BaseException) -> None:
        """Stop a run its async caller gave up on (from the caller's thread): no call
        starts, the sandbox is abandoned, and the run's thread raises ``cause``."""
        serving.ctx.stop(cause)
        self._abandon_run(serving)
        serving.settle(cause)

    def _abandon_run(self, serving: _Serving) -> None:
        """Give up on a run still being served: this session forgets its sandbox, which
        is killed now - by this thread, or, when the serving thread is in its I/O,
        stopped under it (:meth:`SandboxHandle.interrupt`) and cleaned up by that
        thread as its I/O returns (it never touches the sandbox again after that)."""
        serving.stopped = True
        if self._handle is serving.handle:
            self._handle = None
        if serving.io.acquire(blocking=False):
            try:
                serving.kill_sandbox()
            finally:
                serving.io.release()
        else:  # the serving thread is in the sandbox's I/O: stop the sandbox under it
            serving.handle.interrupt()

    def _serve(self, serving: _Serving, pending: tuple[Any, dict[str, Any]] | None) -> None:
        """The body of a serving thread (the first, or one continuing after a timeout)."""
        previous = swap_bounds(serving.ctx.bounds)
        try:
            outcome: tuple[dict[str, Any], bool] | BaseException | None = self._serve_calls(
                serving, pending)
        except BaseException as exc:  # handed to the waiting caller
            serving.kill = True
            outcome = exc
        finally:
            swap_bounds(previous)
        if outcome is not None:
            serving.settle(outcome)

    def _end_run(self, serving: _Serving, reply: dict[str, Any]) -> None:
        """End a run whose call, sharing the script's thread, passed its timeout:
        the script cannot go on while the call has not returned, so the caller
        gets the timeout now and the sandbox is replaced."""
        error = reply.get("error") or {}
        serving.kill = True
        serving.settle((self._failure(
            "timeout",
            f"{error.get('message', 'a tool call timed out')}; the script shares the tool's "
            "thread in this backend and cannot go on past a call that has not returned, so "
            "the run was stopped; variables from earlier runs of this session are lost"),
            True))

    def _take_over(self, serving: _Serving, call_id: Any, reply: dict[str, Any]) -> None:
        """Continue serving a run whose call was answered ``timeout`` by the watchdog."""
        if not serving.stopped:
            serving.context.copy().run(self._serve, serving, (call_id, reply))

    def _serve_calls(
        self, serving: _Serving, pending: tuple[Any, dict[str, Any]] | None
    ) -> tuple[dict[str, Any], bool] | None:
        """Serve calls until the result; None when this thread must leave the run."""
        handle = serving.handle
        ctx = serving.ctx
        io = serving.io
        dispatcher = self.runtime.dispatcher
        try:
            if pending is not None:
                with io:
                    if serving.stopped:
                        serving.kill_sandbox()
                        return None
                    self._send_reply(handle, {"type": "reply", "id": pending[0], **pending[1]})
            while True:
                remaining = serving.deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                with io:
                    if serving.stopped:
                        serving.kill_sandbox()
                        return None
                    message = sandbox_message(handle.recv(remaining), serving.wire_id)
                if message["type"] == "call":
                    call_id = message["id"]
                    reply = dispatcher.call_inline(
                        ctx, message["tool"], message["args"],
                        takeover=functools.partial(self._take_over, serving, call_id),
                        labels=message.get("labels"))
                    if reply is None:  # the watchdog answered it; another thread goes on
                        return None
                    with io:
                        if serving.stopped:
                            serving.kill_sandbox()
                            return None
                        self._send_reply(handle, {"type": "reply", "id": call_id, **reply})
                elif message["type"] == "call_many":
                    calls = [(c["tool"], c["args"], c["labels"]) if "labels" in c
                             else (c["tool"], c["args"]) for c in message["calls"]]
                    # A batch past the budget is answered with one error before any record.
                    refusal = dispatcher.batch_refusal(ctx, len(calls))
                    batch = ({"type": "reply", "id": message["id"], **refusal}
                             if refusal is not None else
                             {"type": "reply", "id": message["id"],
                              "results": dispatcher.call_many(ctx, calls)})
                    with io:
                        if serving.stopped:
                            serving.kill_sandbox()
                            return None
                        self._send_reply(handle, batch)
                else:
                    return dict(message), serving.fresh
        except TimeoutError:
            serving.kill = True
            return self._wall_limit_failure(), True
        except SandboxDied as exc:
            serving.kill = True
            return self._death_failure(exc, handle, ctx), True
        except (ProtocolError, FrameError) as exc:  # a bad frame, or a good one out of place
            serving.kill = True
            text = clean_message(f"the sandbox broke the wire protocol and was stopped: {exc}",
                                 self.runtime.limits.max_output_chars)
            return self._failure("protocol_error", text), True

    def _death_failure(self, exc: SandboxDied, handle: SandboxHandle,
                       ctx: RunContext) -> dict[str, Any]:
        """The run's result when its sandbox died."""
        limits = self.runtime.limits
        reason = exc.reason or handle.death_reason() or "sandbox_crashed"
        if reason in ("sandbox_crashed", "killed") and ctx.deadline is not None and (
            time.monotonic() >= ctx.deadline
        ):
            # It stopped itself at its wall limit while the host was still
            # answering a call (a batch that ran up to the deadline).
            return self._wall_limit_failure()
        if exc.detail:
            _log.warning("toolscript sandbox of session %s stopped: %s", self.id, exc.detail)
        template = _DEATH_MESSAGES.get(reason, "the sandbox stopped unexpectedly ({detail})")
        detail = clean_message(crash_detail(exc.detail or reason), 1000)
        text = template.format(memory=limits.memory_mb, detail=detail)
        return self._failure(
            reason if reason in _DEATH_MESSAGES and reason != "killed" else "sandbox_crashed",
            text + "; variables from earlier runs of this session are lost",
        )

    def _wall_limit_failure(self) -> dict[str, Any]:
        return self._failure(
            "timeout",
            f"the script exceeded its wall-clock limit of {self.runtime.limits.wall_time_s:g} s "
            "and the sandbox was stopped; variables from earlier runs of this session are lost",
        )

    @staticmethod
    def _failure(error_type: str, message: str) -> dict[str, Any]:
        return {"ok": False, "value": None, "stdout": "", "stdout_truncated": False,
                "error": {"type": error_type, "message": message}}

    # --- direct (classic) calls ------------------------------------------------------
    def _direct_context(self) -> RunContext:
        """Direct calls are bounded like a run: ``wall_time_s`` from now."""
        limits = self.runtime.limits
        return RunContext(f"{self.id}-direct", self.id, limits.max_tool_calls, self.context,
                          agent_run_id=self.agent_run_id, limits=limits,
                          deadline=time.monotonic() + limits.wall_time_s)

    def call_tool(self, name: str, args: Any) -> ToolCallRecord:
        """Run one tool call directly (classic function calling), through the same
        validation, approval, timeout and audit as calls from scripts.

        ``args`` may be a dict or a JSON string; invalid JSON, unknown tools and
        schema violations come back as a record with ``ok=False``.
        """
        ctx = self._direct_context()
        stopper = stopping.take()
        previous = swap_bounds(ctx.bounds)
        try:
            if stopper is not None:
                stopper.arm(ctx.stop)
            with waiting_sync():
                self.runtime.dispatcher.call(ctx, name, args, source="direct")
        finally:
            swap_bounds(previous)
        if ctx.abort is not None:
            raise ctx.abort
        return ctx.records[0]

    def call_tools(self, calls: Sequence[tuple[str, Any]]) -> list[ToolCallRecord]:
        """Several direct calls: read-only ones concurrently, writes serially in
        order; records come back in call order."""
        ctx = self._direct_context()
        stopper = stopping.take()
        previous = swap_bounds(ctx.bounds)
        try:
            if stopper is not None:
                stopper.arm(ctx.stop)
            with waiting_sync():
                self.runtime.dispatcher.call_many(ctx, list(calls), source="direct")
        finally:
            swap_bounds(previous)
        if ctx.abort is not None:
            raise ctx.abort
        return list(ctx.records)
