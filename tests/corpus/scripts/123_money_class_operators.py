# A small Money type with the full numeric protocol, used to total expenses per department.
class Money:
    def __init__(self, cents):
        self.cents = int(round(cents))
    def __add__(self, other):
        return Money(self.cents + (other.cents if isinstance(other, Money) else other))
    __radd__ = __add__
    def __iadd__(self, other):
        self.cents += other.cents if isinstance(other, Money) else other
        return self
    def __itruediv__(self, n):
        self.cents = int(round(self.cents / n))
        return self
    def __ifloordiv__(self, n):
        self.cents //= n
        return self
    def __imod__(self, n):
        self.cents %= n
        return self
    def __pow__(self, n):
        return Money(self.cents * (1.01 ** n))
    def __divmod__(self, n):
        q, r = divmod(self.cents, n)
        return Money(q), Money(r)
    def __invert__(self):
        return Money(-self.cents)
    def __lshift__(self, n):
        return Money(self.cents << n)
    def __rshift__(self, n):
        return Money(self.cents >> n)
    def __lt__(self, other):
        return self.cents < other.cents
    def __repr__(self):
        return f"Money({self.cents / 100:.2f})"

totals = {}
for e in list_employees("Marketing")[:6]:
    t = Money(0)
    for claim in get_expenses(e["employee_id"], "2026-05"):
        t += Money(claim["amount"] * 100)
    totals[e["employee_id"]] = t

grand = sum(totals.values(), Money(0))
avg = Money(grand.cents)
avg /= len(totals)
share, rest = divmod(grand, 3)
rounded = Money(grand.cents)
rounded //= 100
rounded %= 1000
levels = [0, 2]
levels[0] += 5
levels[1] **= 10
print("grand", grand, "avg", avg, "share", share, "rest", rest, levels)
print("year at 1%/month", grand ** 12, "refund", ~grand, "doubled", grand << 1, "halved", grand >> 1)
print(sorted(totals.items(), key=lambda kv: kv[1])[-1][0], rounded)
{k: repr(v) for k, v in totals.items()}
