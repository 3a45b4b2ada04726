# TaskGroup of tool calls, then sequential write actions for low stock
import asyncio

products = await list_products(category="equipment")
skus = [p["sku"] for p in products][:8]

async with asyncio.TaskGroup() as tg:
    tasks = {sku: tg.create_task(get_inventory(sku=sku)) for sku in skus}

low = []
for sku, task in tasks.items():
    stock = task.result()
    print(sku, stock["on_hand"], stock["reorder_point"])
    if stock["on_hand"] < stock["reorder_point"] * 3:
        low.append(sku)

tickets = []
for sku in low[:2]:
    ticket = await create_ticket(title=f"Reorder {sku}", priority="high")
    tickets.append(ticket["ticket_id"])
{"checked": len(tasks), "low": low, "tickets": tickets}
