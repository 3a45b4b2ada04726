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

import datetime
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


def _real_zone(key: Any) -> _zoneinfo.ZoneInfo:
    """The real zone for ``key``, built from the preloaded bytes (never a path)."""
    if type(key) is not str:
        raise TypeError(f"ZoneInfo key must be a string, not {type(key).__name__!r}")
    preload()  # no-op once loaded; reads the files on a backend without walls
    data = _ZONES.get(key)
    if data is None:
        raise _not_found(key)
    return _zoneinfo.ZoneInfo.from_file(io.BytesIO(data), key=key)


class ZoneInfo(datetime.tzinfo):
    """``zoneinfo.ZoneInfo`` over the preloaded tz data (see the module docstring).

    Not a subclass of the real class: a script that held the real
    ``zoneinfo.ZoneInfo`` (through ``mro()`` or ``super()``) would reach the
    process-wide cache controls and ``no_cache``, which reads zone files from
    the host's file system. The real zone this one delegates to sits in a slot
    whose name no attribute rule lets a script read (``vars()`` does not list
    slots).
    """

    __slots__ = ("_zone_",)
    _zone_: _zoneinfo.ZoneInfo

    def __new__(cls, key: str) -> Any:
        if cls is not ZoneInfo:  # a script's subclass: never in the process-wide cache
            return cls._wrap_(_real_zone(key))
        with _LOCK:
            zone = _CACHE.get(key) if type(key) is str else None
        if zone is None:
            zone = cls._wrap_(_real_zone(key))
            with _LOCK:
                zone = _CACHE.setdefault(key, zone)
        return zone

    @classmethod
    def _wrap_(cls, real: _zoneinfo.ZoneInfo) -> Any:
        zone = datetime.tzinfo.__new__(cls)
        ZoneInfo.__dict__["_zone_"].__set__(zone, real)
        return zone

    @classmethod
    def no_cache(cls, key: str) -> Any:
        """A new zone object that is not cached."""
        return cls._wrap_(_real_zone(key))

    @classmethod
    def from_file(cls, fobj: Any, /, key: str | None = None) -> Any:
        """A zone from a binary file-like object holding TZif data (e.g. ``io.BytesIO``)."""
        return cls._wrap_(_zoneinfo.ZoneInfo.from_file(fobj, key=key))

    @classmethod
    def clear_cache(cls, *, only_keys: Any = None) -> None:
        """Nothing to do: the sandbox's zone cache is shared by every run of the
        process and holds only immutable zones."""

    @property
    def key(self) -> str | None:
        """The zone's key (``'Europe/Paris'``), ``None`` for a zone made from a file
        without one."""
        return self._zone_.key

    def utcoffset(self, dt: datetime.datetime | None) -> datetime.timedelta | None:
        """The offset from UTC at ``dt`` (a naive or local time)."""
        return self._zone_.utcoffset(dt)

    def dst(self, dt: datetime.datetime | None) -> datetime.timedelta | None:
        """The daylight saving time adjustment at ``dt``."""
        return self._zone_.dst(dt)

    def tzname(self, dt: datetime.datetime | None) -> str | None:
        """The zone's abbreviation at ``dt`` (``'CET'``)."""
        return self._zone_.tzname(dt)

    def fromutc(self, dt: datetime.datetime) -> datetime.datetime:
        """``dt`` (a UTC time carrying this zone) as local time in this zone."""
        if not isinstance(dt, datetime.datetime):
            raise TypeError("fromutc() argument must be a datetime.datetime object")
        if dt.tzinfo is not self:
            raise ValueError("fromutc: dt.tzinfo is not self")
        real = self._zone_
        return real.fromutc(dt.replace(tzinfo=real)).replace(tzinfo=self)

    def __str__(self) -> str:
        return str(self._zone_)

    def __repr__(self) -> str:
        text = repr(self._zone_)  # 'zoneinfo.ZoneInfo(key=...)', as CPython writes it
        if type(self) is ZoneInfo:
            return text
        return type(self).__name__ + text[len("zoneinfo.ZoneInfo"):]

    def __reduce__(self) -> Any:
        return (ZoneInfo, (self._zone_.key,))

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self


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
