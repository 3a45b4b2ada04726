from collections import defaultdict
from datetime import date

profiles = [get_customer(c["customer_id"]) for c in list_customers()]
by_tier = defaultdict(list)
for p in profiles:
    by_tier[p["tier"]].append(p)

order = ["platinum", "gold", "silver", "bronze"]
report = {}
for tier in order:
    members = by_tier[tier]
    years = [(date(2026, 9, 1) - date.fromisoformat(m["since"])).days / 365.25 for m in members]
    report[tier] = {
        "count": len(members),
        "avg_ltv": round(sum(m["lifetime_value"] for m in members) / len(members), 2),
        "avg_years": round(sum(years) / len(years), 2),
        "cities": len({m["city"] for m in members}),
    }
    print(f"{tier.capitalize():<9} {report[tier]['count']:>3} {report[tier]['avg_ltv']:>10,.2f}")

upgrade = sorted((p for p in by_tier["silver"] if p["lifetime_value"] > report["gold"]["avg_ltv"]),
                 key=lambda p: -p["lifetime_value"])
{"report": report, "upgrade_candidates": [p["customer_id"] for p in upgrade]}
