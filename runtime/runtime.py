"""The Runtime: tools, policy and a sandbox backend, configured once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolscript.sandbox.modules import DEFAULT_MODULES, OPTIONAL_MODULES
from toolscript.tools import Tool, ToolRegistry

from toolscript.errors import ConfigurationError, ProtocolError

from .approval import ApprovalHook
from .backends.base import Backend, SandboxHandle, SandboxSpec
from .dispatch import Dispatcher, RunContext, ToolExecutor
from .hostcalls import HostCalls
from .idempotency import IdempotencyStore
from .limits import Limits
from .results import RunResult, ToolCallRecord
from .session import Session

BACKENDS = ("inprocess", "subprocess", "docker")
SANDBOX_BUILTIN_NAMES = ("parallel", "ToolError", "ToolArgumentError", "ToolDenied",
                         "ToolNotFound", "ToolTimeout")
"""Names a tool may not take: scripts already see them as builtins."""


def _make_backend(backend: str | Backend, options: dict[str, Any]) -> tuple[str, Backend | None]:
    if isinstance(backend, Backend):
        return backend.name, backend
    if backend == "inprocess":
        return "inprocess", None
    if backend == "subprocess":
        from .backends.subprocess import SubprocessBackend

        return "subprocess", SubprocessBackend(**options)
    if backend == "docker":
        from .backends.docker import DockerBackend

        return "docker", DockerBackend(**options)
    raise ConfigurationError(
        f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)} or a Backend instance"
    )


class Runtime:
    """Runs model-written scripts against whitelisted tools.

    Args:
        tools: ``@tool`` functions, plain functions or :class:`Tool` objects.
        backend: ``"subprocess"`` (default), ``"inprocess"``, ``"docker"`` or a
            :class:`Backend` instance.
        approve: called before every tool call with a ``ToolCallRequest``;
            returns ``bool`` or a :class:`Decision`. Without it, tools marked
            ``requires_approval`` are denied and the rest are allowed.
        limits: resource limits (:class:`Limits`; defaults fit batch jobs).
        modules: modules scripts may import (default: ``DEFAULT_MODULES``).
        backend_options: keyword arguments for the backend's constructor
            (e.g. ``{"image": ..., "pool_size": 2}`` for docker).
        audit: called with every :class:`ToolCallRecord` as it completes.
        context: values for tools' injected parameters (``Injected[T]`` or
            ``inject=``), e.g. ``{"user_id": ...}``; a session's own context
            is merged over it. Never visible to scripts or the model.
        idempotency_store: where idempotent tools record their results
            (default: in memory, per runtime); see
            :mod:`toolscript.runtime.idempotency`.
    """

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        *,
        backend: str | Backend = "subprocess",
        approve: ApprovalHook | None = None,
        limits: Limits | None = None,
        modules: Iterable[str] | None = None,
        backend_options: dict[str, Any] | None = None,
        audit: Callable[[ToolCallRecord, RunContext], None] | None = None,
        context: Mapping[str, Any] | None = None,
        idempotency_store: IdempotencyStore | None = None,
    ) -> None:
        self.context: Mapping[str, Any] = MappingProxyType(dict(context or {}))
        self.registry = (
            tools if isinstance(tools, ToolRegistry)
            else ToolRegistry(tools, reserved=SANDBOX_BUILTIN_NAMES)
        )
        if limits is not None and not isinstance(limits, Limits):
            raise ConfigurationError("limits must be a toolscript.Limits instance")
        self.limits = limits or Limits()
        if approve is not None and not callable(approve):
            raise ConfigurationError("approve must be a callable taking a ToolCallRequest")
        self.approve = approve
        self.modules = tuple(DEFAULT_MODULES if modules is None else modules)
        unknown = set(self.modules) - set(DEFAULT_MODULES) - set(OPTIONAL_MODULES)
        if unknown:
            raise ConfigurationError(
                f"no sandbox facade for module(s) {sorted(unknown)}; available: "
                f"{', '.join(DEFAULT_MODULES + OPTIONAL_MODULES)}"
            )
        self.backend_name, self.backend = _make_backend(backend, dict(backend_options or {}))
        if self.backend is not None:
            self.backend.warm(SandboxSpec(limits=self.limits))
        self.executor = ToolExecutor()
        self.dispatcher = Dispatcher(self.registry, approve, self.limits, self.executor, audit,
                                     host_calls=HostCalls(idempotency_store))
        self._closed = False
        self._sessions_lock = threading.Lock()

    @property
    def tools(self) -> ToolRegistry:
        """The registered tools."""
        return self.registry

    def render_stubs(self) -> str:
        """The tools as Python stubs, as a model sees them."""
        return self.registry.render_stubs()

    def session(self, context: Mapping[str, Any] | None = None) -> Session:
        """A new session: a fresh sandbox whose variables persist between runs.

        ``context`` (merged over the runtime's) fills injected tool parameters
        for every call of this session.
        """
        if self._closed:
            raise RuntimeError("this runtime is closed")
        return Session(self, context=context)

    def run(self, code: str, context: Mapping[str, Any] | None = None) -> RunResult:
        """Run one script in a fresh namespace (a new session, closed afterwards);
        ``context`` is merged over the runtime's for injected parameters."""
        with self.session(context=context) as session:
            return session.run(code)

    @classmethod
    def from_config(
        cls,
        path: str | Path | None = None,
        *,
        profile: str | None = None,
        **overrides: Any,
    ) -> Runtime:
        """A Runtime from ``toolscript.toml`` (or ``[tool.toolscript]`` in pyproject).

        See :func:`toolscript.runtime.config.runtime_from_config`.
        """
        from .config import runtime_from_config

        return runtime_from_config(path, profile=profile, runtime_class=cls, **overrides)

    def acquire_sandbox(self, spec: SandboxSpec, configure: dict[str, Any]) -> SandboxHandle:
        """Start (or take from a pool) a sandbox and configure it for this runtime."""
        assert self.backend is not None
        handle = self.backend.start(spec)
        try:
            handle.send(configure)
            reply = handle.recv(spec.startup_timeout_s)
        except BaseException:
            handle.kill()
            raise
        if reply.get("type") != "configured":
            handle.kill()
            raise ProtocolError(f"the sandbox answered configure with {reply.get('type')!r}")
        return handle

    def close(self) -> None:
        """Release the backend (warm pools) and the tool threads, and close an
        audit hook that can be closed (an ``AuditLog`` flushes its writer).
        Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.backend is not None:
            self.backend.shutdown()
        self.executor.shutdown()
        closer = getattr(self.dispatcher.audit, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
