"""The sandbox's OS walls: what holds when the restricted interpreter does not.

:func:`apply` turns the calling process into an OS sandbox (Linux): an
unprivileged uid instead of root, no_new_privs, no capabilities, a seccomp
allow-list of system calls, Landlock read-only file access, a network
namespace of its own, RLIMIT_NPROC; then it checks each wall from inside and
returns a report (:mod:`.report`) that the host can show and enforce. Call
it in a fresh single-threaded process after :func:`preload`, before any
thread starts. See ``docs/isolation.md``.
"""

from .config import DEFAULT_GID, DEFAULT_UID, WallConfig
from .orchestrator import WallError, apply, read_paths
from .preload import preload
from .report import WALL_NAMES, WALL_SUMMARIES

__all__ = [
    "DEFAULT_GID",
    "DEFAULT_UID",
    "WALL_NAMES",
    "WALL_SUMMARIES",
    "WallConfig",
    "WallError",
    "apply",
    "preload",
    "read_paths",
]
