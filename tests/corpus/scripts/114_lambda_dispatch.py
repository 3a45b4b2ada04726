# A dispatch table of lambdas computing KPIs from one store's rows
rows = [get_daily_revenue("ST015", f"2026-11-{d:02d}") for d in range(1, 31)]
open_rows = [r for r in rows if not r["closed"]]

kpis = {
    "revenue": lambda rs: round(sum(r["revenue_yuan"] for r in rs), 2),
    "transactions": lambda rs: sum(r["transactions"] for r in rs),
    "avg_ticket": lambda rs: round(sum(r["revenue_yuan"] for r in rs) / max(1, sum(r["transactions"] for r in rs)), 2),
    "best_day": lambda rs: max(rs, key=lambda r: r["revenue_yuan"])["date"],
    "weekend_share": lambda rs: round(sum(r["revenue_yuan"] for r in rs if r["date"] in weekend) / sum(r["revenue_yuan"] for r in rs), 4),
}
weekend = {f"2026-11-{d:02d}" for d in (1, 7, 8, 14, 15, 21, 22, 28, 29)}
results = {name: fn(open_rows) for name, fn in kpis.items()}
compose = lambda f, g: lambda x: f(g(x))
double_then_neg = compose(lambda x: -x, lambda x: x * 2)
sort_desc = sorted(results.items(), key=lambda kv: str(kv[1]), reverse=True)
for name, value in results.items():
    print(f"{name:>14}: {value}")
{"kpis": results, "closed_days": len(rows) - len(open_rows), "compose": double_then_neg(21), "order": [k for k, _ in sort_desc]}
