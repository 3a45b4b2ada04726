employees = list_employees()
# department ascending, salary descending, then name
ranked = sorted(employees, key=lambda e: (e["department"], -e["monthly_salary"], e["name"]))
print([(e["department"], e["monthly_salary"]) for e in ranked[:4]])

# stable sort: sort by secondary key first, then primary
by_hire = sorted(employees, key=lambda e: e["hire_date"])
stable = sorted(by_hire, key=lambda e: e["department"])
firsts = {}
for e in stable:
    firsts.setdefault(e["department"], e["name"])

nums = [3, -1, 2, -5, 4]
by_abs = sorted(nums, key=abs)
words = sorted(["banana", "Apple", "cherry", "apple"], key=str.lower)
in_place = [e["employee_id"] for e in employees]
in_place.sort(reverse=True)
{"top_by_dept": [e["employee_id"] for e in ranked[:6]], "earliest_per_dept": firsts, "by_abs": by_abs,
 "words": words, "in_place": in_place[:3], "reversed": list(reversed(nums))}
