# A semaphore limits concurrency (as models write for rate limits); as_completed; a queue
import asyncio

sem = asyncio.Semaphore(3)


async def expenses(employee_id):
    async with sem:
        rows = await get_expenses(employee_id=employee_id, month="2026-07")
    return employee_id, sum(r["amount"] for r in rows)


async def main():
    staff = await list_employees(department="Sales")
    ids = [e["employee_id"] for e in staff][:7]
    totals = {}
    for next_done in asyncio.as_completed([expenses(i) for i in ids]):
        emp, total = await next_done
        totals[emp] = round(total, 2)
    queue = asyncio.Queue()
    for emp in sorted(totals):
        queue.put_nowait(emp)
    order = []
    while not queue.empty():
        order.append(await queue.get())
    return {"totals": dict(sorted(totals.items())), "order": order}


asyncio.run(main())
