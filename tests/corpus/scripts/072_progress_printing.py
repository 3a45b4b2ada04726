# Batch job with progress output using print(end=...) and sep=
from datetime import date, timedelta

stores = [s["store_id"] for s in list_stores()]
days = [(date(2026, 1, 5) + timedelta(days=i)).isoformat() for i in range(7)]
grand = 0.0
print("processing", len(stores), "stores", sep=": ", end="\n")
for i, sid in enumerate(stores, 1):
    for d in days:
        try:
            grand += get_daily_revenue(sid, d)["revenue_yuan"]
        except ToolError:
            print("x", end="")
            continue
        print(".", end="")
    if i % 5 == 0:
        print(f" {i}/{len(stores)}")
print()
print("done", "total", f"{grand:,.2f}", sep=" | ")
print("a", "b", "c", sep="")
print(*days[:3], sep=", ", end=" <- first days\n")
round(grand, 2)
