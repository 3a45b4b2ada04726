from functools import total_ordering

@total_ordering
class Money:
    def __init__(self, amount, currency="CNY"):
        self.amount = round(amount, 2)
        self.currency = currency

    def to_cny(self):
        if self.currency == "CNY":
            return self.amount
        return convert_currency(self.amount, self.currency, "CNY")

    def __eq__(self, other):
        return self.to_cny() == other.to_cny()

    def __lt__(self, other):
        return self.to_cny() < other.to_cny()

    def __repr__(self):
        return f"Money({self.amount!r}, {self.currency!r})"

claims = []
for emp in list_employees("Finance"):
    for month in ("2026-03", "2026-04"):
        for c in get_expenses(emp["employee_id"], month):
            claims.append(Money(c["amount"], c["currency"]))

ordered = sorted(claims)
print("smallest:", ordered[0], "largest:", ordered[-1])
threshold = Money(200, "USD")
{"count": len(claims), "largest": repr(ordered[-1]), "over_200_usd": sum(1 for c in claims if c >= threshold),
 "min_is_first": min(claims) == ordered[0], "le": Money(1, "USD") <= Money(8, "CNY")}
