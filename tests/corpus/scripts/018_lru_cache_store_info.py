from functools import lru_cache

@lru_cache(maxsize=None)
def employee_directory():
    return {e["employee_id"]: e for e in list_employees()}

@lru_cache(maxsize=None)
def manager_name(employee_id):
    person = employee_directory().get(employee_id)
    return person["name"] if person else "?"

rows = []
for store in list_stores():
    info = get_store_info(store["store_id"])
    rows.append((store["store_id"], store["city"], manager_name(info["manager_id"])))

for sid, city, mgr in rows:
    print(f"{sid} {city:<10} managed by {mgr}")
info = manager_name.cache_info()
print(info)
by_manager = {}
for sid, _, mgr in rows:
    by_manager.setdefault(mgr, []).append(sid)
multi = {m: s for m, s in by_manager.items() if len(s) > 1}
{"rows": len(rows), "hits": info.hits, "misses": info.misses, "multi_store_managers": multi}
