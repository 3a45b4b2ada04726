# Without return_exceptions, parallel raises the first failure
batch = [{"store_id": sid, "date": "2026-05-01"} for sid in ["ST015", "ST016", "ST017", "ST020", "ST099"]]
try:
    parallel(get_daily_revenue, batch)
    outcome = "all ok"
except ToolError as e:
    outcome = e.message
    print("batch failed:", outcome)

# retry only the valid ones, now tolerating failures
results = parallel(get_daily_revenue, batch, return_exceptions=True)
good = [r for r in results if not isinstance(r, Exception)]
bad = [str(r) for r in results if isinstance(r, Exception)]
print(f"{len(good)} ok, {len(bad)} failed")
{"first_error": outcome, "good": [g["store_id"] for g in good], "bad": bad}
