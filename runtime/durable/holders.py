"""Who holds the resume of a continuation, and whether that holder is still alive."""

from __future__ import annotations

import os
import socket


def this_holder() -> str:
    """``"<host>:<pid>"`` of this process."""
    return f"{socket.gethostname()}:{os.getpid()}"


def holder_gone(holder: str) -> bool:
    """True if ``holder`` is a process of this host that no longer exists (or is
    this very process: a claim it left behind is its own to retake)."""
    host, _, pid_text = holder.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return _zombie(pid)


def _zombie(pid: int) -> bool:
    """A killed child its parent has not reaped yet is gone too."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return False
    return bool(fields) and fields[0] == "Z"
