# Normalize all expense claims of Engineering in June to CNY using Decimal sums
from decimal import Decimal, ROUND_HALF_UP

month = "2026-06"
engineers = list_employees("Engineering")
per_currency = {}
total_cny = Decimal("0")
for eng in engineers:
    for claim in get_expenses(eng["employee_id"], month):
        cur = claim["currency"]
        per_currency[cur] = per_currency.get(cur, 0) + 1
        amount = claim["amount"]
        if cur != "CNY":
            amount = convert_currency(amount, cur, "CNY")
        total_cny += Decimal(str(amount))

total_cny = total_cny.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
in_usd = convert_currency(float(total_cny), "CNY", "USD")
print(f"Engineering claims {month}: {total_cny} CNY (~{in_usd:,.2f} USD)")
print("currencies:", ", ".join(f"{k}={v}" for k, v in sorted(per_currency.items())))
{"total_cny": str(total_cny), "total_usd": in_usd, "claims_by_currency": per_currency}
