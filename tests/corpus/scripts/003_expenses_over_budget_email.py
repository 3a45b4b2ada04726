# Expenses over budget, then email the department heads
month = "2026-07"
departments = ["Sales", "Engineering", "Marketing", "Operations", "Finance", "HR"]

def to_cny(amount, currency):
    if currency == "CNY":
        return amount
    return convert_currency(amount, currency, "CNY")

report = {}
for dept in departments:
    staff = list_employees(dept)
    spent = 0.0
    for emp in staff:
        for claim in get_expenses(emp["employee_id"], month):
            spent += to_cny(claim["amount"], claim["currency"])
    budget = get_budget(dept)
    # only a share of the monthly budget is meant for expense claims
    allowance = budget["monthly_budget"] * 0.25
    head = next(e for e in staff if e["manager_id"] is None)
    report[dept] = {"spent": round(spent, 2), "allowance": round(allowance, 2), "head": head}

sent = []
for dept, info in report.items():
    if info["spent"] > info["allowance"]:
        over = info["spent"] - info["allowance"]
        body = (f"Hello {info['head']['name']},\n\n"
                f"{dept} expense claims for {month} total {info['spent']:,.2f} CNY, "
                f"which is {over:,.2f} CNY over the allowance of {info['allowance']:,.2f} CNY.")
        receipt = send_email(info["head"]["email"], f"{dept}: expenses over budget", body)
        sent.append(receipt["message_id"])
        print("emailed", info["head"]["email"])

{"over_budget": [d for d in report if report[d]["spent"] > report[d]["allowance"]],
 "emails": sent,
 "spent": {d: v["spent"] for d, v in report.items()}}
