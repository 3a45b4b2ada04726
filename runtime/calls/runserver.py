"""One run's serving: the threads, deadlines, takeover and abandonment of a run.

A :class:`RunServer` is made by the session for each run, after the script
was sent. It owns everything about *who* serves the run's calls and *when*
the host stops waiting: the serving thread (one hand-off per run, none per
call), the run's wall-clock deadline, a fresh serving thread when the
watchdog answers an inline call ``timeout`` (the takeover), the caller
giving up (Ctrl-C, a cancelled async caller), and the results a run gets
when its sandbox dies, overruns or breaks the protocol. What one call *is*
(budget, lookup, validation, approval, execution, record) stays in the
:class:`~toolscript.runtime.calls.dispatch.Dispatcher`, reached through one
entry point per message kind.

Both kinds of sandbox feed the same loop: a process sandbox's ``call`` and
``call_many`` messages arrive through :meth:`SandboxHandle.recv`; an
inprocess sandbox calls :meth:`RunServer.call` and :meth:`RunServer.call_many`
directly (it is the handle's
:class:`~toolscript.runtime.backends.base.CallServer`), from inside the
``recv`` that runs the script on the serving thread.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from toolscript.sandbox import watchdog
from toolscript.sandbox.guards import SandboxAbort
from toolscript.sandbox.protocol import FrameError, encode_frame
from toolscript.sandbox.wirecheck import sandbox_message
from toolscript.tools.validation import swap_bounds

from toolscript.errors import ProtocolError

from ..backends.base import SandboxDied, SandboxHandle
from .messages import clean_message, crash_detail

if TYPE_CHECKING:
    from ..limits import Limits
    from .dispatch import Dispatcher
    from .runcontext import RunContext

__all__ = ["HARD_KILL_GRACE_S", "Outcome", "RunServer", "death_failure", "wall_limit_failure"]

HARD_KILL_GRACE_S = 2.0
"""How long after its wall-clock limit a sandbox may take to stop by itself."""

Outcome = tuple[dict[str, Any], bool]
"""A run's result message and whether its sandbox was (or must be) replaced."""

_log = logging.getLogger("toolscript")

_DEATH_MESSAGES = {
    "memory_limit": "the sandbox ran out of memory (limit {memory} MiB) and was stopped",
    "cpu_limit": "the sandbox exceeded its CPU time limit and was stopped",
    "pids_limit": "the sandbox hit its process/thread limit and was stopped",
    "killed": "the sandbox was stopped",
    "protocol_error": "the sandbox broke the wire protocol and was stopped ({detail})",
}

_LOST = "; variables from earlier runs of this session are lost"


def failure(error_type: str, message: str) -> dict[str, Any]:
    """A run's result message for a run the host ended."""
    return {"ok": False, "value": None, "stdout": "", "stdout_truncated": False,
            "error": {"type": error_type, "message": message}}


def wall_limit_failure(limits: Limits) -> dict[str, Any]:
    """The result of a run that overran its wall-clock limit."""
    return failure("timeout", f"the script exceeded its wall-clock limit of "
                   f"{limits.wall_time_s:g} s and the sandbox was stopped" + _LOST)


def death_failure(exc: SandboxDied, handle: SandboxHandle, ctx: RunContext,
                  limits: Limits) -> dict[str, Any]:
    """The result of a run whose sandbox died."""
    reason = exc.reason or handle.death_reason() or "sandbox_crashed"
    if reason in ("sandbox_crashed", "killed") and ctx.deadline is not None and (
        time.monotonic() >= ctx.deadline
    ):
        # It stopped itself at its wall limit while the host was still
        # answering a call (a batch that ran up to the deadline).
        return wall_limit_failure(limits)
    if exc.detail:
        _log.warning("toolscript sandbox of session %s stopped: %s", ctx.session_id, exc.detail)
    template = _DEATH_MESSAGES.get(reason, "the sandbox stopped unexpectedly ({detail})")
    detail = clean_message(crash_detail(exc.detail or reason), 1000)
    text = template.format(memory=limits.memory_mb, detail=detail)
    return failure(
        reason if reason in _DEATH_MESSAGES and reason != "killed" else "sandbox_crashed",
        text + _LOST)


