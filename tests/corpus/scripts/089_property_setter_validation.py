class Budget:
    def __init__(self, department, limit):
        self.department = department
        self.limit = limit
        self.spent = 0.0

    @property
    def limit(self):
        return self.cap

    @limit.setter
    def limit(self, value):
        if value <= 0:
            raise ValueError(f"limit must be positive, got {value}")
        self.cap = value

    @property
    def remaining(self):
        return round(self.limit - self.spent, 2)

    def charge(self, amount):
        if amount > self.remaining:
            raise ValueError(f"{self.department}: {amount:.2f} exceeds remaining {self.remaining:.2f}")
        self.spent += amount

b = get_budget("Finance")
budget = Budget("Finance", b["monthly_budget"])
rejected = []
for emp in list_employees("Finance"):
    for c in get_expenses(emp["employee_id"], "2026-08"):
        amount = c["amount"] if c["currency"] == "CNY" else convert_currency(c["amount"], c["currency"], "CNY")
        try:
            budget.charge(amount)
        except ValueError as e:
            rejected.append(str(e))

try:
    budget.limit = -5
except ValueError as e:
    print("refused:", e)
budget.limit = budget.limit * 1.1
print(f"remaining {budget.remaining:,.2f}, rejected {len(rejected)}")
{"remaining": budget.remaining, "limit": round(budget.limit, 2), "rejected": rejected}
