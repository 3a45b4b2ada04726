ids = [f"C{n:03d}" for n in range(10, 50, 3)]
results = parallel(get_customer, [{"customer_id": cid} for cid in ids], return_exceptions=True)

ok, failed = [], []
for cid, res in zip(ids, results):
    if isinstance(res, ToolError):
        failed.append({"id": cid, "error": res.message})
        print(f"{cid}: FAILED ({res})")
    else:
        ok.append(res)
        print(f"{cid}: {res['name']} [{res['tier']}]")

{"ok": len(ok), "failed": failed, "top_value": max(c["lifetime_value"] for c in ok)}
