def summarize(label, *values, scale=1.0, **extra):
    first, *middle, last = values
    result = {"label": label, "first": first * scale, "last": last * scale, "middle_count": len(middle)}
    result.update(extra)
    return result

stores = list_stores()
head, *others = stores
*older, newest = sorted(stores, key=lambda s: s["opened"])
print("first listed:", head["name"], "| newest:", newest["name"], newest["opened"])

dates = ["2026-06-0" + str(d) for d in range(1, 8)]
revs = [get_daily_revenue(newest["store_id"], d)["revenue_yuan"] for d in dates]
opts = {"scale": 0.001, "unit": "k CNY"}
res = summarize(newest["store_id"], *revs, **opts)

args = ("ST002", "2026-06-03")
kwargs = {"store_id": "ST003", "date": "2026-06-03"}
a = get_daily_revenue(*args)["revenue_yuan"]
b = get_daily_revenue(**kwargs)["revenue_yuan"]
(x, y), z = (a, b), a + b
merged = [*dates[:2], *["extra"], *dates[-1:]]
combined = {**{"a": 1, "b": 2}, **{"b": 3}}
{"summary": res, "older_count": len(older), "others": len(others), "sum": round(z, 2), "merged": merged, "combined": combined}
