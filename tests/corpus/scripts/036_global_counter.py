calls_made = 0
failures = 0
cache = {}

def fetch_weather(city, day):
    global calls_made, failures
    key = (city, day)
    if key in cache:
        return cache[key]
    calls_made += 1
    try:
        cache[key] = get_weather(city, day)
    except ToolError:
        failures += 1
        cache[key] = None
    return cache[key]

cities = [s["city"] for s in list_stores()] + ["Atlantis"]
days = ["2026-07-01", "2026-07-02"]
hot = []
for city in cities:
    for d in days:
        w = fetch_weather(city, d)
        if w and w["temp_high_c"] >= 33:
            hot.append((city, d, w["temp_high_c"]))

print(f"{calls_made} tool calls, {failures} failures, {len(cities) * len(days)} lookups")
{"calls": calls_made, "failures": failures, "hot": sorted(set(hot))}
