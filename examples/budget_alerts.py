# Expenses over budget, then email the managers. send_email requires approval:
# run with --approve ask (asks at the terminal) or --approve allow.
month = "2026-08"
alerts = []
for department in ["sales", "engineering", "marketing", "support"]:
    budget = get_budget(department)["budget_yuan"]
    staff = list_employees(department)
    spent = sum(get_expenses(e["employee_id"], month)["total_yuan"] for e in staff)
    if spent > budget:
        alerts.append({"department": department, "spent": spent, "budget": budget,
                       "manager": staff[0]["manager_email"]})

sent = []
for alert in alerts:
    over = alert["spent"] - alert["budget"]
    try:
        receipt = send_email(
            to=alert["manager"],
            subject=f"{alert['department']} is over budget for {month}",
            body=f"Spent {alert['spent']:,} of {alert['budget']:,} yuan ({over:,} over).",
        )
        sent.append(receipt["message_id"])
    except ToolDenied as denied:
        print(f"not sent to {alert['manager']}: {denied}")
{"over_budget": [a["department"] for a in alerts], "emails_sent": sent}
