# Page through customers client-side with while loops, break and continue
customers = list_customers()
PAGE = 7
offset = 0
pages = 0
big_spenders = []
while True:
    page = customers[offset:offset + PAGE]
    if not page:
        break
    pages += 1
    for c in page:
        if c["tier"] == "bronze":
            continue
        orders = search_orders(c["customer_id"], "delivered")
        spent = sum(o["total"] for o in orders)
        if spent > 1500:
            big_spenders.append((c["customer_id"], round(spent, 2)))
    if len(big_spenders) >= 8:
        print("enough candidates after", pages, "pages")
        break
    offset += PAGE
else_reached = offset >= len(customers)

n = 0
for i in range(100):
    if i % 7 == 0:
        continue
    n += i
    if n > 200:
        break
else:
    n = -1
{"pages": pages, "big_spenders": big_spenders, "exhausted": else_reached, "loop_sum": n}
