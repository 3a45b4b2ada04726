# Generator pipeline: stream revenue rows, filter, and aggregate lazily
from datetime import date, timedelta

def date_range(start, days):
    for i in range(days):
        yield (start + timedelta(days=i)).isoformat()

def revenue_rows(store_ids, dates):
    for sid in store_ids:
        for d in dates:
            try:
                yield get_daily_revenue(sid, d)
            except ToolError:
                pass

def store_ids():
    yield from (s["store_id"] for s in list_stores() if s["region"] in ("East", "South"))

def open_days(rows):
    for r in rows:
        if not r["closed"]:
            yield r

dates = list(date_range(date(2026, 4, 1), 10))
rows = open_days(revenue_rows(store_ids(), dates))
big_days = [(r["store_id"], r["date"], r["revenue_yuan"]) for r in rows if r["revenue_yuan"] > 40000]
print("big days:", len(big_days))
total_tx = sum(r["transactions"] for r in open_days(revenue_rows(store_ids(), dates[:3])))
{"big_days": len(big_days), "largest": max(big_days, key=lambda t: t[2]), "tx_first_3_days": total_tx}
