import itertools
from operator import itemgetter

stores = sorted(list_stores(), key=itemgetter("region", "store_id"))
day = "2026-07-15"
result = {}
for region, group in itertools.groupby(stores, key=itemgetter("region")):
    members = list(group)
    revs = []
    for s in members:
        try:
            revs.append(get_daily_revenue(s["store_id"], day)["revenue_yuan"])
        except ToolError:
            revs.append(0.0)
    result[region] = {"stores": [m["store_id"] for m in members], "revenue": round(sum(revs), 2)}
    print(region, "->", ", ".join(m["name"] for m in members))

result
