"""The subprocess backend: the sandbox server in its own process (the default).

The child is ``python -I -m toolscript.sandbox`` with an empty environment
(no API keys or anything else from the host), its own session and process
group (a Ctrl-C at the terminal does not reach it, and closing the sandbox
kills the whole group, so nothing it could have started outlives it), rlimits
on address space, CPU, open files, file size and core dumps applied by the
server before any script runs, and pipes for the protocol. At start, before
any thread runs, the child puts up its OS walls (``toolscript.sandbox.walls``:
an unprivileged uid when the host is root, no_new_privs, no capabilities, a
seccomp allow-list, Landlock, its own network namespace) and reports them in
its ``ready`` message; see ``docs/isolation.md``. The host kills it when a
run overruns its wall clock; the child exits by itself when the host goes
away.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolscript.sandbox.protocol import PROTOCOL_VERSION, FrameDecoder, FrameError, encode_frame
from toolscript.sandbox.walls.config import TEST_HOOKS_FLAG, WallConfig

from toolscript.errors import ConfigurationError, SandboxStartError

from ..limits import Limits
from .base import Backend, SandboxDied, SandboxHandle, SandboxSpec
from .pool import WarmPool, mark_exiting

if TYPE_CHECKING:
    from ..isolation import IsolationReport

_LIVE: weakref.WeakSet[ProcessHandle] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


def _kill_all_at_exit() -> None:
    mark_exiting()
    with _LIVE_LOCK:
        handles = list(_LIVE)
    for handle in handles:
        handle.kill()


atexit.register(_kill_all_at_exit)


class ProcessHandle(SandboxHandle):
    """A sandbox server child process speaking frames over pipes."""

    def __init__(
        self, process: subprocess.Popen[bytes], spec: SandboxSpec, errfile: Any = None
    ) -> None:
        self.process = process
        self._errfile = errfile
        self.spec = spec
        assert process.stdin is not None and process.stdout is not None
        self._in = process.stdin.fileno()
        self._out = process.stdout.fileno()
        self._decoder = FrameDecoder()
        self._queue: list[dict[str, Any]] = []
        self._killed = False
        self._group_killed = False
        self._stderr_tail = b""
        self.ready_info: dict[str, Any] = {}
        with _LIVE_LOCK:
            _LIVE.add(self)

    def send(self, message: dict[str, Any]) -> None:
        data = encode_frame(message)
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._in, view)
                view = view[written:]
        except (BrokenPipeError, OSError) as exc:
            raise SandboxDied(self.death_reason(), f"sandbox is gone: {exc}") from None

    def recv(self, timeout: float | None) -> dict[str, Any]:
        if self._queue:
            return self._queue.pop(0)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            if remaining is not None and remaining <= 0:
                raise TimeoutError("no message from the sandbox in time")
            readable, _, _ = select.select([self._out], [], [], remaining)
            if not readable:
                continue
            try:
                chunk = os.read(self._out, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self._reap()
                raise SandboxDied(self.death_reason(), self._describe_exit())
            try:
                messages = self._decoder.feed(chunk)
            except FrameError as exc:
                self.kill()
                raise SandboxDied("protocol_error", f"sandbox broke the protocol: {exc}") from None
            if messages:
                self._queue.extend(messages[1:])
                return messages[0]

    def _reap(self) -> None:
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
        self._read_stderr()

    def _read_stderr(self) -> None:
        if self._errfile is None or self._errfile.closed:
            return
        try:
            size = self._errfile.seek(0, os.SEEK_END)
            self._errfile.seek(max(size - 4000, 0))
            self._stderr_tail = self._errfile.read()
        except (OSError, ValueError):
            pass

    def _describe_exit(self) -> str:
        code = self.process.returncode
        tail = self._stderr_tail.decode("utf-8", "replace").strip()
        where = f"; stderr: {tail[-500:]}" if tail else ""
        if code is not None and code < 0:
            return f"sandbox process was killed by signal {signal.Signals(-code).name}{where}"
        return f"sandbox process exited with code {code}{where}"

    def death_reason(self) -> str | None:
        code = self.process.poll()
        if code is None:
            return None
        if code == -signal.SIGXCPU:
            return "cpu_limit"
        if code == -signal.SIGKILL and self._killed:
            return "killed"
        tail = self._stderr_tail.decode("utf-8", "replace")
        if "MemoryError" in tail or code == -signal.SIGSEGV:
            return "memory_limit"
        return "sandbox_crashed"

    def kill(self) -> None:
        if self.process.poll() is None:
            self._killed = True
        if not self._group_killed:
            # The whole process group (the sandbox leads it): anything it forked dies too.
            self._group_killed = True
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self._read_stderr()
        for stream in (self.process.stdin, self.process.stdout, self._errfile):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def close(self) -> None:
        # The sandbox keeps nothing worth a graceful exit; killing it is
        # immediate, where waiting for Python's shutdown costs milliseconds.
        self.kill()

    def is_alive(self) -> bool:
        return self.process.poll() is None


def sandbox_command(python: str | None = None, walls: WallConfig | None = None,
                    test_hooks: bool = False) -> list[str]:
    """The command line of a sandbox server process."""
    command = [python or sys.executable, "-I", "-m", "toolscript.sandbox"]
    if walls is not None and walls != WallConfig():
        command += ["--walls", walls.to_json()]
    if test_hooks:
        command.append(TEST_HOOKS_FLAG)
    return command


def wait_ready(handle: SandboxHandle, timeout: float) -> dict[str, Any]:
    """Wait for the ``ready`` message and check the protocol version."""
    try:
        message = handle.recv(timeout)
    except TimeoutError:
        handle.kill()
        raise SandboxStartError(f"the sandbox did not start within {timeout:g} s") from None
    except SandboxDied as exc:
        raise SandboxStartError(f"the sandbox failed to start: {exc}") from None
    if message.get("type") != "ready":
        handle.kill()
        raise SandboxStartError(f"the sandbox sent {message.get('type')!r} instead of 'ready'")
    if message.get("protocol") != PROTOCOL_VERSION:
        handle.kill()
        raise SandboxStartError(
            f"the sandbox speaks protocol {message.get('protocol')}, this host "
            f"{PROTOCOL_VERSION}: install matching versions"
        )
    handle.ready_info = message
    return message


class SubprocessBackend(Backend):
    """Runs each sandbox as a child process of the host.

    Args:
        python: interpreter for the sandbox (default: the host's own).
        pool_size: sandboxes kept started and idle, so a new session does not
            wait for Python to start (0 = start one per session). The pool
            starts filling when the runtime is created.
        walls: settings of the OS walls (a :class:`~toolscript.sandbox.walls.
            WallConfig` or its keys as a mapping, e.g. ``{"uid": 990,
            "gid": 990}``; default: every wall, uid/gid 65534 when the host
            is root). Turning a wall off makes it "missing" in
            :meth:`isolation`, and ``require_isolation`` then refuses to run.
        test_hooks: tests only: start sandboxes with the flag that lets the
            test suite run unrestricted code in them (never in production).
    """

    name = "subprocess"

    def __init__(self, python: str | None = None, pool_size: int = 1,
                 walls: WallConfig | Mapping[str, Any] | None = None,
                 test_hooks: bool = False) -> None:
        self.python = python
        try:
            self.walls = (walls if isinstance(walls, WallConfig)
                          else WallConfig.from_mapping(dict(walls or {})))
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(f"backend_options walls: {exc}") from None
        self.test_hooks = test_hooks
        self._last_walls: dict[str, Any] | None = None
        self._pool: WarmPool[ProcessHandle] | None = None
        if pool_size:
            default_spec = SandboxSpec(limits=Limits())
            self._pool = WarmPool(lambda: self._start(default_spec), pool_size,
                                  name="subprocess")

    def start(self, spec: SandboxSpec) -> SandboxHandle:
        """A started sandbox: from the warm pool when one is ready, else a new one."""
        if self._pool is not None:
            handle = self._pool.acquire(wait_s=min(spec.startup_timeout_s, 10.0))
            if handle is not None:
                handle.spec = spec
                return handle
        return self._start(spec)

    def shutdown(self) -> None:
        """Kill the idle sandboxes of the pool."""
        if self._pool is not None:
            self._pool.shutdown()

    def isolation(self, spec: SandboxSpec | None = None) -> IsolationReport:
        """The walls of this backend's sandboxes, as the last one started reported them
        (a sandbox is started, asked and killed if none has started yet)."""
        from ..isolation import report_from_walls

        if self._last_walls is None:
            self._start(spec or SandboxSpec(limits=Limits())).kill()
        return report_from_walls(self.name, self._last_walls)

    def _start(self, spec: SandboxSpec) -> ProcessHandle:
        # stderr goes to an unlinked file, never a pipe: a chatty child must not
        # block on a full pipe, and the tail explains a crash.
        errfile = tempfile.TemporaryFile(prefix="toolscript-sandbox-")  # noqa: SIM115 - owned by the handle
        try:
            process = subprocess.Popen(
                sandbox_command(self.python, self.walls, self.test_hooks),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errfile,
                env={},
                cwd="/",
                close_fds=True,
                start_new_session=True,
            )
        except OSError as exc:
            errfile.close()
            raise SandboxStartError(f"cannot start the sandbox process: {exc}") from None
        handle = ProcessHandle(process, spec, errfile)
        ready = wait_ready(handle, spec.startup_timeout_s)
        self._last_walls = ready.get("walls")
        return handle
