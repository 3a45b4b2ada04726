"""The transport half of the boundary: backends start sandboxes and move messages.

A backend knows nothing of tools, approval or limits beyond what it must
apply to the process or container it starts. The
:class:`~toolscript.runtime.session.Session` owns the policy and speaks the
protocol through a :class:`SandboxHandle`.
"""

from __future__ import annotations

import abc
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from toolscript.errors import SandboxDied as SandboxDied  # raised by SandboxHandle.recv

from ..limits import Limits

if TYPE_CHECKING:
    from toolscript.sandbox.protocol import WireBounds

    from ..isolation import IsolationReport


@dataclass(frozen=True)
class SandboxSpec:
    """What a backend needs to start one sandbox."""

    limits: Limits
    startup_timeout_s: float = 30.0
    hash_seed: int | None = None
    """The string hash seed the sandbox must run with (a resumed run asks for its
    original run's, :mod:`.hashseed`); None: the backend's own."""


class CallServer(Protocol):
    """The host's side of one run's tool calls (the session provides it).

    Process sandboxes send their calls as messages, which the session hands to
    this object; an inprocess sandbox calls it directly. Either way each call
    passes the same budget, validation, approval, timeout and record.
    """

    def call(self, tool: Any, args: Any,
             labels: dict[str, list[str]] | None = None) -> dict[str, Any] | None:
        """One call's reply; None when the call passed its timeout and the run
        was ended meanwhile (the caller must stop the script). ``labels``:
        provenance on, per argument the untrusted sources it depends on."""

    def call_many(self, calls: list[tuple[Any, ...]]) -> list[dict[str, Any]] | None:
        """The replies of a ``parallel()`` batch, in call order; None as for :meth:`call`."""


class SandboxHandle(abc.ABC):
    """One started sandbox that speaks the wire protocol."""

    ready_info: dict[str, Any]

    hash_seed: int | None = None
    """The string hash seed this sandbox's interpreter runs with (None: unknown)."""

    calls_inline: bool = False
    """True when the script's tool calls reach :meth:`attach_calls`' server as
    direct calls in the thread running :meth:`recv` (inprocess), rather than as
    ``call`` messages. Such a call cannot be left behind at its timeout while
    the script goes on: it shares the script's thread."""

    def attach_calls(self, server: CallServer | None) -> None:  # noqa: B027 - optional hook
        """Where the coming run's tool calls go, for handles that call directly."""

    def set_wire_bounds(self, bounds: WireBounds) -> None:  # noqa: B027 - optional hook
        """Bound every frame :meth:`recv` decodes from now on (the session's
        ``Limits``); handles that decode no frames (inprocess) ignore it. A frame
        past them is a protocol error: ``recv`` kills the sandbox and raises
        :class:`SandboxDied` (``protocol_error``) or ``ProtocolError``."""

    @abc.abstractmethod
    def send(self, message: dict[str, Any]) -> None:
        """Send one message (raises :class:`SandboxDied` if the sandbox is gone)."""

    @abc.abstractmethod
    def recv(self, timeout: float | None) -> dict[str, Any]:
        """Receive one message; ``TimeoutError`` after ``timeout`` s, :class:`SandboxDied`."""

    @abc.abstractmethod
    def kill(self) -> None:
        """Stop the sandbox now and release everything it holds. Idempotent."""

    def interrupt(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Stop the sandbox now, from any thread, without touching the channel that
        another thread may be reading: the reader then sees the sandbox die and
        cleans up (:meth:`kill`). For a run the caller gave up on (Ctrl-C), so that
        nothing keeps running until its wall-clock limit."""

    def close(self) -> None:
        """Ask the sandbox to exit, then make sure it did. Idempotent."""
        with contextlib.suppress(Exception):
            self.send({"type": "shutdown"})
        self.kill()

    @abc.abstractmethod
    def is_alive(self) -> bool:
        """True while the sandbox runs."""

    def death_reason(self) -> str | None:
        """Why the sandbox died, as an error type (``memory_limit``, ``cpu_limit``...)."""
        return None


class Backend(abc.ABC):
    """Starts sandboxes of one kind (a process, a container)."""

    name: str = "backend"
    in_host_process: bool = False
    """True when sandboxes live in the host's own process (no process limits apply)."""
    hash_seed: int | None = None
    """The string hash seed of the sandboxes this backend starts (None: unknown, not
    chosen by it). :meth:`start` honours a spec's other ``hash_seed`` where it can."""

    @abc.abstractmethod
    def start(self, spec: SandboxSpec) -> SandboxHandle:
        """Start one sandbox and wait for its ``ready`` message."""

    def warm(self, spec: SandboxSpec) -> Any:
        """Start preparing sandboxes for ``spec`` in the background (if pooled)."""
        return None

    def shutdown(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release pooled resources (warm sandboxes). Idempotent."""

    def handle_isolation(self, handle: SandboxHandle) -> IsolationReport:
        """The walls one started sandbox reported in its ``ready`` message."""
        from ..isolation import report_from_walls

        return report_from_walls(self.name, getattr(handle, "ready_info", {}).get("walls"))

    def isolation(self, spec: SandboxSpec | None = None) -> IsolationReport:
        """The walls this backend's sandboxes get: one sandbox (for ``spec``) is started
        and asked, once; the answer is kept, since every sandbox of a backend is set
        up alike."""
        report: IsolationReport | None = getattr(self, "_isolation_report", None)
        if report is None:
            handle = self.start(spec or SandboxSpec(limits=Limits()))
            try:
                report = self.handle_isolation(handle)
            finally:
                handle.kill()
            self._isolation_report = report
        return report
