stores = list_stores()[:8]
week1 = [get_daily_revenue(s["store_id"], "2026-07-06")["revenue_yuan"] for s in stores]
week2 = [get_daily_revenue(s["store_id"], "2026-07-13")["revenue_yuan"] for s in stores]

changes = []
for i, (s, a, b) in enumerate(zip(stores, week1, week2), 1):
    delta = b - a
    changes.append((i, s["store_id"], round(delta, 2)))
    print(f"{i:>2}. {s['name']:<20} {a:>10,.2f} -> {b:>10,.2f} ({delta / a:+.1%})" if a else f"{i:>2}. {s['name']} closed")

lookup = dict(zip((s["store_id"] for s in stores), week2))
unzipped = list(zip(*[(1, "a"), (2, "b"), (3, "c")]))
shortest = list(zip("abc", range(10)))
indexed = {idx: s["city"] for idx, s in enumerate(stores) if idx % 3 == 0}
{"changes": changes, "lookup_keys": list(lookup)[:3], "unzipped": unzipped, "shortest": shortest, "indexed": indexed}
