# Process customers in chunks of 8 with parallel per chunk
from itertools import islice

def chunks(iterable, size):
    it = iter(iterable)
    while True:
        batch = list(islice(it, size))
        if not batch:
            return
        yield batch

ids = [f"C{n:03d}" for n in range(1, 61)]
profiles = {}
failed = []
for n, batch in enumerate(chunks(ids, 8), 1):
    results = parallel(get_customer, [{"customer_id": cid} for cid in batch], return_exceptions=True)
    for cid, res in zip(batch, results):
        if isinstance(res, ToolError):
            failed.append(cid)
        else:
            profiles[cid] = res
    print(f"batch {n}: {len(batch)} ids, {sum(1 for r in results if not isinstance(r, ToolError))} ok")

by_city = {}
for p in profiles.values():
    by_city[p["city"]] = by_city.get(p["city"], 0) + 1
{"profiles": len(profiles), "failed": failed, "top_city": max(sorted(by_city), key=by_city.get), "batches": n}
