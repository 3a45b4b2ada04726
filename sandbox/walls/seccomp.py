"""A small ``ctypes`` layer over libseccomp (``libseccomp.so.2``, version 2.4+).

Why libseccomp and not a binding or a hand-written BPF program: libseccomp is
the library runc, Docker, systemd and Chromium's tooling use, packaged by
every Linux distribution (and present in Debian-based Python images, since
apt depends on it); it knows every architecture's system-call numbers, the
x32/i386 ABI tricks and argument comparisons, which a hand-built filter
would have to get right again. Its Python bindings are not usable here:
Debian's ``python3-seccomp`` is compiled for Debian's own interpreter only,
and ``pyseccomp`` (a ctypes binding too) is unmaintained. The part of the C
API this needs is six functions with plain arguments
(``seccomp_rule_add_array`` avoids C varargs), so a ctypes layer stays small.

Use::

    f = Filter(errno_action(errno.EPERM))      # default: fail with EPERM
    f.add(ALLOW, "read")
    f.add(ALLOW, "clone", Arg(0, MASKED_EQ, CLONE_THREAD, CLONE_THREAD))
    f.at_load(lambda f: f.add(ALLOW, "tgkill", Arg(0, EQ, os.getpid())))
    f.load()                                    # enforce; f.release() frees it

Rules that name the loading process (its pid) are added by :meth:`Filter.at_load`
callbacks, which run in :meth:`Filter.load`: a filter built once in a fork server
and loaded in each forked child then names the child, never the fork server.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ALLOW = 0x7FFF0000
KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000

NE, LT, LE, EQ, GE, GT, MASKED_EQ = range(1, 8)
"""Argument comparison operators (``enum scmp_compare``)."""

_ATTR_ACT_BADARCH = 2
_ATTR_CTL_TSYNC = 4


def errno_action(code: int) -> int:
    """The action "fail the call with ``errno`` = ``code``"."""
    return _ERRNO | (code & 0xFFFF)


class SeccompUnavailable(Exception):
    """Internal: libseccomp cannot be loaded or the kernel refuses the filter."""


class _ArgCmp(ctypes.Structure):
    _fields_ = (("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64))


@dataclass(frozen=True)
class Arg:
    """A condition on argument ``index``: ``op`` with ``a`` (and ``b`` for MASKED_EQ)."""

    index: int
    op: int
    a: int
    b: int = 0


class _Library:
    def __init__(self) -> None:
        try:  # by soname: find_library would start ldconfig or a compiler
            lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
        except OSError as exc:
            raise SeccompUnavailable(f"libseccomp is not installed ({exc})") from None
        self.init = _sig(lib.seccomp_init, ctypes.c_void_p, ctypes.c_uint32)
        self.release = _sig(lib.seccomp_release, None, ctypes.c_void_p)
        self.resolve = _sig(lib.seccomp_syscall_resolve_name, ctypes.c_int, ctypes.c_char_p)
        self.rule_add_array = _sig(lib.seccomp_rule_add_array, ctypes.c_int, ctypes.c_void_p,
                                   ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                   ctypes.POINTER(_ArgCmp))
        self.attr_set = _sig(lib.seccomp_attr_set, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                             ctypes.c_uint32)
        self.load = _sig(lib.seccomp_load, ctypes.c_int, ctypes.c_void_p)
        version = _sig(lib.seccomp_version, ctypes.POINTER(ctypes.c_uint * 3))
        major, minor, micro = version().contents
        self.version = f"{major}.{minor}.{micro}"
        if (major, minor) < (2, 4):
            raise SeccompUnavailable(f"libseccomp {self.version} is too old (2.4+ needed)")


def _sig(func: Any, restype: Any, *argtypes: Any) -> Any:
    func.restype = restype
    func.argtypes = argtypes
    return func


_LIBRARY: _Library | None = None


def library() -> _Library:
    """libseccomp, loaded once (raises :class:`SeccompUnavailable`)."""
    global _LIBRARY
    if _LIBRARY is None:
        _LIBRARY = _Library()
    return _LIBRARY


class Filter:
    """One seccomp filter being built; :meth:`load` installs it for the process."""

    def __init__(self, default_action: int) -> None:
        self._lib = library()
        ctx = self._lib.init(default_action)
        if not ctx:
            raise SeccompUnavailable("seccomp_init failed")
        self._ctx: int | None = ctx
        self._set(_ATTR_ACT_BADARCH, KILL_PROCESS)  # i386/x32 calls: kill, never allow
        self._set(_ATTR_CTL_TSYNC, 1)  # every thread gets the filter, or loading fails
        self.unknown: list[str] = []
        self._at_load: list[Callable[[Filter], object]] = []

    def at_load(self, add_rules: Callable[[Filter], object]) -> None:
        """Call ``add_rules(self)`` in :meth:`load`, in the process that loads the filter
        (for rules on its own pid: the filter may be built before a fork)."""
        self._at_load.append(add_rules)

    def _set(self, attr: int, value: int) -> None:
        rc = self._lib.attr_set(self._ctx, attr, value)
        if rc < 0:
            raise SeccompUnavailable(f"seccomp_attr_set({attr}) failed: error {-rc}")

    def add(self, action: int, name: str, *conditions: Arg) -> bool:
        """Add a rule for system call ``name``; False if this architecture has no such call."""
        number = self._lib.resolve(name.encode("ascii"))
        if number < 0:  # _NR_SCMP_ERROR, or a pseudo-number: not a call of this architecture
            self.unknown.append(name)
            return False
        array = (_ArgCmp * max(len(conditions), 1))(
            *[_ArgCmp(c.index, c.op, c.a, c.b) for c in conditions]
        )
        rc = self._lib.rule_add_array(self._ctx, action, number, len(conditions), array)
        if rc < 0:
            raise SeccompUnavailable(f"seccomp rule for {name} refused: error {-rc}")
        return True

    def load(self) -> None:
        """Add the :meth:`at_load` rules, install the filter (irreversible), then free it."""
        try:
            for add_rules in self._at_load:
                add_rules(self)
            rc = self._lib.load(self._ctx)
            if rc < 0:
                raise SeccompUnavailable(f"seccomp_load failed: error {-rc}")
        finally:
            self.release()

    def release(self) -> None:
        """Free the filter without installing it (idempotent)."""
        if self._ctx is not None:
            self._lib.release(self._ctx)
            self._ctx = None
