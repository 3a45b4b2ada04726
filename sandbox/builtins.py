"""The builtins a script sees: a curated list, plus guarded replacements.

RestrictedPython 9 removed ``sorted``, ``zip``, ``tuple`` and ``bytes`` from
its ``safe_builtins`` because they iterate in C past ``_getiter_``. This
sandbox has no iteration guard to bypass (see :mod:`.policy`: nothing a
script can reach is a security proxy), so the real functions are safe here.
``bytes``/``bytearray`` are the real types; calls by those names pass a size
check (:func:`sized_call`) because ``bytes(10**10)`` allocates in one C call.
"""

from __future__ import annotations

import builtins as _builtins
import operator as _operator
from collections.abc import Callable
from typing import Any

from .guards import Guards, SafeType
from .scriptexceptions import builtin_exceptions, import_refused
from .standins import hide_constructor

_PLAIN = (
    "abs", "all", "any", "ascii", "bin", "bool", "callable", "chr", "classmethod", "complex",
    "dict", "divmod", "enumerate", "filter", "float", "format", "frozenset", "hash", "hex",
    "id", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min",
    "next", "object", "oct", "ord", "property", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "zip",
    "NotImplemented", "Ellipsis", "False", "True", "None",
)
_EXCEPTIONS = (
    "BaseException", "Exception", "ArithmeticError", "AssertionError", "AttributeError",
    "BufferError", "EOFError", "FloatingPointError", "GeneratorExit", "ImportError",
    "IndexError", "KeyError", "LookupError", "MemoryError", "ModuleNotFoundError",
    "NameError", "NotImplementedError", "OSError", "OverflowError", "PermissionError",
    "RecursionError", "RuntimeError", "StopIteration", "TimeoutError", "TypeError",
    "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError",
    "ValueError", "ZeroDivisionError", "ConnectionError", "LookupError", "ExceptionGroup",
    "BaseExceptionGroup", "Warning", "UserWarning", "DeprecationWarning", "RuntimeWarning",
    "FileNotFoundError", "IsADirectoryError", "InterruptedError",
)
MAX_BYTES_LENGTH = 64 * 1024 * 1024


def sized_call(kind: Any, *args: Any, **kwargs: Any) -> Any:
    """``bytes(...)``/``bytearray(...)`` as the policy compiles calls by those names:
    a size argument above :data:`MAX_BYTES_LENGTH` is refused before the one C call
    that would allocate it. Other routes to the same allocation (an alias of the
    type, ``b'0' * n``) meet the process's memory limit, like ``'x' * n`` does."""
    if kind is bytes or kind is bytearray:
        source = args[0] if args else kwargs.get("source")
        buffer = isinstance(source, (str, bytes, bytearray, memoryview)) or hasattr(
            type(source), "__bytes__")
        if source is not None and not buffer and hasattr(type(source), "__index__"):
            size = _operator.index(source)
            if size > MAX_BYTES_LENGTH:
                raise MemoryError(f"{kind.__name__}({size}) exceeds the sandbox limit of "
                                  f"{MAX_BYTES_LENGTH} bytes")
    return kind(*args, **kwargs)


class BuiltinFunction:
    """A builtin the sandbox implements itself (``print``, ``getattr``...), as a
    script sees it: ``repr`` is ``<built-in function print>`` as in CPython, not
    a bound method that names an internal class and shows a host address, and
    nothing of the implementation is readable (``_func`` is private to a class
    the script did not create; ``type(print)`` is a stand-in)."""

    __slots__ = ("_func", "_name")

    def __init__(self, name: str, func: Callable[..., Any]) -> None:
        self._func = func
        self._name = name

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        return self._func(*args, **kwargs)

    @property
    def __name__(self) -> str:
        """The builtin's name."""
        return self._name

    def __repr__(self) -> str:
        return f"<built-in function {self._name}>"


hide_constructor(BuiltinFunction, "use the builtins the script has",
                 shown_as="builtin_function_or_method")


def _breakpoint(*args: Any, **kwargs: Any) -> None:
    raise NotImplementedError("breakpoint() is not available in the sandbox: print() the values "
                              "you want to inspect")


