# Fetch revenue with retries and a small backoff; some days fail for good (future dates).
import time

def fetch_with_retry(store_id, day, attempts=3, delay=0.01):
    last_error = None
    for attempt in range(1, attempts + 1):
        try:
            return get_daily_revenue(store_id, day)
        except ToolError as e:
            last_error = e
            print(f"attempt {attempt} for {store_id} {day} failed: {e.message.split(': ', 2)[-1]}")
            time.sleep(delay * attempt)
    raise RuntimeError(f"giving up on {store_id} {day}") from last_error

start = time.monotonic()
results = {}
failures = []
for day in ["2026-12-30", "2026-12-31", "2027-01-01"]:
    try:
        results[day] = fetch_with_retry("ST002", day)["revenue_yuan"]
    except RuntimeError as e:
        failures.append(str(e))
elapsed = time.monotonic() - start
print("waited at least the backoff:", elapsed >= 0.01 + 0.02)
print(failures)

{"results": results, "failures": failures}
