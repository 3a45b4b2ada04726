"""The fork server (zygote): sandboxes in milliseconds, each a fork of one prepared process.

``python -s -P -m toolscript.sandbox --zygote`` imports everything a sandbox
needs (:func:`.walls.preload`, :func:`.audithook.preload`), then serves
``spawn`` requests on its control socket (a ``SOCK_SEQPACKET`` Unix socket
on fd 0, one JSON message per packet). It never runs a script, never puts up
a wall and never starts a thread: it stays the clean, single-threaded image
that every sandbox is cloned from.

A ``spawn`` request carries four descriptors (``SCM_RIGHTS``): the read and
write ends of the session's protocol pipes, the session's stderr file and
its lifeline (the read end of a pipe the host made for this spawn alone and
whose write end only the host holds: no two sandboxes share an open file
description, so a flag one sets on its descriptors reaches no other). The
zygote forks; the child (:func:`_become_sandbox`) starts a session and
process group of its own, moves those descriptors into place, closes every
other one (the control socket included), re-seeds the random generators
that the fork copied, and then does what a directly started sandbox does:
walls, audit hook, threads, :func:`.server.serve` (the launcher's
:func:`.launcher.start_serving`, handed to :func:`serve_zygote`). The zygote answers
``spawned`` with the child's pid and a pidfd of it (opened before the zygote
can reap it, so it names this child and no later process with its pid), or
``failed`` with the reason.

The zygote reaps its children and forwards each exit status (``exit``
messages), since the host is not their parent. When its control socket
closes (the backend shut down, or the host died) it exits; the children it
handed out stay with their sessions. Each child watches the host itself
through the lifeline, so none outlives the host, whether or not the zygote
is still there.

Clones share what the fork copied. The ``random`` module's generator is
re-seeded from the OS in every child; Python's string hash seed cannot be
changed after start-up, so all sandboxes of one zygote hash strings alike
(hash flooding is bounded by the run limits, and nothing crosses sessions).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import os
import select
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any, BinaryIO

from .sessionuids import SessionUids

ZYGOTE_FLAG = "--zygote"
"""The command-line flag that makes ``python -m toolscript.sandbox`` a zygote."""

CONTROL_FD = 0
"""The control socket's descriptor in the zygote."""

SPAWN_FDS = 4
"""Descriptors per ``spawn`` request: protocol reader, protocol writer, stderr, and the
child's own lifeline."""


StartSandbox = Callable[[BinaryIO, BinaryIO, int, dict[str, Any]], int]
"""Become a sandbox server on a protocol reader and writer with the host's lifeline and
the spawn request's ``session`` settings (everything is imported already); returns the
exit code."""


def serve_zygote(config: Any, start_sandbox: StartSandbox) -> int:
    """Run the fork server until its control socket closes (see the module docstring).

    ``start_sandbox`` runs in each forked child, passed in by the launcher so that
    this module does not import the server.
    """
    from . import audithook, walls
    from .walls import orchestrator

    walls.preload()
    audithook.preload()
    audithook.prepare_trust()  # the hook's trust table: built once for all children
    orchestrator.prebuild(config)  # and the seccomp filter
    orchestrator.prepare_view(config)  # and the private mount namespace, shared by all
    # Every object so far is shared by all children: out of the collector's reach, a child's
    # collections neither walk them nor copy their pages (copy-on-write).
    gc.freeze()
    control = socket.socket(fileno=CONTROL_FD)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # nothing of the zygote's own may reach a protocol channel
    os.close(devnull)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: set[int] = set()
    uids = SessionUids(config)  # a uid per child, from walls.uid_range (docker, as root)
    _send(control, {"op": "ready", "pid": os.getpid()})
    while True:
        readable, _, _ = select.select([control.fileno(), wake_r], [], [])
        if wake_r in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_r, 4096)
            _reap(control, children, uids)
        if control.fileno() not in readable:
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, 65536, SPAWN_FDS)
        except OSError:
            data, fds = b"", []
        if not data:
            # The backend closed: sandboxes already handed out stay with their sessions
            # (each ends with the host through its lifeline at the latest).
            return 0
        request = json.loads(data)
        if request.get("op") == "spawn" and len(fds) == SPAWN_FDS:
            _await_uid(control, children, uids, wake_r)
            _spawn(control, request, fds, children, start_sandbox, uids)
        else:
            _send(control, {"op": "failed", "id": request.get("id"),
                            "error": "bad spawn request"})
        for fd in fds:
            os.close(fd)


