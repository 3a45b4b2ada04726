"""Methods of a C base class that are unsafe on instances of a C subclass with a bigger layout.

``datetime.date.replace(dt)`` (``dt`` a ``datetime``; also through
``super(datetime, dt).replace`` or a script's subclass of ``date``) builds a new
object of ``type(dt)`` with the allocation of a ``date``: the result is a
``datetime`` whose time fields and ``tzinfo`` pointer lie past the end of its
memory, so reading ``.tzinfo`` hands the script whatever object the heap holds
there (a loader class, a module) and reading on may crash the process (found by
the reachability crawler, ``tests/security/test_reachability.py``). The policy
routes loads of these names through ``_getattr_`` (:mod:`.policy`), and
:func:`checked_method` hands out such a method only in a form that refuses the
mismatched instances.
"""

from __future__ import annotations

import datetime as _datetime
import types
from collections.abc import Callable
from typing import Any

from .policy import LAYOUT_CHECKED_ATTRIBUTES

__all__ = ["LAYOUT_CHECKED_ATTRIBUTES", "checked_method"]

_UNSAFE: dict[Any, type] = {_datetime.date.replace: _datetime.datetime}
"""C method descriptor -> the C subclass whose instances it must not be applied to."""


def _refusal(name: str) -> TypeError:
    return TypeError(f"{name}() of a base class cannot be applied to a subclass instance in "
                     "the sandbox; call the instance's own method (dt.replace(...)) or convert "
                     "first (dt.date().replace(...))")


def _checked(method: Any, unsafe: type) -> Callable[..., Any]:
    def replace(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        if isinstance(self, unsafe):
            raise _refusal(method.__qualname__)
        return method(self, *args, **kwargs)

    replace.__qualname__ = method.__qualname__
    replace.__doc__ = method.__doc__
    return replace


_CHECKED = {method: _checked(method, unsafe) for method, unsafe in _UNSAFE.items()}


def checked_method(obj: Any, name: str) -> Any:
    """``obj.<name>`` for a name of :data:`LAYOUT_CHECKED_ATTRIBUTES`: the value itself,
    except an unsafe descriptor of :data:`_UNSAFE` (read from a class: a checked
    version) or that descriptor bound to an instance it must not see (refused)."""
    if type(obj) is str:  # the common case: str.replace
        return getattr(obj, name)
    value = getattr(obj, name)
    checked = _CHECKED.get(value) if type(value) is types.MethodDescriptorType else None
    if checked is not None:
        return checked
    if type(value) is types.BuiltinMethodType:
        owner = value.__self__
        for method, unsafe in _UNSAFE.items():
            if isinstance(owner, unsafe) and value == method.__get__(owner):
                raise AttributeError(f"{method.__qualname__} of a {type(owner).__name__!r} "
                                     "object is not available in the sandbox: "
                                     f"{_refusal(method.__qualname__)}")
    return value
