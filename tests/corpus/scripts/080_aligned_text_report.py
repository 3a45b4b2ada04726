# A fixed-width text report with alignment specs
employees = list_employees("Engineering")
title = " Engineering expenses, Q2 2026 "
width = 58
lines = [f"{title:=^{width}}", f"{'Name':<18}{'Title':<20}{'Claims':>7}{'Amount':>13}"]
grand = 0.0
for e in employees:
    claims = [c for m in ("2026-04", "2026-05", "2026-06") for c in get_expenses(e["employee_id"], m)]
    amount = sum(c["amount"] if c["currency"] == "CNY" else convert_currency(c["amount"], c["currency"], "CNY") for c in claims)
    grand += amount
    lines.append(f"{e['name']:<18.17}{e['title']:<20}{len(claims):>7d}{amount:>13,.2f}")
lines.append("-" * width)
lines.append(f"{'TOTAL':<45}{grand:>13,.2f}")
lines.append(f"{'':>{width // 2}}{len(employees):03d} people | {grand / len(employees):>10.1f} avg")
report = "\n".join(lines)
print(report)
{"lines": len(lines), "total": round(grand, 2), "first": lines[0], "widths": sorted({len(l) for l in lines})}
