from itertools import accumulate
from datetime import date, timedelta
import operator

sid = "ST004"
start = date(2026, 2, 1)
daily = []
for i in range(28):
    daily.append(get_daily_revenue(sid, (start + timedelta(days=i)).isoformat())["revenue_yuan"])

running = [round(x, 2) for x in accumulate(daily)]
best_so_far = list(accumulate(daily, max))
weekly = [round(sum(daily[i:i + 7]), 2) for i in range(0, 28, 7)]
growth = [round(b / a - 1, 4) for a, b in zip(weekly, weekly[1:])]
product_check = list(accumulate([1, 2, 3, 4], operator.mul))

target = 900000
crossed = next((i + 1 for i, v in enumerate(running) if v >= target), None)
print(f"month total {running[-1]:,.2f}; crossed {target:,} on day {crossed}")
{"running_last": running[-1], "weekly": weekly, "growth": growth, "record_days": len(set(best_so_far)),
 "crossed_day": crossed, "factorials": product_check}
