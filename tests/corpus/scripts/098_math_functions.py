import math

# Staffing maths: how many cashiers per store for the peak hour
rows = [get_daily_revenue(s["store_id"], "2026-08-29") for s in list_stores()]
plan = {}
for r in rows:
    peak_tx = r["transactions"] * 0.18            # share of the day in the peak hour
    per_cashier = 40                              # transactions per cashier-hour
    cashiers = math.ceil(peak_tx / per_cashier) if peak_tx else 0
    plan[r["store_id"]] = max(1, cashiers) if not r["closed"] else 0

total_tx = math.fsum(r["transactions"] for r in rows)
checks = {
    "floor": math.floor(-2.5),
    "trunc": math.trunc(-2.5),
    "sqrt": math.sqrt(2),
    "log10": math.log10(1000),
    "exp": round(math.exp(1), 10),
    "hypot": math.hypot(3, 4),
    "isclose": math.isclose(0.1 + 0.2, 0.3),
    "gcd": math.gcd(84, 36),
    "comb": math.comb(20, 3),
    "factorial": math.factorial(10),
    "pi": round(math.pi, 6),
    "inf_compare": math.inf > 1e308,
    "prod": math.prod([1, 2, 3, 4]),
    "degrees": round(math.degrees(math.pi / 3), 6),
}
print("cashiers needed:", sum(plan.values()))
{"plan": plan, "total_tx": total_tx, "checks": checks}
