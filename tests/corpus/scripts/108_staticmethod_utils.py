class Fmt:
    @staticmethod
    def money(x, cur="CNY"):
        return f"{x:,.2f} {cur}"

    @staticmethod
    def pct(x):
        return f"{x:+.1%}"

    @staticmethod
    def bar(x, scale=5000):
        return "#" * int(x // scale)

class Periods:
    @staticmethod
    def compare(store_id, a, b):
        ra = get_daily_revenue(store_id, a)["revenue_yuan"]
        rb = get_daily_revenue(store_id, b)["revenue_yuan"]
        return ra, rb, (rb / ra - 1) if ra else None

rows = []
for s in list_stores()[:9]:
    last_year, this_year, change = Periods.compare(s["store_id"], "2025-08-15", "2026-08-15")
    rows.append((s["store_id"], this_year, change))
    print(f"{s['store_id']} {Fmt.money(this_year):>16} {Fmt.pct(change) if change is not None else 'n/a':>7} {Fmt.bar(this_year)}")
{"rows": rows, "money": Fmt.money(1234.5, "USD"), "static_on_instance": Fmt().pct(0.05)}