def _send(control: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    with contextlib.suppress(OSError):
        if fds:
            socket.send_fds(control, [data], fds)
        else:
            control.send(data)


def _reap(control: socket.socket, children: set[int], uids: SessionUids) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        uids.reaped(pid)
        _send(control, {"op": "exit", "pid": pid, "status": status})


def _await_uid(control: socket.socket, children: set[int], uids: SessionUids,
               wake_r: int, wait_s: float = 10.0) -> None:
    """While every uid is held, reap for up to ``wait_s``: the host asks for a sandbox
    only when a session has ended, so a child with a uid is about to exit (its uid is
    free once its last thread is gone)."""
    deadline = time.monotonic() + wait_s
    while uids.exhausted() and children:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        with contextlib.suppress(InterruptedError):
            select.select([wake_r], [], [], remaining)
        with contextlib.suppress(BlockingIOError):
            os.read(wake_r, 4096)
        _reap(control, children, uids)


def _spawn(control: socket.socket, request: dict[str, Any], fds: list[int],
           children: set[int], start_sandbox: StartSandbox, uids: SessionUids) -> None:
    sys.stderr.flush()
    asked = request.get("session")
    session = uids.take(asked if isinstance(asked, dict) else {})
    if isinstance(session, str):
        _send(control, {"op": "failed", "id": request.get("id"), "error": session})
        return
    try:
        pid = os.fork()
    except OSError as exc:
        uids.give_back(session)
        _send(control, {"op": "failed", "id": request.get("id"), "error": f"fork failed: {exc}"})
        return
    if pid == 0:
        code = 1
        try:
            code = _become_sandbox(control, fds, start_sandbox, session)
        except BaseException:  # a child must never return into the zygote
            with contextlib.suppress(BaseException):
                traceback.print_exc()
        finally:
            with contextlib.suppress(BaseException):
                sys.stderr.flush()
            os._exit(code)
    children.add(pid)
    uids.bind(pid, session)
    pidfd = os.pidfd_open(pid)
    try:
        _send(control, {"op": "spawned", "id": request.get("id"), "pid": pid}, [pidfd])
    finally:
        os.close(pidfd)


def _become_sandbox(control: socket.socket, fds: list[int],
                    start_sandbox: StartSandbox, session: dict[str, Any]) -> int:
    """In the forked child: become a fresh sandbox server (never returns into the zygote)."""
    import random

    os.setsid()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    control.detach()
    reader_fd, writer_fd, err_fd, lifeline_fd = fds
    # 2 the session's stderr, 1 a copy of it (stray writes), 0 /dev/null; the protocol
    # pipes and the lifeline where they arrived; everything else inherited is closed.
    os.dup2(err_fd, 2)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    _close_all_but({0, 1, 2, reader_fd, writer_fd, lifeline_fd})
    sys.stdout = sys.stderr
    random.seed()  # a clone must not replay its siblings' random numbers
    reader = os.fdopen(reader_fd, "rb", buffering=65536)
    writer = os.fdopen(writer_fd, "wb", buffering=0)
    return start_sandbox(reader, writer, lifeline_fd, session)


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor of this process not in ``keep``."""
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: close the whole range around the kept ones
        edges = [-1, *sorted(keep), max(os.sysconf("SC_OPEN_MAX"), 1024)]
        for low, high in itertools.pairwise(edges):
            os.closerange(low + 1, high)
        return
    for fd in open_fds:
        if fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)
