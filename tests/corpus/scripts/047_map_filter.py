customers = list_customers()
ids = list(map(lambda c: c["customer_id"], customers))
gold_plus = list(filter(lambda c: c["tier"] in ("gold", "platinum"), customers))
profiles = list(map(get_customer, [c["customer_id"] for c in gold_plus]))
values = list(map(lambda p: p["lifetime_value"], profiles))
big = list(filter(None, [v if v > 10000 else 0 for v in values]))
names_upper = list(map(str.upper, (p["name"] for p in profiles[:3])))
pairs = list(map(lambda a, b: f"{a}:{b}", ids[:3], ids[3:6]))
rounded = list(map(round, [1.4, 2.6, -0.5, 0.5]))
print(f"{len(gold_plus)} gold+ customers, {len(big)} above 10k")
{"gold_plus": len(gold_plus), "big": len(big), "avg_value": round(sum(values) / len(values), 2),
 "names": names_upper, "pairs": pairs, "rounded": rounded, "ints": list(map(int, ["7", "08", "-3"]))}
