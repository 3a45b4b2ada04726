# Programmatic tool calling style: top-level await and asyncio.gather over every store
import asyncio

stores = await list_stores()
day = "2026-08-22"
eligible = [s for s in stores if s["opened"] <= day]
rows = await asyncio.gather(*[get_daily_revenue(store_id=s["store_id"], date=day) for s in eligible])

open_rows = [r for r in rows if not r["closed"]]
total = sum(r["revenue_yuan"] for r in open_rows)
print(f"{len(rows)} stores, {len(open_rows)} open, total {total:,.2f}")
best = max(open_rows, key=lambda r: r["revenue_yuan"])
{"total": round(total, 2), "best": best["store_id"], "closed": [r["store_id"] for r in rows if r["closed"]]}
