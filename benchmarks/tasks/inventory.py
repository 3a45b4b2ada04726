"""Reorder 30 SKUs: read stock and sales history, then write purchase orders (multi-step)."""

from __future__ import annotations

import random
from typing import Any

from toolscript import tool

from .base import Task, answer, calls, script

_rng = random.Random(3030)
SKUS = [f"SKU-{i:04d}" for i in range(1, 31)]
ORDERS: list[dict[str, Any]] = []


def _stock(sku: str) -> dict[str, Any]:
    rng = random.Random(f"stock/{sku}")
    return {
        "sku": sku,
        "on_hand": rng.randint(0, 400),
        "reserved": rng.randint(0, 30),
        "warehouse": rng.choice(["SH-01", "BJ-02", "SZ-03"]),
        "bin": f"{rng.choice('ABCDEF')}{rng.randint(1, 40):02d}",
        "last_counted": f"2026-08-{rng.randint(1, 20):02d}",
    }


def _sales(sku: str) -> dict[str, Any]:
    rng = random.Random(f"sales/{sku}")
    daily = [rng.randint(0, 25) for _ in range(30)]
    return {"sku": sku, "window_days": 30, "daily_units": daily, "returns_units": rng.randint(0, 9)}


@tool(read_only=True)
def list_skus() -> list[str]:
    """Every SKU we stock."""
    return list(SKUS)


@tool(read_only=True)
def get_stock(sku: str) -> dict[str, Any]:
    """Current stock of one SKU (on hand, reserved, location, last count).

    Args:
        sku: e.g. "SKU-0001".
    """
    return _stock(sku)


@tool(read_only=True)
def get_sales_history(sku: str) -> dict[str, Any]:
    """Units sold per day over the last 30 days.

    Args:
        sku: e.g. "SKU-0001".
    """
    return _sales(sku)


@tool
def create_purchase_order(sku: str, quantity: int) -> dict[str, Any]:
    """Order ``quantity`` units of ``sku`` from its supplier (a write).

    Args:
        sku: e.g. "SKU-0001".
        quantity: Units to order, at least 1.
    """
    order = {"po": f"PO-{len(ORDERS) + 1:04d}", "sku": sku, "quantity": quantity}
    ORDERS.append(order)
    return order


def _plan() -> list[list[Any]]:
    plan = []
    for sku in SKUS:
        stock, sales = _stock(sku), _sales(sku)
        available = stock["on_hand"] - stock["reserved"]
        per_day = sum(sales["daily_units"]) / 30
        if per_day > 0 and available < 14 * per_day:
            plan.append([sku, round(30 * per_day) - available])
    return plan


EXPECTED = _plan()
_ANSWER = f"Created {len(EXPECTED)} purchase orders: " + ", ".join(
    f"{sku} x{qty}" for sku, qty in EXPECTED
)

SCRIPT = """\
skus = list_skus()
stock = parallel(get_stock, [(s,) for s in skus])
sales = parallel(get_sales_history, [(s,) for s in skus])
plan = []
for st, sa in zip(stock, sales):
    available = st["on_hand"] - st["reserved"]
    per_day = sum(sa["daily_units"]) / 30
    if per_day > 0 and available < 14 * per_day:
        plan.append([st["sku"], round(30 * per_day) - available])
orders = [create_purchase_order(sku, qty)["po"] for sku, qty in plan]
{"plan": plan, "orders": orders}
"""

TASK = Task(
    name="inventory_reorder_30",
    prompt="Check every SKU; where available stock covers less than 14 days of average sales, "
    "order enough for 30 days of cover. Report what you ordered.",
    tools=[list_skus, get_stock, get_sales_history, create_purchase_order],
    data_heavy=True,
    classic=[
        calls(("list_skus", {})),
        calls(*[(name, {"sku": s}) for s in SKUS for name in ("get_stock", "get_sales_history")]),
        calls(*[("create_purchase_order", {"sku": s, "quantity": q}) for s, q in EXPECTED]),
        answer(_ANSWER),
    ],
    programmatic=[script(SCRIPT), answer(_ANSWER)],
    expected=EXPECTED,
    check=lambda result, expected: result.steps[0].run.value["plan"] == expected,
)
