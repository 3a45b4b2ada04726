"""The host's side of the sandbox fork server (see ``toolscript.sandbox.zygote``).

:class:`Zygote` starts one ``python -s -P -m toolscript.sandbox --zygote``
process and talks to it over a ``SOCK_SEQPACKET`` socket pair: a ``spawn``
request carries the new session's descriptors, the answer carries the
child's pid and a pidfd. A reader thread routes the answers to the waiting
callers and the children's exit statuses (forwarded by the zygote, which is
their parent) to :class:`ForkedProcess` records.

A forked sandbox is not the host's child, so its liveness comes from its
pidfd (readable once it has exited) and its exit status from the zygote. If
the zygote dies, its children keep serving their sessions (they hold their
own pipes to the host); an exit status the zygote can no longer forward is
reported as unknown. Every child also holds a lifeline of its own: the read
end of a pipe made for that spawn, whose write end only this process holds
(in its :class:`ForkedProcess`, closed when the child has ended or is
killed), so none outlives the host. No open file description is shared
between two sandboxes: a flag one of them sets on its lifeline (``O_NONBLOCK``,
``O_ASYNC``) reaches no other.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
from collections.abc import Callable
from typing import IO, Any, NamedTuple, Protocol

from toolscript.errors import SandboxStartError

__all__ = [
    "EXIT_UNKNOWN", "ForkedProcess", "SpawnedSession", "Zygote", "ZygoteDied", "ZygoteProcess",
    "pid_of_pidfd",
]

EXIT_UNKNOWN = -(1 << 16)
"""The exit code of a forked sandbox whose status was lost with its zygote."""


class ZygoteProcess(Protocol):
    """The zygote's process as :class:`Zygote` uses it (a ``Popen``, or a container)."""

    def poll(self) -> int | None:
        """The exit code once it ended, else ``None``."""

    def kill(self) -> None:
        """End it now."""

    def wait(self, timeout: float | None = None) -> int:
        """Wait for it to end."""


def pid_of_pidfd(pidfd: int) -> int | None:
    """The pid, in this process's pid namespace, of the process a pidfd names."""
    try:
        with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as f:
            for line in f:
                if line.startswith("Pid:"):
                    pid = int(line.split()[1])
                    return pid if pid > 0 else None
    except (OSError, ValueError, IndexError):
        pass
    return None


class ZygoteDied(Exception):
    """Internal: the zygote ended before it answered (the caller may start a new one)."""


class ForkedProcess:
    """A sandbox process forked by a :class:`Zygote`: pid, pidfd and exit status."""

    def __init__(self, pid: int, pidfd: int) -> None:
        self.pid = pid
        self.pidfd = pidfd
        self.returncode: int | None = None
        self.orphaned = False
        """Set when the zygote died: no exit status will come."""
        self._done = threading.Event()
        self._release_lock = threading.Lock()
        self._release_pending = False
        self._on_end: Callable[[], None] | None = None
        self._lifeline = -1

    def hold_lifeline(self, write_end: int) -> None:
        """Keep the write end of this child's lifeline pipe until it has ended or is
        killed (its end of file tells the child that the host is gone)."""
        with self._release_lock:
            self._lifeline = write_end
        if self._done.is_set():
            self.cut_lifeline()

    def cut_lifeline(self) -> None:
        """Close the lifeline's write end: the child exits at its end of file. Idempotent."""
        with self._release_lock:
            fd, self._lifeline = self._lifeline, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)

    def exited(self) -> bool:
        """True once the process has ended (its pidfd is readable)."""
        if self._done.is_set():
            return True
        try:
            readable, _, _ = select.select([self.pidfd], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def poll(self) -> int | None:
        """The exit code (negative: killed by that signal) once known, else ``None``.

        A process that has exited but whose status has not arrived yet is
        waited for briefly; :data:`EXIT_UNKNOWN` if it never comes.
        """
        if self._done.is_set():
            return self.returncode
        if not self.exited():
            return None
        if not self.orphaned:
            self._done.wait(2.0)
        return self.returncode if self._done.is_set() else EXIT_UNKNOWN

    def wait(self, timeout: float) -> int:
        """Wait up to ``timeout`` s for the process to end and return its exit code
        (``subprocess.TimeoutExpired`` if it runs on, like ``Popen.wait``)."""
        if not self._done.is_set():
            if self.pidfd < 0:  # released after a kill: the status is on its way
                if not self.orphaned:
                    self._done.wait(timeout)
            else:
                with contextlib.suppress(OSError, ValueError):
                    select.select([self.pidfd], [], [], timeout)
        code = self.poll()
        if code is None:
            raise subprocess.TimeoutExpired(f"sandbox {self.pid}", timeout)
        return code

    def kill(self) -> None:
        """SIGKILL the process itself (by pidfd), and cut its lifeline."""
        if not self.exited():
            with contextlib.suppress(OSError, ValueError):
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        self.cut_lifeline()

    def signal_group(self, signum: int) -> None:
        """Send ``signum`` to the process's group and to the process itself (by pidfd:
        never to a later process that reuses the pid)."""
        if self.exited():
            return
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signum)  # its own group since setsid (none yet: ESRCH)
        with contextlib.suppress(OSError, ValueError):
            signal.pidfd_send_signal(self.pidfd, signum)
        if signum == signal.SIGKILL:
            self.cut_lifeline()

    def set_status(self, status: int | None) -> None:
        """Record the wait status from the zygote (``None``: lost with the zygote)."""
        if self._done.is_set():
            return
        self.returncode = (os.waitstatus_to_exitcode(status) if status is not None
                           else EXIT_UNKNOWN)
        self._done.set()
        self.cut_lifeline()
        if self._release_pending:
            self._ended()

    def release(self) -> None:
        """Close the pidfd and the lifeline (after the process is gone). Idempotent."""
        self.cut_lifeline()
        with self._release_lock:
            pidfd, self.pidfd = self.pidfd, -1
            if pidfd >= 0:
                with contextlib.suppress(OSError):
                    os.close(pidfd)

    def release_when_ended(self, then: Callable[[], None] | None = None) -> None:
        """Close the pidfd once the exit status has arrived (now if it has, or if none
        will come), without waiting for it: for a process already sent ``SIGKILL``.
        ``then`` runs once at that moment (on the zygote's reader thread, or here):
        what may be given back only when the process is gone (its uid)."""
        with self._release_lock:
            self._on_end = then
        self._release_pending = True
        if self._done.is_set() or self.orphaned:
            self._ended()

    def _ended(self) -> None:
        self.release()
        with self._release_lock:
            then, self._on_end = self._on_end, None
        if then is not None:
            then()


