from itertools import product

codes = ["CNY", "USD", "EUR", "GBP", "JPY"]
table = {}
for src, dst in product(codes, repeat=2):
    table[f"{src}->{dst}"] = convert_currency(100.0, src, dst)

print("       " + "".join(f"{c:>10}" for c in codes))
for src in codes:
    print(f"{src:<7}" + "".join(f"{table[src + '->' + dst]:>10.2f}" for dst in codes))

try:
    convert_currency(1.0, "CNY", "BTC")
except ToolError as e:
    err = e.message

round_trip = convert_currency(convert_currency(1000.0, "CNY", "USD"), "USD", "CNY")
{"usd_to_cny": table["USD->CNY"], "identity": all(table[f"{c}->{c}"] == 100.0 for c in codes),
 "round_trip": round_trip, "error": err, "cells": len(table)}
