# Top 3 stores by revenue over one week: 1 + 8 stores x 7 days = 57 tool calls,
# none of whose results enter a model's context; only the summary does.
from datetime import date, timedelta

start = date(2026, 8, 24)
days = [(start + timedelta(days=i)).isoformat() for i in range(7)]
totals = {}
for store in list_stores():
    rows = parallel(get_daily_revenue, [{"store_id": store["store_id"], "date": d} for d in days])
    totals[store["store_id"]] = sum(r["revenue_yuan"] for r in rows)

ranked = sorted(totals.items(), key=lambda kv: kv[1], reverse=True)
for store_id, total in ranked[:3]:
    print(f"{store_id}: {total:>10,} yuan")
{"week_of": days[0], "top3": [{"store_id": s, "revenue_yuan": t} for s, t in ranked[:3]]}
