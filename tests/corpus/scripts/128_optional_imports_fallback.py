# Data job written for any Python: optional fast libraries with stdlib fallbacks, typing-only imports.
from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

try:
    import ujson as json
    FAST_JSON = True
except ImportError:
    import json
    FAST_JSON = False

try:
    from tabulate import tabulate
except ImportError:
    tabulate = None

try:
    import simplejson
except ModuleNotFoundError as exc:
    simplejson = None
    missing = exc.name

if TYPE_CHECKING:
    from pandas import DataFrame  # only for the type checker


def weekly(store_id: str) -> list[float]:
    return [get_daily_revenue(store_id, f"2026-04-{d:02d}")["revenue_yuan"] for d in range(6, 13)]


rows = []
for store in list_stores()[:5]:
    values = weekly(store["store_id"])
    rows.append([store["store_id"], round(sum(values), 2), round(statistics.mean(values), 2)])

if tabulate is not None:
    print(tabulate(rows, headers=["store", "total", "mean"]))
else:
    print(f"{'store':<8}{'total':>12}{'mean':>10}")
    for sid, total, mean in rows:
        print(f"{sid:<8}{total:>12,.2f}{mean:>10,.2f}")

payload = json.dumps({"rows": rows, "fast_json": FAST_JSON}, sort_keys=True)
{"bytes": len(payload), "fast_json": FAST_JSON, "missing": missing, "best": max(rows, key=lambda r: r[1])[0]}
