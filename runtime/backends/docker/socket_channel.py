"""The fast protocol channel of the docker backend: a Unix socket per container.

Docker's attached stdio passes every frame through dockerd and the
containerd shim (≈ 150 µs per round trip here); a Unix socket between the
host process and the container's process is a direct kernel path (≈ 15 µs).
So, when the engine runs on this machine, each container gets:

* a private host folder holding one listening socket, bind-mounted
  **read-only** at ``/run/toolscript`` (the only mount of the container: the
  "protocol channel" of the security model);
* a boot command that connects to the socket, puts it on fds 0 and 1 and runs
  the unchanged sandbox server (``python -m toolscript.sandbox``) in a forked
  child; the boot process stays as the container's **lifeline**: it waits for
  the host's end of the socket to hang up (``POLLRDHUP``, which reads nothing
  of the stream) or for the server to exit, and then ends the container (every
  process in it is killed with it, even a server in the middle of a run that
  would not read the socket until the run ends); the container's exit code is
  the server's (``128 + signal`` if a signal killed it). With
  ``isolation="process"`` the socket is a ``SOCK_SEQPACKET`` one on fd 0 and
  the container runs the fork server (``--zygote``), which receives each
  session's pipes over it (``SCM_RIGHTS`` works across the container boundary:
  one kernel); the fork server never blocks anywhere but on that socket and
  exits at its end of file, which ends the container and its sessions.

The host accepts exactly one connection, checks that it comes from a process
inside that container (``SO_PEERCRED`` pid -> its cgroup names the container
id), then unlinks the socket and removes the folder: nothing else can connect
afterwards. If the engine cannot see the folder (a remote engine, or a Docker
socket shared from another machine or VM), the boot command exits with
:data:`NO_SOCKET_EXIT` and the backend falls back to attached stdio.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import struct
import tempfile
import textwrap
import time
from collections.abc import Callable
from typing import Any

from ..hashseed import INTERPRETER_FLAGS

__all__ = [
    "BOOT_COMMAND", "CONTAINER_DIR", "HOST_GONE_EXIT", "NO_SOCKET_EXIT", "STDIO_COMMAND",
    "ZYGOTE_BOOT_COMMAND",
    "SocketChannel",
]

CONTAINER_DIR = "/run/toolscript"
SOCKET_NAME = "sandbox.sock"
NO_SOCKET_EXIT = 97
"""Exit code of the boot command when the protocol socket is not there."""
HOST_GONE_EXIT = 98
"""Exit code of a container whose lifeline saw the host hang up (the host is gone)."""

_PYTHON = "/opt/toolscript/venv/bin/python"
STDIO_COMMAND = [_PYTHON, *INTERPRETER_FLAGS, "-m", "toolscript.sandbox"]
"""Entrypoint of an attached-stdio container: the image's own, but honouring the
string hash seed of the container's environment (``-I`` would ignore it)."""


_RUN_SANDBOX = ("import runpy\n"
                "runpy.run_module('toolscript.sandbox', run_name='__main__', alter_sys=True)\n")

# The lifeline: the server runs in a child; this process ends the container (it is the
# container's main process under its init) when the host hangs up or the child exits.
_LIFELINE = f"""\
pid = os.fork()
if pid == 0:
{textwrap.indent(_RUN_SANDBOX, "    ")}    sys.exit(0)
import select
watch = select.poll()
watch.register(0, select.POLLRDHUP)
child = os.pidfd_open(pid)
watch.register(child, select.POLLIN)
while True:
    try:
        events = dict(watch.poll())
    except InterruptedError:
        continue
    if child in events:
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        os._exit(128 - code if code < 0 else code)
    if events.get(0, 0) & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
        os.kill(-1, 9)
        os._exit({HOST_GONE_EXIT})
"""


