# Sanity-check tool data with assert statements before using it
stores = list_stores()
assert len(stores) == 20, "expected 20 stores"
assert len({s["store_id"] for s in stores}) == len(stores)

employees = list_employees()
ids = {e["employee_id"] for e in employees}
for e in employees:
    assert e["manager_id"] is None or e["manager_id"] in ids, e["employee_id"]

violations = []
for s in stores[:10]:
    info = get_store_info(s["store_id"])
    try:
        assert info["manager_id"] in ids, f"{s['store_id']} has unknown manager"
        assert info["size_sqm"] >= 100, f"{s['store_id']} is small ({info['size_sqm']} sqm)"
    except AssertionError as e:
        violations.append(str(e))

try:
    assert False
except AssertionError as e:
    empty_message = str(e)
print("\n".join(violations))
{"violations": violations, "empty_message": empty_message, "checked": 10}
