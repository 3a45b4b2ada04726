class Metric:
    registry = {}

    def __init__(self, name, unit):
        self.name = name
        self.unit = unit
        Metric.registry[name] = self

    @classmethod
    def create(cls, name, unit="CNY"):
        return cls.registry.get(name) or cls(name, unit)

    @classmethod
    def names(cls):
        return sorted(cls.registry)

    def compute(self, rows):
        raise NotImplementedError

class Total(Metric):
    def compute(self, rows):
        return round(sum(r["revenue_yuan"] for r in rows), 2)

class AvgTicket(Metric):
    def compute(self, rows):
        tx = sum(r["transactions"] for r in rows)
        return round(sum(r["revenue_yuan"] for r in rows) / tx, 2) if tx else None

class OpenDays(Metric):
    def compute(self, rows):
        return sum(1 for r in rows if not r["closed"])

metrics = [Total.create("total"), AvgTicket.create("avg_ticket"), OpenDays.create("open_days", unit="days"),
           Total.create("total")]
rows = [get_daily_revenue("ST011", f"2026-03-{d:02d}") for d in range(1, 32)]
results = {m.name: m.compute(rows) for m in metrics}
try:
    Metric("broken", "x").compute(rows)
except NotImplementedError:
    results["base_raises"] = True
print(results)
{"results": results, "registered": Metric.names(), "units": {n: Metric.registry[n].unit for n in Metric.names()}}
