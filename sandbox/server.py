"""The sandbox server loop: one protocol, every backend.

:class:`SandboxServer` handles the host's messages (``configure``, ``run``,
``reset``, ``shutdown``) against one :class:`Interpreter`. The inprocess
backend calls :meth:`SandboxServer.handle` directly with a link that calls
the host's dispatcher; process backends run :func:`serve` over a pair of
byte streams, where tool calls become ``call`` frames and wait for ``reply``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, BinaryIO

from . import audithook
from .interpreter import Interpreter, RunLimits
from .protocol import PROTOCOL_VERSION, FrameError, StreamClosed, read_frame, write_frame
from .toolcalls import HostLink


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
            return _not_json_reply(exc)

    def call_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send several tool calls at once; return their replies in order."""
        try:
            reply = self._exchange({"type": "call_many", "calls": calls})
        except (TypeError, ValueError) as exc:
            return [_not_json_reply(exc) for _ in calls]
        results: list[dict[str, Any]] = reply.get("results") or []
        if len(results) != len(calls):
            raise ServerProtocolError("call_many reply has the wrong number of results")
        return results


def _not_json_reply(exc: Exception) -> dict[str, Any]:
    return {
        "ok": False,
        "error": {
            "type": "invalid_arguments",
            "message": f"tool arguments must be JSON data (dict, list, str, int, float, bool, "
            f"None): {exc}",
        },
    }


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


def _audit_hook_wall() -> dict[str, Any]:
    """The audit hook's entry in the wall report (it is installed before ``serve``)."""
    from .walls.report import active, missing

    if audithook.installed():
        return active("installed before any script: refuses compile/exec outside the "
                      "interpreter, open, os/socket/subprocess/ctypes events and imports")
    return missing("not installed (a test-mode sandbox installs it from its test code)")


def serve(
    reader: BinaryIO,
    writer: BinaryIO,
    *,
    walls: dict[str, Any] | None = None,
    server_class: type[SandboxServer] = SandboxServer,
) -> int:
    """Serve the protocol on two streams until ``shutdown`` or end of input.

    ``walls`` (the report of :func:`toolscript.sandbox.walls.apply`) goes to
    the host in the ``ready`` message.
    """
    link = StreamHostLink(reader, writer)
    server = server_class(link)
    ready: dict[str, Any] = {
        "type": "ready", "protocol": PROTOCOL_VERSION, "pid": os.getpid(),
        "python": ".".join(map(str, sys.version_info[:3])),
        "audit_hook": audithook.installed(),
    }
    if walls is not None:
        ready["walls"] = {**walls, "audit_hook": _audit_hook_wall()}
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


def _exit_when_orphaned(poll_s: float = 0.5, lifeline: int | None = None) -> None:
    """Exit if the host process goes away, even in the middle of a run.

    ``lifeline``: the read end of a pipe whose write end only the host holds
    (a sandbox forked by the zygote, whose parent is not the host): its end
    of file is the host's death. Without it, a change of parent is.
    """
    parent = os.getppid()

    def watch() -> None:
        if lifeline is not None:
            while True:
                try:
                    if not os.read(lifeline, 1):
                        os._exit(3)
                except InterruptedError:
                    continue
                except OSError:
                    os._exit(3)
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, name="toolscript-orphan-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m toolscript.sandbox``: serve on stdin/stdout.

    Start-up order: move the protocol streams aside, import everything the
    sandbox will need, put up the OS walls (:mod:`.walls`), then start
    threads and serve. Options (from the host): ``--walls JSON`` (a
    :class:`~.walls.WallConfig`; default: every wall), ``--zygote`` (be the
    fork server of :mod:`.zygote` on the control socket at fd 0 instead; the
    walls then go up in each forked sandbox) and the tests' flag.
    """
    try:
        config, test_hooks, zygote = _parse_options(sys.argv[1:] if argv is None else argv)
    except ValueError as exc:
        print(f"toolscript sandbox: {exc}", file=sys.stderr)
        return 2
    threading.stack_size(512 * 1024)
    if zygote:
        from .zygote import serve_zygote

        return serve_zygote(config, test_hooks)
    reader = os.fdopen(os.dup(0), "rb", buffering=0)
    writer = os.fdopen(os.dup(1), "wb", buffering=0)
    # Nothing but frames may reach the protocol channel: stray writes go to stderr.
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    reader_buffered = os.fdopen(reader.fileno(), "rb", buffering=65536, closefd=False)
    return start_serving(reader_buffered, writer, config, test_hooks)


def start_serving(reader: BinaryIO, writer: BinaryIO, config: Any, test_hooks: bool,
                  lifeline: int | None = None, preloaded: bool = False) -> int:
    """Imports, OS walls, audit hook, threads, then :func:`serve` (in this order).

    Shared by a directly started sandbox and a child of the zygote (which
    passes the host's ``lifeline``, and ``preloaded``: the zygote imported
    everything); the process must still be single-threaded.
    """
    from . import walls

    server_class = SandboxServer
    if test_hooks:
        from .walls.testing import TestHookServer

        server_class = TestHookServer
    if not preloaded:
        walls.preload()
        audithook.preload()
    report = walls.apply(config)
    if not test_hooks:  # a test that wants the hook installs it from its unrestricted code
        audithook.install_audit_hook()
    # Threads start only now: the walls apply to the calling thread and its future threads.
    _exit_when_orphaned(lifeline=lifeline)
    return serve(reader, writer, walls=report, server_class=server_class)


def _parse_options(args: list[str]) -> tuple[Any, bool, bool]:
    from .walls.config import TEST_HOOKS_FLAG, WallConfig
    from .zygote import ZYGOTE_FLAG

    config = WallConfig()
    test_hooks = False
    zygote = False
    rest = list(args)
    while rest:
        option = rest.pop(0)
        if option == "--walls" and rest:
            config = WallConfig.from_json(rest.pop(0))
        elif option == TEST_HOOKS_FLAG:
            test_hooks = True
        elif option == ZYGOTE_FLAG:
            zygote = True
        else:
            raise ValueError(f"unknown option {option!r}")
    if config.allow_fork and not test_hooks:
        raise ValueError("walls.allow_fork is for tests only (needs --test-hooks)")
    return config, test_hooks, zygote
