"""The ``signals`` wall: whether a signal from the sandbox can reach any other process.

Two layers keep a sandbox's signals to itself. Seccomp refuses every system
call that names another process (``kill``, ``tkill``, ``rt_sigqueueinfo``,
``pidfd_send_signal``; ``tgkill`` only to the sandbox's own pid) and every
``fcntl`` that arms signal delivery (``F_SETOWN``, ``F_SETSIG``, ``O_ASYNC``,
leases, dnotify; no ``ioctl`` at all). But a list of calls is only as good as
its author's knowledge of the kernel; the wall that holds by construction is
Landlock's signal scope (Linux 6.12+, Landlock ABI 6): the kernel refuses
any signal, direct or through a descriptor's owner, to a process outside the
sandbox's Landlock domain. So the wall is reported active only where that
scope is in force, and missing (with what still holds) everywhere else:
``require_isolation=["signals"]`` then refuses to run.

:func:`scope_abi` asks the kernel before the walls go up (afterwards seccomp
refuses the Landlock calls); :func:`wall` reads the report once they stand.
"""

from __future__ import annotations

import sys
from typing import Any

from .config import WallConfig
from .report import active, missing

SCOPE_ABI = 6
"""The first Landlock ABI with ``LANDLOCK_SCOPE_SIGNAL``."""


def scope_abi() -> tuple[int, str]:
    """This kernel's Landlock ABI (0 without Landlock) and, if below :data:`SCOPE_ABI`, why."""
    if not sys.platform.startswith("linux"):
        return 0, f"not Linux ({sys.platform})"
    from .landlock import LandlockUnavailable, abi_version

    try:
        abi = abi_version()
    except LandlockUnavailable as exc:
        return 0, str(exc)
    if abi < SCOPE_ABI:
        return abi, f"this kernel's Landlock is ABI {abi}, without signal scoping"
    return abi, ""


_SECCOMP_ROUTES = ("seccomp refuses kill/tkill/rt_sigqueueinfo/pidfd_send_signal, tgkill but "
                   "to itself, F_SETOWN/F_SETSIG/O_ASYNC and ioctl")


def wall(config: WallConfig, report: dict[str, dict[str, Any]], abi: int,
         why_not: str) -> dict[str, Any]:
    """The ``signals`` entry of the wall report, from the walls just put up."""
    seccomp = bool(report.get("seccomp", {}).get("active"))
    if not config.landlock:
        why_not = "Landlock is disabled by configuration"
    elif not report.get("landlock", {}).get("active"):
        why_not = why_not or "Landlock is not in force"
    if not why_not and abi >= SCOPE_ABI:
        return active(f"Landlock ABI {abi} signal scope: no signal (kill, tgkill, SIGIO of a "
                      "descriptor's owner) reaches a process outside the sandbox"
                      + (f"; and {_SECCOMP_ROUTES}" if seccomp else ""))
    still = (f"what still holds: {_SECCOMP_ROUTES}" if seccomp
             else "seccomp is off too: any process of its uid can be signalled")
    return missing(f"the kernel does not scope its signals ({why_not}; needs Linux 6.12+, "
                   f"Landlock ABI {SCOPE_ABI}); {still}")
