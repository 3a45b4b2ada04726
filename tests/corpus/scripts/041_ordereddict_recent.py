from collections import OrderedDict

# Keep the 5 most recently looked-up customers, like a small LRU cache
recent = OrderedDict()
lookups = ["C001", "C002", "C003", "C001", "C004", "C005", "C006", "C002", "C007", "C001"]
hits = 0
for cid in lookups:
    if cid in recent:
        hits += 1
        recent.move_to_end(cid)
        continue
    recent[cid] = get_customer(cid)["name"]
    if len(recent) > 5:
        evicted, _ = recent.popitem(last=False)
        print("evicted", evicted)

first_key = next(iter(recent))
recent.move_to_end(first_key, last=True)
{"order": list(recent), "hits": hits, "names": dict(recent)}
