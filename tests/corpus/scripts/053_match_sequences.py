# A tiny command language handled with sequence patterns
commands = [
    "revenue ST003 2026-08-01",
    "revenue ST003",
    "weather Chengdu 2026-08-01",
    "convert 100 USD CNY",
    "stock SKU-1003 SKU-1004 SKU-1005",
    "help",
    "bogus command here",
]

def run(cmd):
    match cmd.split():
        case ["revenue", store_id, day]:
            return get_daily_revenue(store_id, day)["revenue_yuan"]
        case ["revenue", store_id]:
            return f"missing date for {store_id}"
        case ["weather", city, day]:
            return get_weather(city, day)["condition"]
        case ["convert", amount, src, dst]:
            return convert_currency(float(amount), src, dst)
        case ["stock", *skus] if skus:
            return {s: get_inventory(s)["on_hand"] for s in skus}
        case ["help"] | ["?"]:
            return "commands: revenue, weather, convert, stock"
        case [verb, *_]:
            return f"unknown command {verb!r}"

results = {}
for c in commands:
    results[c] = run(c)
    print(f"> {c}\n  {results[c]}")
results
