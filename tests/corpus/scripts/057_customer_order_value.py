# Total order value per customer tier, across every customer id (some fail)
tier_totals = {}
tier_counts = {}
skipped = []
for n in range(1, 61):
    cid = f"C{n:03d}"
    try:
        profile = get_customer(cid)
        orders = search_orders(cid)
    except ToolError as e:
        skipped.append(cid)
        continue
    spend = sum(o["total"] for o in orders if o["status"] != "cancelled")
    tier = profile["tier"]
    tier_totals[tier] = tier_totals.get(tier, 0) + spend
    tier_counts[tier] = tier_counts.get(tier, 0) + 1

avg = {t: round(tier_totals[t] / tier_counts[t], 2) for t in tier_totals}
for t in ["bronze", "silver", "gold", "platinum"]:
    print(f"{t:>9}: {tier_counts.get(t, 0):>3} customers, avg spend {avg.get(t, 0):>9,.2f}")
{"avg_spend": avg, "skipped": skipped, "customers": sum(tier_counts.values())}
