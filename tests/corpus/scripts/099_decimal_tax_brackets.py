from decimal import Decimal, ROUND_HALF_EVEN, ROUND_DOWN

BRACKETS = [(Decimal("3000"), Decimal("0.03")), (Decimal("12000"), Decimal("0.10")),
            (Decimal("25000"), Decimal("0.20")), (Decimal("35000"), Decimal("0.25")),
            (None, Decimal("0.30"))]

def monthly_tax(gross):
    taxable = max(Decimal("0"), Decimal(gross) - Decimal("5000"))
    tax, lower = Decimal("0"), Decimal("0")
    for upper, rate in BRACKETS:
        if upper is None or taxable <= upper:
            tax += (taxable - lower) * rate
            break
        tax += (upper - lower) * rate
        lower = upper
    return tax.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)

rows = []
for e in list_employees("Finance") + list_employees("HR"):
    tax = monthly_tax(e["monthly_salary"])
    net = Decimal(e["monthly_salary"]) - tax
    rows.append((e["employee_id"], e["monthly_salary"], tax, net))
    print(f"{e['employee_id']} gross {e['monthly_salary']:>7,} tax {tax:>9} net {net:>10}")

total_tax = sum((r[2] for r in rows), Decimal(0))
effective = (total_tax / sum(Decimal(r[1]) for r in rows)).quantize(Decimal("0.0001"), rounding=ROUND_DOWN)
{"total_tax": str(total_tax), "effective_rate": str(effective), "max_tax": str(max(r[2] for r in rows)),
 "is_decimal_exact": Decimal("0.1") + Decimal("0.2") == Decimal("0.3")}