def _boot(kind: str, fds: tuple[int, ...], lifeline: bool) -> str:
    """A boot script: connect a ``kind`` socket, put it on ``fds``, run the sandbox module
    (in a child watched by the :data:`_LIFELINE` if ``lifeline``)."""
    dups = "".join(f"os.dup2(s.fileno(), {fd})\n" for fd in fds)
    return f"""\
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.{kind})
try:
    s.connect({CONTAINER_DIR + "/" + SOCKET_NAME!r})
except OSError as e:
    print('toolscript: no protocol socket:', e, file=sys.stderr)
    sys.exit({NO_SOCKET_EXIT})
{dups}s.close()
{_LIFELINE if lifeline else _RUN_SANDBOX}"""


BOOT_COMMAND = [_PYTHON, *INTERPRETER_FLAGS, "-c", _boot("SOCK_STREAM", (0, 1), lifeline=True)]
"""Entrypoint of a socket-transport container (:data:`STDIO_COMMAND` is the stdio one)."""
ZYGOTE_BOOT_COMMAND = [_PYTHON, *INTERPRETER_FLAGS, "-c",
                       _boot("SOCK_SEQPACKET", (0,), lifeline=False)]
"""Entrypoint of a container that runs the fork server: the socket is its control socket
(fd 0, one message per packet); pass ``--zygote`` as its command."""

_UCRED = struct.Struct("3i")


class SocketUnavailable(Exception):
    """Internal: the container could not reach the protocol socket (engine on another machine)."""


class SocketChannel:
    """One listening socket in a private folder, for one container."""

    def __init__(self, sandbox_uid: int, kind: int = socket.SOCK_STREAM) -> None:
        """``kind``: ``SOCK_STREAM`` for a protocol channel, ``SOCK_SEQPACKET`` for a fork
        server's control socket."""
        self.dir = tempfile.mkdtemp(prefix="toolscript-sock-")
        self.path = os.path.join(self.dir, SOCKET_NAME)
        self._listener = socket.socket(socket.AF_UNIX, kind)
        try:
            self._listener.bind(self.path)
            self._listener.listen(1)
            try:  # as root: only the sandbox user may enter and connect
                os.chown(self.dir, sandbox_uid, sandbox_uid)
                os.chown(self.path, sandbox_uid, sandbox_uid)
                os.chmod(self.dir, 0o500)
                os.chmod(self.path, 0o600)
            except PermissionError:  # not root: open up, the peer check guards
                os.chmod(self.dir, 0o711)
                os.chmod(self.path, 0o666)
        except BaseException:
            self.close()
            raise

    def mount(self) -> dict[str, Any]:
        """The read-only bind mount of the folder (``docker.types.Mount`` shape)."""
        return {"Target": CONTAINER_DIR, "Source": self.dir, "Type": "bind", "ReadOnly": True}

    def accept(
        self, container_id: str, timeout: float, still_starting: Callable[[], bool]
    ) -> socket.socket:
        """Wait for the container's connection; verify it comes from that container.

        ``still_starting`` is polled while waiting; when it returns False the
        container has exited and :class:`SocketUnavailable` or ``TimeoutError``
        is raised by the caller's inspection, so here it only ends the wait.
        """
        deadline = time.monotonic() + timeout
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("the sandbox container did not connect in time")
                self._listener.settimeout(min(remaining, 0.2))
                try:
                    conn, _ = self._listener.accept()
                except TimeoutError:
                    if not still_starting():
                        raise SocketUnavailable("the container exited before connecting") from None
                    continue
                if _peer_in_container(conn, container_id):
                    conn.settimeout(None)
                    return conn
                conn.close()  # someone else on this host: refuse, keep waiting
        finally:
            self.close()

    def close(self) -> None:
        """Stop listening; remove the socket and its folder (idempotent)."""
        with contextlib.suppress(OSError):
            self._listener.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _peer_in_container(conn: socket.socket, container_id: str) -> bool:
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
        pid, _uid, _gid = _UCRED.unpack(creds)
        with open(f"/proc/{pid}/cgroup", encoding="utf-8") as f:
            return container_id in f.read()
    except OSError:
        return False
