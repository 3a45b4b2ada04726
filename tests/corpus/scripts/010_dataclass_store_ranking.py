from dataclasses import dataclass, field

@dataclass(order=True)
class StoreResult:
    revenue: float
    store_id: str = field(compare=False)
    city: str = field(compare=False)
    days: list = field(default_factory=list, compare=False)

results = []
for s in list_stores():
    res = StoreResult(0.0, s["store_id"], s["city"])
    for day in ["2026-07-01", "2026-07-02", "2026-07-03"]:
        try:
            r = get_daily_revenue(s["store_id"], day)
        except ToolError:
            continue
        res.revenue += r["revenue_yuan"]
        res.days.append(day)
    results.append(res)

results.sort(reverse=True)
for r in results[:5]:
    print(r.store_id, r.city, f"{r.revenue:.2f}", len(r.days))
print(results[-1])

[{"store": r.store_id, "revenue": round(r.revenue, 2)} for r in results[:5]] + [{"lowest": results[-1].store_id}]
