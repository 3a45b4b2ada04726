# Check claims against policy rules expressed as lambdas
rules = {
    "meal over 500": lambda c: c["category"] == "meals" and c["amount"] > 500,
    "unapproved equipment": lambda c: c["category"] == "equipment" and not c["approved"],
    "foreign currency travel": lambda c: c["category"] == "travel" and c["currency"] != "CNY",
    "weekend software": lambda c: c["category"] == "software" and c["date"][-2:] in ("06", "07", "13", "14"),
}

violations = {name: [] for name in rules}
checked = 0
for emp in list_employees():
    for month in ("2026-05", "2026-06"):
        for claim in get_expenses(emp["employee_id"], month):
            checked += 1
            for name, rule in rules.items():
                if rule(claim):
                    violations[name].append(claim["expense_id"])

for name, ids in violations.items():
    print(f"{name:<24} {len(ids):>3}")
offenders = sorted({eid for ids in violations.values() for eid in ids})
{"checked": checked, "violations": {k: len(v) for k, v in violations.items()}, "distinct_claims": len(offenders)}
