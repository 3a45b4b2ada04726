"""Non-finite numbers (NaN, +inf, -inf) are never valid arguments.

JSON has no NaN or infinity, but Python's ``json`` module reads ``NaN`` and
``Infinity`` and a compromised sandbox or a model's classic call can send
them. They slip through every numeric constraint: ``nan >= 0`` and
``nan <= 1000`` are both false, so ``jsonschema``'s ``minimum``/``maximum``
report nothing, and a policy's ``amount ge 100`` does not hold. So argument
validation refuses them anywhere in the arguments, typed or not.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NON_FINITE_REASON", "has_non_finite", "non_finite_paths"]

NON_FINITE_REASON = "is not a finite number (NaN and infinities are not valid arguments)"


def _bad(value: float) -> bool:
    # finite x: x - x == 0.0 (falsy); NaN and ±inf give NaN (truthy)
    return bool(value - value)


def has_non_finite(args: Any) -> bool:
    """True if a NaN or an infinity occurs anywhere in ``args`` (JSON data)."""
    if type(args) is dict:  # the common case: a flat arguments dict, checked inline
        for value in args.values():
            kind = type(value)
            if kind is float:
                if value - value:
                    return True
            elif kind is not str and kind is not int and kind is not bool and value is not None \
                    and _deep_non_finite(value):
                return True
        return False
    return _deep_non_finite(args)


def _deep_non_finite(args: Any) -> bool:
    stack = [args]
    while stack:
        value = stack.pop()
        if isinstance(value, float):
            if _bad(value):
                return True
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return False


def non_finite_paths(args: Any) -> list[tuple[tuple[Any, ...], float]]:
    """``(path parts, value)`` of every non-finite number in ``args``, in document order."""
    found: list[tuple[tuple[Any, ...], float]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), args)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float):
            if _bad(value):
                found.append((path, value))
        elif isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, (list, tuple)):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(value))))
    return found
