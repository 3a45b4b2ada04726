defaults = {"currency": "CNY", "include_closed": False, "days": 7, "region": None}
overrides = {"days": 3, "region": "South"}
config = defaults | overrides
config |= {"include_closed": True}

stores = [s for s in list_stores() if config["region"] is None or s["region"] == config["region"]]
dates = [f"2026-09-{d:02d}" for d in range(1, config["days"] + 1)]
totals = {}
for s in stores:
    rows = [get_daily_revenue(s["store_id"], d) for d in dates]
    if not config["include_closed"]:
        rows = [r for r in rows if not r["closed"]]
    totals[s["store_id"]] = round(sum(r["revenue_yuan"] for r in rows), 2)

info = {s["store_id"]: {"city": s["city"]} for s in stores}
merged = {sid: info[sid] | {"revenue": totals[sid]} for sid in totals}
keys_union = sorted(defaults.keys() | overrides.keys())
common = sorted(defaults.keys() & overrides.keys())
items_diff = sorted(k for k, _ in config.items() - defaults.items())
popped = config.pop("region")
print(config)
{"merged": merged, "union": keys_union, "common": common, "changed": items_diff, "popped": popped,
 "get_default": config.get("missing", "n/a")}
