# Leaderboard of salespeople by the revenue of their store over a fortnight
sales = list_employees("Sales")
dates = [f"2026-08-{d:02d}" for d in range(1, 15)]
store_rev = {}
for sid in sorted({e["store_id"] for e in sales}):
    store_rev[sid] = sum(get_daily_revenue(sid, d)["revenue_yuan"] for d in dates)

board = sorted(sales, key=lambda e: store_rev[e["store_id"]], reverse=True)
lines = []
for rank, e in enumerate(board, start=1):
    medal = {1: "gold", 2: "silver", 3: "bronze"}.get(rank, "")
    lines.append(f"{rank:>2}. {e['name']:<14} {e['store_id']} {store_rev[e['store_id']]:>12,.2f} {medal}".rstrip())
print("\n".join(lines))
positions = {e["employee_id"]: i for i, e in enumerate(board)}
{"podium": [e["name"] for e in board[:3]], "last": board[-1]["name"], "positions": positions}
