"""Landlock through its three system calls (Linux 5.13+), with ``ctypes``.

No maintained Python binding exists and the interface is three system calls
with two small structures, so this module speaks to the kernel directly.
:class:`Ruleset` handles every access right the running kernel knows (the
"best effort" use the kernel documentation recommends), so whatever is not
explicitly allowed is denied: file writes and creation of any kind, reading
outside the allowed paths, executing anything, TCP bind/connect (ABI 4+),
abstract Unix sockets and signals to processes outside the sandbox (ABI 6+).

Rules are added while the process may still open the paths (before its
uid changes); :meth:`Ruleset.restrict_self` enforces them later. It needs
no_new_privs (or ``CAP_SYS_ADMIN``) and, like seccomp, applies to the
calling thread and the threads it starts afterwards, so it must run before
the sandbox starts any thread.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat

from .libc import syscall

SYS_CREATE_RULESET = 444  # the same number on every architecture
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
_FS_ABI1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64))


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class LandlockUnavailable(Exception):
    """Internal: the kernel cannot enforce Landlock; the message says why."""


def abi_version() -> int:
    """The kernel's Landlock ABI version; raises :class:`LandlockUnavailable`."""
    try:
        return syscall(SYS_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION,
                       what="landlock_create_ruleset")
    except OSError as exc:
        if exc.errno == errno.ENOSYS:
            raise LandlockUnavailable("this kernel has no Landlock (Linux 5.13+ needed)") from None
        if exc.errno == errno.EOPNOTSUPP:
            raise LandlockUnavailable(
                "Landlock is built in but not enabled (add landlock to the lsm= boot parameter)"
            ) from None
        raise LandlockUnavailable(f"Landlock is unavailable: {exc}") from None


def handled_rights(abi: int) -> tuple[int, int, int]:
    """(filesystem, network, scope) rights an ABI version can handle."""
    fs = _FS_ABI1
    if abi >= 2:
        fs |= REFER
    if abi >= 3:
        fs |= TRUNCATE
    if abi >= 5:
        fs |= IOCTL_DEV
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    return fs, net, scoped


class Ruleset:
    """A Landlock ruleset that denies everything it handles except the read rules added."""

    def __init__(self) -> None:
        self.abi = abi_version()
        self.fs, self.net, self.scoped = handled_rights(self.abi)
        attr = _RulesetAttr(self.fs, self.net, self.scoped)
        self._fd = syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0,
                           what="landlock_create_ruleset")
        self.paths: list[str] = []

    def allow_read(self, path: str) -> bool:
        """Allow reading ``path`` (a file, or a directory and everything beneath it).

        Returns False (and adds nothing) if the path does not exist.
        """
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            mode = os.fstat(fd).st_mode
            access = READ_FILE | READ_DIR if stat.S_ISDIR(mode) else READ_FILE
            attr = _PathBeneathAttr(access, fd)
            syscall(SYS_ADD_RULE, self._fd, _RULE_PATH_BENEATH, ctypes.byref(attr), 0,
                    what=f"landlock_add_rule({path})")
        finally:
            os.close(fd)
        self.paths.append(path)
        return True

    def restrict_self(self) -> None:
        """Enforce the ruleset on this thread and its future threads (irreversible)."""
        try:
            syscall(SYS_RESTRICT_SELF, self._fd, 0, what="landlock_restrict_self")
        finally:
            self.close()

    def close(self) -> None:
        """Release the ruleset's file descriptor (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
