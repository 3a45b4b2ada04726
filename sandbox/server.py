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
from .protocol import (
    MAX_FRAME_BYTES,
    MAX_FRAME_DEPTH,
    PROTOCOL_VERSION,
    FrameError,
    StreamClosed,
    WireBounds,
    check_size,
    encode_frame,
    read_frame,
)
from .spinwait import DEFAULT_SPIN_S, SpinWait
from .toolcalls import HostLink, not_json_reply
from .wirecheck import batch_reply, call_reply, host_message

FROM_HOST = WireBounds(MAX_FRAME_BYTES, MAX_FRAME_BYTES, MAX_FRAME_DEPTH)
"""What the sandbox decodes from the host: bytes and depth bounded (the host is
trusted; a tool's result may hold more values than a sandbox may send)."""


class ServerProtocolError(Exception):
    """Internal: the host sent something the server cannot handle."""


class CallTooLarge(ValueError):
    """Internal: a call's frame would break the host's bounds: refused here, never sent."""


def too_large_reply(exc: Exception) -> dict[str, Any]:
    """The reply to a call too large for the wire (made in the sandbox, like
    :func:`~.toolcalls.not_json_reply`)."""
    return {"ok": False, "error": {"type": "invalid_arguments",
                                   "message": f"the call is too large to send: {exc}; "
                                   "pass less data per call"}}


class SandboxServer:
    """Handles protocol messages for one interpreter."""

    def __init__(self, link: HostLink) -> None:
        self.link = link
        self._interpreter: Interpreter | None = None
        self.process_limits: dict[str, Any] = {}

    @property
    def interpreter(self) -> Interpreter:
        """The interpreter of the configured tools; one with none until a
        ``configure`` (made when first needed: a configure replaces it)."""
        if self._interpreter is None:
            self._interpreter = Interpreter(self.link)
        return self._interpreter

    @property
    def built(self) -> Interpreter | None:
        """The interpreter if one was made yet (None: nothing ran, nothing to stop)."""
        return self._interpreter

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Handle one host message; return the reply (``None`` for ``shutdown``).

        Raises:
            ProtocolViolation: the message is not one the host may send.
        """
        checked: dict[str, Any] = dict(host_message(message))
        kind = checked["type"]
        if kind == "run":
            before_run(self.process_limits)
            if isinstance(self.link, StreamHostLink):
                self.link.run = checked["id"]
            result = self.interpreter.run(checked["code"],
                                          RunLimits.from_message(checked.get("limits")),
                                          sources=checked.get("sources"))
            return {"type": "result", "id": checked["id"], **result}
        if kind == "configure":
            self._interpreter = Interpreter(
                self.link, tools=checked["tools"], modules=checked.get("modules"),
                labels=bool(checked.get("provenance", False)),
            )
            self.process_limits = dict(checked.get("process_limits") or {})
            wire = checked.get("wire")
            if wire is not None and isinstance(self.link, StreamHostLink):
                self.link.bounds = WireBounds(**wire)
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

    def __init__(self, reader: BinaryIO, writer: BinaryIO,
                 spin_s: float = DEFAULT_SPIN_S) -> None:
        """``spin_s``: how long a wait for a reply polls before it blocks (0: never)."""
        self.reader = reader
        self.writer = writer
        self.run: str | int = 0
        """The id of the run in progress (its ``run`` message's): every call carries it."""
        self.bounds = WireBounds()
        """What the host accepts (``configure`` says): larger calls are refused here."""
        self._next_id = 0
        self._lock = threading.Lock()
        try:
            self._spin: SpinWait | None = SpinWait(reader.fileno(), spin_s) if spin_s > 0 else None
        except (AttributeError, OSError, ValueError):  # not a descriptor (a test's stream)
            self._spin = None

    def _exchange(self, message: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Send ``message`` as the next call; return its id and the reply frame.

        Raises:
            ValueError: the arguments are not JSON data or too large for the host
                (a ``TypeError`` from the encoder for a set, an object).
        """
        with self._lock:
            self._next_id += 1
            call_id = message["id"] = self._next_id
            message["run"] = self.run
            try:
                frame = encode_frame(message)
                if len(frame) - 4 > self.bounds.small:
                    check_size(frame, self.bounds, 4)
            except FrameError as exc:
                raise CallTooLarge(str(exc)) from None
            self.writer.write(frame)
            self.writer.flush()
            if self._spin is not None:
                self._spin.wait()  # the host answers a cheap call before a wake-up would land
            return call_id, read_frame(self.reader, bounds=FROM_HOST)

    def call(self, tool: str, args: dict[str, Any],
             labels: dict[str, list[str]] | None = None) -> dict[str, Any]:
        """Send one tool call (with its arguments' ``labels`` when provenance is on);
        return its reply."""
        message: dict[str, Any] = {"type": "call", "tool": tool, "args": args}
        if labels is not None:
            message["labels"] = labels
        try:
            call_id, reply = self._exchange(message)
        except CallTooLarge as exc:
            return too_large_reply(exc)
        except (TypeError, ValueError) as exc:
            return not_json_reply(exc)
        return call_reply(reply, call_id)

    def call_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send several tool calls at once; return their replies in order."""
        try:
            call_id, reply = self._exchange({"type": "call_many", "calls": calls})
        except CallTooLarge as exc:
            return [too_large_reply(exc) for _ in calls]
        except (TypeError, ValueError) as exc:
            return [not_json_reply(exc) for _ in calls]
        return batch_reply(reply, call_id, len(calls))


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
    spin_s: float = DEFAULT_SPIN_S,
) -> int:
    """Serve the protocol on two streams until ``shutdown`` or end of input.

    ``walls`` (the report of :func:`toolscript.sandbox.walls.apply` and the
    audit hook's entry, see :mod:`.launcher`) goes to the host in the
    ``ready`` message; ``spin_s`` is the spin of each wait for a reply.
    """
    link = StreamHostLink(reader, writer, spin_s)
    server = server_class(link)
    ready: dict[str, Any] = {
        "type": "ready", "protocol": PROTOCOL_VERSION, "pid": os.getpid(),
        "python": ".".join(map(str, sys.version_info[:3])),
        "audit_hook": audithook.installed(),
    }
    if walls is not None:
        ready["walls"] = walls
    writer.write(encode_frame(ready))
    writer.flush()
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
        send_reply(writer, reply, link.bounds)


def send_reply(writer: BinaryIO, reply: dict[str, Any], bounds: WireBounds) -> None:
    """Write a reply; a ``result`` the host would refuse (``bounds``) becomes a
    ``result_limit`` error instead of a protocol error."""
    try:
        frame = encode_frame(reply)
        check_size(frame, bounds, 4)
    except FrameError as exc:
        if reply.get("type") != "result":
            raise
        frame = encode_frame({**reply, "ok": False, "value": None, "stdout": "",
                              "stdout_truncated": True, "error": {
                                  "type": "result_limit",
                                  "message": f"the result and printed output are too large "
                                  f"for the host to accept ({exc}); return a summary instead"}})
    writer.write(frame)
    writer.flush()
