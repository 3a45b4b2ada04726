from collections import defaultdict

DATE = "2026-08-24"
by_region = defaultdict(list)
for store in list_stores():
    try:
        rev = get_daily_revenue(store["store_id"], DATE)
    except ToolError:
        continue
    by_region[store["region"]].append(rev["revenue_yuan"])

summary = {}
for region in sorted(by_region):
    values = by_region[region]
    summary[region] = {
        "stores": len(values),
        "total": round(sum(values), 2),
        "best": max(values),
        "avg": round(sum(values) / len(values), 2),
    }
    print(f"{region:<8}|{len(values):^7}|{summary[region]['total']:>12,.2f}")

summary
