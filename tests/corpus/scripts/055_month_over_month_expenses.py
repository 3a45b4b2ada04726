# 50 employees x 6 months = 300 tool calls, aggregated by department and month
from collections import defaultdict

months = [f"2026-{m:02d}" for m in range(1, 7)]
employees = list_employees()
totals = defaultdict(lambda: defaultdict(float))
converted = 0
for emp in employees:
    for month in months:
        for c in get_expenses(emp["employee_id"], month):
            amt = c["amount"]
            if c["currency"] != "CNY":
                amt = convert_currency(amt, c["currency"], "CNY")
                converted += 1
            totals[emp["department"]][month] += amt

header = "dept        " + "".join(f"{m[5:]:>10}" for m in months)
print(header)
for dept in sorted(totals):
    print(f"{dept:<12}" + "".join(f"{totals[dept][m]:>10,.0f}" for m in months))

trend = {}
for dept, by_month in totals.items():
    first, last = by_month[months[0]], by_month[months[-1]]
    trend[dept] = "up" if last > first else "down"
{"totals": {d: {m: round(v, 2) for m, v in sorted(bm.items())} for d, bm in sorted(totals.items())},
 "trend": dict(sorted(trend.items())), "converted": converted}
