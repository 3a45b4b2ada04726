# Find products below their reorder point and open a ticket for each
products = list_products()
low = []
for p in products:
    inv = get_inventory(p["sku"])
    if inv["on_hand"] < inv["reorder_point"]:
        shortfall = inv["reorder_point"] - inv["on_hand"]
        low.append((p["sku"], p["name"], inv["on_hand"], inv["reorder_point"], shortfall))

low.sort(key=lambda row: row[4], reverse=True)
tickets = []
for sku, name, on_hand, rop, shortfall in low:
    priority = "urgent" if on_hand == 0 or shortfall > 100 else "high" if shortfall > 50 else "medium"
    t = create_ticket(f"Restock {name} ({sku}): {on_hand} on hand, reorder point {rop}", priority)
    tickets.append({"sku": sku, "ticket": t["ticket_id"], "priority": priority})
    print(f"{t['ticket_id']} {priority:>6} {name}")

{"checked": len(products), "low_stock": len(low), "tickets": tickets}
