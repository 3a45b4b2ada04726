"""The wall report: which OS walls a sandbox process got, and why not the others.

A report maps every name in :data:`WALL_NAMES` to ``{"active": bool,
"detail": str}``. It travels to the host in the ``ready`` message, and the
host shows it (``toolscript doctor``, ``Runtime.isolation()``) and enforces
``require_isolation`` with it. A wall is reported active only after it was
checked from inside the process (``/proc/self/status``, a refused probe).
"""

from __future__ import annotations

from typing import Any

WALL_NAMES: tuple[str, ...] = (
    "user",
    "no_new_privs",
    "capabilities",
    "seccomp",
    "landlock",
    "network",
    "process_limit",
    "task_budget",
    "process_group",
    "signals",
    "host_environ",
    "private_view",
    "audit_hook",
)
"""Every wall, in the order reports list them."""

WALL_SUMMARIES: dict[str, str] = {
    "user": "never the host's uid 0: an unprivileged uid/gid",
    "no_new_privs": "no_new_privs: nothing it runs can gain privileges",
    "capabilities": "no capabilities (effective, permitted, inheritable, ambient, bounding)",
    "seccomp": "seccomp allow-list of system calls: no sockets, exec, fork, ptrace, mounts",
    "landlock": "Landlock: read-only access to the Python installation, nothing writable",
    "network": "no network: its own network namespace, or none but loopback",
    "process_limit": "RLIMIT_NPROC on the sandbox's uid",
    "task_budget": "a task budget of its own: RLIMIT_NPROC on a uid no other live sandbox has "
                   "(so its per-uid kernel counters are its own too)",
    "process_group": "its own session and process group, killed as a whole on close",
    "signals": "no signal reaches another sandbox or the host: Landlock signal scoping "
               "(Linux 6.12+), on top of seccomp",
    "host_environ": "the host's environment (/proc/<parent>/environ) is unreadable",
    "private_view": "its own mount namespace: only the paths it may read exist, /proc shows no "
                    "other process (stat/readlink/access find nothing of the host)",
    "audit_hook": "a PEP 578 audit hook refuses compile/exec/open/socket/process/import "
                  "events once the sandbox has started",
}
"""One line per wall, for documentation and ``toolscript doctor``."""


def active(detail: str) -> dict[str, Any]:
    """A report entry for a wall that holds."""
    return {"active": True, "detail": detail}


def missing(detail: str) -> dict[str, Any]:
    """A report entry for a wall that could not be had, with the reason."""
    return {"active": False, "detail": detail}
