# Run a nightly check; open one ticket summarising every failed lookup
checks = [(get_store_info, {"store_id": f"ST{n:03d}"}) for n in (1, 5, 21, 22)]
checks += [(get_inventory, {"sku": s}) for s in ("SKU-1001", "SKU-1030", "SKU-1024")]
checks += [(get_weather, {"city": c, "date": "2026-09-01"}) for c in ("Wuhan", "Lhasa")]
results = parallel(checks, return_exceptions=True)

failures = [str(r) for r in results if isinstance(r, ToolError)]
ok = len(results) - len(failures)
print(f"{ok} ok, {len(failures)} failed")
for f in failures:
    print("  " + f)

ticket = None
if failures:
    tools_failing = sorted({f.split(":")[0] for f in failures})
    prio = "high" if len(failures) > 3 else "medium"
    ticket = create_ticket(f"Nightly check: {len(failures)} failures in {', '.join(tools_failing)}", prio)
{"ok": ok, "failures": failures, "ticket": ticket}
