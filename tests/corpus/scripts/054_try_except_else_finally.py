attempted = []
log = []

def safe_orders(cid):
    attempted.append(cid)
    try:
        orders = search_orders(cid, "delivered")
    except ToolError as err:
        log.append(f"error {cid}: {err}")
        return None
    else:
        log.append(f"ok {cid}: {len(orders)} delivered")
        return orders
    finally:
        log.append(f"done {cid}")

ids = ["C001", "C013", "X99", "C020", "C075"]
delivered = {}
for cid in ids:
    res = safe_orders(cid)
    if res is not None:
        delivered[cid] = sum(o["total"] for o in res)

try:
    search_orders("C001", "lost")
except (KeyError, ToolError) as e:
    bad_status = e.message
finally:
    cleanup = True

print("\n".join(log))
{"delivered": delivered, "attempted": attempted, "bad_status": bad_status, "cleanup": cleanup, "log_lines": len(log)}
