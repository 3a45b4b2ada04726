# Find pending orders older than 3 days and open a ticket per customer
from datetime import date

today = date(2026, 8, 31)
stale = {}
for c in list_customers():
    for o in search_orders(c["customer_id"], status="pending"):
        age = (today - date.fromisoformat(o["date"])).days
        if age >= 3:
            stale.setdefault(c["customer_id"], []).append((o["order_id"], age))

tickets = []
for cid, orders in sorted(stale.items()):
    oldest = max(age for _, age in orders)
    priority = "high" if oldest >= 4 else "medium"
    ids = ", ".join(oid for oid, _ in orders)
    t = create_ticket(f"Pending orders for {cid}: {ids} (oldest {oldest} days)", priority)
    tickets.append(t["ticket_id"])
    print(t["ticket_id"], t["title"])

{"customers": len(stale), "tickets": tickets, "orders": sum(len(v) for v in stale.values())}
