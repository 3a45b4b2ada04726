# Sync calls, awaited calls of the same tool, wait_for with a timeout, and asyncio.timeout
import asyncio

info = get_store_info(store_id="ST001")  # plain sync call at the top level
print("store", info["name"])


def label(store):  # a sync helper: its tool call returns the value
    return get_store_info(store_id=store)["city"]


async def revenue(store, day):
    row = await get_daily_revenue(store_id=store, date=day)
    await asyncio.sleep(0)
    return row["revenue_yuan"]


async def main():
    days = ["2026-08-20", "2026-08-21", "2026-08-22"]
    first = await asyncio.wait_for(revenue("ST001", days[0]), timeout=30)
    async with asyncio.timeout(30):
        rest = await asyncio.gather(*[revenue("ST001", d) for d in days[1:]])
    try:
        await asyncio.wait_for(asyncio.sleep(3600), timeout=0.05)
        timed_out = False
    except TimeoutError:
        timed_out = True
    return {"city": label("ST001"), "revenues": [first, *rest], "timed_out": timed_out}


result = asyncio.run(main())
print(result["city"], len(result["revenues"]))
result
