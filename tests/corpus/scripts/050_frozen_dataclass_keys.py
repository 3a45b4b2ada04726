from dataclasses import dataclass, asdict, replace

@dataclass(frozen=True)
class Slot:
    store_id: str
    date: str

    def label(self):
        return f"{self.store_id}@{self.date}"

slots = [Slot(sid, d) for sid in ("ST001", "ST002", "ST003") for d in ("2026-08-08", "2026-08-09")]
revenue = {slot: get_daily_revenue(slot.store_id, slot.date)["revenue_yuan"] for slot in slots}

again = Slot("ST002", "2026-08-09")
print(again, again in revenue, again == slots[3])
try:
    again.date = "2026-08-10"
except Exception as exc:
    print("cannot modify a frozen dataclass")

moved = replace(again, date="2026-08-10")
revenue[moved] = get_daily_revenue(moved.store_id, moved.date)["revenue_yuan"]
unique = len({Slot("ST001", "2026-08-08"), Slot("ST001", "2026-08-08"), moved})
{"labels": {s.label(): v for s, v in revenue.items()}, "unique": unique, "as_dict": asdict(moved)}
