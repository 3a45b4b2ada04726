from collections import Counter

months = ["2026-01", "2026-02", "2026-03"]
by_category = Counter()
amount_by_category = Counter()
for emp in list_employees("Sales") + list_employees("Marketing"):
    for m in months:
        for claim in get_expenses(emp["employee_id"], m):
            by_category[claim["category"]] += 1
            if claim["currency"] == "CNY":
                amount_by_category[claim["category"]] += claim["amount"]

print(by_category.most_common(3))
combined = by_category + Counter({"travel": 1})
diff = by_category - Counter(travel=100)
{"counts": dict(by_category.most_common()), "top": by_category.most_common(1)[0][0],
 "amounts": {k: round(v, 2) for k, v in sorted(amount_by_category.items())},
 "total": sum(by_category.values()), "combined_travel": combined["travel"], "diff_keys": sorted(diff)}
