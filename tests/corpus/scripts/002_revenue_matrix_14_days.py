# Batch aggregation: 20 stores x 14 days, with per-store error handling
from datetime import date, timedelta
from collections import defaultdict

first_day = date(2026, 3, 9)
dates = [(first_day + timedelta(days=n)).isoformat() for n in range(14)]
stores = [s["store_id"] for s in list_stores()]

revenue = defaultdict(float)
transactions = defaultdict(int)
errors = []
for sid in stores:
    for d in dates:
        try:
            row = get_daily_revenue(sid, d)
        except ToolError as err:
            errors.append((sid, d))
            continue
        revenue[sid] += row["revenue_yuan"]
        transactions[sid] += row["transactions"]

print(f"{'store':<6} {'revenue':>14} {'tx':>7} {'avg':>8}")
for sid in stores:
    if transactions[sid] == 0:
        print(f"{sid:<6} {'n/a':>14}")
        continue
    avg = revenue[sid] / transactions[sid]
    print(f"{sid:<6} {revenue[sid]:>14,.2f} {transactions[sid]:>7d} {avg:>8.2f}")

print(f"{len(errors)} calls failed")
{
    "grand_total": round(sum(revenue.values()), 2),
    "failed_calls": len(errors),
    "first_failure": errors[0] if errors else None,
    "stores_with_data": sum(1 for sid in stores if transactions[sid] > 0),
}
