from operator import itemgetter, attrgetter

employees = list_employees()
by_dept_salary = sorted(employees, key=itemgetter("department", "monthly_salary"))
top_each = {}
for e in by_dept_salary:
    top_each[e["department"]] = (e["name"], e["monthly_salary"])

get_pair = itemgetter("employee_id", "hire_date")
oldest = sorted(map(get_pair, employees), key=itemgetter(1))[:3]

class Person:
    def __init__(self, row):
        self.name = row["name"]
        self.salary = row["monthly_salary"]

people = sorted((Person(r) for r in employees), key=attrgetter("salary"), reverse=True)
print("highest paid:", ", ".join(p.name for p in people[:3]))
{"top_each": top_each, "oldest_hires": oldest, "top3": [p.salary for p in people[:3]]}
