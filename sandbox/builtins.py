"""The builtins a script sees: a curated list, plus guarded replacements.

RestrictedPython 9 removed ``sorted``, ``zip``, ``tuple`` and ``bytes`` from
its ``safe_builtins`` because they iterate in C past ``_getiter_``. This
sandbox has no iteration guard to bypass (see :mod:`.policy`: nothing a
script can reach is a security proxy), so the real functions are safe here;
``bytes``/``bytearray`` get a size cap because ``bytes(10**10)`` allocates in
one C call.
"""

from __future__ import annotations

import builtins as _builtins
from collections.abc import Callable
from typing import Any

from .guards import Guards, SafeType

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


def _sized(kind: type) -> Callable[..., Any]:
    def make(source: Any = b"", *args: Any) -> Any:
        if type(source) is int and source > MAX_BYTES_LENGTH:
            raise MemoryError(f"{kind.__name__}({source}) exceeds the sandbox limit of "
                              f"{MAX_BYTES_LENGTH} bytes")
        return kind(source, *args)

    make.__name__ = kind.__name__
    make.__qualname__ = kind.__name__
    return make


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
    table.update(
        {
            "type": SafeType,
            "getattr": guards.dynamic_getattr,
            "hasattr": guards.hasattr,
            "setattr": guards.setattr,
            "delattr": guards.delattr,
            "vars": guards.vars,
            "dir": _dir(guards),
            "pow": guards.pow,
            "bytes": _sized(bytes),
            "bytearray": _sized(bytearray),
            "print": print_function,
            "__import__": import_function,
            "__build_class__": guards.build_class,
            "_match_class_": guards.match_classes,
            "__name__": "__sandbox__",
        }
    )
    return table
