import json

config_text = '''
{
  "report": "inventory-health",
  "categories": ["coffee", "tea", "equipment"],
  "thresholds": {"low": 1.0, "high": 2.2},
  "notify": {"to": "ops-team@example.com", "min_issues": 2}
}
'''
cfg = json.loads(config_text)
issues = []
for cat in cfg["categories"]:
    for p in list_products(cat):
        inv = get_inventory(p["sku"])
        cover = inv["on_hand"] / inv["reorder_point"]
        if cover < cfg["thresholds"]["low"]:
            issues.append({"sku": p["sku"], "kind": "low", "cover": round(cover, 2)})
        elif cover > cfg["thresholds"]["high"]:
            issues.append({"sku": p["sku"], "kind": "high", "cover": round(cover, 2)})

receipt = None
if len(issues) >= cfg["notify"]["min_issues"]:
    body = json.dumps({"report": cfg["report"], "issues": issues}, indent=1)
    receipt = send_email(cfg["notify"]["to"], f"{cfg['report']}: {len(issues)} issues", body)
print(json.dumps(issues))
{"issues": issues, "notified": receipt is not None, "message_id": receipt["message_id"] if receipt else None,
 "roundtrip": json.loads(json.dumps(cfg)) == cfg}
