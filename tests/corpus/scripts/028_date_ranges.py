from datetime import date, datetime, timedelta

today = date.fromisoformat("2026-08-31")
week_ago = today - timedelta(weeks=1)
month_start = today.replace(day=1)
print("range:", week_ago, "to", today, "| month start:", month_start)

def daterange(a, b):
    d = a
    while d <= b:
        yield d
        d += timedelta(days=1)

weekend_rev = weekday_rev = 0.0
for d in daterange(week_ago, today):
    r = get_daily_revenue("ST010", d.isoformat())
    if d.weekday() >= 5:
        weekend_rev += r["revenue_yuan"]
    else:
        weekday_rev += r["revenue_yuan"]

stamp = datetime(2026, 8, 31, 17, 45)
opened = date.fromisoformat(get_store_info("ST010")["opened"])
age = today - opened
{"weekend": round(weekend_rev, 2), "weekday": round(weekday_rev, 2), "days_open": age.days,
 "years_open": round(age.days / 365.25, 1), "stamp": stamp.strftime("%Y-%m-%d %H:%M"),
 "iso_week": today.isocalendar()[1], "weekday_name": today.strftime("%A")}
