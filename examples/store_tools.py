"""Example tools: store revenue and expenses (read-only) and email (a write).

Deterministic fake data, so the example scripts print the same answer every
time. Load with ``--tools examples/store_tools.py``.
"""

from __future__ import annotations

import hashlib
from datetime import date as Date
from typing import Literal

from toolscript import tool

STORES = {f"ST{n:03d}": city for n, city in enumerate(
    ["Shanghai", "Beijing", "Shenzhen", "Hangzhou", "Chengdu", "Wuhan", "Xi'an", "Nanjing"],
    start=1)}
DEPARTMENTS = {"sales": 12_000, "engineering": 30_000, "marketing": 15_000, "support": 8_000}
OUTBOX: list[dict[str, str]] = []


def _number(*parts: str, low: int, high: int) -> int:
    digest = hashlib.sha256("|".join(parts).encode()).digest()
    return low + int.from_bytes(digest[:4], "big") % (high - low + 1)


@tool(read_only=True)
def list_stores() -> list[dict[str, str]]:
    """All stores with their ids and cities, as a list of {store_id, city}; call it
    first to learn the store ids the other store tools take."""
    return [{"store_id": sid, "city": city} for sid, city in STORES.items()]


@tool(read_only=True)
def get_daily_revenue(store_id: str, date: str) -> dict[str, object]:
    """Revenue of one store on one day, in yuan: {store_id, date, revenue_yuan}. Call
    it once per store and day; there is no weekly total, sum the days yourself.

    Args:
        store_id: store id such as "ST001" (see list_stores).
        date: ISO date, e.g. "2026-08-24".
    """
    if store_id not in STORES:
        raise KeyError(f"unknown store {store_id}")
    day = Date.fromisoformat(date)
    return {"store_id": store_id, "date": day.isoformat(),
            "revenue_yuan": _number(store_id, date, low=20_000, high=90_000)}


@tool(read_only=True)
def list_employees(department: Literal["sales", "engineering", "marketing", "support"]
                   ) -> list[dict[str, str]]:
    """Employees of one department with their managers: a list of {employee_id,
    department, manager_email}, whose ids get_expenses takes.

    Args:
        department: the department name.
    """
    return [{"employee_id": f"{department[:3].upper()}{i:02d}", "department": department,
             "manager_email": f"head-of-{department}@example.com"} for i in range(1, 6)]


@tool(read_only=True)
def get_expenses(employee_id: str, month: str) -> dict[str, object]:
    """Total expenses of one employee in one month, in yuan: {employee_id, month,
    total_yuan}. Compare a department's sum with get_budget.

    Args:
        employee_id: id from list_employees, e.g. "SAL01".
        month: "YYYY-MM", e.g. "2026-08".
    """
    return {"employee_id": employee_id, "month": month,
            "total_yuan": _number(employee_id, month, low=500, high=4_000)}


@tool(read_only=True)
def get_budget(department: str) -> dict[str, object]:
    """Monthly expense budget of one department, in yuan: {department, budget_yuan}.
    Use get_expenses for what the department actually spent.

    Args:
        department: the department name.
    """
    if department not in DEPARTMENTS:
        raise KeyError(f"unknown department {department}")
    return {"department": department, "budget_yuan": DEPARTMENTS[department]}


@tool(requires_approval=True)
def send_email(to: str, subject: str, body: str) -> dict[str, str]:
    """Send an email (a write: it needs approval) and return {status, message_id}.
    Only for messages the task asks for; reading tools never need it.

    Args:
        to: recipient address.
        subject: subject line.
        body: plain-text body.
    """
    OUTBOX.append({"to": to, "subject": subject, "body": body})
    return {"status": "sent", "message_id": f"m{len(OUTBOX)}"}


TOOLS = [list_stores, get_daily_revenue, list_employees, get_expenses, get_budget, send_email]
