# Log failures the way plain Python code does: repr(e) of each tool error, and its class.
log = []
weather = {}
for city, date in [("Shanghai", "2026-04-10"), ("Atlantis", "2026-04-10"), ("Beijing", "2026-13-01")]:
    try:
        weather[city] = get_weather(city, date)["condition"]
    except Exception as e:
        log.append({"city": city, "kind": repr(e).split("(")[0], "repr": repr(e), "is_value_error": isinstance(e, ValueError)})

try:
    convert_currency(10.0, "USD", "XXX")
except (KeyError, ValueError) as e:
    log.append({"kind": repr(e).split("(")[0], "args": list(e.args), "key": isinstance(e, KeyError)})

for entry in log:
    print(entry["kind"], "-", entry.get("repr", entry.get("args")))
{"weather": weather, "log": log}
