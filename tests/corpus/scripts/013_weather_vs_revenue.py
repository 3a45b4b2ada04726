# Does rain hurt sales? Compare rainy and dry days for Shanghai stores in June.
import statistics
from datetime import date, timedelta

shanghai = [s["store_id"] for s in list_stores() if s["city"] == "Shanghai" and s["opened"] < "2026-06-01"]
rainy, dry = [], []
temps, revs = [], []
d = date(2026, 6, 1)
while d <= date(2026, 6, 30):
    iso = d.isoformat()
    w = get_weather("Shanghai", iso)
    day_total = sum(get_daily_revenue(sid, iso)["revenue_yuan"] for sid in shanghai)
    (rainy if w["precipitation_mm"] > 0 else dry).append(day_total)
    temps.append(w["temp_high_c"])
    revs.append(day_total)
    d += timedelta(days=1)

corr = statistics.correlation(temps, revs)
effect = statistics.mean(rainy) / statistics.mean(dry) - 1
print(f"stores={shanghai} rainy days={len(rainy)} dry days={len(dry)}")
print(f"rain effect: {effect:+.1%}, temperature correlation: {corr:.3f}")
{"rainy_days": len(rainy), "dry_days": len(dry), "rain_effect": round(effect, 4), "corr": round(corr, 4)}
