"""The Runtime: tools, policy and a sandbox backend, configured once."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolscript.runtime.approval.hooks import ApprovalHook, Decision, check_hook
from toolscript.runtime.approval.policies import check_policy_tools
from toolscript.sandbox.modules import DEFAULT_MODULES, OPTIONAL_MODULES
from toolscript.tools import Tool, ToolRegistry

from toolscript.errors import ConfigurationError, ProtocolError

from .backends.base import Backend, SandboxHandle, SandboxSpec
from .calls.dispatch import Dispatcher
from .calls.executor import ToolExecutor
from .calls.hostsupply import HostSupply
from .calls.idempotency import IdempotencyStore
from .durable.continuation import DEFAULT_TTL_S, verify
from .durable.durability import Durability
from .durable.store import JournalStore
from .events import AuditCallback, EventHook, EventHooks
from .isolation import IsolationReport, check_required, required_walls
from .limits import Limits
from .names import BACKEND_NAMES, SANDBOX_BUILTIN_NAMES
from .provenance import Provenance, ProvenanceGate
from .results import RunResult
from .session import Session

BACKENDS = BACKEND_NAMES


def _make_backend(backend: str | Backend, options: dict[str, Any]) -> tuple[str, Backend]:
    if isinstance(backend, Backend):
        return backend.name, backend
    if backend == "inprocess":
        from .backends.inprocess import InprocessBackend

        if options:
            raise ConfigurationError(
                "the inprocess backend takes no backend options "
                f"(got {', '.join(sorted(options))})")
        return "inprocess", InprocessBackend()
    if backend == "subprocess":
        from .backends.subprocess import SubprocessBackend

        return "subprocess", SubprocessBackend(**options)
    if backend == "docker":
        from .backends.docker.backend import DockerBackend

        return "docker", DockerBackend(**options)
    raise ConfigurationError(
        f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)} or a Backend instance"
    )


class Runtime:
    """Runs model-written scripts against whitelisted tools.

    Args:
        tools: ``@tool`` functions, plain functions, :class:`Tool` objects,
            ``Namespace(...)`` and ``Deferred(...)`` groups of them (large tool
            sets), at most one ``ToolSearch`` (its ranker), other frameworks'
            tool objects (pydantic-ai, Agents SDK, LangChain, smolagents), and
            tool sources (``MCPToolSource``, ``OpenAPISource``, anything with a
            ``tools()`` method), which register their tools; the runtime does not
            close a source (``with source:`` does). Any other object is a
            ``ToolDefinitionError`` naming what is accepted.
        backend: ``"subprocess"`` (default), ``"inprocess"``, ``"docker"`` or a
            :class:`Backend` instance.
        approve: called before every tool call with a ``ToolCallRequest``;
            returns ``bool`` or a :class:`Decision`. Without it, tools marked
            ``requires_approval`` are denied and the rest are allowed.
        limits: resource limits (:class:`Limits`; defaults fit batch jobs).
        modules: modules scripts may import (default: ``DEFAULT_MODULES``).
        backend_options: keyword arguments for the backend's constructor
            (e.g. ``{"image": ..., "pool_size": 2}`` for docker).
        audit: called as ``audit(record, event)`` with every
            :class:`ToolCallRecord` as it completes and its
            :class:`~toolscript.runtime.events.ToolCallEvent` (run and session
            ids); an ``AuditLog`` is one. What it raises fails the call's run.
        context: values for tools' injected parameters (``Injected[T]`` or
            ``inject=``), e.g. ``{"user_id": ...}``; a session's own context
            is merged over it. Never visible to scripts or the model.
        idempotency_store: where idempotent tools record their results
            (default: in memory, per runtime); see
            :mod:`toolscript.runtime.calls.idempotency`.
        require_isolation: OS walls every sandbox must have (names from
            :meth:`isolation`, or ``["all"]``); if one is missing the runtime
            fails closed with :class:`~toolscript.errors.IsolationUnavailable`,
            at construction and for every sandbox it starts.
        event_hooks: ``{event name: [hook, ...]}`` for ``run_start``, ``run_end``,
            ``tool_call`` and ``model_call``; see :mod:`toolscript.runtime.events`
            (and :attr:`events` to add or remove hooks later).
        provenance: provenance labels on every value a script holds (opt-in:
            they cost compute): untrusted tool results may not choose the
            arguments the flow policy protects, and the planner sees them as
            references. See :class:`~toolscript.runtime.provenance.Provenance`
            and ``docs/guide/provenance.md``.
        journal: where durable runs keep their journals (issue 30): a
            :class:`~toolscript.runtime.durable.store.JournalStore`,
            ``"sqlite:///path"``, ``"postgresql://..."`` or a path. Given (or
            ``$TOOLSCRIPT_JOURNAL`` set), every run journals each call durably
            before its result reaches the script; without it a run keeps its
            journal in memory and writes it to the default SQLite file
            (``~/.local/state/toolscript/journal.sqlite3``) only if it pauses.
        continuation_key: the HMAC key of continuations (default:
            ``$TOOLSCRIPT_CONTINUATION_KEY``, else a per-user key file).
        continuation_ttl_s: how long a paused run's continuation is valid
            (default seven days).
    """

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any] | Any] = (),
        *,
        backend: str | Backend = "subprocess",
        approve: ApprovalHook | None = None,
        limits: Limits | None = None,
        modules: Iterable[str] | None = None,
        backend_options: dict[str, Any] | None = None,
        audit: AuditCallback | None = None,
        context: Mapping[str, Any] | None = None,
        idempotency_store: IdempotencyStore | None = None,
        require_isolation: Iterable[str] | None = None,
        event_hooks: Mapping[str, Iterable[EventHook]] | None = None,
        provenance: Provenance | None = None,
        journal: JournalStore | str | os.PathLike[str] | None = None,
        continuation_key: str | bytes | None = None,
        continuation_ttl_s: float = DEFAULT_TTL_S,
    ) -> None:
        self.provenance = provenance
        """Provenance labels (issue 27, opt-in): see
        :class:`~toolscript.runtime.provenance.Provenance`."""
        self.events = EventHooks(event_hooks)
        """The event hooks (:mod:`toolscript.runtime.events`): ``events.add(name, hook)``."""
        self.context: Mapping[str, Any] = MappingProxyType(dict(context or {}))
        self.registry = (
            tools if isinstance(tools, ToolRegistry)
            else ToolRegistry(tools, reserved=SANDBOX_BUILTIN_NAMES)
        )
        if limits is not None and not isinstance(limits, Limits):
            raise ConfigurationError("limits must be a toolscript.Limits instance")
        self.limits = limits or Limits()
        approve = check_hook(approve)
        check_policy_tools(approve, self.registry.names())
        self.modules = tuple(DEFAULT_MODULES if modules is None else modules)
        unknown = set(self.modules) - set(DEFAULT_MODULES) - set(OPTIONAL_MODULES)
        if unknown:
            raise ConfigurationError(
                f"no sandbox facade for module(s) {sorted(unknown)}; available: "
                f"{', '.join(DEFAULT_MODULES + OPTIONAL_MODULES)}"
            )
        self.require_isolation = required_walls(require_isolation)
        self.backend_name, self.backend = _make_backend(backend, dict(backend_options or {}))
        if self.require_isolation:
            try:
                check_required(self.isolation(), self.require_isolation)
            except BaseException:
                self.backend.shutdown()
                raise
        self.backend.warm(SandboxSpec(limits=self.limits))
        self.executor = ToolExecutor()
        self.dispatcher = Dispatcher(self.registry, approve, self.limits, self.executor, audit,
                                     host_supply=HostSupply(idempotency_store), events=self.events)
        if provenance is not None:
            self.dispatcher.provenance = ProvenanceGate(provenance, self.registry)
        self.durability = Durability(journal, key=continuation_key, ttl_s=continuation_ttl_s)
        """Journal store and continuation key of durable runs (issue 30)."""
        self._closed = False
        self._sessions_lock = threading.Lock()

    @property
    def approve(self) -> ApprovalHook | None:
        """The approval hook in force (``None``: the default policy).

        Assigning it replaces the hook for every call from then on, in every
        session of this runtime (open ones included)::

            runtime.approve = PlanApproval(plan, session=session, fallback=TerminalApproval())

        Raises:
            ConfigurationError: the new value is neither callable nor None.
        """
        return self.dispatcher.approve

    @approve.setter
    def approve(self, hook: ApprovalHook | None) -> None:
        check_policy_tools(check_hook(hook), self.registry.names())
        self.dispatcher.approve = hook

    @property
    def tools(self) -> ToolRegistry:
        """The registered tools."""
        return self.registry

    def render_stubs(self) -> str:
        """The tools as Python stubs, as a model sees them."""
        return self.registry.render_stubs()

    def session(self, context: Mapping[str, Any] | None = None, *,
                resuming: str | None = None) -> Session:
        """A new session: a fresh sandbox whose variables persist between runs.

        ``context`` (merged over the runtime's) fills injected tool parameters
        for every call of this session. ``resuming`` (a paused run's
        ``RunResult.continuation``) makes it the session to resume that run in:
        it takes the run's session id, and its sandbox starts with the run's
        string hash seed, so variables bound in it before
        ``resume(continuation, decisions, session=...)`` are still there when
        the script runs again.

        Raises:
            ContinuationError: ``resuming`` is not a continuation of this
                runtime's key (tampered with, expired).
        """
        if self._closed:
            raise RuntimeError("this runtime is closed")
        session = Session(self, context=context)
        if resuming is not None:
            content = verify(resuming, self.durability.key)
            session.id = content.session_id
            session.hash_seed = content.hash_seed
        return session

    def run(self, code: str, context: Mapping[str, Any] | None = None) -> RunResult:
        """Run one script in a fresh namespace (a new session, closed afterwards);
        ``context`` is merged over the runtime's for injected parameters."""
        with self.session(context=context) as session:
            return session.run(code)

    def resume(self, continuation: str, decisions: Mapping[str, Decision], *,
               session: Session | None = None) -> RunResult:
        """Continue a paused run (``RunResult.status == "paused"``), in this process or
        any other that has the continuation key, the journal and the same tools.

        The script runs again in a fresh sandbox; every call it made before the
        pause is answered from the run's journal (the tool does not run again),
        the call that paused gets ``decisions[pending_id]`` (``Decision.allow()``
        runs it, ``Decision.deny(reason)`` refuses it), and the run goes on,
        possibly to its next pause. A call whose tool or arguments differ from
        the journal at its position ends the run as ``replay_diverged``.

        Args:
            continuation: ``RunResult.continuation`` of the paused run.
            decisions: a :class:`Decision` for every id of ``RunResult.pending``.
            session: the session to run in (it must be the run's own); default a
                new one under the run's session id, closed afterwards. Make it
                with ``session(resuming=continuation)`` to bind variables first: a
                session whose sandbox has another string hash seed than the
                paused run's is restarted for the resume (its variables lost,
                ``RunResult.session_restarted``).

        Raises:
            ContinuationError: the continuation was tampered with, expired, was
                already resumed, belongs to another session, tool catalog,
                approval configuration or injected identity, or a decision is
                missing (the message says which).
        """
        return self.durability.resume(self, continuation, decisions, session=session)

    async def run_async(self, code: str, context: Mapping[str, Any] | None = None) -> RunResult:
        """:meth:`run` for async code: the sandbox I/O runs in a worker thread while
        the event loop stays free, and ``async def`` tools run on this loop. For
        several runs sharing variables: ``async with runtime.session() as s:
        await s.run_async(code)``."""
        from toolscript.tools.asynctools import offload

        result: RunResult = await offload(self.run, code, context)
        return result

    @classmethod
    def from_config(
        cls,
        path: str | Path | None = None,
        *,
        profile: str | None = None,
        **overrides: Any,
    ) -> Runtime:
        """A Runtime from a profile of ``toolscript.toml`` (or ``[tool.toolscript]`` in
        pyproject; see :mod:`toolscript.runtime.config`); ``overrides`` replace its
        keyword arguments (e.g. ``tools=[...]`` replaces the profile's tools)."""
        from toolscript.runtime.config import load_config

        kwargs = load_config(path).profile(profile).runtime_kwargs()
        kwargs.update(overrides)
        return cls(**kwargs)

    def isolation(self) -> IsolationReport:
        """Which OS walls this runtime's sandboxes get, each active or missing with
        the reason (``toolscript doctor`` prints the same report)."""
        return self.backend.isolation(SandboxSpec(limits=self.limits))

    def acquire_sandbox(self, spec: SandboxSpec, configure: dict[str, Any]) -> SandboxHandle:
        """Start (or take from a pool) a sandbox and configure it for this runtime."""
        handle = self.backend.start(spec)
        try:
            if self.require_isolation:
                check_required(self.backend.handle_isolation(handle), self.require_isolation)
            handle.send(configure)
            reply = handle.recv(spec.startup_timeout_s)
        except BaseException:
            handle.kill()
            raise
        if reply != {"type": "configured"}:  # the one shape of the acknowledgement
            handle.kill()
            raise ProtocolError(f"the sandbox answered configure with {reply.get('type')!r:.60}")
        return handle

    def stats(self) -> dict[str, int]:
        """Host threads of tool calls: ``abandoned_threads`` (calls still running
        past their timeout, capped by ``Limits.max_abandoned_threads``),
        ``abandoned_total``, ``max_abandoned_threads`` and ``idle_threads``."""
        return self.executor.stats()

    def close(self) -> None:
        """Release the backend (warm pools) and the tool threads, and close an
        audit hook that can be closed (an ``AuditLog`` flushes its writer).
        Idempotent."""
        if self._closed:
            return
        self._closed = True
        self.backend.shutdown()
        self.executor.shutdown()
        self.durability.close()
        closer = getattr(self.dispatcher.audit, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def runtime_from_config(
    path: str | Path | None = None,
    *,
    profile: str | None = None,
    runtime_class: type[Runtime] | None = None,
    **overrides: Any,
) -> Runtime:
    """A Runtime built from a profile: :meth:`Runtime.from_config` of ``runtime_class``
    (default :class:`Runtime`)."""
    return (runtime_class or Runtime).from_config(path, profile=profile, **overrides)
