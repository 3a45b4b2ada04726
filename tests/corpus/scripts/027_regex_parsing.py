import re

employees = list_employees()
email_re = re.compile(r"^(?P<first>[a-z]+)\.(?P<last>[a-z]+)(?P<num>\d+)@(?P<domain>[\w.]+)$")
parsed = []
for e in employees:
    m = email_re.match(e["email"])
    if m:
        parsed.append((e["employee_id"], m.group("domain"), int(m.group("num"))))

mismatched = [eid for eid, _, num in parsed if int(eid[1:]) != num]

claims = get_expenses("E010", "2026-05") + get_expenses("E020", "2026-05")
numbers = [int(re.search(r"#(\d+)", c["description"]).group(1)) for c in claims]
cats = re.findall(r"\b([a-z]+) expense", " ".join(c["description"] for c in claims))
cleaned = re.sub(r"\s+", " ", "  Quarterly   review\t of   expenses ").strip()
split = re.split(r"[;,]\s*", "travel, meals;software,  office")

{"parsed": len(parsed), "mismatched": mismatched, "numbers": numbers, "cats": cats,
 "cleaned": cleaned, "split": split, "domains": sorted({d for _, d, _ in parsed})}
