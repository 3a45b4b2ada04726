# Top 3 stores by total revenue over one week
from datetime import date, timedelta

start = date(2026, 8, 17)
days = [(start + timedelta(days=i)).isoformat() for i in range(7)]
stores = list_stores()

totals = {}
for store in stores:
    sid = store["store_id"]
    total = 0.0
    for d in days:
        try:
            total += get_daily_revenue(sid, d)["revenue_yuan"]
        except ToolError as e:
            print(f"skip {sid} {d}: {e.message}")
    totals[sid] = round(total, 2)

ranked = sorted(totals.items(), key=lambda kv: kv[1], reverse=True)
top3 = ranked[:3]
names = {s["store_id"]: s["name"] for s in stores}
for rank, (sid, total) in enumerate(top3, start=1):
    print(f"{rank}. {names[sid]:<22} {total:>12,.2f} CNY")

[{"store_id": sid, "name": names[sid], "revenue": total} for sid, total in top3]
