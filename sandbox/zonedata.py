"""The ``zoneinfo`` facade: time zones from tz data read before the sandbox starts.

Under the process sandboxes' audit hook no file can be opened once a script
runs, and the OS walls may not let the sandbox read ``/usr/share/zoneinfo``
at all. So :func:`preload` reads every zone file of the system's tz database
into memory (about 0.7 MB, a few milliseconds) while files can still be read,
and the facade's :class:`ZoneInfo` builds zones from those bytes
(``ZoneInfo.from_file`` on an in-memory buffer). A key is looked up in that
table and never becomes a path, so ``'../../etc/passwd'`` is simply an
unknown zone. Zones are cached per process, as ``zoneinfo`` does.
"""

from __future__ import annotations

import io
import os
import threading
import zoneinfo as _zoneinfo
from typing import Any

_ZONES: dict[str, bytes] = {}
_CACHE: dict[str, Any] = {}
_LOCK = threading.Lock()
_loaded = False
_SKIPPED_DIRECTORIES = frozenset({"posix", "right"})


def _read_tree(root: str) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in _SKIPPED_DIRECTORIES)
        for name in files:
            path = os.path.join(directory, name)
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            if data[:4] == b"TZif":
                found[os.path.relpath(path, root).replace(os.sep, "/")] = data
    return found


def preload() -> None:
    """Read the tz database (the first ``zoneinfo.TZPATH`` entry that exists) into
    memory; idempotent. Called before the sandbox's walls and audit hook."""
    global _loaded
    with _LOCK:
        if _loaded:
            return
        for root in _zoneinfo.TZPATH:
            if os.path.isdir(root):
                _ZONES.update(_read_tree(root))
                break
        _loaded = True


def _not_found(key: object) -> _zoneinfo.ZoneInfoNotFoundError:
    return _zoneinfo.ZoneInfoNotFoundError(
        f"No time zone found with key {key!r} (the sandbox knows the keys of "
        "zoneinfo.available_timezones(), e.g. 'Europe/Paris', 'UTC')")


def _build(cls: type, key: str) -> Any:
    if type(key) is not str:
        raise TypeError(f"ZoneInfo key must be a string, not {type(key).__name__!r}")
    preload()  # no-op once loaded; reads the files on a backend without walls
    data = _ZONES.get(key)
    if data is None:
        raise _not_found(key)
    return super(ZoneInfo, cls).from_file(io.BytesIO(data), key=key)  # type: ignore[misc]


class ZoneInfo(_zoneinfo.ZoneInfo):
    """``zoneinfo.ZoneInfo`` built from the preloaded tz data (see the module docstring)."""

    def __new__(cls, key: str) -> Any:
        if cls is not ZoneInfo:  # a script's subclass: never in the process-wide cache
            return _build(cls, key)
        with _LOCK:
            zone = _CACHE.get(key) if type(key) is str else None
        if zone is None:
            zone = _build(cls, key)
            with _LOCK:
                zone = _CACHE.setdefault(key, zone)
        return zone

    @classmethod
    def no_cache(cls, key: str) -> Any:
        """A new zone object that is not cached."""
        return _build(cls, key)

    @classmethod
    def from_file(cls, fobj: Any, /, key: str | None = None) -> Any:
        """A zone from a binary file-like object holding TZif data (e.g. ``io.BytesIO``)."""
        return super().from_file(fobj, key=key)

    @classmethod
    def clear_cache(cls, *, only_keys: Any = None) -> None:
        """Nothing to do: the sandbox's zone cache is shared by every run of the
        process and holds only immutable zones."""


ZoneInfo.__module__ = "zoneinfo"


def available_timezones() -> set[str]:
    """The keys :class:`ZoneInfo` accepts."""
    preload()
    return set(_ZONES)


def zoneinfo_members() -> dict[str, Any]:
    """The members of the ``zoneinfo`` facade."""
    return {
        "ZoneInfo": ZoneInfo,
        "ZoneInfoNotFoundError": _zoneinfo.ZoneInfoNotFoundError,
        "InvalidTZPathWarning": _zoneinfo.InvalidTZPathWarning,
        "available_timezones": available_timezones,
    }
