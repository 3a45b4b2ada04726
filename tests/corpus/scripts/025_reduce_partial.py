from functools import reduce, partial

to_usd = partial(convert_currency, to_currency="USD")
to_eur = partial(convert_currency, to_currency="EUR")

amounts = [("CNY", 1200.0), ("JPY", 56000.0), ("GBP", 340.5), ("HKD", 999.0), ("SGD", 75.25)]
usd = [to_usd(a, from_currency=c) for c, a in amounts]
eur = [to_eur(amount=a, from_currency=c) for c, a in amounts]

total_usd = reduce(lambda acc, x: acc + x, usd, 0.0)
largest = reduce(lambda a, b: a if a[1] >= b[1] else b, zip([c for c, _ in amounts], usd))
merged = reduce(lambda d, kv: {**d, kv[0]: kv[1]}, zip([c for c, _ in amounts], eur), {})

print("USD:", usd)
print("EUR:", merged)
{"total_usd": round(total_usd, 2), "largest": list(largest), "eur": merged}
