# Walrus operator in comprehensions and while loops
stores = list_stores()
day = "2026-08-29"

strong = [
    (s["store_id"], rev)
    for s in stores
    if s["opened"] <= day and (rev := get_daily_revenue(s["store_id"], day)["revenue_yuan"]) > 45000
]
print("strong stores:", strong)

queue = [p["sku"] for p in list_products()]
restock = []
while queue and (sku := queue.pop(0)):
    if (inv := get_inventory(sku))["on_hand"] < 200:
        restock.append((sku, inv["on_hand"]))
    if len(restock) >= 5:
        break

if (n := len(restock)) > 3:
    print(f"{n} products need attention")
{"strong": strong, "restock": restock, "remaining_queue": len(queue)}
