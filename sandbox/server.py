"""The sandbox server loop: one protocol, every backend.

:class:`SandboxServer` handles the host's messages (``configure``, ``run``,
``reset``, ``shutdown``) against one :class:`Interpreter`. The inprocess
backend calls :meth:`SandboxServer.handle` directly with a link that calls
the host's dispatcher; process backends run :func:`serve` over a pair of
byte streams, where tool calls become ``call`` frames and wait for ``reply``
(:mod:`.launcher` starts such a process).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, BinaryIO

from . import audithook
from .interpreter import Interpreter, RunLimits
from .protocol import PROTOCOL_VERSION, FrameError, StreamClosed, read_frame, write_frame
from .toolcalls import HostLink, not_json_reply


class ServerProtocolError(Exception):
    """The host sent something the server cannot handle."""


class SandboxServer:
    """Handles protocol messages for one interpreter."""

    def __init__(self, link: HostLink) -> None:
        self.link = link
        self.interpreter = Interpreter(link)
        self.process_limits: dict[str, Any] = {}

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Handle one host message; return the reply (``None`` for ``shutdown``)."""
        kind = message.get("type")
        if kind == "run":
            before_run(self.process_limits)
            result = self.interpreter.run(
                str(message.get("code", "")), RunLimits.from_message(message.get("limits"))
            )
            return {"type": "result", "id": message.get("id"), **result}
        if kind == "configure":
            self.interpreter = Interpreter(
                self.link, tools=message.get("tools") or [], modules=message.get("modules")
            )
            self.process_limits = dict(message.get("process_limits") or {})
            apply_process_limits(self.process_limits)
            return {"type": "configured"}
        if kind == "reset":
            self.interpreter.reset()
            return {"type": "reset_done"}
        if kind == "ping":
            return {"type": "pong"}
        if kind == "shutdown":
            return None
        raise ServerProtocolError(f"unknown message type {kind!r}")


class StreamHostLink:
    """A :class:`HostLink` over frames: send ``call``, block for its ``reply``."""

    runs_host_code = False
    """Only frames cross here (see :class:`~.toolcalls.ToolCaller`)."""

    def __init__(self, reader: BinaryIO, writer: BinaryIO) -> None:
        self.reader = reader
        self.writer = writer
        self._next_id = 0
        self._lock = threading.Lock()

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            message["id"] = self._next_id
            write_frame(self.writer, message)
            reply = read_frame(self.reader)
        if reply.get("type") != "reply" or reply.get("id") != message["id"]:
            raise ServerProtocolError(f"expected reply {message['id']}, got {reply!r:.200}")
        return reply

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Send one tool call; return its reply."""
        try:
            return self._exchange({"type": "call", "tool": tool, "args": args})
        except (TypeError, ValueError) as exc:  # the encoder: TypeError for a set, an object
            return not_json_reply(exc)

    def call_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send several tool calls at once; return their replies in order."""
        try:
            reply = self._exchange({"type": "call_many", "calls": calls})
        except (TypeError, ValueError) as exc:
            return [not_json_reply(exc) for _ in calls]
        results: list[dict[str, Any]] = reply.get("results") or []
        if len(results) != len(calls):
            raise ServerProtocolError("call_many reply has the wrong number of results")
        return results


def apply_process_limits(limits: dict[str, Any]) -> None:
    """Apply rlimits to this process (process backends only)."""
    if not limits.get("apply"):
        return
    import resource

    def lower(kind: int, value: int) -> None:
        _soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        # The hard limit too: unprivileged (the walls dropped root), nothing can raise it again.
        resource.setrlimit(kind, (value, value))

    if limits.get("memory_bytes"):
        lower(resource.RLIMIT_AS, int(limits["memory_bytes"]))
    lower(resource.RLIMIT_CORE, 0)
    lower(resource.RLIMIT_NOFILE, int(limits.get("open_files", 32)))
    lower(resource.RLIMIT_FSIZE, int(limits.get("file_bytes", 1 << 20)))


def before_run(limits: dict[str, Any]) -> None:
    """Re-arm the per-run CPU rlimit: the kernel's backstop behind the watchdog."""
    cpu_s = limits.get("cpu_s_per_run")
    if not limits.get("apply") or not cpu_s:
        return
    import math
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    soft = math.ceil(used + float(cpu_s) + 1.0)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def serve(
    reader: BinaryIO,
    writer: BinaryIO,
    *,
    walls: dict[str, Any] | None = None,
    server_class: type[SandboxServer] = SandboxServer,
) -> int:
    """Serve the protocol on two streams until ``shutdown`` or end of input.

    ``walls`` (the report of :func:`toolscript.sandbox.walls.apply` and the
    audit hook's entry, see :mod:`.launcher`) goes to the host in the
    ``ready`` message.
    """
    link = StreamHostLink(reader, writer)
    server = server_class(link)
    ready: dict[str, Any] = {
        "type": "ready", "protocol": PROTOCOL_VERSION, "pid": os.getpid(),
        "python": ".".join(map(str, sys.version_info[:3])),
        "audit_hook": audithook.installed(),
    }
    if walls is not None:
        ready["walls"] = walls
    write_frame(writer, ready)
    while True:
        try:
            message = read_frame(reader)
        except StreamClosed:
            return 0
        except FrameError as exc:
            print(f"toolscript sandbox: bad frame from host: {exc}", file=sys.stderr)
            return 2
        try:
            reply = server.handle(message)
        except (ServerProtocolError, FrameError) as exc:
            print(f"toolscript sandbox: protocol error: {exc}", file=sys.stderr)
            return 2
        if reply is None:
            return 0
        write_frame(writer, reply)