class SpawnedSession(NamedTuple):
    """A sandbox just forked by :meth:`Zygote.spawn_session`: its process, its stderr
    file and the host's ends of its protocol pipes (write to it, read from it)."""

    process: ForkedProcess
    errfile: IO[bytes]
    fds: tuple[int, int]


class Zygote:
    """One fork server process and the reader thread that listens to it."""

    def __init__(self, command: list[str], startup_timeout_s: float = 30.0, *,
                 connected: tuple[socket.socket, ZygoteProcess] | None = None,
                 env: dict[str, str] | None = None) -> None:
        """Start ``command`` as the zygote with the environment ``env`` (default:
        empty), or (``connected``) speak to one already started elsewhere (a
        container) over its connected control socket. Its children inherit its
        string hash seed (:mod:`.hashseed`)."""
        self.command = list(command)
        self._errfile: Any = None
        self.process: ZygoteProcess
        if connected is not None:
            host_end, self.process = connected
        else:
            host_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self._errfile = tempfile.TemporaryFile(prefix="toolscript-zygote-")  # noqa: SIM115
            try:
                self.process = subprocess.Popen(
                    command, stdin=zygote_end.fileno(), stdout=subprocess.DEVNULL,
                    stderr=self._errfile, env=dict(env or {}), cwd="/", close_fds=True,
                    start_new_session=True,
                )
            except OSError as exc:
                host_end.close()
                self._errfile.close()
                raise SandboxStartError(f"cannot start the sandbox fork server: {exc}") from None
            finally:
                zygote_end.close()
        self._control = host_end
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, list[Any]] = {}
        self._children: dict[int, ForkedProcess] = {}
        self._early_exits: dict[int, int] = {}
        self._dead = False
        self._last_words = ""
        readable, _, _ = select.select([host_end], [], [], startup_timeout_s)
        ready = self._recv()[0] if readable else None
        if not ready or ready.get("op") != "ready":
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(5)  # it is exiting: let it finish saying why
            self.kill()
            raise SandboxStartError(f"the sandbox fork server did not start: {self.last_words()}")
        self._thread = threading.Thread(target=self._read, name="toolscript-zygote", daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        """True while the zygote answers."""
        return not self._dead and self.process.poll() is None

    def spawn(self, reader: int, writer: int, stderr: int, timeout: float,
              session: dict[str, Any] | None = None) -> ForkedProcess:
        """Fork one sandbox with these descriptors as its protocol and stderr, and a
        lifeline pipe made for it alone (its write end stays in the returned record);
        ``session``: its own settings (the ``uid``/``gid`` allocated for it).

        Raises :class:`ZygoteDied` if the zygote is gone and
        :class:`~toolscript.errors.SandboxStartError` if the fork failed.
        """
        request_id = next(self._ids)
        slot: list[Any] = [threading.Event(), None]
        with self._lock:
            if self._dead:
                raise ZygoteDied("the sandbox fork server is gone")
            self._pending[request_id] = slot
        data = json.dumps({"op": "spawn", "id": request_id, "session": session or {}}).encode()
        # Close-on-exec both: no program this host starts holds the write end.
        life_read, life_write = os.pipe()
        try:
            with self._send_lock:
                socket.send_fds(self._control, [data], [reader, writer, stderr, life_read])
        except OSError as exc:
            with self._lock:
                self._pending.pop(request_id, None)
            os.close(life_write)
            raise ZygoteDied(f"the sandbox fork server is gone: {exc}") from None
        finally:
            os.close(life_read)
        if not slot[0].wait(timeout):
            with self._lock:
                self._pending.pop(request_id, None)
            os.close(life_write)  # a child forked after all finds its lifeline cut
            raise SandboxStartError(f"the sandbox fork server did not answer in {timeout:g} s")
        answer = slot[1]
        if isinstance(answer, ForkedProcess):
            answer.hold_lifeline(life_write)
            return answer
        os.close(life_write)
        if answer is None:
            raise ZygoteDied("the sandbox fork server died during the request")
        raise SandboxStartError(f"cannot start the sandbox: {answer}")

    def spawn_session(self, timeout: float,
                      session: dict[str, Any] | None = None) -> SpawnedSession:
        """Fork one sandbox with fresh protocol pipes and a stderr file of its own.

        The child's ends of the pipes are closed here once it has them; the
        caller owns the rest (the handle it builds closes them). Raises what
        :meth:`spawn` raises, after closing everything it made.
        """
        errfile = tempfile.TemporaryFile(prefix="toolscript-sandbox-")  # noqa: SIM115 - the caller's
        to_child, to_host = os.pipe(), os.pipe()
        try:
            process = self.spawn(to_child[0], to_host[1], errfile.fileno(), timeout, session)
        except BaseException:
            for fd in (*to_child, *to_host):
                os.close(fd)
            errfile.close()
            raise
        os.close(to_child[0])
        os.close(to_host[1])
        return SpawnedSession(process, errfile, (to_child[1], to_host[0]))

    def kill(self) -> None:
        """Kill the zygote (its control socket closes; see :meth:`close`)."""
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        self._finish()

    def close(self) -> None:
        """Close the control socket: the zygote kills its remaining children and exits."""
        with contextlib.suppress(OSError):
            self._control.shutdown(socket.SHUT_RDWR)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.kill()
        self._finish()

    # ------------------------------------------------------------------ internals
    def _recv(self) -> tuple[dict[str, Any] | None, list[int]]:
        try:
            data, fds, _flags, _addr = socket.recv_fds(self._control, 65536, 1)
        except OSError:
            return None, []
        if not data:
            return None, fds
        return json.loads(data), fds

    def _read(self) -> None:
        while True:
            message, fds = self._recv()
            if message is None:
                for fd in fds:
                    os.close(fd)
                self._finish()
                return
            op = message.get("op")
            if op == "exit":
                self._on_exit(int(message["pid"]), int(message["status"]))
            elif op in ("spawned", "failed"):
                self._on_answer(message, fds)
            else:
                for fd in fds:
                    os.close(fd)

    def _on_answer(self, message: dict[str, Any], fds: list[int]) -> None:
        answer: Any = message.get("error") or "no reason given"
        zygote_pid = int(message.get("pid") or 0)
        if message.get("op") == "spawned" and fds:
            # The zygote names the child in its own pid namespace (a container's); the
            # pidfd names it in ours, which is where signals to its group must go.
            answer = ForkedProcess(pid_of_pidfd(fds[0]) or zygote_pid, fds[0])
            fds = fds[1:]
        for fd in fds:
            os.close(fd)
        with self._lock:
            slot = self._pending.pop(int(message.get("id") or 0), None)
            if isinstance(answer, ForkedProcess):
                self._children[zygote_pid] = answer
                early = self._early_exits.pop(zygote_pid, None)
                if early is not None:
                    answer.set_status(early)
        if slot is None:  # the caller gave up waiting: nobody will use this sandbox
            if isinstance(answer, ForkedProcess):
                answer.signal_group(signal.SIGKILL)
            return
        slot[1] = answer
        slot[0].set()

    def _on_exit(self, pid: int, status: int) -> None:
        with self._lock:
            child = self._children.pop(pid, None)
            if child is None:  # the exit overtook the answer that names the child
                self._early_exits[pid] = status
                return
        child.set_status(status)

    def _finish(self) -> None:
        with self._lock:
            if self._dead:
                return
            self._dead = True
            pending = list(self._pending.values())
            self._pending.clear()
            children = list(self._children.values())
            self._children.clear()
        for slot in pending:
            slot[0].set()
        for child in children:
            child.orphaned = True
            if child.exited() or child._release_pending:
                child.set_status(None)
        with contextlib.suppress(OSError):
            self._control.close()
        self._last_words = self._stderr()
        if self._errfile is not None:
            with contextlib.suppress(OSError):
                self._errfile.close()

    def last_words(self) -> str:
        """The end of the zygote's stderr (why it died)."""
        return (self._last_words if self._dead else self._stderr()) or "no output"

    def _stderr(self) -> str:
        if self._errfile is None:
            tail = getattr(self.process, "stderr_tail", None)  # a container's logs
            return str(tail()) if tail is not None else ""
        try:
            self._errfile.seek(0)
            data: bytes = self._errfile.read()[-2000:]
            return data.decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
