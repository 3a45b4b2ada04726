"""Privileges: no_new_privs, no capabilities, never root, not dumpable.

Run in a single-threaded process, in this order (the bounding set can only
be dropped while ``CAP_SETPCAP`` is still held, i.e. before the uid change)::

    set_no_new_privs(); drop_bounding_set(); drop_user(uid, gid); clear_capabilities()
    set_undumpable()

``set_undumpable`` comes last because a uid change resets the flag. An
undumpable process's ``/proc/<pid>`` files belong to root, so other
processes of the same uid (other sandboxes) cannot read or ptrace them.
"""

from __future__ import annotations

import ctypes
import errno
import os

from .libc import checked, function, prctl

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32))


_capset = function("capset", ctypes.c_int, ctypes.POINTER(_CapHeader), ctypes.POINTER(_CapData))
_capget = function("capget", ctypes.c_int, ctypes.POINTER(_CapHeader), ctypes.POINTER(_CapData))

CAP_SYS_CHROOT = 18
CAP_SYS_ADMIN = 21


def set_no_new_privs() -> None:
    """``PR_SET_NO_NEW_PRIVS``: no exec can ever grant privileges (setuid bits, file caps)."""
    prctl(PR_SET_NO_NEW_PRIVS, 1, what="PR_SET_NO_NEW_PRIVS")


def drop_bounding_set() -> int:
    """Drop every capability from the bounding set; return how many were dropped.

    Needs ``CAP_SETPCAP``: without it (not root) nothing is dropped, and
    nothing needs to be, since an unprivileged process with no_new_privs
    cannot gain capabilities.
    """
    dropped = 0
    for cap in range(64):
        try:
            prctl(PR_CAPBSET_DROP, cap, what="PR_CAPBSET_DROP")
        except OSError as exc:
            if exc.errno == errno.EINVAL:  # past the last capability this kernel knows
                break
            if exc.errno == errno.EPERM:
                return dropped
            raise
        dropped += 1
    return dropped


def clear_ambient() -> None:
    """Empty the ambient capability set."""
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, what="PR_CAP_AMBIENT_CLEAR_ALL")


def clear_capabilities() -> None:
    """Empty the effective, permitted and inheritable sets (always allowed: it only lowers)."""
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    checked(_capset(ctypes.byref(header), data), "capset")


def drop_capabilities(caps: tuple[int, ...]) -> None:
    """Drop ``caps`` from every set of this process (bounding, effective, permitted,
    inheritable) and keep the others: a fork server gives up, once its private view
    stands, what only the view needed. Dropping from the bounding set needs
    ``CAP_SETPCAP``; without it the bounding set is left as it is (a process without
    ``CAP_SETPCAP`` was never given these either)."""
    for cap in caps:
        try:
            prctl(PR_CAPBSET_DROP, cap, what="PR_CAPBSET_DROP")
        except OSError as exc:
            if exc.errno != errno.EPERM:
                raise
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    checked(_capget(ctypes.byref(header), data), "capget")
    for cap in caps:
        mask = ~(1 << (cap % 32)) & 0xFFFFFFFF
        entry = data[cap // 32]
        entry.effective &= mask
        entry.permitted &= mask
        entry.inheritable &= mask
    checked(_capset(ctypes.byref(header), data), "capset")


def drop_user(uid: int, gid: int) -> None:
    """Become ``uid``/``gid`` for good (real, effective and saved ids), no other groups."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise OSError(errno.EPERM, f"could not switch to uid {uid} gid {gid}")


def set_undumpable() -> None:
    """``PR_SET_DUMPABLE 0``: no core dumps, and same-uid processes cannot inspect this one."""
    prctl(PR_SET_DUMPABLE, 0, what="PR_SET_DUMPABLE")


def no_new_privs_set() -> bool:
    """True once :func:`set_no_new_privs` took effect."""
    return prctl(PR_GET_NO_NEW_PRIVS, what="PR_GET_NO_NEW_PRIVS") == 1