class RunServer:
    """Serves one run's calls until its result, and hands the outcome to the caller.

    One serving thread at a time talks to the sandbox, under ``io``; a thread
    whose call was abandoned never touches it again. The thread that gets the
    run's outcome settles it, which wakes the caller in :meth:`wait`.
    """

    __slots__ = ("_context", "_io", "_settled", "_watch", "abandoned", "ctx", "deadline",
                 "dispatcher",
                 "done", "fresh", "handle", "kill", "killed", "limits", "outcome", "wire_id")

    def __init__(self, dispatcher: Dispatcher, handle: SandboxHandle, ctx: RunContext,
                 wire_id: str, fresh: bool) -> None:
        self.dispatcher = dispatcher
        self.limits = dispatcher.limits
        self.handle = handle
        self.ctx = ctx
        self.wire_id = wire_id
        """The id of this run on the wire: frames of any other run are a protocol error."""
        self.deadline = time.monotonic() + self.limits.wall_time_s + HARD_KILL_GRACE_S
        """When the host stops waiting for the sandbox (``time.monotonic()``)."""
        self.fresh = fresh
        self._context = contextvars.copy_context()
        """The caller's context variables (e.g. the host loop of async tools)."""
        self._io = threading.Lock()
        self.done = threading.Lock()
        self.done.acquire()
        self._settled = threading.Lock()
        self.outcome: Outcome | BaseException | None = None
        self.kill = False
        """The sandbox must be replaced (the caller kills it)."""
        self.abandoned = False
        """The caller gave up waiting (Ctrl-C): serving threads leave the run, and
        the sandbox is killed by whichever thread holds its I/O."""
        self.killed = False
        self._watch: Any = None
        """Inprocess: the script thread's watchdog watch, found at its first call."""

    # --- the caller's side --------------------------------------------------------
    def wait(self) -> Outcome:
        """Start serving and wait for the run's outcome (raised if it is an exception).

        After it returns or raises, :attr:`kill` says the sandbox must be replaced
        and :attr:`abandoned` that it was given up on (it is being killed).
        """
        self.handle.attach_calls(self if self.handle.calls_inline else None)
        self.dispatcher.executor.workers.spawn(self._thread(None))
        try:
            settled = self.done.acquire(
                timeout=max(self.deadline - time.monotonic(), 0.0) + HARD_KILL_GRACE_S)
        except BaseException as exc:  # Ctrl-C while waiting: the sandbox is mid-run
            self.ctx.stop(exc)  # before the caller sees it: no call of the run starts from now
            self._abandon()
            raise
        if not settled:  # a hook or the host's own work held the serving thread too long
            self._abandon()
            return wall_limit_failure(self.limits), True
        outcome = self.outcome
        if isinstance(outcome, BaseException):
            raise outcome
        assert outcome is not None
        return outcome

    def give_up(self, cause: BaseException) -> None:
        """Stop a run its async caller gave up on (from the caller's thread): no call
        starts, the sandbox is abandoned, and :meth:`wait` raises ``cause``."""
        self.ctx.stop(cause)
        self._abandon()
        self._settle(cause)

    def _abandon(self) -> None:
        """Give up on the run: its sandbox is killed now - by this thread, or, when
        the serving thread is in its I/O, stopped under it
        (:meth:`SandboxHandle.interrupt`) and cleaned up by that thread as its I/O
        returns (it never touches the sandbox again after that)."""
        self.abandoned = True
        if self._io.acquire(blocking=False):
            try:
                self._kill_sandbox()
            finally:
                self._io.release()
        else:
            self.handle.interrupt()

    def _settle(self, outcome: Outcome | BaseException) -> None:
        """Hand the run's outcome to the caller (the first one counts)."""
        if self._settled.acquire(blocking=False):
            self.outcome = outcome
            self.done.release()

    def _kill_sandbox(self) -> None:
        """Kill the sandbox of a run the caller gave up on (call with ``io`` held)."""
        if not self.killed:
            self.killed = True
            self.handle.kill()

    # --- serving threads ----------------------------------------------------------
    def _thread(self, pending: tuple[Any, dict[str, Any]] | None) -> Any:
        """The job of a serving thread, in a copy of the caller's context."""
        context = self._context.copy()
        return lambda: context.run(self._serve, pending)

    def _serve(self, pending: tuple[Any, dict[str, Any]] | None) -> None:
        """The body of a serving thread (the first, or one continuing after a timeout)."""
        previous = swap_bounds(self.ctx.bounds)
        try:
            outcome: Outcome | BaseException | None = self._loop(pending)
        except BaseException as exc:  # handed to the waiting caller
            self.kill = True
            outcome = exc
        finally:
            swap_bounds(previous)
        if outcome is not None:
            self._settle(outcome)

    def _take_over(self, call_id: Any, reply: dict[str, Any]) -> None:
        """Continue serving after the watchdog answered call ``call_id`` ``timeout``
        (called on a fresh worker thread; the stuck one leaves the run)."""
        if not self.abandoned:
            self._thread((call_id, reply))()

    def _loop(self, pending: tuple[Any, dict[str, Any]] | None) -> Outcome | None:
        """Serve messages until the result; None when this thread must leave the run."""
        handle = self.handle
        ctx = self.ctx
        io = self._io
        dispatcher = self.dispatcher
        try:
            if pending is not None and not self._reply(
                    {"type": "reply", "id": pending[0], **pending[1]}):
                return None
            while True:
                remaining = self.deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                with io:
                    if self.abandoned:
                        self._kill_sandbox()
                        return None
                    message = sandbox_message(handle.recv(remaining), self.wire_id)
                if message["type"] == "call":
                    call_id = message["id"]
                    reply = dispatcher.call_inline(
                        ctx, message["tool"], message["args"],
                        takeover=functools.partial(self._take_over, call_id),
                        labels=message.get("labels"))
                    if reply is None:  # the watchdog answered it; another thread goes on
                        return None
                    if not self._reply({"type": "reply", "id": call_id, **reply}):
                        return None
                elif message["type"] == "call_many":
                    calls = [(c["tool"], c["args"], c["labels"]) if "labels" in c
                             else (c["tool"], c["args"]) for c in message["calls"]]
                    # A batch past the budget is answered with one error before any record.
                    refusal = dispatcher.batch_refusal(ctx, len(calls))
                    batch = ({"type": "reply", "id": message["id"], **refusal}
                             if refusal is not None else
                             {"type": "reply", "id": message["id"],
                              "results": dispatcher.call_many(ctx, calls)})
                    if not self._reply(batch):
                        return None
                else:
                    return dict(message), self.fresh
        except TimeoutError:
            self.kill = True
            return wall_limit_failure(self.limits), True
        except SandboxDied as exc:
            self.kill = True
            return death_failure(exc, handle, ctx, self.limits), True
        except (ProtocolError, FrameError) as exc:  # a bad frame, or a good one out of place
            self.kill = True
            text = clean_message(f"the sandbox broke the wire protocol and was stopped: {exc}",
                                 self.limits.max_output_chars)
            return failure("protocol_error", text), True

    def _reply(self, reply: dict[str, Any]) -> bool:
        """Send a reply under ``io``; False when the run was abandoned meanwhile."""
        with self._io:
            if self.abandoned:
                self._kill_sandbox()
                return False
            self._send(reply)
            return True

    def _send(self, reply: dict[str, Any]) -> None:
        """Send a reply; one that cannot be encoded (an integer of more than
        4,300 digits, a frame over the size limit) becomes an error reply."""
        handle = self.handle
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
            undeliverable = self._undeliverable(problem)
            handle.send({"type": "reply", "id": reply.get("id"),
                         **({"results": [undeliverable] * len(replies)}
                            if isinstance(replies, list) else undeliverable)})

    def _sendable(self, one: dict[str, Any], problem: BaseException) -> dict[str, Any]:
        try:
            encode_frame(one)
        except (ValueError, RecursionError, FrameError):
            return self._undeliverable(problem)
        return one

    def _undeliverable(self, problem: BaseException) -> dict[str, Any]:
        text = clean_message(f"the tool's reply could not be sent to the sandbox: {problem}",
                             self.limits.max_output_chars)
        return {"ok": False, "error": {"type": "invalid_result", "message": text}}

    # --- direct calls of an inprocess sandbox (CallServer) -------------------------
    def call(self, tool: Any, args: Any,
             labels: dict[str, list[str]] | None = None) -> dict[str, Any] | None:
        """One call made directly by the script (inprocess), on the serving thread:
        a ``blocking`` tool's on a worker thread (a timeout is answered and the
        script goes on), any other inline, where its timeout ends the run (the
        script shares the tool's thread and cannot go on without it).

        The script's wall-limit abort is held off until the call returns: raised
        into the host's part of it (approval hook, validation, the tool, its
        record, audit line and hooks) it would land in host code instead of the
        script. The call itself is bounded by the run's deadline (an inline
        call's deadline is the nearer of its timeout and the run's), past which
        the run ends without waiting for it."""
        dispatcher = self.dispatcher
        target = dispatcher.lookup(tool) if type(tool) is str else None
        watch = self._watch
        if watch is None:
            watch = self._watch = watchdog.current()
        if watch is not None:
            watchdog.enter(watch)
        try:
            if target is not None and target.blocking:
                return dispatcher.call(self.ctx, tool, args, labels=labels)
            return dispatcher.call_inline(self.ctx, tool, args, takeover=self._end_run,
                                          labels=labels)
        except SandboxAbort:  # the sandbox's own limit landed here: the script's to handle
            raise
        except BaseException as exc:
            self._host_failed(exc)
            return None
        finally:
            if watch is not None:
                watchdog.release(watch)

    def call_many(self, calls: list[tuple[Any, ...]]) -> list[dict[str, Any]] | None:
        """A ``parallel()`` batch made directly by the script (inprocess). The
        host's work on it is bounded by the run's deadline (the batch stops
        starting calls and waiting at it), so the script's wall-limit abort is
        held off until it returns: raised into a batch's bookkeeping - or into a
        weakref callback the collector runs meanwhile - it would land in host
        code instead of the script."""
        try:
            with watchdog.deferred():
                return self.dispatcher.call_many(self.ctx, calls)
        except SandboxAbort:  # the sandbox's own limit landed here: the script's to handle
            raise
        except BaseException as exc:
            self._host_failed(exc)
            return None

    def _host_failed(self, exc: BaseException) -> None:
        """The host itself failed serving a direct call (an audit hook raised, Ctrl-C
        in a tool): the caller gets the exception, as from a process backend's
        serving thread, and the script stops instead of handling it."""
        self.kill = True
        self._settle(exc)

    def _end_run(self, reply: dict[str, Any]) -> None:
        """End a run whose direct call passed its timeout: the script cannot go on
        while the call has not returned, so the caller gets the timeout now and
        the sandbox is replaced."""
        error = reply.get("error") or {}
        self.kill = True
        self._settle((failure(
            "timeout",
            f"{error.get('message', 'a tool call timed out')}; the script shares the tool's "
            "thread in this backend and cannot go on past a call that has not returned, so "
            "the run was stopped" + _LOST), True))
