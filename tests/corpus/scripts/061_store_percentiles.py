import statistics
from datetime import date, timedelta

start = date(2026, 5, 1)
dates = [(start + timedelta(days=i)).isoformat() for i in range(14)]
monthly = {}
for s in list_stores():
    if s["opened"] > dates[0]:
        continue
    monthly[s["store_id"]] = sum(get_daily_revenue(s["store_id"], d)["revenue_yuan"] for d in dates)

values = sorted(monthly.values())
q1, q2, q3 = statistics.quantiles(values, n=4)
deciles = statistics.quantiles(values, n=10)

def band(v):
    if v >= q3:
        return "top"
    if v >= q2:
        return "upper-mid"
    if v >= q1:
        return "lower-mid"
    return "bottom"

bands = {sid: band(v) for sid, v in monthly.items()}
print(f"Q1={q1:,.0f} median={q2:,.0f} Q3={q3:,.0f}")
{"quartiles": [round(q, 2) for q in (q1, q2, q3)], "p90": round(deciles[-1], 2),
 "top": sorted(s for s, b in bands.items() if b == "top"), "bottom": sorted(s for s, b in bands.items() if b == "bottom")}
