# Pivot: store x weekday average revenue over four weeks (10 stores x 28 days)
from datetime import date, timedelta

names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
stores = [s["store_id"] for s in list_stores()][:10]
start = date(2026, 9, 7)
pivot = {sid: {n: [] for n in names} for sid in stores}
for sid in stores:
    for i in range(28):
        d = start + timedelta(days=i)
        r = get_daily_revenue(sid, d.isoformat())
        if not r["closed"]:
            pivot[sid][names[d.weekday()]].append(r["revenue_yuan"])

avg = {sid: {n: round(sum(v) / len(v)) if v else 0 for n, v in row.items()} for sid, row in pivot.items()}
print("store " + " ".join(f"{n:>7}" for n in names))
for sid in stores:
    print(f"{sid} " + " ".join(f"{avg[sid][n]:>7,}" for n in names))
peak = {sid: max(row, key=row.get) for sid, row in avg.items()}
{"peak_day": peak, "weekend_share": {sid: round((row["Sat"] + row["Sun"]) / sum(row.values()), 3) for sid, row in avg.items()}}
