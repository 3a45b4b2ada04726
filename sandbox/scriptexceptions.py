"""Every builtin exception class, as a script sees it.

Most are Python's own classes: raising one is an exception like any other.
``KeyboardInterrupt`` and ``SystemExit`` are not: the host's own Ctrl-C (on
the inprocess backend it lands in the script's thread) and an exit of the
sandbox process are those classes, and the interpreter, the guards and the
backends let them through. A script gets classes of its own under those
names: ``BaseException`` subclasses (so ``except Exception:`` does not catch
them, as in CPython) that are not subclasses of the real ones, so raising one
ends the script as any uncaught exception does, and ``except
KeyboardInterrupt:`` in a script never swallows the host's Ctrl-C. No route
from them leads to the real classes (their ``mro()`` is ``[cls,
BaseException, object]``).
"""

from __future__ import annotations

import builtins as _builtins
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any


class KeyboardInterrupt(BaseException):
    """Program interrupted by user (raised by the script: ends it as an error)."""


class SystemExit(BaseException):
    """Request to exit from the interpreter (raised by the script: ends it as an error)."""

    @property
    def code(self) -> Any:
        """The exit status or message, as CPython's ``SystemExit.code``."""
        args = self.args
        if not args:
            return None
        return args[0] if len(args) == 1 else args


for _cls in (KeyboardInterrupt, SystemExit):
    _cls.__module__ = "builtins"

SCRIPT_SIGNALS: tuple[type[BaseException], ...] = (KeyboardInterrupt, SystemExit)
"""The script's own classes in place of the host's signals."""

_REPLACED = {cls.__name__: cls for cls in SCRIPT_SIGNALS}


def _collect_builtin_exceptions() -> dict[str, type[BaseException]]:
    table: dict[str, type[BaseException]] = {}
    for name in dir(_builtins):
        value = getattr(_builtins, name)
        if not name.startswith("_") and isinstance(value, type) and issubclass(
                value, BaseException):
            table[name] = _REPLACED.get(name, value)
    return table


_BUILTIN_EXCEPTIONS: Mapping[str, type[BaseException]] = MappingProxyType(
    _collect_builtin_exceptions())


def builtin_exceptions() -> Mapping[str, type[BaseException]]:
    """Every exception class of ``builtins`` by its name, the host's signals
    replaced by the script's own classes (built once, at import: a run's
    builtins are made twice per fresh run)."""
    return _BUILTIN_EXCEPTIONS


def import_refused(module: str, message: str, relative: bool) -> None:
    """What an import statement of a module without a facade compiles to
    (``_import_refused_``, see :mod:`.policy`): the error CPython raises for a
    module that is not installed, at the statement, catchable by the script."""
    if relative:
        raise ImportError(message)
    raise ModuleNotFoundError(message, name=module)
