from dataclasses import dataclass

@dataclass
class Restock:
    sku: str
    units: int

@dataclass
class Alert:
    level: str
    text: str

@dataclass
class Ok:
    sku: str

def assess(inv):
    gap = inv["reorder_point"] - inv["on_hand"]
    if gap > 50:
        return Alert("high", f"{inv['name']} short by {gap}")
    if gap > 0:
        return Restock(inv["sku"], gap + 20)
    return Ok(inv["sku"])

actions = []
for p in list_products():
    decision = assess(get_inventory(p["sku"]))
    match decision:
        case Alert(level="high", text=text):
            actions.append(["alert", text])
        case Restock(sku=sku, units=n) if n > 30:
            actions.append(["big restock", sku, n])
        case Restock(sku, n):
            actions.append(["restock", sku, n])
        case Ok():
            pass

for a in actions:
    print(*a, sep=" | ")
{"actions": actions, "ok_count": len(list_products()) - len(actions)}
