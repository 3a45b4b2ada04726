"""Import, before the walls go up, everything a walled sandbox will ever need.

Once the walls stand, the sandbox may not be able to read its own Python
installation: the uid it drops to may have no permission on it (an
interpreter under ``/root``), and under Landlock nothing outside the
installation is readable anyway. So every module a script can import (the
facades of ``DEFAULT_MODULES`` and ``OPTIONAL_MODULES``, and the code of the
modules some facades execute privately), the modules the
standard library imports lazily on their behalf, the server's own lazy
imports, and the text codecs a script is likely to name are imported here.
A codec outside this list then fails as an unknown encoding, nothing worse.
"""

from __future__ import annotations

import ctypes
import importlib
import sys

from .. import modules, zonedata

LAZY_IMPORTS: tuple[str, ...] = (
    "resource", "math",  # the server's rlimit code
    "locale",  # _strptime, calendar, decimal's "n" format
    "encodings.utf_8_sig", "encodings.utf_16", "encodings.utf_16_le", "encodings.utf_16_be",
    "encodings.utf_32", "encodings.utf_32_le", "encodings.utf_32_be", "encodings.latin_1",
    "encodings.ascii", "encodings.cp1252", "encodings.cp1250", "encodings.cp437",
    "encodings.iso8859_15", "encodings.mac_roman", "encodings.unicode_escape",
    "encodings.raw_unicode_escape",
)
"""Imported by the standard library or the server inside functions."""

WALL_MODULES: tuple[str, ...] = tuple(f"{__package__}.{name}" for name in (
    "libc", "landlock", "namespaces", "privileges", "seccomp", "syscalls", "view",
)) if sys.platform.startswith("linux") else ()
"""The walls' own modules (Linux only), imported inside functions: imported once in a
fork server, not again after the fork in every sandbox it starts."""

SHARED_LIBRARIES: tuple[str, ...] = ("libgcc_s.so.1",)
"""Loaded by the C library on demand (thread exit unwinding): loaded now instead."""


def preload() -> list[str]:
    """Import everything listed above; return what could not be loaded."""
    failed = []
    for name in (*modules.DEFAULT_MODULES, *modules.OPTIONAL_MODULES,
                 *sorted(modules.INTERNAL_IMPORTS), *LAZY_IMPORTS,
                 *WALL_MODULES):
        if name in modules.WRITTEN_IN_SANDBOX:
            continue
        try:
            importlib.import_module(name)
        except ImportError:
            failed.append(name)
    modules.private_copy_codes()  # facades that execute a private copy of a module's code
    zonedata.preload()  # the tz database, which the walls may make unreadable
    for library in SHARED_LIBRARIES:
        try:
            ctypes.CDLL(library)
        except OSError:
            failed.append(library)
    return failed
