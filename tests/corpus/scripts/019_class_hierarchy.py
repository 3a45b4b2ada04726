# Classes with super(), properties, classmethods and staticmethods
class Report:
    currency = "CNY"

    def __init__(self, title):
        self.title = title
        self.lines = []

    def add(self, label, amount):
        self.lines.append((label, amount))

    @property
    def total(self):
        return round(sum(a for _, a in self.lines), 2)

    @staticmethod
    def fmt(amount):
        return f"{amount:,.2f}"

    def render(self):
        out = [self.title, "-" * len(self.title)]
        out += [f"{label:<20}{self.fmt(a):>14}" for label, a in self.lines]
        out.append(f"{'TOTAL':<20}{self.fmt(self.total):>14} {self.currency}")
        return "\n".join(out)


class StoreReport(Report):
    def __init__(self, store_id, day):
        info = get_store_info(store_id)
        super().__init__(f"{info['name']} on {day}")
        self.store_id = store_id
        self.day = day

    @classmethod
    def for_day(cls, store_id, day):
        rep = cls(store_id, day)
        rev = get_daily_revenue(store_id, day)
        rep.add("revenue", rev["revenue_yuan"])
        rep.add("refund reserve", -round(rev["revenue_yuan"] * 0.02, 2))
        return rep

    def render(self):
        return super().render() + f"\n(store {self.store_id})"


reports = [StoreReport.for_day(sid, "2026-08-01") for sid in ("ST002", "ST005", "ST012")]
for r in reports:
    print(r.render())
    print()
{"totals": {r.store_id: r.total for r in reports}, "fmt": Report.fmt(1234567.891)}
