# Pseudonymise customer emails with hashes, build stable ids and a base64 export token.
import base64
import hashlib
import json
import uuid

seen = {}
rows = []
for c in list_customers()[:20]:
    full = get_customer(c["customer_id"])
    email = full["email"].strip().lower()
    digest = hashlib.sha256(email.encode("utf-8")).hexdigest()
    if digest in seen:
        print("duplicate:", c["customer_id"], "same as", seen[digest])
        continue
    seen[digest] = c["customer_id"]
    rows.append({
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, "customer/" + c["customer_id"])),
        "email_hash": digest[:16],
        "tier": full["tier"],
    })

payload = json.dumps(rows[:3], sort_keys=True).encode()
token = base64.urlsafe_b64encode(hashlib.md5(payload).digest()).decode().rstrip("=")
print(len(rows), "unique customers; token", token)
back = json.loads(base64.b64decode(base64.b64encode(payload)))
assert back == rows[:3]
check = uuid.UUID(rows[0]["id"])
print(check.version, check.hex[:8])
{"first": rows[:2], "token": token, "sha1_of_ids": hashlib.sha1(",".join(r["id"] for r in rows).encode()).hexdigest()}
