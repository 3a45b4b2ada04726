import random
import statistics

# Forecast next week's revenue for ST007 by resampling the last 8 weeks of daily revenue
history = []
for w in range(8):
    for d in range(7):
        day = f"2026-{6 + (w * 7 + d) // 30:02d}-{1 + (w * 7 + d) % 30:02d}"
        history.append(get_daily_revenue("ST007", day)["revenue_yuan"])

rng = random.Random("forecast-ST007")
sims = []
for _ in range(2000):
    week = sum(rng.choice(history) for _ in range(7))
    sims.append(week)
sims.sort()
p10, p50, p90 = sims[200], sims[1000], sims[1800]
print(f"P10 {p10:,.0f}  P50 {p50:,.0f}  P90 {p90:,.0f}")
{"p10": round(p10, 2), "p50": round(p50, 2), "p90": round(p90, 2), "mean": round(statistics.mean(sims), 2),
 "history_days": len(history), "triangular": round(rng.triangular(0, 10, 3), 6), "choices": rng.choices("abc", k=5)}
