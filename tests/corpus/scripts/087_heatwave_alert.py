# Heatwave: 3+ consecutive days above 35C in any store city during July
from datetime import date, timedelta

cities = sorted({s["city"] for s in list_stores()})
heatwaves = {}
for city in cities:
    streak, longest, start_of_longest, current_start = 0, 0, None, None
    for i in range(31):
        d = date(2026, 7, 1) + timedelta(days=i)
        if get_weather(city, d.isoformat())["temp_high_c"] > 35:
            if streak == 0:
                current_start = d
            streak += 1
            if streak > longest:
                longest, start_of_longest = streak, current_start
        else:
            streak = 0
    if longest >= 2:
        heatwaves[city] = {"days": longest, "from": start_of_longest.isoformat()}

for city, hw in heatwaves.items():
    print(f"{city}: {hw['days']} hot days from {hw['from']}")
stores_affected = [s["store_id"] for s in list_stores() if s["city"] in heatwaves and heatwaves[s["city"]]["days"] >= 3]
{"heatwaves": heatwaves, "stores_affected": stores_affected}
