"""The ``pathlib`` facade: the pure paths, written over strings.

``PurePath`` and ``PurePosixPath`` behave as CPython's (the real
``pathlib.PurePosixPath`` computes every answer), but an instance holds only
the path's text, a plain ``str``: no real path object, flavour, ``parser``
module or concrete ``Path`` class is ever handed to a script. Every method
builds a real pure path from that text (:func:`_real`, a module function, so
not even a script's subclass can call it), asks it, and returns a ``str``,
``bool``, tuple of them, or a new facade path of the caller's own class.
There is no ``__fspath__``: nothing here can become a file name for ``open``
or ``os``, and the module has no ``Path``, ``PosixPath`` or ``WindowsPath``.
"""

from __future__ import annotations

import pathlib as _pathlib
from typing import Any

_Real = _pathlib.PurePosixPath


def _segment(value: Any) -> str:
    """One constructor argument as a plain ``str`` (a path's text, or a str's)."""
    if isinstance(value, PurePath):
        return _text(value)
    if isinstance(value, str):
        return str.__str__(value)
    raise TypeError("argument should be a str or an os.PathLike object where __fspath__ "
                    f"returns a str, not {type(value).__name__!r}")


class PurePath:
    """A pure path: string operations on a path, never the file system."""

    __slots__ = ("_text",)

    def __new__(cls, *pathsegments: Any) -> PurePath:
        """``PurePath(...)`` is a ``PurePosixPath``, as on a POSIX CPython."""
        if cls is PurePath:
            cls = PurePosixPath
        self = object.__new__(cls)
        _TEXT.__set__(self, str(_Real(*[_segment(s) for s in pathsegments])))
        return self

    def with_segments(self, *pathsegments: Any) -> PurePath:
        """A new path of this path's class from ``pathsegments``."""
        return type(self)(*pathsegments)

    def __str__(self) -> str:
        return _text(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({_text(self)!r})"

    def __bytes__(self) -> bytes:
        return _text(self).encode("utf-8", "surrogateescape")

    def __hash__(self) -> int:
        return hash(_real(self))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PurePath):
            return NotImplemented
        return _real(self) == _real(other)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, PurePath):
            return NotImplemented
        return _real(self) < _real(other)

    def __le__(self, other: object) -> bool:
        if not isinstance(other, PurePath):
            return NotImplemented
        return _real(self) <= _real(other)

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, PurePath):
            return NotImplemented
        return _real(self) > _real(other)

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, PurePath):
            return NotImplemented
        return _real(self) >= _real(other)

    def __truediv__(self, key: Any) -> PurePath:
        try:
            return self.with_segments(self, _segment(key))
        except TypeError:
            return NotImplemented

    def __rtruediv__(self, key: Any) -> PurePath:
        try:
            return self.with_segments(_segment(key), self)
        except TypeError:
            return NotImplemented

    @property
    def parts(self) -> tuple[str, ...]:
        """The path's components."""
        return tuple(str(part) for part in _real(self).parts)

    @property
    def drive(self) -> str:
        """The drive ('' on POSIX)."""
        return str(_real(self).drive)

    @property
    def root(self) -> str:
        """The root ('/' or '')."""
        return str(_real(self).root)

    @property
    def anchor(self) -> str:
        """Drive and root together."""
        return str(_real(self).anchor)

    @property
    def name(self) -> str:
        """The final component."""
        return str(_real(self).name)

    @property
    def suffix(self) -> str:
        """The final component's last suffix."""
        return str(_real(self).suffix)

    @property
    def suffixes(self) -> list[str]:
        """The final component's suffixes."""
        return [str(s) for s in _real(self).suffixes]

    @property
    def stem(self) -> str:
        """The final component without its suffix."""
        return str(_real(self).stem)

    @property
    def parent(self) -> PurePath:
        """The logical parent."""
        return self.with_segments(str(_real(self).parent))

    @property
    def parents(self) -> tuple[PurePath, ...]:
        """The logical ancestors, nearest first (a tuple here)."""
        return tuple(self.with_segments(str(p)) for p in _real(self).parents)

    def as_posix(self) -> str:
        """The path with forward slashes."""
        return str(_real(self).as_posix())

    def as_uri(self) -> str:
        """The path as a ``file:`` URI (absolute paths only)."""
        return str(_real(self).as_uri())

    def is_absolute(self) -> bool:
        """Whether the path has a root."""
        return bool(_real(self).is_absolute())

    def is_reserved(self) -> bool:
        """Always False on POSIX."""
        return False

    def is_relative_to(self, other: Any) -> bool:
        """Whether this path is ``other`` or under it."""
        return bool(_real(self).is_relative_to(_segment(other)))

    def relative_to(self, other: Any) -> PurePath:
        """This path relative to ``other`` (``ValueError`` if it is not under it)."""
        return self.with_segments(str(_real(self).relative_to(_segment(other))))

    def joinpath(self, *pathsegments: Any) -> PurePath:
        """This path joined with each segment in turn."""
        return self.with_segments(self, *pathsegments)

    def match(self, path_pattern: Any) -> bool:
        """Whether the path matches the glob-style pattern (from the right)."""
        return bool(_real(self).match(_segment(path_pattern)))

    def with_name(self, name: Any) -> PurePath:
        """The path with its final component replaced."""
        return self.with_segments(str(_real(self).with_name(_segment(name))))

    def with_stem(self, stem: Any) -> PurePath:
        """The path with its stem replaced."""
        return self.with_segments(str(_real(self).with_stem(_segment(stem))))

    def with_suffix(self, suffix: Any) -> PurePath:
        """The path with its suffix replaced."""
        return self.with_segments(str(_real(self).with_suffix(_segment(suffix))))


class PurePosixPath(PurePath):
    """A pure POSIX path."""

    __slots__ = ()


_TEXT = PurePath.__dict__["_text"]


def _real(path: PurePath) -> _pathlib.PurePosixPath:
    """The real pure path of ``path``'s text: a module function, never a method, so
    no script (not even on its own subclass's instance) gets a real path object."""
    return _Real(_text(path))


def _text(path: PurePath) -> str:
    """A path's text, read from the slot itself (a script's subclass may have
    written anything there: only a plain ``str`` is a path)."""
    try:
        text = _TEXT.__get__(path, PurePath)
    except AttributeError:
        raise TypeError("the path was not initialised by PurePath()") from None
    if type(text) is not str:
        raise TypeError("a path's text must be a str")
    return text


for _cls in (PurePath, PurePosixPath):
    _cls.__module__ = "pathlib"


def pathlib_members() -> dict[str, Any]:
    """The members of the ``pathlib`` facade."""
    return {"PurePath": PurePath, "PurePosixPath": PurePosixPath}
