"""Start-up of a sandbox process: ``python -m toolscript.sandbox`` and each zygote child.

Start-up order: move the protocol streams aside, import everything the
sandbox will need, put up the OS walls (:mod:`.walls`), install the audit
hook (:mod:`.audithook`), then start threads and :func:`.server.serve`.
This module sits above the server loop, the fork server (:mod:`.zygote`)
and the tests' server (:mod:`.walls.testing`): it picks which of them runs,
and hands the zygote :func:`start_serving` so the zygote imports none of them.
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
from typing import Any, BinaryIO

from . import audithook, walls
from .server import SandboxServer, serve
from .spinwait import DEFAULT_SPIN_S, SPIN_FLAG, spin_from_option
from .walls import signals
from .walls.config import TEST_HOOKS_FLAG, WallConfig
from .walls.report import active, missing
from .zygote import ZYGOTE_FLAG, serve_zygote


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m toolscript.sandbox``: serve on stdin/stdout.

    Options (from the host): ``--walls JSON`` (a :class:`~.walls.WallConfig`;
    default: every wall), ``--spin-us N`` (how long a wait for the host's reply
    polls before it blocks, :mod:`.spinwait`; default
    :data:`~.spinwait.DEFAULT_SPIN_S`, 0 turns it off), ``--zygote`` (be the
    fork server of :mod:`.zygote` on the control socket at fd 0 instead; the
    walls then go up in each forked sandbox) and the tests' flag.
    """
    try:
        config, test_hooks, zygote, spin_s = _parse_options(
            sys.argv[1:] if argv is None else argv)
    except ValueError as exc:
        print(f"toolscript sandbox: {exc}", file=sys.stderr)
        return 2
    threading.stack_size(512 * 1024)
    if zygote:
        # Asked once here, before any fork: the kernel's answer is the same for every child,
        # and a child would pay a Landlock probe per start (seccomp refuses it once walled).
        scope = signals.scope_abi()

        def start_child(reader: BinaryIO, writer: BinaryIO, lifeline: int,
                        session: dict[str, Any]) -> int:
            return start_serving(reader, writer, config.for_session(session), test_hooks,
                                 lifeline=lifeline, preloaded=True, spin_s=spin_s,
                                 scope=scope)

        return serve_zygote(config, start_child)
    reader = os.fdopen(os.dup(0), "rb", buffering=0)
    writer = os.fdopen(os.dup(1), "wb", buffering=0)
    # Nothing but frames may reach the protocol channel: stray writes go to stderr.
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    reader_buffered = os.fdopen(reader.fileno(), "rb", buffering=65536, closefd=False)
    return start_serving(reader_buffered, writer, config, test_hooks, spin_s=spin_s)


def start_serving(reader: BinaryIO, writer: BinaryIO, config: Any, test_hooks: bool,
                  lifeline: int | None = None, preloaded: bool = False,
                  spin_s: float = DEFAULT_SPIN_S, scope: tuple[int, str] | None = None) -> int:
    """Imports, OS walls, audit hook, threads, then :func:`.server.serve` (in this order).

    Shared by a directly started sandbox and a child of the zygote (which
    passes the host's ``lifeline``, ``preloaded``: the zygote imported
    everything, and ``scope``: the Landlock signal-scope answer it asked once);
    the process must still be single-threaded. ``spin_s``: the spin of each
    wait for a reply (:class:`~.spinwait.SpinWait`).
    """
    server_class = SandboxServer
    if test_hooks:
        from .walls.testing import TestHookServer

        server_class = TestHookServer
    if not preloaded:
        walls.preload()
        audithook.preload()
    # Asked before the walls: seccomp refuses the Landlock calls once they stand.
    scope_abi, no_scope = scope if scope is not None else signals.scope_abi()
    report = walls.apply(config)
    report["signals"] = signals.wall(config, report, scope_abi, no_scope)
    if not test_hooks:  # a test that wants the hook installs it from its unrestricted code
        audithook.install_audit_hook()
    # Threads start only now: the walls apply to the calling thread and its future threads.
    _exit_when_orphaned(lifeline=lifeline)
    report = {**report, "audit_hook": _audit_hook_wall()}
    return serve(reader, writer, walls=report, server_class=server_class, spin_s=spin_s)


def _audit_hook_wall() -> dict[str, Any]:
    """The audit hook's entry in the wall report (it is installed before ``serve``)."""
    if audithook.installed():
        return active("installed before any script: refuses compile/exec outside the "
                      "interpreter, open, os/socket/subprocess/ctypes events and imports")
    return missing("not installed (a test-mode sandbox installs it from its test code)")


def _exit_when_orphaned(poll_s: float = 0.5, lifeline: int | None = None) -> None:
    """Exit if the host process goes away, even in the middle of a run.

    ``lifeline``: the read end of a pipe made for this sandbox alone, whose
    write end only the host holds (a sandbox forked by the zygote, whose
    parent is not the host). Only its end of file is the host's death:
    ``EAGAIN`` (the sandbox's own code made it non-blocking) waits for it to
    be readable, ``EINTR`` reads again, a byte is ignored. A watch that cannot
    watch (the descriptor was closed under it) ends this sandbox, and only
    this one: no other sandbox shares the pipe. Without a lifeline, a change
    of parent is the host's death.
    """
    parent = os.getppid()

    def watch() -> None:
        if lifeline is not None:
            _watch_lifeline(lifeline)
            os._exit(3)
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, name="toolscript-orphan-watch", daemon=True).start()


def _watch_lifeline(fd: int) -> None:
    """Return at the lifeline's end of file, or when it can no longer be watched."""
    while True:
        try:
            if not os.read(fd, 1):
                return
        except (BlockingIOError, InterruptedError):
            try:
                select.select([fd], [], [])  # readable at end of file too
            except InterruptedError:
                continue
            except (OSError, ValueError):
                return
        except OSError:
            return


def _parse_options(args: list[str]) -> tuple[Any, bool, bool, float]:
    config = WallConfig()
    test_hooks = False
    zygote = False
    spin_s = DEFAULT_SPIN_S
    rest = list(args)
    while rest:
        option = rest.pop(0)
        if option == "--walls" and rest:
            config = WallConfig.from_json(rest.pop(0))
        elif option == SPIN_FLAG and rest:
            spin_s = spin_from_option(rest.pop(0))
        elif option == TEST_HOOKS_FLAG:
            test_hooks = True
        elif option == ZYGOTE_FLAG:
            zygote = True
        else:
            raise ValueError(f"unknown option {option!r}")
    if config.allow_fork and not test_hooks:
        raise ValueError("walls.allow_fork is for tests only (needs --test-hooks)")
    return config, test_hooks, zygote, spin_s
