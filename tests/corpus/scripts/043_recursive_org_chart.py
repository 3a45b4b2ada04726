# Build a reporting tree and walk it recursively
employees = list_employees()
reports = {}
for e in employees:
    reports.setdefault(e["manager_id"], []).append(e)

def subtree_cost(emp_id):
    own = next(e["monthly_salary"] for e in employees if e["employee_id"] == emp_id)
    return own + sum(subtree_cost(r["employee_id"]) for r in reports.get(emp_id, []))

def render(emp, depth=0, lines=None):
    lines = [] if lines is None else lines
    lines.append("  " * depth + f"{emp['name']} ({emp['title']})")
    for r in sorted(reports.get(emp["employee_id"], []), key=lambda x: x["name"])[:2]:
        render(r, depth + 1, lines)
    return lines

heads = reports[None]
chart = []
for h in heads:
    chart.extend(render(h))
print("\n".join(chart))

def depth_of(emp_id, level=0):
    kids = reports.get(emp_id, [])
    return level if not kids else max(depth_of(k["employee_id"], level + 1) for k in kids)

{"heads": [h["employee_id"] for h in heads], "costs": {h["department"]: subtree_cost(h["employee_id"]) for h in heads},
 "max_depth": max(depth_of(h["employee_id"]) for h in heads), "lines": len(chart)}
