from datetime import date, timedelta

start, end = date(2026, 6, 20), date(2026, 7, 20)
closed = {}
n_days = (end - start).days + 1
for s in list_stores():
    sid = s["store_id"]
    for i in range(n_days):
        d = (start + timedelta(days=i)).isoformat()
        try:
            r = get_daily_revenue(sid, d)
        except ToolError:
            continue
        if r["closed"]:
            closed.setdefault(sid, []).append(d)

lines = []
for sid, days in sorted(closed.items(), key=lambda kv: (-len(kv[1]), kv[0])):
    first, last = days[0], days[-1]
    lines.append(f"{sid}: {len(days)} closed day(s), {first}..{last}")
print(*lines, sep="\n")
{"stores_with_closures": len(closed), "longest": max(closed, key=lambda k: len(closed[k])),
 "total_closed_days": sum(map(len, closed.values()))}
