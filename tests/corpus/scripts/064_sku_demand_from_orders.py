from collections import Counter

qty = Counter()
revenue = Counter()
customers_per_sku = {}
for c in list_customers():
    for o in search_orders(c["customer_id"]):
        if o["status"] == "cancelled":
            continue
        for item in o["items"]:
            qty[item["sku"]] += item["qty"]
            revenue[item["sku"]] += item["qty"] * item["unit_price"]
            customers_per_sku.setdefault(item["sku"], set()).add(c["customer_id"])

names = {p["sku"]: p["name"] for p in list_products()}
top = qty.most_common(5)
for sku, n in top:
    print(f"{names[sku]:<20} {n:>4} units {revenue[sku]:>10,.2f}  {len(customers_per_sku[sku])} buyers")
never = sorted(set(names) - set(qty))
{"top": [[names[s], n] for s, n in top], "never_ordered": never,
 "top_revenue": max(revenue, key=revenue.get), "distinct_skus": len(qty)}
