# Walk the Sales org chart breadth-first with a queue and total the salaries under each head.
import queue
from collections import defaultdict

staff = list_employees()
reports = defaultdict(list)
by_id = {}
for e in staff:
    by_id[e["employee_id"]] = e
    if e["manager_id"]:
        reports[e["manager_id"]].append(e["employee_id"])

heads = [e["employee_id"] for e in staff if e["manager_id"] is None]
summary = {}
for head in sorted(heads):
    q = queue.Queue()
    q.put((head, 0))
    total, depth, count = 0, 0, 0
    while not q.empty():
        emp, level = q.get()
        total += by_id[emp]["monthly_salary"]
        depth = max(depth, level)
        count += 1
        for sub in sorted(reports[emp]):
            q.put((sub, level + 1))
        q.task_done()
    q.join()
    summary[by_id[head]["department"]] = {"people": count, "levels": depth + 1, "payroll": total}

try:
    q.get_nowait()
except queue.Empty:
    print("queue drained")

pq = queue.PriorityQueue()
for dept, s in summary.items():
    pq.put((-s["payroll"], dept))
order = [pq.get()[1] for _ in range(pq.qsize())]
print("by payroll:", order)
summary
