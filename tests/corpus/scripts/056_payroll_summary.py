import statistics

employees = list_employees()
by_dept = {}
for e in employees:
    by_dept.setdefault(e["department"], []).append(e["monthly_salary"])

rows = []
for dept, salaries in sorted(by_dept.items(), key=lambda kv: -sum(kv[1])):
    rows.append({
        "dept": dept,
        "headcount": len(salaries),
        "monthly": sum(salaries),
        "annual": sum(salaries) * 12,
        "median": statistics.median(salaries),
        "mean": round(statistics.mean(salaries), 2),
        "pstdev": round(statistics.pstdev(salaries), 2),
    })

company = sum(r["monthly"] for r in rows)
print(f"{'Dept':<12}{'HC':>4}{'Monthly':>12}{'Share':>8}")
for r in rows:
    print(f"{r['dept']:<12}{r['headcount']:>4}{r['monthly']:>12,}{r['monthly'] / company:>8.1%}")
print(f"{'Total':<12}{len(employees):>4}{company:>12,}")
{"rows": rows, "company_monthly": company, "mode_salary": statistics.mode(e["monthly_salary"] for e in employees)}
