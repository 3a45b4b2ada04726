# gather with return_exceptions=True over lookups that may fail, then an async generator
import asyncio

ids = ["C001", "C013", "C002", "C500", "C003"]
results = await asyncio.gather(*[get_customer(customer_id=i) for i in ids], return_exceptions=True)
found, failed = [], []
for cid, r in zip(ids, results):
    if isinstance(r, Exception):
        failed.append((cid, "missing" if isinstance(r, KeyError) else "error"))
    else:
        found.append(r["name"])
print("found", len(found), "failed", failed)


async def weather_days(city, days):
    for d in days:
        w = await get_weather(city=city, date=d)
        yield d, w


class Counter:
    def __init__(self):
        self.n = 0

    async def __aenter__(self):
        return self

    async def __aexit__(self, kind, value, tb):
        print("counted", self.n)
        return False


async with Counter() as counter:
    temps = {}
    async for day, w in weather_days("Shanghai", ["2026-08-20", "2026-08-21"]):
        counter.n += 1
        temps[day] = sorted(w)[:3]
{"found": found, "failed": failed, "temps": temps}
