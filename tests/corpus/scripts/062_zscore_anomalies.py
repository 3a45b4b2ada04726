# Flag anomalous days per store with z-scores over 21 days (20 stores x 21 days = 420 calls)
import statistics
from datetime import date, timedelta

days = [(date(2026, 7, 1) + timedelta(days=i)).isoformat() for i in range(21)]
anomalies = []
skipped = []
for store in list_stores():
    sid = store["store_id"]
    series = []
    for d in days:
        try:
            r = get_daily_revenue(sid, d)
        except ToolError:
            skipped.append(sid)
            break
        series.append((d, r["revenue_yuan"]))
    else:
        vals = [v for _, v in series]
        mu, sd = statistics.mean(vals), statistics.stdev(vals)
        if sd == 0:
            continue
        for d, v in series:
            z = (v - mu) / sd
            if abs(z) > 2.2:
                anomalies.append({"store": sid, "date": d, "z": round(z, 2)})

anomalies.sort(key=lambda a: abs(a["z"]), reverse=True)
for a in anomalies[:5]:
    print(f"{a['store']} {a['date']} z={a['z']:+.2f}")
{"count": len(anomalies), "top": anomalies[:5], "skipped": skipped}
