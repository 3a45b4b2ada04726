"""Results shaped for a model: pages with a total and a cursor, chosen fields,
and a clear note whenever something was cut.

Helpers for tool authors (call them inside a tool)::

    @tool(read_only=True)
    def search_orders(status: str, fields: list[str] | None = None,
                      cursor: str | None = None) -> dict:
        rows = db.orders(status=status)
        return paginate(rows, limit=50, cursor=cursor, fields=fields, query={"status": status})

    # -> {"items": [...50 rows...], "total_count": 1234, "returned": 50,
    #     "next_cursor": "eyJvIjo1MH0", "note": "showing items 1-50 of 1234; pass
    #     cursor='eyJvIjo1MH0' for the next page"}

and one for the host: :func:`cap_json` renders a value for the model within
a character budget, cutting a list at whole items and saying how many of how
many were kept (used for what a script or a direct call returns to the model).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "cap_json",
    "decode_cursor",
    "encode_cursor",
    "paginate",
    "select_fields",
    "truncate_text",
]


def _query_tag(query: Any) -> str:
    text = json.dumps(query, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def encode_cursor(offset: int, query: Any = None) -> str:
    """An opaque continuation token for ``offset`` (bound to ``query`` if given)."""
    data: dict[str, Any] = {"o": offset}
    if query is not None:
        data["q"] = _query_tag(query)
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, query: Any = None) -> int:
    """The offset in a token from :func:`encode_cursor`.

    Raises:
        ValueError: the token is malformed or was made for another query.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        offset = data["o"]
    except (ValueError, KeyError, TypeError):
        raise ValueError(
            f"cursor {cursor!r} is not valid; pass the next_cursor of the previous page "
            "unchanged, or no cursor for the first page"
        ) from None
    if not isinstance(offset, int) or offset < 0:
        raise ValueError(f"cursor {cursor!r} is not valid")
    if query is not None and data.get("q") != _query_tag(query):
        raise ValueError(
            "this cursor belongs to a different query; keep the other arguments unchanged "
            "when paging, or start again without a cursor"
        )
    return offset


def select_fields(rows: Sequence[Mapping[str, Any]], fields: Sequence[str]) -> list[dict[str, Any]]:
    """Each row with only ``fields`` (in that order).

    Raises:
        ValueError: a field no row has, naming the available ones.
    """
    available: dict[str, None] = {}
    for row in rows:
        for key in row:
            available.setdefault(key, None)
    unknown = [f for f in fields if f not in available]
    if unknown and rows:
        raise ValueError(
            f"unknown field(s) {', '.join(map(repr, unknown))}; available: "
            + ", ".join(available)
        )
    return [{f: row[f] for f in fields if f in row} for row in rows]


def paginate(
    items: Sequence[Any],
    *,
    limit: int = 50,
    cursor: str | None = None,
    fields: Sequence[str] | None = None,
    query: Any = None,
) -> dict[str, Any]:
    """One page of ``items``: ``{"items", "total_count", "returned", "next_cursor"}``,
    plus a ``"note"`` for the model whenever items were left out.

    Args:
        items: all matching items (rows are dicts when ``fields`` is used).
        limit: the page size.
        cursor: the ``next_cursor`` of the previous page, or None for the first.
        fields: keep only these keys of each row.
        query: the other arguments of the call; binds cursors to them.

    Raises:
        ValueError: a bad cursor or an unknown field (the message says what to do).
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    offset = decode_cursor(cursor, query) if cursor else 0
    total = len(items)
    page = list(items[offset : offset + limit])
    if fields is not None:
        page = select_fields(page, fields)
    end = offset + len(page)
    next_cursor = encode_cursor(end, query) if end < total else None
    out: dict[str, Any] = {
        "items": page,
        "total_count": total,
        "returned": len(page),
        "next_cursor": next_cursor,
    }
    if next_cursor is not None or offset > 0:
        shown = f"items {offset + 1}-{end}" if page else "no items"
        note = f"showing {shown} of {total}"
        if next_cursor is not None:
            note += f"; pass cursor={next_cursor!r} for the next page"
        out["note"] = note
    return out


def truncate_text(text: str, max_chars: int) -> dict[str, Any]:
    """``{"text", "truncated", "total_chars"}`` (+ ``"note"`` when cut) for long text."""
    if len(text) <= max_chars:
        return {"text": text, "truncated": False, "total_chars": len(text)}
    return {
        "text": text[:max_chars],
        "truncated": True,
        "total_chars": len(text),
        "note": f"showing the first {max_chars:,} of {len(text):,} characters",
    }


_NOTE_ROOM = 200
"""Characters kept free for the truncation note."""


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


def cap_json(value: Any, max_chars: int) -> str:
    """``value`` as compact JSON within ``max_chars``.

    A list that is too long is cut after the last whole item that fits, and a
    note says how many items (and characters) of how many were kept; other
    values, and budgets too small to hold an item and the note, are returned
    whole (the caller's character cap applies to them).
    """
    text = _dumps(value)
    if len(text) <= max_chars or not isinstance(value, list) or not value:
        return text
    budget = max_chars - _NOTE_ROOM
    if budget < _NOTE_ROOM:  # too small to be useful: the caller's character cap applies
        return text
    parts: list[str] = []
    used = 2
    for item in value:
        piece = _dumps(item)
        if used + len(piece) + 1 > budget:
            break
        parts.append(piece)
        used += len(piece) + 1
    if not parts:
        return text
    shown = "[" + ",".join(parts) + "]"
    return (
        shown
        + f"\n[truncated: showing the first {len(parts):,} of {len(value):,} items "
        f"({len(shown):,} of {len(text):,} characters). Aggregate or filter inside the "
        "script, or return fewer items.]"
    )
