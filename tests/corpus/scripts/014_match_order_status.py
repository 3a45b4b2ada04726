# Classify orders with a match statement on mappings
def describe(order):
    match order:
        case {"status": "cancelled", "total": total}:
            return ("refund", total)
        case {"status": "pending", "items": [single]}:
            return ("single-item pending", single["qty"])
        case {"status": "pending", "items": [first, *others]}:
            return ("multi-item pending", 1 + len(others))
        case {"status": "shipped" | "delivered" as st, "total": total} if total > 500:
            return (f"big {st}", total)
        case {"status": str(st)}:
            return (st, None)
        case _:
            return ("unknown", None)

labels = {}
samples = []
for c in list_customers()[:30]:
    for order in search_orders(c["customer_id"]):
        label, detail = describe(order)
        labels[label] = labels.get(label, 0) + 1
        if len(samples) < 5:
            samples.append([order["order_id"], label, detail])

for k in sorted(labels):
    print(f"{k:<22}{labels[k]:>4}")
{"labels": labels, "samples": samples}
