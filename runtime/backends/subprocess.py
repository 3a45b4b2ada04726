"""The subprocess backend: the sandbox server in its own process (the default).

By default each sandbox is forked from a fork server (:mod:`.zygote`, and
``toolscript.sandbox.zygote`` inside it) that has already imported the
sandbox, and becomes a sandbox server in a few milliseconds; with
``zygote=False`` (or another ``python``) it is a new interpreter. Either way
the child is ``python -s -P -m toolscript.sandbox``'s server with an environment
that holds only its string hash seed (:mod:`.hashseed`)
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
import secrets
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

from toolscript.sandbox.protocol import (
    PROTOCOL_VERSION,
    FrameDecoder,
    FrameError,
    WireBounds,
    encode_frame,
)
from toolscript.sandbox.spinwait import DEFAULT_SPIN_S, MAX_SPIN_S, SPIN_FLAG, SpinWait
from toolscript.sandbox.walls.config import TEST_HOOKS_FLAG, WallConfig
from toolscript.sandbox.wirecheck import ready_message
from toolscript.sandbox.zygote import ZYGOTE_FLAG

from toolscript.errors import ConfigurationError, SandboxStartError

from ..limits import Limits
from .base import Backend, SandboxDied, SandboxHandle, SandboxSpec
from .hashseed import INTERPRETER_FLAGS, choose_hash_seed, seed_environment
from .pool import WarmPool, mark_exiting
from .uids import UidLease, allocator_for
from .zygote import EXIT_UNKNOWN, ForkedProcess, Zygote, ZygoteDied

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
    """A sandbox server process speaking frames over pipes.

    ``process`` is the host's child (a ``Popen``) or a
    :class:`~.zygote.ForkedProcess` (a child of the zygote); ``fds`` are the
    host's ends of the protocol pipes when they are not the ``Popen``'s;
    ``spin_s``: how long :meth:`recv` polls before it blocks
    (:class:`~toolscript.sandbox.spinwait.SpinWait`; 0: never).
    """

    def __init__(
        self, process: subprocess.Popen[bytes] | ForkedProcess, spec: SandboxSpec,
        errfile: Any = None, fds: tuple[int, int] | None = None,
        spin_s: float = DEFAULT_SPIN_S,
    ) -> None:
        self.process = process
        self._errfile = errfile
        self.spec = spec
        if fds is None:
            assert isinstance(process, subprocess.Popen)
            assert process.stdin is not None and process.stdout is not None
            fds = (process.stdin.fileno(), process.stdout.fileno())
        self._fds: tuple[int, ...] = fds
        self._in, self._out = fds
        self._decoder = FrameDecoder()
        self._queue: list[dict[str, Any]] = []
        self._spin = SpinWait(self._out, spin_s)
        self._killed = False
        self._group_killed = False
        self._closed = False
        self._stderr_tail = b""
        self.ready_info: dict[str, Any] = {}
        self.uid_lease: UidLease | None = None
        """The uid this sandbox has to itself, given back once its process is gone."""
        with _LIVE_LOCK:
            _LIVE.add(self)

    def set_wire_bounds(self, bounds: WireBounds) -> None:
        """Bound the frames decoded from now on (see :class:`SandboxHandle`)."""
        self._decoder.bounds = bounds

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
        if self._out < 0:
            raise SandboxDied(self.death_reason(), self._describe_exit())
        deadline = None if timeout is None else time.monotonic() + timeout
        ready = self._spin.wait()  # the next call of a chain comes before a wake-up would land
        while True:
            if not ready:
                remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                if remaining is not None and remaining <= 0:
                    raise TimeoutError("no message from the sandbox in time")
                readable, _, _ = select.select([self._out], [], [], remaining)
                if not readable:
                    continue
            ready = False
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
        if code == EXIT_UNKNOWN:
            return f"sandbox process ended (its exit status was lost with the fork server){where}"
        if code is None:
            return f"sandbox process closed its protocol channel{where}"
        if code < 0:
            return f"sandbox process was killed by signal {signal.Signals(-code).name}{where}"
        return f"sandbox process exited with code {code}{where}"

    def death_reason(self) -> str | None:
        code = self.process.poll()
        if code is None:
            return "killed" if self._closed else None
        if code == -signal.SIGXCPU:
            return "cpu_limit"
        if code == -signal.SIGKILL and self._killed:
            return "killed"
        tail = self._stderr_tail.decode("utf-8", "replace")
        if "MemoryError" in tail or code == -signal.SIGSEGV:
            return "memory_limit"
        return "sandbox_crashed"

    def interrupt(self) -> None:
        """SIGKILL the sandbox and its process group (thread-safe: no descriptor
        is closed; the reader sees the end of the stream and calls :meth:`kill`)."""
        if self.process.poll() is None:
            self._killed = True
        if isinstance(self.process, ForkedProcess):
            self.process.signal_group(signal.SIGKILL)
            return
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.process.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self._killed = True
        if not self._group_killed:
            # The whole process group (the sandbox leads it): anything it forked dies too.
            self._group_killed = True
            if isinstance(self.process, ForkedProcess):
                self.process.signal_group(signal.SIGKILL)
            else:
                with contextlib.suppress(OSError):
                    os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        if self.uid_lease is not None and self.process.poll() is not None:
            self.uid_lease.release()  # still running after SIGKILL and 5 s: never reused
        self._read_stderr()
        if isinstance(self.process, ForkedProcess):
            if self._fds:
                for fd in self._fds:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                self._fds = ()
                self._in = self._out = -1
            if self.process.poll() is not None:
                self.process.release()
            streams: tuple[Any, ...] = (self._errfile,)
        else:
            streams = (self.process.stdin, self.process.stdout, self._errfile)
        for stream in streams:
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def prime(self, timeout: float) -> None:
        """Run :data:`PRIME_SCRIPT` once in a fresh sandbox, before any session has it.

        A forked sandbox's first ``configure`` and first run cost milliseconds
        more than later ones: every page of the fork server that they touch is
        copied then (reference counts are writes), and the run's watchdog thread
        starts. A warm pool pays that here, on its refill thread, instead of the
        session that takes the sandbox. The script is this module's constant and
        the ``configure`` has no tools and no process limits (those the
        session's own ``configure`` lowers for good): nothing of a session is
        in the sandbox before it is handed out, and the session's ``configure``
        replaces the interpreter.

        Raises:
            SandboxStartError: the sandbox did not answer as the protocol says.
        """
        try:
            self.send({"type": "configure", "tools": []})
            configured = self.recv(timeout)
            self.send({"type": "run", "id": f"prime-{secrets.token_hex(8)}", "code": PRIME_SCRIPT})
            result = self.recv(timeout)
        except (SandboxDied, TimeoutError) as exc:
            self.kill()
            raise SandboxStartError(f"the sandbox failed its first run: {exc}") from None
        if configured.get("type") != "configured" or result.get("type") != "result" or not (
                result.get("ok")):
            self.kill()
            raise SandboxStartError(f"the sandbox failed its first run: {result!r:.200}")

    def close(self) -> None:
        """End the sandbox without waiting for it to exit (idempotent).

        The sandbox keeps nothing worth a graceful exit. A forked sandbox gets
        ``SIGKILL`` (its group, and itself by pidfd), which it cannot survive;
        its pipes and stderr file close at once, and its pidfd and its uid are
        given back when the fork server reports the exit (on the zygote's
        reader thread): the caller does not wait the milliseconds a process
        takes to end and be reaped. Without a fork server's report to wait for
        (a direct start, a fork server that died) this is :meth:`kill`.
        """
        process = self.process
        if (self._closed or self._group_killed or not isinstance(process, ForkedProcess)
                or process.orphaned):
            self.kill()
            return
        self._closed = True
        if not process.exited():
            self._killed = True
        self._group_killed = True
        process.signal_group(signal.SIGKILL)
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = ()
        self._in = self._out = -1
        if self._errfile is not None:
            with contextlib.suppress(OSError):
                self._errfile.close()
        lease = self.uid_lease
        process.release_when_ended(lease.release if lease is not None else None)
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def is_alive(self) -> bool:
        """False once closed (the process is ending); else whether it runs."""
        return not self._closed and self.process.poll() is None


PRIME_SCRIPT = "rows = [{'n': i, 'half': i / 2} for i in range(3)]\nlen(str(rows))\n"
"""What :meth:`ProcessHandle.prime` runs in a pooled sandbox before it is handed out."""

DEFAULT_SPIN_US = round(DEFAULT_SPIN_S * 1e6)
"""The default of the process backends' ``spin_us`` option
(:mod:`toolscript.sandbox.spinwait`)."""


def check_spin_us(spin_us: Any) -> int:
    """``spin_us`` as a backend option: whole microseconds in ``[0, 10000]``.

    Raises:
        ConfigurationError: anything else.
    """
    top = round(MAX_SPIN_S * 1e6)
    if isinstance(spin_us, bool) or not isinstance(spin_us, int) or not 0 <= spin_us <= top:
        raise ConfigurationError(
            f"backend_options spin_us must be a whole number of microseconds from 0 to {top}, "
            f"got {spin_us!r}")
    return spin_us


def spin_options(spin_us: int) -> list[str]:
    """The sandbox's command-line options for ``spin_us`` (none for the default)."""
    return [] if spin_us == DEFAULT_SPIN_US else [SPIN_FLAG, str(spin_us)]


def sandbox_command(python: str | None = None, walls: WallConfig | None = None,
                    test_hooks: bool = False, zygote: bool = False,
                    spin_us: int = DEFAULT_SPIN_US) -> list[str]:
    """The command line of a sandbox server process (or, with ``zygote``, of the
    fork server whose children are sandbox servers)."""
    command = [python or sys.executable, *INTERPRETER_FLAGS, "-m", "toolscript.sandbox"]
    if zygote:
        command.append(ZYGOTE_FLAG)
    command += spin_options(spin_us)
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
    if message.get("protocol") != PROTOCOL_VERSION:
        handle.kill()
        raise SandboxStartError(
            f"the sandbox speaks protocol {message.get('protocol')!r:.40}, this host "
            f"{PROTOCOL_VERSION}: install matching versions"
        )
    try:
        ready_message(message)
    except FrameError as exc:
        handle.kill()
        raise SandboxStartError(f"the sandbox did not start as the protocol says: {exc}") from None
    handle.ready_info = message
    return message


class SubprocessBackend(Backend):
    """Runs each sandbox as a child process of the host.

    Args:
        python: interpreter for the sandbox (default: the host's own).
        pool_size: sandboxes kept started and idle, so a new session does not
            wait for Python to start (0 = start one per session). The pool
            starts filling when the runtime is created.
        pool_max: the most idle sandboxes the pool may keep when demand
            calls for more than ``pool_size`` (it sizes itself from the
            observed rate of new sessions and start time; see
            :class:`~.pool.WarmPool`). Default: 4 with the zygote (idle
            clones share the zygote's memory), ``pool_size`` without.
        walls: settings of the OS walls (a :class:`~toolscript.sandbox.walls.
            WallConfig` or its keys as a mapping, e.g. ``{"uid": 990,
            "gid": 990}``; default: every wall, and when the host is root a
            uid/gid of its own for every live sandbox, from ``uid_range``).
            Turning a wall off makes it "missing" in
            :meth:`isolation`, and ``require_isolation`` then refuses to run.
        test_hooks: tests only: start sandboxes with the flag that lets the
            test suite run unrestricted code in them (never in production).
        zygote: fork each sandbox from a fork server that has already
            imported the sandbox (milliseconds instead of a new interpreter;
            the walls still go up in each sandbox after the fork). ``False``
            starts a new interpreter per sandbox; the default (``None``) is
            the zygote with the host's own interpreter and a new interpreter
            per sandbox with another ``python`` (any program that speaks the
            protocol on stdin/stdout).
        spin_us: how long, in microseconds, each side of a tool call polls for
            the other's next frame before it blocks in ``read`` (the sandbox
            for a reply, the host's serving thread for the next call): a cheap
            call's answer then arrives before a sleeping process would have
            been woken, which on a virtual machine costs more than the call
            itself. The spin stops early on a contended CPU and backs off after
            waits it did not catch (:mod:`toolscript.sandbox.spinwait`); 0
            turns it off (the least CPU per call, the most wake-ups). Default
            50, chosen by measurement (``docs/internals.md``).
        hash_seed: the string hash seed of every sandbox interpreter (default:
            random, one per backend). A resumed durable run asks for its
            original run's seed and gets a sandbox started with it; pinning the
            same seed in every host process lets such resumes use the zygote
            and the pool instead (:mod:`.hashseed`).
    """

    name = "subprocess"

    def __init__(self, python: str | None = None, pool_size: int = 1,
                 walls: WallConfig | Mapping[str, Any] | None = None,
                 test_hooks: bool = False, zygote: bool | None = None,
                 pool_max: int | None = None, spin_us: int = DEFAULT_SPIN_US,
                 hash_seed: int | None = None) -> None:
        self.python = python
        self.spin_us = check_spin_us(spin_us)
        self.hash_seed: int = choose_hash_seed(hash_seed)
        self.use_zygote = python is None if zygote is None else zygote
        self._zygote: Zygote | None = None
        self._zygote_lock = threading.Lock()
        self._closed = False
        try:
            self.walls = (walls if isinstance(walls, WallConfig)
                          else WallConfig.from_mapping(dict(walls or {})))
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(f"backend_options walls: {exc}") from None
        self.test_hooks = test_hooks
        self._last_walls: dict[str, Any] | None = None
        self._priming: set[ProcessHandle] = set()  # the pool's starts in their first run
        self._priming_cancelled = False
        self._pool: WarmPool[ProcessHandle] | None = None
        if pool_size:
            default_spec = SandboxSpec(limits=Limits())
            if pool_max is None:
                pool_max = max(pool_size, 4) if self.use_zygote else pool_size
            self._pool = WarmPool(lambda: self._start_primed(default_spec), pool_size,
                                  name="subprocess", max_size=pool_max,
                                  cancel=self._cancel_priming)

    def start(self, spec: SandboxSpec) -> SandboxHandle:
        """A started sandbox: from the warm pool when one is ready, else a new one;
        a new interpreter for a spec with another ``hash_seed`` than the backend's."""
        if spec.hash_seed is not None and spec.hash_seed != self.hash_seed:
            return self._spawn(spec, spec.hash_seed)
        if self._pool is not None:
            handle = self._pool.acquire(wait_s=min(spec.startup_timeout_s, 10.0))
            if handle is not None:
                handle.spec = spec
                return handle
        return self._start(spec)

    def warm(self, spec: SandboxSpec | None = None) -> WarmPool[ProcessHandle] | None:
        """The warm pool, filling since construction (one pool serves every spec:
        a pooled sandbox takes its spec when handed out), or None with ``pool_size=0``."""
        return self._pool

    def shutdown(self) -> None:
        """Kill the idle sandboxes of the pool and the fork server (sandboxes that
        sessions hold stay with them)."""
        if self._pool is not None:
            self._pool.shutdown()
        with self._zygote_lock:
            self._closed = True
            zygote, self._zygote = self._zygote, None
        if zygote is not None:
            zygote.close()

    @property
    def zygote(self) -> Zygote | None:
        """The running fork server, if any (tests and diagnostics)."""
        return self._zygote

    def isolation(self, spec: SandboxSpec | None = None) -> IsolationReport:
        """The walls of this backend's sandboxes, as the last one started reported them
        (a sandbox is started, asked and killed if none has started yet)."""
        from ..isolation import report_from_walls

        if self._last_walls is None:
            self._start(spec or SandboxSpec(limits=Limits())).kill()
        return report_from_walls(self.name, self._last_walls)

    def _start_primed(self, spec: SandboxSpec) -> ProcessHandle:
        """A sandbox for the warm pool: started, and its first run done (see
        :meth:`ProcessHandle.prime`)."""
        handle = self._start(spec)
        with self._zygote_lock:
            if self._priming_cancelled:
                handle.kill()
                raise SandboxStartError("the backend was shut down")
            self._priming.add(handle)
        try:
            handle.prime(spec.startup_timeout_s)
        finally:
            with self._zygote_lock:
                self._priming.discard(handle)
        return handle

    def _cancel_priming(self) -> None:
        """Kill the pool's sandboxes still in their first run (the pool is closing)."""
        with self._zygote_lock:
            self._priming_cancelled = True
            priming = list(self._priming)
        for handle in priming:
            handle.kill()

    def _start(self, spec: SandboxSpec) -> ProcessHandle:
        if self.use_zygote:
            return self._fork(spec)
        return self._spawn(spec)

    def _fork(self, spec: SandboxSpec) -> ProcessHandle:
        """A sandbox forked from the zygote (started, or restarted after it died, here)."""
        for attempt in range(2):
            zygote = self._live_zygote(spec.startup_timeout_s)
            try:
                return self._fork_from(zygote, spec)
            except ZygoteDied:
                if attempt:
                    raise SandboxStartError(
                        "the sandbox fork server died twice in a row while starting a sandbox: "
                        f"{zygote.last_words()}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _live_zygote(self, timeout: float) -> Zygote:
        with self._zygote_lock:
            if self._closed:
                raise SandboxStartError("the backend was shut down")
            command = sandbox_command(self.python, self.walls, self.test_hooks, zygote=True,
                                      spin_us=self.spin_us)
            current = self._zygote
            # A new zygote if none runs, it died, or the settings changed since it started.
            if current is None or not current.alive or current.command != command:
                if current is not None:
                    current.close()
                current = self._zygote = Zygote(command, timeout,
                                                env=seed_environment(self.hash_seed))
            return current

    def _own_uid(self) -> UidLease | None:
        """A uid for one new sandbox alone (root hosts with ``walls.uid_range``), else None."""
        walls = self.walls
        if walls.uid_range is None or not walls.user or os.geteuid() != 0:
            return None
        return allocator_for(walls.uid_range).acquire()

    def _fork_from(self, zygote: Zygote, spec: SandboxSpec) -> ProcessHandle:
        lease = self._own_uid()
        session = {} if lease is None else {"uid": lease.uid, "gid": lease.uid}
        try:
            process, errfile, fds = zygote.spawn_session(spec.startup_timeout_s, session)
        except BaseException:
            if lease is not None:
                lease.release()
            raise
        handle = ProcessHandle(process, spec, errfile, fds=fds, spin_s=self.spin_us / 1e6)
        handle.uid_lease = lease
        handle.hash_seed = self.hash_seed
        try:
            ready = wait_ready(handle, spec.startup_timeout_s)
        except BaseException:
            handle.kill()
            raise
        self._last_walls = ready.get("walls")
        return handle

    def _spawn(self, spec: SandboxSpec, hash_seed: int | None = None) -> ProcessHandle:
        """A sandbox started as a new interpreter (with ``hash_seed``, default the backend's)."""
        seed = self.hash_seed if hash_seed is None else hash_seed
        # stderr goes to an unlinked file, never a pipe: a chatty child must not
        # block on a full pipe, and the tail explains a crash.
        lease = self._own_uid()
        walls = self.walls if lease is None else self.walls.for_session(
            {"uid": lease.uid, "gid": lease.uid})
        errfile = tempfile.TemporaryFile(prefix="toolscript-sandbox-")  # noqa: SIM115 - owned by the handle
        try:
            process = subprocess.Popen(
                sandbox_command(self.python, walls, self.test_hooks, spin_us=self.spin_us),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errfile,
                env=seed_environment(seed),
                cwd="/",
                close_fds=True,
                start_new_session=True,
            )
        except OSError as exc:
            errfile.close()
            if lease is not None:
                lease.release()
            raise SandboxStartError(f"cannot start the sandbox process: {exc}") from None
        handle = ProcessHandle(process, spec, errfile, spin_s=self.spin_us / 1e6)
        handle.uid_lease = lease
        handle.hash_seed = seed
        try:
            ready = wait_ready(handle, spec.startup_timeout_s)
        except BaseException:
            handle.kill()
            raise
        self._last_walls = ready.get("walls")
        return handle
