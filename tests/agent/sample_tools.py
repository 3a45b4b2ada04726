"""Tools the agent tests (and the CLI test) run: store revenue, notes, email."""

from __future__ import annotations

from typing import Literal

from toolscript.tools import tool

STORES = [f"ST{i:03d}" for i in range(1, 6)]
NOTES: list[str] = []
SENT: list[dict[str, str]] = []


@tool(read_only=True)
def list_stores() -> list[str]:
    """The ids of all stores."""
    return list(STORES)


@tool(read_only=True)
def get_daily_revenue(store_id: str, date: str) -> dict[str, object]:
    """Revenue of one store on one day, in yuan.

    Args:
        store_id: Store id, e.g. "ST001".
        date: ISO date, e.g. "2026-08-24".
    """
    if store_id not in STORES:
        raise ValueError(f"unknown store {store_id}")
    number = int(store_id[2:])
    return {"store_id": store_id, "date": date, "revenue_yuan": 1000.0 * number + len(date)}


@tool
def add_note(text: str, priority: Literal["low", "high"] = "low") -> str:
    """Store a note (a write).

    Args:
        text: The note.
        priority: How urgent it is.
    """
    if text == "fail":
        raise RuntimeError("the note store is full")
    NOTES.append(f"{priority}:{text}")
    return f"noted #{len(NOTES)}"


@tool(requires_approval=True)
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email (needs approval).

    Args:
        to: Recipient address.
        subject: Subject line.
        body: Message text.
    """
    SENT.append({"to": to, "subject": subject, "body": body})
    return "sent"


TOOLS = [list_stores, get_daily_revenue, add_note, send_email]
