"""50 employees' July expenses against their budgets (two tools per employee, large lists)."""

from __future__ import annotations

import random
from typing import Any

from toolscript import tool

from .base import Task, answer, calls, script

MONTH = "2026-07"
_rng = random.Random(202607)
_DEPARTMENTS = ["sales", "engineering", "marketing", "support", "finance"]
EMPLOYEES = [
    {
        "employee_id": f"E{i:03d}",
        "name": f"Employee {i}",
        "department": _rng.choice(_DEPARTMENTS),
        "manager_email": f"manager{i % 7}@example.com",
        "title": _rng.choice(["associate", "senior", "lead", "manager"]),
    }
    for i in range(1, 51)
]
_CATEGORIES = ["travel", "meals", "software", "hardware", "training", "client_gifts"]


def _expenses(employee_id: str) -> list[dict[str, Any]]:
    rng = random.Random(f"{employee_id}/{MONTH}")
    return [
        {
            "expense_id": f"{employee_id}-{n:02d}",
            "date": f"{MONTH}-{rng.randint(1, 31):02d}",
            "category": rng.choice(_CATEGORIES),
            "amount_yuan": round(rng.uniform(20, 1800), 2),
            "merchant": rng.choice(["Didi", "Meituan", "JD.com", "Hilton", "CTrip", "Apple"]),
            "description": rng.choice(
                ["taxi to client site", "team lunch", "license renewal", "conference hotel",
                 "flight to Beijing", "monitor", "workshop fee", "gift for partner"]
            ),
            "receipt_attached": rng.random() > 0.1,
            "status": rng.choice(["approved", "pending"]),
        }
        for n in range(rng.randint(6, 14))
    ]


def _budget(employee_id: str) -> dict[str, Any]:
    rng = random.Random(f"budget/{employee_id}")
    return {
        "employee_id": employee_id,
        "month": MONTH,
        "monthly_budget_yuan": float(rng.choice([3000, 4000, 5000, 6000, 8000, 10000])),
        "category_limits_yuan": {
            c: float(rng.choice([500, 1000, 2000, 3000])) for c in _CATEGORIES
        },
        "approver": f"manager{int(employee_id[1:]) % 7}@example.com",
    }


@tool(read_only=True)
def list_employees() -> list[dict[str, Any]]:
    """All employees: id, name, department, title and manager's email."""
    return [dict(e) for e in EMPLOYEES]


@tool(read_only=True)
def get_expenses(employee_id: str, month: str) -> list[dict[str, Any]]:
    """Every expense line of one employee in one month.

    Args:
        employee_id: e.g. "E001".
        month: "YYYY-MM".
    """
    return _expenses(employee_id)


@tool(read_only=True)
def get_budget(employee_id: str) -> dict[str, Any]:
    """The monthly expense budget of one employee, with per-category limits.

    Args:
        employee_id: e.g. "E001".
    """
    return _budget(employee_id)


def _expected() -> list[list[Any]]:
    over = []
    for e in EMPLOYEES:
        spent = round(sum(x["amount_yuan"] for x in _expenses(e["employee_id"])), 2)
        budget = _budget(e["employee_id"])["monthly_budget_yuan"]
        if spent > budget:
            over.append([e["employee_id"], round(spent - budget, 2)])
    return sorted(over, key=lambda row: -row[1])


EXPECTED = _expected()
_ANSWER = f"{len(EXPECTED)} employees exceeded their July budget: " + "; ".join(
    f"{eid} by {excess:,.2f} yuan" for eid, excess in EXPECTED
)

PEEK = "emps = list_employees()\nlen(emps), emps[0]"
SCRIPT = """\
over = []
for e in emps:
    eid = e["employee_id"]
    spent = round(sum(x["amount_yuan"] for x in get_expenses(eid, "2026-07")), 2)
    budget = get_budget(eid)["monthly_budget_yuan"]
    if spent > budget:
        over.append([eid, round(spent - budget, 2)])
sorted(over, key=lambda row: -row[1])
"""

TASK = Task(
    name="expenses_vs_budget_50",
    prompt="Which employees exceeded their monthly expense budget in July 2026, and by how much?",
    tools=[list_employees, get_expenses, get_budget],
    data_heavy=True,
    classic=[
        calls(("list_employees", {})),
        calls(*[
            pair
            for e in EMPLOYEES
            for pair in (
                ("get_expenses", {"employee_id": e["employee_id"], "month": MONTH}),
                ("get_budget", {"employee_id": e["employee_id"]}),
            )
        ]),
        answer(_ANSWER),
    ],
    programmatic=[script(PEEK), script(SCRIPT), answer(_ANSWER)],
    expected=EXPECTED,
    check=lambda result, expected: result.steps[1].run.value == expected,
)
