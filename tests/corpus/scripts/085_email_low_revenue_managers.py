# Email the manager of each store whose weekly revenue is in the bottom 3
week = [f"2026-08-{d:02d}" for d in range(17, 24)]
directory = {e["employee_id"]: e for e in list_employees()}
weekly = {}
for s in list_stores():
    try:
        weekly[s["store_id"]] = sum(get_daily_revenue(s["store_id"], d)["revenue_yuan"] for d in week)
    except ToolError as e:
        print("skipping", s["store_id"], "-", e)

bottom = sorted(weekly, key=weekly.get)[:3]
average = sum(weekly.values()) / len(weekly)
sent = []
for sid in bottom:
    info = get_store_info(sid)
    manager = directory[info["manager_id"]]
    gap = 1 - weekly[sid] / average
    body = (f"Dear {manager['name']},\n\nRevenue of {info['name']} for {week[0]}..{week[-1]} was "
            f"{weekly[sid]:,.2f} CNY, {gap:.1%} below the chain average. Please send an action plan.")
    r = send_email(manager["email"], f"Weekly revenue review: {sid}", body)
    sent.append({"store": sid, "to": r["to"], "id": r["message_id"]})
print(f"sent {len(sent)} emails")
{"bottom": bottom, "sent": sent, "average": round(average, 2)}
