# Recursively flatten nested order data into dotted keys
def flatten(obj, prefix=""):
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = obj
    return out

def depth(obj):
    if isinstance(obj, dict):
        return 1 + max((depth(v) for v in obj.values()), default=0)
    if isinstance(obj, list):
        return 1 + max((depth(v) for v in obj), default=0)
    return 0

orders = search_orders("C010")
flat = flatten({"customer": get_customer("C010"), "orders": orders})
inv = flatten(get_inventory("SKU-1010"))
print(len(flat), "flat keys")
for k in list(flat)[:6]:
    print(f"  {k} = {flat[k]}")
{"keys": len(flat), "depth": depth(orders), "inv": inv, "sample": sorted(flat)[:5]}
