# Programmatic tool calling style: an async generator pages through stores; aiter/anext read it
import asyncio

try:
    import bottleneck as bn
except ImportError:
    bn = None


async def revenue_pages(stores, day, size):
    for start in range(0, len(stores), size):
        page = stores[start:start + size]
        yield await asyncio.gather(*[get_daily_revenue(store_id=s["store_id"], date=day) for s in page])


stores = await list_stores()
pages = aiter(revenue_pages(stores, "2026-08-22", 3))
first = await anext(pages)
rest = [row async for page in pages for row in page]
after = await anext(pages, "no more pages")

rows = first + rest
open_rows = [r for r in rows if not r["closed"]]
if bn is not None:
    total = float(bn.nansum([r["revenue_yuan"] for r in open_rows]))
else:
    total = sum(r["revenue_yuan"] for r in open_rows)
print(f"first page {len(first)} rows, {len(rows)} in all; then: {after}")
{"rows": len(rows), "open": len(open_rows), "total": round(total, 2), "bottleneck": bn is not None}
