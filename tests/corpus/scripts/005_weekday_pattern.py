# Which weekday sells best? Four weeks across all stores.
import statistics
from datetime import date, timedelta

WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
start = date.fromisoformat("2026-05-04")
store_ids = [s["store_id"] for s in list_stores()][:10]

per_weekday = {name: [] for name in WEEKDAYS}
for offset in range(28):
    day = start + timedelta(days=offset)
    for sid in store_ids:
        row = get_daily_revenue(sid, day.isoformat())
        if not row["closed"]:
            per_weekday[WEEKDAYS[day.weekday()]].append(row["revenue_yuan"])

stats = {}
for name, values in per_weekday.items():
    stats[name] = {
        "mean": round(statistics.mean(values), 2),
        "median": round(statistics.median(values), 2),
        "stdev": round(statistics.stdev(values), 2),
        "n": len(values),
    }
    print(f"{name}: mean={stats[name]['mean']:>10,.2f} sd={stats[name]['stdev']:>9,.2f}")

best = max(stats, key=lambda k: stats[k]["mean"])
worst = min(stats, key=lambda k: stats[k]["mean"])
{"best": best, "worst": worst, "lift": round(stats[best]["mean"] / stats[worst]["mean"] - 1, 4), "stats": stats}
