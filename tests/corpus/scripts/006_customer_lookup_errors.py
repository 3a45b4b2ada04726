# Look up a range of customer ids; some are deleted or unknown.
from collections import Counter

found = []
failures = Counter()
messages = []
for n in range(1, 71):
    cid = f"C{n:03d}"
    try:
        customer = get_customer(cid)
    except ToolError as e:
        reason = "deleted" if "deleted" in e.message else "unknown"
        failures[reason] += 1
        messages.append(str(e))
    else:
        found.append(customer)

print(f"found {len(found)} customers, {sum(failures.values())} lookups failed")
for msg in messages[:4]:
    print("  -", msg)

tiers = Counter(c["tier"] for c in found)
{"found": len(found), "failures": dict(failures), "tiers": dict(sorted(tiers.items())), "sample_error": messages[0]}
