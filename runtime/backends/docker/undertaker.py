"""The host-side net for containers of a host that dies: a detached process removes them.

A container ends by itself when its host's channel closes (the lifeline of
:mod:`.socket_channel`, and the fork server's end of file on its control
socket), but an ended container is still there, and one that was created and
not started yet (a host killed between the two calls) has nothing inside to
end it. So the first :class:`~.backend.DockerBackend` of a process starts an
**undertaker**: a bare ``python -c`` in a session of its own (Ctrl-C and a
kill of the host's process group do not reach it) whose standard input is a
pipe that only this process holds the write end of. It does nothing but wait
for that pipe's end of file, which the kernel delivers when this process
ends in any way, ``SIGKILL`` included. Then it removes, through the engine of
the environment, every container labelled as managed with this process as its
owner (host, pid and start time: :func:`~.backend.owner_labels`), and exits. A
normal exit first removes its containers itself and then tells the
undertaker so (one byte), which then exits without asking the engine.

While waiting it holds a Python interpreter and nothing else (the docker SDK
is imported only when there is something to remove). A process forked from
this one (``os.fork``) closes its copy of the pipe, so the undertaker still
hears this process's death. Where it cannot run (no engine of the
environment, or it was killed along with the host, e.g. a whole cgroup), the
third net holds: every new backend removes the containers of owners that are
gone (:func:`~.backend.remove_orphans`), and ``toolscript gc`` does on demand.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time

__all__ = ["bury", "dismiss", "ensure_started", "pid"]

log = logging.getLogger(__name__)

CLEAN_EXIT = b"x"
"""Written to the undertaker when this process removed its containers itself."""

# Waits with nothing imported but what ``-c`` needs; the removal imports this module.
_SCRIPT = f"""\
import json, os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
labels = json.loads(sys.argv[1])
data = b""
while True:
    try:
        chunk = os.read(0, 64)
    except InterruptedError:
        continue
    if not chunk:
        break
    data += chunk
if not data.endswith({CLEAN_EXIT!r}):
    from toolscript.runtime.backends.docker.undertaker import bury
    bury(labels)
"""

_SECOND_LOOK_S = 1.0

_lock = threading.Lock()
_started: tuple[int, int, subprocess.Popen[bytes]] | None = None
"""(pid of this process, write end of the pipe, the undertaker) once started."""


def ensure_started(labels: dict[str, str]) -> None:
    """Start this process's undertaker for the containers that carry all of ``labels``
    (once per process).

    Failures are logged, never raised: the undertaker is a second net, not a
    condition for starting sandboxes.
    """
    global _started
    with _lock:
        if _started is not None and _started[0] == os.getpid():
            return
        read_end, write_end = os.pipe()  # neither is inherited by exec'd children
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _SCRIPT, json.dumps(labels)],
                stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True,
            )
        except OSError as exc:
            os.close(write_end)
            log.warning("could not start the container undertaker: %s", exc)
            return
        finally:
            os.close(read_end)
        _started = (os.getpid(), write_end, process)


def pid() -> int | None:
    """The pid of this process's undertaker, if it runs (tests and diagnostics)."""
    with _lock:
        started = _started
    if started is None or started[0] != os.getpid() or started[2].poll() is not None:
        return None
    return started[2].pid


def dismiss() -> None:
    """Tell the undertaker that this process removed its containers itself; let it exit.

    Called at interpreter exit after the containers are removed (idempotent).
    """
    global _started
    with _lock:
        started, _started = _started, None
    if started is None or started[0] != os.getpid():
        return
    _pid, write_end, process = started
    with contextlib.suppress(OSError):
        os.write(write_end, CLEAN_EXIT)
    os.close(write_end)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5.0)


def _forget_in_child() -> None:
    """In a forked child: close the parent's pipe end (its death must still be heard)."""
    global _started
    started, _started = _started, None
    if started is not None:
        with contextlib.suppress(OSError):
            os.close(started[1])
        started[2].returncode = 0  # the parent's child: never waited for from here


os.register_at_fork(after_in_child=_forget_in_child)


def bury(labels: dict[str, str]) -> list[str]:
    """Remove every container that carries all of ``labels``; return their ids.

    Runs in the undertaker after its host died (``labels``: the managed label and
    the owner's). Engine errors are logged, never raised.
    """
    from .image import docker_client

    removed: list[str] = []
    filters = {"label": [f"{key}={value}" for key, value in labels.items()]}
    # Twice: a create request the host sent just before it died may finish after the first.
    for attempt in range(2):
        if attempt:
            time.sleep(_SECOND_LOOK_S)
        try:
            api = docker_client().api
            infos = api.containers(all=True, filters=filters)
        except Exception as exc:
            log.warning("the undertaker could not list its host's containers: %s", exc)
            continue
        for info in infos:
            try:
                api.remove_container(info["Id"], force=True, v=True)
            except Exception as exc:  # gone already, or the engine is away
                log.debug("the undertaker could not remove %s: %s", info["Id"][:12], exc)
                continue
            removed.append(info["Id"])
    return removed