def _getattr(guards: Guards) -> Callable[..., Any]:
    def getattr(*args: Any, **kwargs: Any) -> Any:
        # CPython's messages for a wrong call (the guard's own signature would show).
        if kwargs:
            raise TypeError("getattr() takes no keyword arguments")
        if len(args) < 2:
            raise TypeError(f"getattr expected at least 2 arguments, got {len(args)}")
        if len(args) > 3:
            raise TypeError(f"getattr expected at most 3 arguments, got {len(args)}")
        if type(args[1]) is not str and not isinstance(args[1], str):
            raise TypeError(f"attribute name must be string, not '{type(args[1]).__name__}'")
        return guards.dynamic_getattr(*args)

    return getattr


_PRINT_KEYWORDS = frozenset({"sep", "end", "file", "flush"})


def _print(print_function: Callable[..., None]) -> Callable[..., None]:
    def print(*values: Any, **kwargs: Any) -> None:
        for key in kwargs:
            if key not in _PRINT_KEYWORDS:
                raise TypeError(f"'{key}' is an invalid keyword argument for print()")
        print_function(*values, **kwargs)

    return print


def _aiter(obj: Any) -> Any:
    """``aiter(obj)``: what ``async for`` calls, with CPython's messages."""
    method = getattr(type(obj), "__aiter__", None)
    if method is None:
        raise TypeError(f"'{type(obj).__name__}' object is not an async iterable")
    iterator = method(obj)
    if getattr(type(iterator), "__anext__", None) is None:
        raise TypeError(f"aiter() returned not an async iterator of type "
                        f"'{type(iterator).__name__}'")
    return iterator


def _anext(*args: Any) -> Any:
    """``anext(iterator[, default])``: the awaitable ``async for`` awaits; with a
    default, a coroutine that returns it at ``StopAsyncIteration``."""
    if not args:
        raise TypeError("anext expected at least 1 argument, got 0")
    if len(args) > 2:
        raise TypeError(f"anext expected at most 2 arguments, got {len(args)}")
    iterator = args[0]
    method = getattr(type(iterator), "__anext__", None)
    if method is None:
        raise TypeError(f"'{type(iterator).__name__}' object is not an async iterator")
    awaitable = method(iterator)
    if len(args) == 1:
        return awaitable
    default = args[1]

    async def anext_with_default() -> Any:
        try:
            return await awaitable
        except StopAsyncIteration:
            return default

    return anext_with_default()


def _dir(guards: Guards) -> Callable[..., list[str]]:
    def dir(*obj: Any) -> list[str]:
        if not obj:
            raise TypeError("dir() without an argument is not available in the sandbox")
        return sorted(name for name in _builtins.dir(obj[0]) if not name.startswith("__"))

    return dir


def make_builtins(
    guards: Guards,
    print_function: Callable[..., None],
    import_function: Callable[..., Any],
) -> dict[str, Any]:
    """Build the ``__builtins__`` mapping of one interpreter."""
    table: dict[str, Any] = {name: getattr(_builtins, name) for name in _PLAIN + _EXCEPTIONS}
    table.update(builtin_exceptions())  # every one; the host's signals are script classes
    own: dict[str, Callable[..., Any]] = {
        "getattr": _getattr(guards), "hasattr": guards.hasattr,
        "setattr": guards.setattr, "delattr": guards.delattr, "vars": guards.vars,
        "dir": _dir(guards), "pow": guards.pow, "print": _print(print_function),
        "breakpoint": _breakpoint, "aiter": _aiter, "anext": _anext,
    }
    table.update({name: BuiltinFunction(name, func) for name, func in own.items()})
    table.update(
        {
            "type": SafeType,
            "bytes": bytes,
            "bytearray": bytearray,
            "_bytes_": sized_call,
            "__import__": import_function,
            "__build_class__": guards.build_class,
            "_match_class_": guards.match_classes,
            "_import_refused_": import_refused,
            "_ipow_": guards.ipow,
            "_ilshift_": guards.ilshift,
            "_augment_": guards.augment,
            "__name__": "__sandbox__",
        }
    )
    return table
