"""How much of a tool call's arguments its record keeps in host memory.

A script can send many large arguments (a denied 20 MB call is still
recorded). Each run has a budget (``Limits.max_retained_args_bytes``): a
record keeps its arguments while the budget lasts; after that, arguments
larger than :data:`ALWAYS_KEPT_BYTES` are replaced by a summary - their
JSON size, SHA-256 and first :data:`PREFIX_CHARS` characters - and the
record says so (``ToolCallRecord.args_omitted``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["ALWAYS_KEPT_BYTES", "PREFIX_CHARS", "RetentionBudget", "approx_json_size",
           "summarize_args"]

ALWAYS_KEPT_BYTES = 256
"""Arguments this small are always kept (a summary would be larger)."""
PREFIX_CHARS = 200
"""Characters of the arguments' canonical JSON a summary keeps."""

_SCALAR_SIZE = 24  # a generous JSON size for a number, bool or null


def approx_json_size(value: Any, limit: int) -> int:
    """About the JSON size of ``value`` in characters; stops counting once past
    ``limit`` (the result is then some number above ``limit``)."""
    if type(value) is dict:  # the common case: a flat arguments dict, inline
        size = 2
        for key, item in value.items():
            kind = type(item)
            if kind is str:
                size += len(key) + len(item) + 6
            elif kind is dict or kind is list or kind is tuple:
                size += len(key) + 4 + approx_json_size(item, limit - size)
            else:
                size += len(key) + _SCALAR_SIZE
            if size > limit:
                return size
        return size
    size = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            size += len(item) + 3
        elif kind is dict:
            size += 2
            for key, child in item.items():
                size += len(key) + 4
                stack.append(child)
        elif kind is list or kind is tuple:
            size += 2 + len(item)
            stack.extend(item)
        else:
            size += _SCALAR_SIZE
        if size > limit:
            return size
    return size


def summarize_args(args: Any) -> dict[str, Any]:
    """What a record keeps of arguments over the budget: ``{"omitted": True,
    "bytes", "sha256", "prefix"}`` of their canonical JSON (sorted keys)."""
    try:
        text = json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                          default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(type(args))
    data = text.encode("utf-8", "surrogatepass")
    return {"omitted": True, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "prefix": text[:PREFIX_CHARS]}


class RetentionBudget:
    """The argument bytes the records of one run may still keep."""

    __slots__ = ("left",)

    def __init__(self, total: int) -> None:
        self.left = total

    def keep(self, args: Any) -> bool:
        """Charge ``args`` to the budget; False if they must be summarized instead."""
        if type(args) is dict and len(args) <= 8:  # the common case, without a call
            size = 2
            for key, item in args.items():
                kind = type(item)
                if kind is str:
                    size += len(key) + len(item) + 6
                elif kind is int or kind is bool or kind is float or item is None:
                    size += len(key) + _SCALAR_SIZE
                else:
                    size = approx_json_size(args, max(self.left, ALWAYS_KEPT_BYTES))
                    break
        else:
            size = approx_json_size(args, max(self.left, ALWAYS_KEPT_BYTES))
        if size <= ALWAYS_KEPT_BYTES:
            self.left -= min(size, self.left)
            return True
        if size <= self.left:
            self.left -= size
            return True
        return False
