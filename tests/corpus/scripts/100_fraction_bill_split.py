from fractions import Fraction

# Split a shared training invoice between departments by headcount, exactly
invoice = Fraction(48750, 1)
counts = {d: len(list_employees(d)) for d in ["Engineering", "Marketing", "Finance"]}
total_people = sum(counts.values())
shares = {d: Fraction(n, total_people) for d, n in counts.items()}
amounts = {d: invoice * s for d, s in shares.items()}

cents = {d: int(a * 100) for d, a in amounts.items()}
leftover = int(invoice * 100) - sum(cents.values())
# give leftover cents to the largest fractional remainders
order = sorted(amounts, key=lambda d: (amounts[d] * 100) - int(amounts[d] * 100), reverse=True)
for d in order[:leftover]:
    cents[d] += 1

for d in counts:
    print(f"{d:<12} {str(shares[d]):>6}  {cents[d] / 100:>10.2f}")
{"shares": {d: str(s) for d, s in shares.items()}, "cents": cents, "leftover": leftover,
 "exact_sum": sum(amounts.values()) == invoice, "half": str(Fraction("0.5") + Fraction(1, 3)),
 "float": float(Fraction(1, 8))}
