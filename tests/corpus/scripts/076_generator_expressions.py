# Generator expressions feeding sum/any/max/sorted/dict directly
stores = list_stores()
day = "2026-02-14"
revs = {s["store_id"]: get_daily_revenue(s["store_id"], day) for s in stores if s["opened"] <= day}

total = sum(r["revenue_yuan"] for r in revs.values())
tx = sum(r["transactions"] for r in revs.values() if not r["closed"])
best = max((r["revenue_yuan"], sid) for sid, r in revs.items())
above_avg = sorted(sid for sid, r in revs.items() if r["revenue_yuan"] > total / len(revs))
by_city = dict((s["city"], s["store_id"]) for s in stores if s["store_id"] in revs)
first_big = next((sid for sid, r in revs.items() if r["revenue_yuan"] > 60000), "none")
squares = list(x * x for x in range(6))
nested = [[c for c in word if c not in "aeiou"] for word in ("store", "sales")]
flat = [y for row in [[1, 2], [3], [4, 5, 6]] for y in row if y % 2 == 0]
print(f"Valentine's day: {total:,.2f} CNY across {len(revs)} stores, {tx} transactions")
{"total": round(total, 2), "best": list(best), "above_avg": above_avg, "cities": len(by_city), "first_big": first_big,
 "squares": squares, "nested": nested, "flat": flat}
