from collections import deque
from datetime import date, timedelta

window = deque(maxlen=7)
averages = []
alerts = []
start = date(2026, 4, 1)
for i in range(45):
    day = (start + timedelta(days=i)).isoformat()
    rev = get_daily_revenue("ST006", day)["revenue_yuan"]
    if len(window) == window.maxlen:
        avg = sum(window) / len(window)
        averages.append(round(avg, 2))
        if rev < 0.7 * avg:
            alerts.append((day, rev, round(avg, 2)))
    window.append(rev)

recent = deque(averages[-5:])
recent.rotate(1)
recent.appendleft(0.0)
print(f"{len(alerts)} alert days")
for day, rev, avg in alerts:
    print(f"  {day}: {rev:,.0f} vs 7-day avg {avg:,.0f}")
{"alerts": alerts, "last_avg": averages[-1], "recent": list(recent), "window": len(window)}
