"""A private view of the file system: the paths the sandbox may read, and a /proc of its own.

Landlock decides what may be *opened*, not what may be looked at: ``stat``,
``readlink`` and ``access`` work on any path it can name, so a sandbox would
see the size and times of root-only host files, and every process of the host
(``/proc/<pid>`` with its owner, ``/proc/<pid>/task``'s link count with its
threads). So, as root, the sandbox enters a mount namespace of its own
(:func:`enter`) whose root is a small tmpfs, read-only, holding nothing but:

* the paths it may read, each bind-mounted read-only at its own place (the
  Python installation, the packages, ``/dev/null``, ``/dev/urandom``);
* ``/proc``, a new instance with ``hidepid=invisible,subset=pid``: no other
  user's processes (every other sandbox has a uid of its own, and an
  undumpable process of the same uid is hidden too), no system-wide files.

Every other path of the host does not exist there. Mount events do not
propagate back (the tree is made private first). A fork server does this once
and its children share the view (a fork shares the mount namespace), so a
forked sandbox pays nothing for it.

The new root replaces the old one with ``pivot_root`` and the old root is
detached. Where a seccomp filter refuses ``pivot_root`` (Docker's default
profile does, even with ``CAP_SYS_ADMIN``; the docker fork server of
``isolation="process"`` starts with that and ``CAP_SYS_CHROOT`` for this
alone), the new root is moved onto ``/`` (``MS_MOVE``) and the process
changes its root to it (``chroot``), as ``switch_root`` does: the old tree stays mounted
underneath, out of every path and out of ``/proc/self/mountinfo``, and
leaving a ``chroot`` needs ``CAP_SYS_CHROOT`` (or ``CAP_SYS_ADMIN`` to
unmount), which no sandbox holds, or a descriptor of a directory outside
(a sandbox keeps none), and a chrooted process may not create a user
namespace.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import stat
from collections.abc import Iterable

from .libc import checked, function, syscall

CLONE_NEWNS = 0x00020000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_MOVE = 0x2000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}
_MOUNTPOINTS = ("/mnt", "/media", "/srv", "/opt", "/tmp", "/var/tmp", "/boot")
_OLD_ROOT = "/.host"

_unshare = function("unshare", ctypes.c_int, ctypes.c_int)
_mount = function("mount", ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                  ctypes.c_ulong, ctypes.c_char_p)
_umount2 = function("umount2", ctypes.c_int, ctypes.c_char_p, ctypes.c_int)
_chroot = function("chroot", ctypes.c_int, ctypes.c_char_p)

_ENTERED: list[str] = []
"""How this process (or the fork server it was forked from) entered its view."""


def entered() -> str | None:
    """How the view was entered in this process or an ancestor it was forked from."""
    return _ENTERED[0] if _ENTERED else None


def enter(paths: Iterable[str]) -> str:
    """Enter a private mount namespace that shows only ``paths`` and a private /proc.

    Needs root (``CAP_SYS_ADMIN``) and a single-threaded process; raises
    ``OSError`` when refused. Returns how the view was made.
    """
    if _ENTERED:
        return _ENTERED[0]
    machine = platform.machine()
    if machine not in _PIVOT_ROOT:
        raise OSError(0, f"pivot_root's number on {machine} is not known here")
    keep = _outermost(p for p in paths if os.path.lexists(p))
    checked(_unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _do_mount(None, "/", None, MS_REC | MS_PRIVATE)
    base = _mountpoint(keep)
    _do_mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV,
              "size=1m,nr_inodes=4096,mode=0755")
    for path in keep:
        target = base + path
        if os.path.isdir(path):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))
        _do_mount(path, target, None, MS_BIND | MS_REC)
        # /dev/null and /dev/urandom are device files: only their mount may keep devices.
        nodev = 0 if stat.S_ISCHR(os.stat(path).st_mode) else MS_NODEV
        _do_mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | nodev)
    os.makedirs(base + "/proc", exist_ok=True)
    _do_mount("proc", base + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "hidepid=invisible,subset=pid")
    switched = _switch_root(base, machine)
    _do_mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    how = (f"its own mount namespace: {len(keep)} read-only paths and a /proc that shows no "
           f"other user's process{switched}")
    _ENTERED[:] = [how]
    return how


def _switch_root(base: str, machine: str) -> str:
    """Make ``base`` this process's root, with the old root out of reach; return how if
    not the usual way (``pivot_root``)."""
    os.makedirs(base + _OLD_ROOT, exist_ok=True)
    try:
        syscall(_PIVOT_ROOT[machine], base.encode(), (base + _OLD_ROOT).encode(),
                what="pivot_root")
    except OSError as exc:
        if exc.errno != errno.EPERM:  # refused by a filter, not by the kernel's rules
            raise
        os.rmdir(base + _OLD_ROOT)
        os.chdir(base)
        _do_mount(".", "/", None, MS_MOVE)
        checked(_chroot(b"."), "chroot(new root)")
        os.chdir("/")
        return " (moved onto / and chrooted into: pivot_root is refused here)"
    os.chdir("/")
    checked(_umount2(_OLD_ROOT.encode(), MNT_DETACH), "umount2(old root)")
    os.rmdir(_OLD_ROOT)
    return ""


def visible_pids() -> list[int]:
    """The processes this process can see in ``/proc`` (before Landlock: it lists /proc)."""
    with contextlib.suppress(OSError):
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    return []


def _outermost(paths: Iterable[str]) -> list[str]:
    """``paths`` without those inside another one (a bind mount brings its subtree)."""
    out: list[str] = []
    for path in sorted({os.path.normpath(p) for p in paths}, key=len):
        if not any(path == kept or path.startswith(kept.rstrip("/") + "/") for kept in out):
            out.append(path)
    return out


def _mountpoint(keep: list[str]) -> str:
    """An existing directory, not above any kept path, to build the new root on."""
    for candidate in _MOUNTPOINTS:
        if os.path.isdir(candidate) and not os.path.islink(candidate) and not any(
                path == candidate or path.startswith(candidate + "/") for path in keep):
            return candidate
    raise OSError(0, "no directory to build the private root on")


def _do_mount(source: str | None, target: str, fstype: str | None, flags: int,
              data: str | None = None) -> None:
    checked(_mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                   flags, data and data.encode()), f"mount({target})")
