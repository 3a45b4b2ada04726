"""A network namespace of the sandbox's own: no interface but a loopback that is down.

As root, ``unshare(CLONE_NEWNET)``. Otherwise, where the kernel lets
unprivileged users create user namespaces, ``unshare(CLONE_NEWUSER |
CLONE_NEWNET)`` with the process's own uid and gid mapped onto themselves
(the capabilities it holds inside that user namespace are cleared by the
privileges wall right after). Abstract Unix sockets are per network
namespace too, so this also cuts the sandbox off from those of the host.

Whatever happened, :func:`interfaces` then tells the truth: a process
already in an isolated namespace (a container with ``network_mode=none``, a
forked child of an isolated parent) counts as isolated.
"""

from __future__ import annotations

import ctypes
import os

from .libc import checked, function, prctl

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PR_SET_DUMPABLE = 4

_unshare = function("unshare", ctypes.c_int, ctypes.c_int)
_OWN_USERNS: list[bool] = []


def own_user_namespace() -> bool:
    """True once :func:`unshare_network` made this process a user namespace of its own
    with its uid mapped (the kernel then counts its tasks per namespace)."""
    return bool(_OWN_USERNS)


def unshare_network() -> str:
    """Enter a new network namespace; return how. Raises ``OSError`` when refused."""
    if os.geteuid() == 0:
        checked(_unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
        return "its own network namespace"
    uid, gid = os.getuid(), os.getgid()
    checked(_unshare(CLONE_NEWUSER | CLONE_NEWNET), "unshare(CLONE_NEWUSER|CLONE_NEWNET)")
    # A process that changed its uid (root that dropped without an exec) is not dumpable,
    # so its /proc/self files are root's and it could not write its own maps: it would stay
    # in the new namespace as the overflow uid. The privileges wall clears this again.
    prctl(PR_SET_DUMPABLE, 1, what="PR_SET_DUMPABLE")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _OWN_USERNS[:] = [True]
    return "its own user and network namespace"


def interfaces() -> list[str]:
    """Network interfaces this process can see, loopback excluded."""
    with open("/proc/self/net/dev", encoding="ascii") as fh:
        lines = fh.read().splitlines()[2:]  # two header lines
    names = [line.split(":", 1)[0].strip() for line in lines if ":" in line]
    return [name for name in names if name != "lo"]


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode("ascii"))
    finally:
        os.close(fd)
