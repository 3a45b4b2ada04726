import random

# Randomly audit expense claims with a seeded generator (reproducible)
rng = random.Random(2026)
employees = list_employees()
sampled = rng.sample(employees, 8)
months = ["2026-04", "2026-05", "2026-06"]

audit = []
for emp in sampled:
    month = rng.choice(months)
    claims = get_expenses(emp["employee_id"], month)
    if not claims:
        continue
    picked = rng.choice(claims)
    audit.append({"employee": emp["employee_id"], "month": month, "expense": picked["expense_id"],
                  "amount": picked["amount"], "currency": picked["currency"]})

order = list(range(len(audit)))
rng.shuffle(order)
noise = [round(rng.uniform(0.9, 1.1), 4) for _ in range(3)]
print(f"auditing {len(audit)} claims in order {order}")
{"audit": audit, "order": order, "noise": noise, "roll": rng.randint(1, 6), "gauss": round(rng.gauss(0, 1), 6)}
