from datetime import date

as_of = date(2026, 9, 1)

def tenure_years(hire_iso):
    hired = date.fromisoformat(hire_iso)
    years = as_of.year - hired.year - ((as_of.month, as_of.day) < (hired.month, hired.day))
    return years

buckets = {"<3": [], "3-5": [], "6-8": [], "9+": []}
for e in list_employees():
    y = tenure_years(e["hire_date"])
    key = "<3" if y < 3 else "3-5" if y <= 5 else "6-8" if y <= 8 else "9+"
    buckets[key].append((e["name"], y))

for key, people in buckets.items():
    print(f"{key:>4}: {len(people):>2} {'#' * len(people)}")
anniversaries = [e["name"] for e in list_employees() if date.fromisoformat(e["hire_date"]).month == 9]
longest = max((p for group in buckets.values() for p in group), key=lambda p: p[1])
{"counts": {k: len(v) for k, v in buckets.items()}, "longest": list(longest), "september": anniversaries}
