# Order status funnel with percentage format specs
from collections import Counter

statuses = Counter()
value = Counter()
for c in list_customers():
    for o in search_orders(c["customer_id"]):
        statuses[o["status"]] += 1
        value[o["status"]] += o["total"]

total = sum(statuses.values())
print(f"{'status':<10}{'orders':>7}{'share':>8}{'value':>12}")
for st in ["pending", "shipped", "delivered", "cancelled"]:
    print(f"{st:<10}{statuses[st]:>7}{statuses[st] / total:>8.1%}{value[st]:>12,.2f}")
completion = statuses["delivered"] / total
cancel_rate = statuses["cancelled"] / total
print(f"completion {completion:.2%}, cancellations {cancel_rate:.1%}, open {1 - completion - cancel_rate:.0%}")
{"counts": dict(statuses), "completion": round(completion, 4), "cancel_rate": round(cancel_rate, 4),
 "avg_order": round(sum(value.values()) / total, 2)}
