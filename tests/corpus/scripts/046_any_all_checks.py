# Data quality checks with any/all before a month-end report
stores = list_stores()
day = "2026-08-30"
rows = parallel([(get_daily_revenue, {"store_id": s["store_id"], "date": day}) for s in stores])

checks = {
    "all_have_ids": all(r["store_id"].startswith("ST") for r in rows),
    "any_closed": any(r["closed"] for r in rows),
    "all_positive_when_open": all(r["revenue_yuan"] > 0 for r in rows if not r["closed"]),
    "any_over_70k": any(r["revenue_yuan"] > 70000 for r in rows),
    "tickets_consistent": all(abs(r["avg_ticket"] * r["transactions"] - r["revenue_yuan"]) < r["transactions"] for r in rows if r["transactions"]),
    "empty_all": all([]),
    "empty_any": any([]),
}
for name, passed in checks.items():
    print(f"[{'x' if passed else ' '}] {name}")
failed = [k for k, v in checks.items() if not v]
{"checks": checks, "failed": failed, "ok": not failed}
