"""Stand-ins that ``type()`` reports for types whose constructor must stay out of reach.

``type(lambda: 0)`` is ``FunctionType`` (a function from any code object and
globals), ``type(generator)`` is what ``ABC.register`` would need to make a
class pattern accept frames, ``type(ref)`` for a ``typing.ForwardRef``
compiles strings, and every typing alias class calls any origin and writes
``__orig_class__`` onto what it returns. The sandbox's ``type()`` (see
:func:`.guards.safe_type_of`) reports a stand-in for each: ``isinstance``,
``issubclass`` and ``repr`` behave as for the real type, calling it is
refused with a hint, and it cannot be subclassed.
"""

from __future__ import annotations

import types
import typing
from typing import Any

STAND_INS: dict[type, Any] = {}
"""Real type -> what ``type()`` reports for its instances."""
_REAL_TYPES: dict[type, type] = {}
"""Stand-in -> the real type it reports."""
_STAND_IN_HINTS: dict[type, str] = {}
_SHOWN_NAMES: dict[type, str] = {}
FACADE_OF: dict[type, type] = {}
"""Real class -> the facade class a script sees in its place (``enum.Enum``...):
what ``mro()`` lists instead of the real class (see :func:`visible_mro`)."""


class _StandInMeta(type):
    """Metaclass of the stand-ins :func:`.guards.safe_type_of` reports for types whose
    constructor must stay out of reach: ``isinstance``/``issubclass`` and
    ``repr`` behave as for the real type, calling it is refused, and it cannot
    be subclassed."""

    def __instancecheck__(cls, obj: object) -> bool:
        real = _REAL_TYPES.get(cls)
        return isinstance(obj, real) if real is not None else type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        real = _REAL_TYPES.get(cls)
        if real is None:
            return type.__subclasscheck__(cls, sub)
        return issubclass(_REAL_TYPES.get(sub, sub), real)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{cls.__name__}() cannot be called in the sandbox: "
                        f"{_STAND_IN_HINTS.get(cls, 'use the objects the script already has')}")

    def __repr__(cls) -> str:
        shown = _SHOWN_NAMES.get(cls)
        if shown is not None:
            return f"<class {shown!r}>"
        real = _REAL_TYPES.get(cls)
        return repr(real) if real is not None else type.__repr__(cls)


def _refuse_subclass(cls: type, /, **kwargs: Any) -> None:
    raise TypeError(f"type {cls.__name__!r} is not an acceptable base type in the sandbox")


_HIDDEN_CONSTRUCTORS: dict[type, str] = {
    types.FunctionType: "define functions with def or lambda",
    types.MethodType: "call the method on its object, or wrap it in a def or lambda",
    types.CodeType: "code objects are not available in the sandbox",
    types.FrameType: "frames are not available in the sandbox",
    types.TracebackType: "tracebacks are not available in the sandbox",
    types.GeneratorType: "write a generator function with yield",
    types.CoroutineType: "define coroutines with async def",
    types.AsyncGeneratorType: "write an async generator function (async def with yield)",
    types.CellType: "use a nonlocal variable",
    types.GenericAlias: "subscript the class itself, e.g. list[int]",
    typing.ForwardRef: "write the annotation as a string, e.g. Optional['Node']",
}


def _alias_classes() -> list[type]:
    """Every alias class (``typing``'s and ``collections.abc``'s): each one calls its
    origin and writes ``__orig_class__`` onto what it returns."""
    found: list[type] = []
    pending: list[type] = [typing._BaseGenericAlias, types.GenericAlias]  # type: ignore[attr-defined]
    while pending:
        subclasses: list[type] = pending.pop().__subclasses__()
        found += subclasses
        pending += subclasses
    return found


for _alias in _alias_classes():
    _HIDDEN_CONSTRUCTORS[_alias] = "subscript the class or typing object, e.g. list[int]"


def hide_constructor(real: type, hint: str, shown_as: str | None = None) -> Any:
    """Make ``type(x)`` report a stand-in for instances of ``real`` (see
    :class:`_StandInMeta`), named ``shown_as`` if given (an internal class shows
    no module path: ``<class 'tool'>``)."""
    name = shown_as or real.__name__
    stand_in = _StandInMeta(name, (), {
        "__module__": "builtins" if shown_as else real.__module__,
        "__qualname__": shown_as or real.__qualname__,
        "__init_subclass__": classmethod(_refuse_subclass),
    })
    if shown_as:
        _SHOWN_NAMES[stand_in] = shown_as
    _REAL_TYPES[stand_in] = real
    STAND_INS[real] = stand_in
    _STAND_IN_HINTS[stand_in] = hint
    return stand_in


for _real, _hint in _HIDDEN_CONSTRUCTORS.items():
    hide_constructor(_real, _hint)


def show_facade(real: type, facade: type) -> None:
    """Let ``mro()`` list ``facade`` wherever the real class ``real`` would appear."""
    FACADE_OF[real] = facade


_MRO_OF = type.__dict__["__mro__"].__get__


def visible_mro(cls: type) -> list[type]:
    """``cls.mro()`` as a script sees it: every real class that a facade stands for
    is replaced by that facade (once), and a type with a stand-in by the stand-in,
    so that no class the sandbox keeps out of reach is listed (``enum.Enum.mro()``
    would otherwise hand out the real ``Enum`` and its functional API)."""
    seen: list[type] = []
    for base in _MRO_OF(cls):
        shown = FACADE_OF.get(base) or STAND_INS.get(base) or base
        if shown not in seen:
            seen.append(shown)
    return seen
