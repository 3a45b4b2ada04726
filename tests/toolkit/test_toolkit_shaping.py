"""Result shaping: pages with total_count and a cursor, field selection, notes when cut."""

from __future__ import annotations

from typing import Any

import pytest
from toolkit_helpers import run_ok
from toolscript.runtime.agent.format import format_run_result, format_tool_record
from toolscript.runtime.results import RunResult
from toolscript.runtime.shaping import cap_json, paginate, select_fields, truncate_text

from toolscript import Runtime, tool

ROWS = [{"id": i, "status": "open" if i % 2 else "paid", "total": i * 10} for i in range(1, 121)]


@tool(read_only=True)
def search_orders(status: str, fields: list[str] | None = None,
                  cursor: str | None = None) -> dict[str, Any]:
    """Orders with a status, 50 per page.

    Args:
        status: "open" or "paid".
        fields: keep only these fields of each order.
        cursor: the next_cursor of the previous page.
    """
    rows = [r for r in ROWS if r["status"] == status]
    return paginate(rows, limit=50, cursor=cursor, fields=fields, query={"status": status})


def test_pages_carry_total_count_cursor_and_a_note():
    first = paginate(ROWS, limit=50)
    assert first["total_count"] == 120 and first["returned"] == 50
    assert first["note"] == f"showing items 1-50 of 120; pass cursor={first['next_cursor']!r} " \
                            "for the next page"
    last = paginate(ROWS, limit=50, cursor=paginate(ROWS, limit=50,
                                                    cursor=first["next_cursor"])["next_cursor"])
    assert [r["id"] for r in last["items"]] == list(range(101, 121))
    assert last["next_cursor"] is None and last["note"] == "showing items 101-120 of 120"
    assert "note" not in paginate(ROWS[:3], limit=50)  # nothing was cut: no note


def test_cursor_errors_say_what_to_do():
    cursor = paginate(ROWS, limit=10, query={"status": "open"})["next_cursor"]
    with pytest.raises(ValueError, match="different query"):
        paginate(ROWS, limit=10, cursor=cursor, query={"status": "paid"})
    with pytest.raises(ValueError, match="not valid; pass the next_cursor"):
        paginate(ROWS, cursor="garbage!")


def test_field_selection():
    assert select_fields(ROWS[:2], ["total", "id"]) == [{"total": 10, "id": 1},
                                                        {"total": 20, "id": 2}]
    with pytest.raises(ValueError, match="unknown field\\(s\\) 'price'; available: id, status"):
        select_fields(ROWS[:2], ["price"])


def test_truncate_text():
    assert truncate_text("abc", 5) == {"text": "abc", "truncated": False, "total_chars": 3}
    cut = truncate_text("x" * 10, 4)
    assert cut["text"] == "xxxx" and cut["note"] == "showing the first 4 of 10 characters"


def test_paging_from_a_script(backend):
    code = ("page = search_orders('open', fields=['id'])\nids = [r['id'] for r in page['items']]\n"
            "while page['next_cursor']:\n"
            "    page = search_orders('open', fields=['id'], cursor=page['next_cursor'])\n"
            "    ids.extend(r['id'] for r in page['items'])\n[len(ids), page['total_count']]")
    with Runtime([search_orders], backend=backend) as rt:
        assert run_ok(rt, code) == [60, 60]
        with rt.session() as s:
            record = s.call_tool("search_orders", {"status": "paid", "fields": ["nope"]})
            assert record.error is not None
            assert "available: id, status, total" in record.error.message


def test_cap_json_cuts_lists_at_whole_items_and_counts_them():
    assert cap_json([1, 2, 3], 100) == "[1,2,3]"
    text = cap_json(ROWS, 600)
    body, note = text.split("\n", 1)
    import json

    kept = json.loads(body)  # still valid JSON
    assert kept == ROWS[: len(kept)] and 0 < len(kept) < 120
    assert f"showing the first {len(kept)} of 120 items" in note
    assert len(text) <= 600


def test_what_reaches_the_model_states_how_much_was_dropped():
    text, is_error = format_run_result(RunResult(ok=True, value=ROWS), 800)
    assert not is_error and "of 120 items" in text and len(text) <= 820
    # a direct (classic) call's result is cut the same way
    record = type("R", (), {"ok": True, "value": ROWS, "error": None})()
    text, _ = format_tool_record(record, 800)
    assert "of 120 items" in text
    # non-list values keep the character notice
    text, _ = format_run_result(RunResult(ok=True, value={"blob": "y" * 5000}), 300)
    assert "[truncated: showing the first 300 of" in text
