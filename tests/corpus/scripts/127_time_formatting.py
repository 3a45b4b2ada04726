# Turn store opening dates into epoch timestamps and back; format and parse with time and datetime.
import time
from datetime import datetime, timezone

events = []
for s in list_stores()[:4]:
    opened = datetime.fromisoformat(s["opened"]).replace(hour=9, tzinfo=timezone.utc)
    events.append(int(opened.timestamp()))
rows = []
for ts in events:
    t = time.gmtime(ts)
    rows.append({
        "ts": ts,
        "day": time.strftime("%Y-%m-%d", t),
        "week": time.strftime("%G-W%V", t),
        "weekday": time.strftime("%A", t),
        "hour": t.tm_hour,
        "iso": datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(),
    })
for r in rows:
    print(r["day"], r["week"], r["weekday"], r["hour"])

parsed = time.strptime("2026-03-01 14:30", "%Y-%m-%d %H:%M")
print(parsed.tm_year, parsed.tm_mon, parsed.tm_yday, time.asctime(parsed))
span_days = (max(events) - min(events)) / 86400
print(f"span {span_days:.1f} days;", time.strftime("%H:%M", time.gmtime(events[1])))
{"rows": rows, "span_days": round(span_days, 2)}
