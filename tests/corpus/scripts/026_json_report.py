import json

dept = "Marketing"
staff = list_employees(dept)
budget = get_budget(dept)
payload = {
    "department": dept,
    "headcount": len(staff),
    "payroll": sum(e["monthly_salary"] for e in staff),
    "budget": {k: budget[k] for k in ("annual_budget", "spent_ytd")},
    "people": [{"id": e["employee_id"], "title": e["title"]} for e in staff],
}
text = json.dumps(payload, indent=2, sort_keys=True)
print(text)

compact = json.dumps(payload, separators=(",", ":"))
parsed = json.loads(compact)
assert parsed == payload
print(len(compact), "bytes compact,", len(text), "bytes pretty")
{"same": parsed == payload, "compact_len": len(compact), "keys": sorted(parsed)}
