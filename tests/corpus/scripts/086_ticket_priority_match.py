# Decide ticket priority with match on tuples and guards
def priority_for(kind, severity, vip):
    match (kind, severity, vip):
        case ("outage", _, _):
            return "urgent"
        case ("stock", n, True) if n >= 50:
            return "urgent"
        case ("stock", n, _) if n >= 50:
            return "high"
        case ("stock", n, _) if n > 0:
            return "medium"
        case (_, _, True):
            return "high"
        case _:
            return "low"

issues = []
for p in list_products():
    inv = get_inventory(p["sku"])
    short = inv["reorder_point"] - inv["on_hand"]
    if short > 0:
        issues.append(("stock", short, p["category"] == "equipment", f"Low stock: {p['name']}"))
issues.append(("outage", 0, False, "POS outage at ST012"))
issues.append(("complaint", 0, True, "Platinum customer complaint C003"))
issues.append(("question", 0, False, "Opening hours question"))

created = []
for kind, sev, vip, title in issues:
    prio = priority_for(kind, sev, vip)
    t = create_ticket(title, prio)
    created.append([t["ticket_id"], prio, title])
    print(f"{prio:<7} {title}")
{"created": created, "urgent": sum(1 for c in created if c[1] == "urgent")}
