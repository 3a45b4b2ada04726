# Revenue density: a week of revenue divided by floor area
week = [f"2026-08-{d:02d}" for d in range(10, 17)]
rows = []
for s in list_stores():
    info = get_store_info(s["store_id"])
    total = 0.0
    for d in week:
        try:
            total += get_daily_revenue(s["store_id"], d)["revenue_yuan"]
        except ToolError:
            pass
    rows.append({"store": s["store_id"], "sqm": info["size_sqm"], "revenue": round(total, 2),
                 "per_sqm": round(total / info["size_sqm"], 2), "status": info["status"]})

rows.sort(key=lambda r: r["per_sqm"], reverse=True)
print(f"{'store':<7}{'sqm':>5}{'revenue':>13}{'per sqm':>10}")
for r in rows[:5]:
    print(f"{r['store']:<7}{r['sqm']:>5}{r['revenue']:>13,.2f}{r['per_sqm']:>10,.2f}")
{"top": rows[:3], "bottom": rows[-1], "renovating": [r["store"] for r in rows if r["status"] != "open"]}
