from collections import defaultdict

units = defaultdict(int)
value = defaultdict(float)
by_category = defaultdict(float)
for p in list_products():
    inv = get_inventory(p["sku"])
    for wh, n in inv["warehouses"].items():
        units[wh] += n
        value[wh] += n * inv["unit_cost"]
    by_category[p["category"]] += inv["on_hand"] * inv["unit_cost"]

total = sum(value.values())
for wh in sorted(value):
    print(f"{wh:<9} {units[wh]:>6} units  {value[wh]:>12,.2f} CNY  ({value[wh] / total:.1%})")
biggest = max(by_category.items(), key=lambda kv: kv[1])
{"units": dict(sorted(units.items())), "value": {k: round(v, 2) for k, v in sorted(value.items())},
 "total": round(total, 2), "biggest_category": [biggest[0], round(biggest[1], 2)]}
