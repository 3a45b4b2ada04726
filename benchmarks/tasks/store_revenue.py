"""20 stores × 7 days: the top 3 stores by weekly revenue (fan-out, large payloads)."""

from __future__ import annotations

import random
from typing import Any

from toolscript import tool

from .base import Task, answer, calls, script

DAYS = [f"2026-08-{d}" for d in range(17, 24)]
_rng = random.Random(20260817)
STORES = [
    {
        "store_id": f"ST{i:03d}",
        "name": f"Store {i}",
        "city": _rng.choice(["Shanghai", "Beijing", "Shenzhen", "Chengdu", "Hangzhou"]),
        "region": _rng.choice(["east", "north", "south", "west"]),
        "opened": f"20{_rng.randint(10, 24)}-0{_rng.randint(1, 9)}-1{_rng.randint(0, 9)}",
        "floor_area_m2": _rng.randint(120, 900),
    }
    for i in range(1, 21)
]
_BASE = {s["store_id"]: _rng.uniform(8_000, 60_000) for s in STORES}


def _day(store_id: str, date: str) -> dict[str, Any]:
    rng = random.Random(f"{store_id}/{date}")
    revenue = round(_BASE[store_id] * rng.uniform(0.7, 1.3), 2)
    orders = int(revenue / rng.uniform(60, 140))
    online = round(revenue * rng.uniform(0.1, 0.5), 2)
    return {
        "store_id": store_id,
        "date": date,
        "currency": "CNY",
        "revenue_yuan": revenue,
        "orders": orders,
        "avg_basket_yuan": round(revenue / max(orders, 1), 2),
        "refunds_yuan": round(revenue * rng.uniform(0, 0.04), 2),
        "channel_breakdown": {"in_store": round(revenue - online, 2), "online": online},
        "top_category": rng.choice(["grocery", "beauty", "electronics", "apparel", "home"]),
        "staff_on_shift": rng.randint(4, 18),
        "weather": rng.choice(["sunny", "cloudy", "rain"]),
    }


@tool(read_only=True)
def list_stores() -> list[dict[str, Any]]:
    """All stores with their id, name, city, region, opening date and floor area."""
    return [dict(s) for s in STORES]


@tool(read_only=True)
def get_daily_revenue(store_id: str, date: str) -> dict[str, Any]:
    """Sales figures of one store on one day (revenue in yuan, orders, refunds, channels ...).

    Args:
        store_id: Store id, e.g. "ST001".
        date: ISO date, e.g. "2026-08-17".
    """
    return _day(store_id, date)


def _expected() -> list[list[Any]]:
    totals = {
        s["store_id"]: round(sum(_day(s["store_id"], d)["revenue_yuan"] for d in DAYS), 2)
        for s in STORES
    }
    return [[k, v] for k, v in sorted(totals.items(), key=lambda kv: -kv[1])[:3]]


EXPECTED = _expected()
_ANSWER = "Top 3 stores by revenue for 2026-08-17..23: " + "; ".join(
    f"{sid}: {total:,.2f} yuan" for sid, total in EXPECTED
)

SCRIPT = """\
stores = list_stores()
days = [f"2026-08-{d}" for d in range(17, 24)]
totals = {}
for s in stores:
    rows = parallel(get_daily_revenue, [(s["store_id"], d) for d in days])
    totals[s["store_id"]] = round(sum(r["revenue_yuan"] for r in rows), 2)
sorted(totals.items(), key=lambda kv: -kv[1])[:3]
"""

TASK = Task(
    name="store_revenue_20x7",
    prompt="Which 3 of our stores had the highest total revenue in the week 2026-08-17 to "
    "2026-08-23, and what were their totals?",
    tools=[list_stores, get_daily_revenue],
    data_heavy=True,
    classic=[
        calls(("list_stores", {})),
        calls(*[
            ("get_daily_revenue", {"store_id": s["store_id"], "date": d})
            for s in STORES for d in DAYS
        ]),
        answer(_ANSWER),
    ],
    programmatic=[script(SCRIPT), answer(_ANSWER)],
    expected=EXPECTED,
    check=lambda result, expected: result.steps[0].run.value == expected,
)
