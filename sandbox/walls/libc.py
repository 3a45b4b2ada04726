"""The few C library entry points the walls need, through ``ctypes``.

Everything here is a thin, checked wrapper: a failing call raises ``OSError``
with the C ``errno``, so each wall can report *why* it is missing.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

_libc = ctypes.CDLL(None, use_errno=True)
"""The process's C library (the interpreter is linked against it)."""

_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_prctl = _libc.prctl
_prctl.restype = ctypes.c_int
_prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)


def checked(result: int, what: str) -> int:
    """``result`` unless it is negative; then ``OSError`` with the current ``errno``."""
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def syscall(number: int, *args: Any, what: str = "syscall") -> int:
    """A raw system call; ``args`` are ``ctypes`` values or ints (passed as ``long``)."""
    converted = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    return checked(int(_syscall(ctypes.c_long(number), *converted)), what)


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0,
          *, what: str = "prctl") -> int:
    """``prctl(2)``, checked."""
    return checked(int(_prctl(option, arg2, arg3, arg4, arg5)), what)


def function(name: str, restype: Any, *argtypes: Any) -> Any:
    """A C library function with its signature set (``unshare``, ``capset``...)."""
    func = getattr(_libc, name)
    func.restype = restype
    func.argtypes = argtypes
    return func
