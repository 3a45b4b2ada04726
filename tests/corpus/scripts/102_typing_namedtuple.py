from typing import NamedTuple, Optional

class Claim(NamedTuple):
    employee: str
    category: str
    amount_cny: float
    approved: bool = False
    note: Optional[str] = None

    def flagged(self) -> bool:
        return not self.approved and self.amount_cny > 1000

claims = []
for e in list_employees("Marketing"):
    for c in get_expenses(e["employee_id"], "2026-07"):
        amt = c["amount"] if c["currency"] == "CNY" else convert_currency(c["amount"], c["currency"], "CNY")
        claims.append(Claim(e["employee_id"], c["category"], amt, c["approved"]))

flagged = [c._replace(note="needs review") for c in claims if c.flagged()]
emp, cat, amt, *rest = claims[0]
print(claims[0])
print(f"{len(flagged)} flagged of {len(claims)}")
{"flagged": [c._asdict() for c in flagged], "first": [emp, cat, amt, rest], "total": round(sum(c.amount_cny for c in claims), 2)}
