# Closures with nonlocal to track tool usage and running totals
def make_tracker():
    calls = 0
    total = 0.0
    def record(amount):
        nonlocal calls, total
        calls += 1
        total += amount
        return total
    def summary():
        return {"calls": calls, "total": round(total, 2), "avg": round(total / calls, 2) if calls else 0}
    return record, summary

record, summary = make_tracker()
for sku in [p["sku"] for p in list_products("equipment")] + [p["sku"] for p in list_products("ware")]:
    inv = get_inventory(sku)
    stock_value = inv["on_hand"] * inv["unit_cost"]
    running = record(stock_value)
    print(f"{sku}: {stock_value:>10,.2f} running={running:>12,.2f}")

summary()
