# Slice assignment and deletion on a revenue series
from datetime import date, timedelta

start = date(2026, 8, 1)
series = [get_daily_revenue("ST009", (start + timedelta(days=i)).isoformat())["revenue_yuan"] for i in range(10)]
print("raw:", series)

# ST009 is under renovation in August: replace the closed days with a planning estimate
estimate = get_daily_revenue("ST009", "2026-06-15")["revenue_yuan"]
fixed = series[:]
fixed[0:5] = [estimate] * 5
fixed[5:] = [round(x * 1.1, 2) if x else estimate for x in fixed[5:]]
fixed[::3] = [0.0] * len(fixed[::3])
tail = fixed[-3:]
del fixed[1:3]
fixed[len(fixed):] = [1.0, 2.0]
fixed.insert(0, -1.0)
backwards = fixed[::-1][:4]
{"fixed": fixed, "tail": tail, "backwards": backwards, "length": len(fixed)}
