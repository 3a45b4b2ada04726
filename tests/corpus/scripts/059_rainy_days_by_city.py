from datetime import date, timedelta
from collections import Counter

cities = sorted({s["city"] for s in list_stores()})
start = date(2026, 6, 1)
summary = {}
for city in cities:
    conditions = Counter()
    rain_mm = 0.0
    highs = []
    for i in range(30):
        w = get_weather(city, (start + timedelta(days=i)).isoformat())
        conditions[w["condition"]] += 1
        rain_mm += w["precipitation_mm"]
        highs.append(w["temp_high_c"])
    summary[city] = {
        "rain_days": conditions["light rain"] + conditions["heavy rain"],
        "rain_mm": round(rain_mm, 1),
        "max_high": max(highs),
        "common": conditions.most_common(1)[0][0],
    }

wettest = max(summary, key=lambda c: summary[c]["rain_mm"])
for city, s in summary.items():
    print(f"{city:<10} rain days {s['rain_days']:>2}  {s['rain_mm']:>6.1f} mm  max {s['max_high']:>5.1f}C")
{"wettest": wettest, "summary": summary}
