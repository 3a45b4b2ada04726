from itertools import product

store_ids = ["ST001", "ST003", "ST006", "ST010", "ST014"]
dates = ["2026-01-01", "2026-02-14", "2026-05-01", "2026-10-01"]
table = {}
for sid, d in product(store_ids, dates):
    table[(sid, d)] = get_daily_revenue(sid, d)["revenue_yuan"]

holiday_totals = {d: round(sum(table[(s, d)] for s in store_ids), 2) for d in dates}
best_pair = max(table, key=table.get)
print("best pair:", best_pair, table[best_pair])
for d, total in holiday_totals.items():
    print(f"{d}  {total:>12,.2f}")
{"holiday_totals": holiday_totals, "best": list(best_pair), "cells": len(table)}
