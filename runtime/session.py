"""A session: one sandbox, a persistent namespace, and the host-side policy.

:meth:`Session.run` sends a script to the sandbox and serves the tool calls
it makes through the runtime's :class:`~toolscript.runtime.calls.dispatch.Dispatcher`
until the result arrives. If the sandbox dies or overruns its wall clock it
is killed and replaced on the next run (the result says so: its variables are
gone). Sessions are not shared between threads: one run at a time.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolscript.sandbox.protocol import FrameError
from toolscript.sandbox.wirecheck import ack_message
from toolscript.tools.asynctools import waiting_sync
from toolscript.tools.validation import swap_bounds

from toolscript.errors import ProtocolError

from .backends.base import SandboxDied, SandboxHandle, SandboxSpec
from .calls import stopping
from .calls.messages import cap_text
from .calls.runcontext import RunContext
from .calls.runserver import HARD_KILL_GRACE_S as HARD_KILL_GRACE_S  # tests read it here
from .calls.runserver import RunServer, death_failure
from .durable.durability import ends_run
from .events import RunEndEvent, RunStartEvent, emit
from .provenance.render import render_result
from .results import RunError, RunResult, ToolCallRecord

if TYPE_CHECKING:
    from .runtime import Runtime


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
        self.hash_seed: int | None = None
        """The string hash seed this session's sandbox must start with (None: the
        backend's); set by ``Runtime.session(resuming=...)`` to the paused run's."""

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

    def _ensure_sandbox(self, hash_seed: int | None = None) -> bool:
        """Start the sandbox if needed; True if it replaced one that had died
        since the last run, or (``hash_seed``: what a resumed run needs) one whose
        string hash seed differs (its variables are lost)."""
        if self._closed:
            raise RuntimeError("this session is closed")
        if hash_seed is None:
            hash_seed = self.hash_seed
        handle = self._handle
        if handle is not None and handle.is_alive() and (
                hash_seed is None or handle.hash_seed == hash_seed
                or self.runtime.backend.in_host_process):  # the host's seed, fixed
            return False
        replaced = handle is not None
        if handle is not None:
            handle.kill()
            self._handle = None
        handle = self.runtime.acquire_sandbox(
            SandboxSpec(limits=self.runtime.limits, hash_seed=hash_seed),
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
            replaced = self._ensure_sandbox(self.runtime.durability.resuming_hash_seed())
            ctx = RunContext(run_id, self.id, limits.max_tool_calls, self.context,
                             script=code, agent_run_id=self.agent_run_id, limits=limits,
                             deadline=time.monotonic() + limits.wall_time_s)
            assert self._handle is not None
            ctx.hash_seed = self._handle.hash_seed
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
            if ctx.journal is not None:
                ctx.journal.sources = message.get("sources")
            if self.runtime.provenance is not None:  # issue 27: untrusted text as references
                message = render_result(message, self.runtime.provenance.show_untrusted)
            error = message["error"]
            result = RunResult(
                ok=message["ok"] and error is None,
                value=message["value"],
                stdout=cap_text(message["stdout"], limits.max_output_chars),
                stdout_truncated=message["stdout_truncated"],
                error=self._run_error(error) if error else None,
                tool_calls=ctx.take_records(),
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

    def _run_in_sandbox(self, code: str, ctx: RunContext,
                        stopper: stopping.Stopper | None = None) -> tuple[dict[str, Any], bool]:
        """Send the script; a :class:`~toolscript.runtime.calls.runserver.RunServer`
        serves its calls and says whether the sandbox must be replaced."""
        handle = self._handle
        assert handle is not None
        limits = self.runtime.limits
        # A fresh id the sandbox cannot guess before the run: a frame it sent for
        # another run (a late result, a call queued between runs) cannot pass as this one's.
        wire_id = secrets.token_hex(8)
        run_message: dict[str, Any] = {"type": "run", "id": wire_id, "code": code,
                                       "limits": limits.run_message()}
        journal = ctx.journal
        if journal is not None and journal.replay_sources:  # a resume: the same clocks, seed
            run_message["sources"] = journal.replay_sources
        fresh = False
        try:
            try:
                handle.send(run_message)
            except SandboxDied:
                # It died before it could read the script (between runs, after
                # the liveness check): nothing ran, so a fresh sandbox runs it.
                self.restart()
                self._ensure_sandbox(ctx.hash_seed)
                replacement = self._handle
                assert replacement is not None
                handle = replacement
                handle.send(run_message)
                fresh = True
        except SandboxDied as exc:
            self.restart()
            return death_failure(exc, handle, ctx, limits), True
        except BaseException:  # Ctrl-C, an unencodable script: never reuse this sandbox
            self.restart()
            raise
        server = RunServer(self.runtime.dispatcher, handle, ctx, wire_id, fresh)
        if stopper is not None:
            stopper.arm(server.give_up)
        try:
            return server.wait()
        finally:
            if server.abandoned:  # being killed by the thread that holds its I/O
                if self._handle is handle:
                    self._handle = None
            elif server.kill:
                self.restart()

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
        return ctx.take_records()[0]

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
        return ctx.take_records()
