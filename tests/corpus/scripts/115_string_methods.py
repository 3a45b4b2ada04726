# Cleaning and formatting names and titles with str methods
employees = list_employees()
titles = sorted({e["title"] for e in employees})
initials = {e["employee_id"]: "".join(part[0] for part in e["name"].split()) for e in employees[:6]}
slugs = [t.lower().replace(" ", "-") for t in titles]
local, sep, domain = employees[0]["email"].partition("@")
head, _, tail = "2026-08-31".rpartition("-")
padded = [e["employee_id"].zfill(6) for e in employees[:3]]
centered = "summary".center(15, "*")
cleaned = "  Store Manager \n".strip().upper()
checks = {
    "startswith": all(e["employee_id"].startswith("E") for e in employees),
    "endswith": sum(e["email"].endswith("@example.com") for e in employees),
    "isdigit": "2026".isdigit(),
    "isalpha": "Sales".isalpha(),
    "count": "Engineering".count("e"),
    "find": "Operations".find("rat"),
    "swapcase": "Hello".swapcase(),
    "title": "senior data engineer".title(),
    "split_max": "a,b,c,d".split(",", 2),
    "rsplit": "a,b,c,d".rsplit(",", 1),
    "join": " / ".join(titles[:3]),
    "replace_count": "aaaa".replace("a", "b", 2),
    "ljust": "ab".ljust(5, "."),
    "expandtabs": "a\tb".expandtabs(4),
    "removeprefix": "SKU-1001".removeprefix("SKU-"),
    "casefold": "STRASSE".casefold(),
}
print(centered, cleaned, sep=" | ")
{"titles": len(titles), "slugs": slugs[:4], "initials": initials, "email": [local, sep, domain], "date_parts": [head, tail],
 "padded": padded, "checks": checks}
