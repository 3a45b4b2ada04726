# Classify customer orders with an Enum and report counts and totals per status.
from collections import Counter
from enum import Enum

class Status(Enum):
    PENDING = "pending"
    SHIPPED = "shipped"
    DELIVERED = "delivered"
    CANCELLED = "cancelled"

    @property
    def is_open(self):
        return self in (Status.PENDING, Status.SHIPPED)

counts = Counter()
totals = {s: 0.0 for s in Status}
open_orders = []
for c in list_customers("gold"):
    for o in search_orders(c["customer_id"]):
        st = Status(o["status"])
        counts[st] += 1
        totals[st] += o["total"]
        if st.is_open:
            open_orders.append((o["date"], o["order_id"], st.name))

for st in Status:
    print(f"{st.name:<10} {counts[st]:>3} orders  {totals[st]:>10.2f}")
open_orders.sort(reverse=True)
print("newest open:", open_orders[:3])
{"counts": {s.value: counts[s] for s in Status}, "open": len(open_orders)}
