# Export the coffee and tea catalogue with stock levels to CSV, read it back, clean and summarise.
import csv
import io

rows = []
for p in list_products("coffee") + list_products("tea"):
    inv = get_inventory(p["sku"])
    rows.append({"sku": p["sku"], "name": " " + p["name"].upper() + " ", "category": p["category"],
                 "price": p["price"], "on_hand": inv["on_hand"], "reorder_point": inv["reorder_point"]})

buf = io.StringIO()
writer = csv.DictWriter(buf, fieldnames=["sku", "name", "category", "price", "on_hand", "reorder_point"])
writer.writeheader()
writer.writerows(rows)
text = buf.getvalue()
print(text.splitlines()[0])
print(len(text.splitlines()) - 1, "data rows")

# read back: everything is a string now
cleaned = []
for r in csv.DictReader(io.StringIO(text)):
    cleaned.append({
        "sku": r["sku"],
        "name": r["name"].strip().title(),
        "category": r["category"],
        "price": float(r["price"]),
        "on_hand": int(r["on_hand"]),
        "low": int(r["on_hand"]) < int(r["reorder_point"]),
    })

by_cat = {}
for r in cleaned:
    agg = by_cat.setdefault(r["category"], {"items": 0, "stock_value": 0.0, "low": []})
    agg["items"] += 1
    agg["stock_value"] += r["price"] * r["on_hand"]
    if r["low"]:
        agg["low"].append(r["name"])

out = io.StringIO()
w = csv.writer(out, lineterminator="\n")
w.writerow(["category", "items", "stock_value", "low_stock"])
for cat in sorted(by_cat):
    a = by_cat[cat]
    w.writerow([cat, a["items"], f"{a['stock_value']:.2f}", ";".join(a["low"]) or "-"])
print(out.getvalue())

{cat: round(a["stock_value"], 2) for cat, a in by_cat.items()}
