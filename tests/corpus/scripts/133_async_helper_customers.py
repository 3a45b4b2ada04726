# A helper coroutine per customer, gathered; errors handled inside the helper
import asyncio


async def summarize(customer_id):
    try:
        profile = await get_customer(customer_id=customer_id)
    except ToolError as exc:
        return {"id": customer_id, "error": str(exc)}
    orders = await search_orders(customer_id=customer_id)
    spent = sum(o["total"] for o in orders if o["status"] != "cancelled")
    return {"id": customer_id, "name": profile["name"], "orders": len(orders), "spent": round(spent, 2)}


async def main():
    customers = await list_customers(tier="gold")
    ids = [c["customer_id"] for c in customers][:6] + ["C013", "C999"]
    results = await asyncio.gather(*(summarize(i) for i in ids))
    for r in results:
        if "error" in r:
            print("skip", r["id"], "-", r["error"][:60])
        else:
            print(f"{r['id']:>5} {r['name']:<20} {r['orders']:>3} {r['spent']:>10.2f}")
    return sorted((r for r in results if "error" not in r), key=lambda r: -r["spent"])[:3]


top = asyncio.run(main())
[t["id"] for t in top]
