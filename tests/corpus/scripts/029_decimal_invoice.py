from decimal import Decimal, ROUND_HALF_UP

VAT = Decimal("0.13")
CENT = Decimal("0.01")

orders = search_orders("C010")
invoice_lines = []
for o in orders:
    for item in o["items"]:
        unit = Decimal(str(item["unit_price"]))
        net = (unit * item["qty"]).quantize(CENT, rounding=ROUND_HALF_UP)
        tax = (net * VAT).quantize(CENT, rounding=ROUND_HALF_UP)
        invoice_lines.append((o["order_id"], item["sku"], item["qty"], net, tax))

net_total = sum((line[3] for line in invoice_lines), Decimal("0"))
tax_total = sum((line[4] for line in invoice_lines), Decimal("0"))
for oid, sku, qty, net, tax in invoice_lines:
    print(f"{oid} {sku} x{qty:<2} net {net:>9} tax {tax:>8}")
print(f"TOTAL net {net_total} tax {tax_total} gross {net_total + tax_total}")
{"lines": len(invoice_lines), "net": str(net_total), "tax": str(tax_total), "gross": float(net_total + tax_total)}
