store_cities = {s["city"] for s in list_stores()}
customer_cities = {c["city"] for c in list_customers()}
gold_cities = {c["city"] for c in list_customers("gold")} | {c["city"] for c in list_customers("platinum")}

both = store_cities & customer_cities
no_store = customer_cities - store_cities
no_customers = store_cities - customer_cities
either_only = store_cities ^ gold_cities

weather_ok = set()
for city in sorted(both):
    w = get_weather(city, "2026-09-01")
    if w["precipitation_mm"] == 0:
        weather_ok.add(city)

print("cities with stores and customers:", ", ".join(sorted(both)))
{"both": sorted(both), "no_store": sorted(no_store), "no_customers": sorted(no_customers),
 "symmetric": sorted(either_only), "dry": sorted(weather_ok), "subset": gold_cities <= customer_cities,
 "disjoint": no_store.isdisjoint(store_cities)}
