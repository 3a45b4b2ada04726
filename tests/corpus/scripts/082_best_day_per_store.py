# Best and worst day of August for every store
best = {}
worst = {}
for s in list_stores():
    sid = s["store_id"]
    rows = []
    for day in range(1, 32):
        r = get_daily_revenue(sid, f"2026-08-{day:02d}")
        if not r["closed"]:
            rows.append(r)
    if not rows:
        print(f"{sid}: no trading days in August")
        continue
    top = max(rows, key=lambda r: r["revenue_yuan"])
    low = min(rows, key=lambda r: r["revenue_yuan"])
    best[sid] = (top["date"], top["revenue_yuan"])
    worst[sid] = (low["date"], low["revenue_yuan"])

spread = {sid: round(best[sid][1] / worst[sid][1], 2) for sid in best}
widest = max(spread, key=spread.get)
print(f"widest spread: {widest} x{spread[widest]}")
{"best": best, "spread": spread, "widest": widest, "missing": sorted(set(s["store_id"] for s in list_stores()) - set(best))}
