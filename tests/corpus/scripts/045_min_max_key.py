products = list_products()
inventory = {p["sku"]: get_inventory(p["sku"]) for p in products}

cheapest = min(products, key=lambda p: p["price"])
priciest = max(products, key=lambda p: p["price"])
most_stock = max(inventory.values(), key=lambda i: i["on_hand"])
least_stock = min(inventory.values(), key=lambda i: (i["on_hand"], i["sku"]))
best_margin = max(products, key=lambda p: p["price"] - inventory[p["sku"]]["unit_cost"])
earliest = min(inventory.values(), key=lambda i: i["last_restock"])
none_default = max([], default=None)
tie_break = max([("a", 1), ("b", 1)], key=lambda t: t[1])

print(f"cheapest {cheapest['name']} @ {cheapest['price']}, priciest {priciest['name']} @ {priciest['price']}")
{"cheapest": cheapest["sku"], "priciest": priciest["sku"], "most_stock": most_stock["sku"],
 "least_stock": least_stock["sku"], "best_margin": best_margin["name"], "earliest_restock": earliest["last_restock"],
 "none_default": none_default, "tie_break": list(tie_break), "min_of_two": min(3, 7), "max_args": max(1.5, 2, -1)}
