# One parallel batch mixing different read-only tools
calls = [
    (get_store_info, {"store_id": "ST004"}),
    (get_daily_revenue, {"store_id": "ST004", "date": "2026-08-20"}),
    (get_weather, {"city": "Hangzhou", "date": "2026-08-20"}),
    (get_budget, {"department": "Sales"}),
    (convert_currency, {"amount": 1000, "from_currency": "CNY", "to_currency": "EUR"}),
    (get_inventory, {"sku": "SKU-1001"}),
]
info, revenue, weather, budget, eur, stock = parallel(calls)

summary = (f"{info['name']} made {revenue['revenue_yuan']:,.2f} CNY (~{eur / 1000 * revenue['revenue_yuan']:,.2f} EUR) "
           f"on a {weather['condition']} day ({weather['temp_high_c']}C)")
print(summary)
{"summary": summary, "budget_left": round(budget["annual_budget"] - budget["spent_ytd"], 2),
 "espresso_stock": stock["on_hand"], "n_results": len(calls), "empty": parallel([])}
