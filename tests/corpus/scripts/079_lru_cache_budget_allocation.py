# Choose which restock orders to fund within a budget (0/1 knapsack with lru_cache)
from functools import lru_cache

products = list_products()
candidates = []
for p in products:
    inv = get_inventory(p["sku"])
    gap = max(0, inv["reorder_point"] + 40 - inv["on_hand"])
    if gap:
        cost = round(gap * inv["unit_cost"])
        value = gap * (p["price"] - inv["unit_cost"])
        candidates.append((p["sku"], cost, round(value, 2)))

BUDGET = 20000

@lru_cache(maxsize=None)
def best(i, remaining):
    if i == len(candidates):
        return (0.0, ())
    sku, cost, value = candidates[i]
    skip = best(i + 1, remaining)
    if cost > remaining:
        return skip
    v, chosen = best(i + 1, remaining - cost)
    take = (v + value, (sku,) + chosen)
    return max(skip, take)

value, chosen = best(0, BUDGET)
spent = sum(c for s, c, _ in candidates if s in chosen)
print(f"{len(candidates)} candidates; funding {len(chosen)} for {spent:,} CNY, margin {value:,.2f}")
{"chosen": list(chosen), "spent": spent, "margin": round(value, 2), "candidates": len(candidates)}
