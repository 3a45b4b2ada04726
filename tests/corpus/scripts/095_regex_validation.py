import re

EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(\.[\w-]+)+$")
SKU = re.compile(r"^SKU-(\d{4})$")
candidates = ["anna.lee@example.com", "bad@", "ops-team@example.com", "x@y", "first.last+tag@mail.example"]
valid = [c for c in candidates if EMAIL.fullmatch(c)]
statuses = []
for addr in candidates:
    try:
        send_email(addr, "Test", "Address validation run")
        statuses.append((addr, "sent"))
    except ToolError as e:
        statuses.append((addr, "rejected"))

skus = ["SKU-1001", "SKU-12", "sku-1002", "SKU-1024", "SKU-2000"]
parsed = {s: int(m.group(1)) for s in skus if (m := SKU.match(s))}
found = {}
for s, num in parsed.items():
    try:
        found[s] = get_inventory(s)["name"]
    except ToolError:
        found[s] = None
text = "Orders O00102 and O01204 were delayed; O9 is invalid."
{"valid": valid, "statuses": statuses, "found": found, "ids": re.findall(r"\bO\d{5}\b", text),
 "case_insensitive": bool(re.match(r"sku-\d+", "SKU-1", re.IGNORECASE))}
