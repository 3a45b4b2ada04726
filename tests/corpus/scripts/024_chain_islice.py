from itertools import chain, islice

coffee = list_products("coffee")
tea = list_products("tea")
snacks = list_products("snacks")

all_items = list(chain(coffee, tea, snacks))
print(f"{len(all_items)} products across 3 categories")

first_five = list(islice(chain.from_iterable([coffee, tea, snacks]), 5))
every_other = list(islice(all_items, 0, None, 2))

stock = {}
for p in islice(all_items, 2, 8):
    stock[p["sku"]] = get_inventory(p["sku"])["on_hand"]

{"first_five": [p["name"] for p in first_five], "every_other": [p["sku"] for p in every_other], "stock": stock}
