from datetime import date
from itertools import groupby

stores = sorted(list_stores(), key=lambda s: s["opened"])
cohorts = {}
for year, group in groupby(stores, key=lambda s: s["opened"][:4]):
    members = list(group)
    revs = []
    for s in members:
        r = get_daily_revenue(s["store_id"], "2026-08-15")
        revs.append(r["revenue_yuan"])
    cohorts[year] = {"stores": len(members), "avg_revenue": round(sum(revs) / len(revs), 2)}
    print(year, "->", [m["store_id"] for m in members])

oldest = date.fromisoformat(stores[0]["opened"])
newest = date.fromisoformat(stores[-1]["opened"])
{"cohorts": cohorts, "span_days": (newest - oldest).days, "oldest": stores[0]["store_id"], "newest": stores[-1]["store_id"]}
