# When does each regional office's 09:00 meeting happen at head office (Shanghai) and in UTC?
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

offices = {
    "Paris": "Europe/Paris",
    "New York": "America/New_York",
    "Sydney": "Australia/Sydney",
    "Tokyo": "Asia/Tokyo",
}
head = ZoneInfo("Asia/Shanghai")
print("stores in", len({s["city"] for s in list_stores()}), "cities report to Shanghai")
schedule = []
for day in ["2026-01-15", "2026-07-15"]:
    base = datetime.strptime(day, "%Y-%m-%d")
    for city, key in sorted(offices.items()):
        local = base.replace(hour=9, tzinfo=ZoneInfo(key))
        at_head = local.astimezone(head)
        schedule.append({
            "day": day,
            "office": city,
            "utc": local.astimezone(timezone.utc).strftime("%H:%M"),
            "shanghai": at_head.strftime("%a %H:%M"),
            "offset_h": local.utcoffset() / timedelta(hours=1),
        })

for row in schedule:
    print(f"{row['day']} {row['office']:<9} UTC {row['utc']}  Shanghai {row['shanghai']}  ({row['offset_h']:+.1f}h)")

dst_changes = sorted({r["office"] for r in schedule if r["day"] == "2026-01-15"} - {
    a["office"] for a in schedule for b in schedule
    if a["office"] == b["office"] and a["day"] != b["day"] and a["offset_h"] == b["offset_h"]})
print("offices whose offset changes over the year:", dst_changes)
schedule[:3] + [dst_changes]
