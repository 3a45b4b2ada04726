from collections import namedtuple

Employee = namedtuple("Employee", ["id", "name", "dept", "salary"])
staff = [Employee(e["employee_id"], e["name"], e["department"], e["monthly_salary"])
         for e in list_employees()]
print(staff[0])

# a 5% raise for Operations, with _replace
raised = [e._replace(salary=round(e.salary * 1.05)) if e.dept == "Operations" else e for e in staff]
changed = [(old.id, old.salary, new.salary) for old, new in zip(staff, raised) if old != new]
print(f"{len(changed)} salaries changed")

top = max(raised, key=lambda e: e.salary)
cost_before = sum(e.salary for e in staff)
cost_after = sum(e.salary for e in raised)
{"top_earner": top._asdict(), "increase": cost_after - cost_before, "changed": changed[:3]}
