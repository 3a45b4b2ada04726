"""The inprocess backend: the sandbox server in the host process, behind a handle.

Fastest (a tool call is a function call), and it runs the same server and
interpreter as the process backends, behind the same :class:`SandboxHandle`
the session drives for every backend: the session sends ``configure``,
``run``, ``reset`` and ``shutdown`` messages and receives the replies. The
one difference is where tool calls go. A process sandbox sends them as
messages; here the script's calls reach the session's
:class:`~toolscript.runtime.backends.base.CallServer` as direct function
calls, the same object that answers the process backends' call messages, so
budget, validation, approval, timeouts, records and error mapping are one
code path.

A ``run`` executes inside the :meth:`InprocessHandle.recv` that waits for its
result, on the session's serving thread, never on the caller's: the caller
can give up at the wall-clock limit (or on Ctrl-C) even while the script sits
in a long C call.

It isolates nothing but what the restricted interpreter enforces: no memory
limit and no protection against a crash of the interpreter. Use it for
trusted scripts, tests and benchmarks; use ``subprocess`` or ``docker`` for
model-written code.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from toolscript.sandbox.codec import to_json_data
from toolscript.sandbox.server import SandboxServer

from .base import Backend, CallServer, SandboxDied, SandboxHandle, SandboxSpec
from .hashseed import host_hash_seed

if TYPE_CHECKING:
    from ..isolation import IsolationReport

_STOPPED: dict[str, Any] = {
    "ok": False, "error": {"type": "host_abort", "message": "the run was stopped by the host"}}


class DirectLink:
    """The sandbox's :class:`~toolscript.sandbox.toolcalls.HostLink` for inprocess runs.

    Arguments arrive as fresh plain JSON data: the sandbox's ``ToolCaller``
    checks and copies them once for every link, and answers a call whose
    arguments are not JSON itself. Results are copied before the sandbox sees
    them: no object crosses by reference.
    """

    def __init__(self) -> None:
        self.server: CallServer | None = None

    def call(self, tool: str, args: dict[str, Any],
             labels: dict[str, list[str]] | None = None) -> dict[str, Any]:
        """Hand one call (and its arguments' provenance ``labels``) to the session's
        call server."""
        server = self.server
        reply = (None if server is None else server.call(tool, args) if labels is None
                 else server.call(tool, args, labels))
        # None: the call passed its timeout and the run was ended meanwhile; the
        # script must not go on (host_abort stops it at once).
        if reply is None:
            return _STOPPED
        kind = type(reply.get("value"))
        return _copy_reply(reply) if kind is dict or kind is list else reply

    def call_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Hand several calls to the session's call server."""
        server = self.server
        replies = (server.call_many([(call["tool"], call["args"], call["labels"])
                                     if "labels" in call else (call["tool"], call["args"])
                                     for call in calls])
                   if server is not None else None)
        if replies is None:
            return [_STOPPED for _ in calls]
        return [_copy_reply(reply) for reply in replies]


def _copy_reply(reply: dict[str, Any]) -> dict[str, Any]:
    # The dispatcher already made the value fresh JSON data (never the tool's
    # own object), and the call's record keeps it: the script gets its own
    # copy, so mutating a result cannot rewrite ``RunResult.tool_calls``.
    if reply.get("ok"):
        value = reply.get("value")
        if isinstance(value, (dict, list)):
            copied = {"ok": True, "value": to_json_data(value)}
            if "label" in reply:  # provenance on: the sources of the result
                copied["label"] = list(reply["label"])
            return copied
    return reply


class InprocessHandle(SandboxHandle):
    """A sandbox server living in the host process.

    :meth:`send` answers every message but ``run`` at once and queues the
    reply; a ``run`` waits for the :meth:`recv` that collects its result and
    executes there. The interpreter turns everything a script raises into an
    error result; should anything still escape a run, the sandbox is dead
    (:class:`SandboxDied`, ``sandbox_crashed``, naming only the exception's
    type: the object, perhaps a script's own with a ``__str__`` that never
    returns, is dropped unformatted) and the session starts a fresh one.
    """

    calls_inline = True

    def __init__(self) -> None:
        self.link = DirectLink()
        self.server = SandboxServer(self.link)
        self.ready_info: dict[str, Any] = {"type": "ready", "backend": "inprocess"}
        self._replies: deque[dict[str, Any]] = deque()
        self._run: dict[str, Any] | None = None
        self._dead = False
        self._running = False  # a run is inside server.handle (see kill)

    def attach_calls(self, server: CallServer | None) -> None:
        """Send the script's calls of the coming run to ``server`` (None: refuse them)."""
        self.link.server = server

    def send(self, message: dict[str, Any]) -> None:
        """Answer a message (a ``run`` is executed by the :meth:`recv` after it)."""
        if self._dead:
            raise SandboxDied("killed", "the sandbox was stopped")
        kind = message.get("type")
        if kind == "run":
            self._run = message
            return
        if kind == "reply":  # calls never wait for a message here
            return
        reply = self.server.handle(message)
        if reply is None:  # shutdown
            self._dead = True
        else:
            self._replies.append(reply)

    def recv(self, timeout: float | None) -> dict[str, Any]:
        """The next reply; for a pending ``run``, run it here and return its result."""
        if self._replies:
            return self._replies.popleft()
        message, self._run = self._run, None
        if self._dead or message is None:
            raise SandboxDied("killed", "the sandbox was stopped")
        self._running = True
        try:
            reply = self.server.handle(message)
        except (KeyboardInterrupt, SystemExit):
            raise  # the host's own signals (scripts cannot name these classes)
        except BaseException as exc:
            self._dead = True
            kind = _type_name(type(exc))
            raise SandboxDied("sandbox_crashed", f"the interpreter failed with {kind}") from None
        finally:
            self._running = False
            self.link.server = None
        assert reply is not None
        return reply

    def kill(self) -> None:
        """Stop the sandbox: a script still running (on a thread the session gave up
        on) stops at its next check, a call in flight is answered ``host_abort``.
        Safe from any thread. Idempotent. Killed mid-run (the host gave up on it), the
        script's objects are dropped at once, as a killed process drops them: none stays
        reachable through the thread still in a tool or C call. (An idle sandbox's go
        with the handle.)"""
        self._dead = True
        self.link.server = None
        interpreter = self.server.built
        if interpreter is None:
            return
        interpreter.abort.set("killed", "the sandbox was stopped")
        if self._running:
            interpreter.forget()

    def interrupt(self) -> None:
        """:meth:`kill` (safe from any thread)."""
        self.kill()

    def close(self) -> None:
        """Stop the sandbox (nothing to ask: it lives in this process)."""
        self.kill()

    def is_alive(self) -> bool:
        """True until killed, shut down or crashed."""
        return not self._dead


class InprocessBackend(Backend):
    """Starts sandbox servers in the host process (see the module docstring)."""

    name = "inprocess"
    in_host_process = True

    def __init__(self) -> None:
        self.hash_seed = host_hash_seed()
        """The host's own string hash seed when its environment pinned it, else None:
        sandboxes in this process cannot have another (a spec's ``hash_seed`` is not
        honoured; set ``PYTHONHASHSEED`` for the host to pin it)."""

    def start(self, spec: SandboxSpec) -> SandboxHandle:
        """A fresh interpreter (nothing to wait for), with the host's hash seed."""
        handle = InprocessHandle()
        handle.hash_seed = self.hash_seed
        return handle

    def handle_isolation(self, handle: SandboxHandle) -> IsolationReport:
        """No OS wall: every wall is reported missing, with the reason."""
        from ..isolation import inprocess_report

        return inprocess_report()

    def isolation(self, spec: SandboxSpec | None = None) -> IsolationReport:
        """No OS wall: every wall is reported missing, with the reason."""
        from ..isolation import inprocess_report

        return inprocess_report()


def _type_name(cls: type) -> str:
    """A class's ``__name__`` read from ``type`` itself (no metaclass code runs)."""
    name = type.__dict__["__name__"].__get__(cls)
    return name if type(name) is str else "an exception"
