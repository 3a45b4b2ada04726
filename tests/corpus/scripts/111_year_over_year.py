# Same week, two years: which stores grew?
from datetime import date, timedelta

def week(start):
    return [(start + timedelta(days=i)).isoformat() for i in range(7)]

this_week = week(date(2026, 8, 10))
last_week = week(date(2025, 8, 11))   # same weekdays one year earlier
growth = {}
for s in list_stores():
    sid = s["store_id"]
    try:
        now = sum(get_daily_revenue(sid, d)["revenue_yuan"] for d in this_week)
        before = sum(get_daily_revenue(sid, d)["revenue_yuan"] for d in last_week)
    except ToolError as e:
        print(f"{sid}: no comparison ({e.message.split(': ')[-1]})")
        continue
    growth[sid] = None if before == 0 else round(now / before - 1, 4)

comparable = {k: v for k, v in growth.items() if v is not None}
grew = sorted((k for k, v in comparable.items() if v > 0), key=comparable.get, reverse=True)
print("grew:", ", ".join(f"{k} {comparable[k]:+.1%}" for k in grew[:5]))
{"growth": growth, "grew": grew, "share_growing": round(len(grew) / len(comparable), 3)}
