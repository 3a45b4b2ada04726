# Try bad inputs on several tools and catalogue the error messages
probes = [
    ("get_store_info", lambda: get_store_info("ST404")),
    ("get_daily_revenue bad date", lambda: get_daily_revenue("ST001", "2026-13-01")),
    ("get_daily_revenue future", lambda: get_daily_revenue("ST001", "2027-01-05")),
    ("get_expenses bad month", lambda: get_expenses("E001", "July 2026")),
    ("get_expenses unknown", lambda: get_expenses("E999", "2026-07")),
    ("get_budget", lambda: get_budget("Legal")),
    ("get_inventory", lambda: get_inventory("SKU-9999")),
    ("get_weather", lambda: get_weather("Paris", "2026-07-01")),
    ("list_employees", lambda: list_employees("Sales ")),
    ("send_email", lambda: send_email("not-an-address", "hi", "body")),
    ("create_ticket", lambda: create_ticket("Broken till", "critical")),
    ("ok call", lambda: get_budget("HR")["year"]),
]

catalogue = {}
for label, probe in probes:
    try:
        value = probe()
    except ToolError as e:
        tool, kind, detail = e.message.split(": ", 2)
        catalogue[label] = {"tool": tool, "kind": kind, "detail": detail}
    else:
        catalogue[label] = {"value": value}

for label, entry in catalogue.items():
    print(f"{label:<28} {entry.get('kind', 'OK'):<11} {entry.get('detail', entry.get('value'))}")
kinds = sorted({e["kind"] for e in catalogue.values() if "kind" in e})
{"catalogue": catalogue, "kinds": kinds}
