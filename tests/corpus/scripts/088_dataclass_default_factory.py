from dataclasses import dataclass, field, asdict
from typing import List, Dict

@dataclass
class DepartmentSummary:
    name: str
    headcount: int = 0
    payroll: int = 0
    titles: Dict[str, int] = field(default_factory=dict)
    members: List[str] = field(default_factory=list)
    notes: list = field(default_factory=lambda: ["auto-generated"])

    def add(self, emp):
        self.headcount += 1
        self.payroll += emp["monthly_salary"]
        self.titles[emp["title"]] = self.titles.get(emp["title"], 0) + 1
        self.members.append(emp["employee_id"])

    @property
    def avg_salary(self):
        return round(self.payroll / self.headcount, 2) if self.headcount else 0.0

summaries = {}
for emp in list_employees():
    summaries.setdefault(emp["department"], DepartmentSummary(emp["department"])).add(emp)

a, b = DepartmentSummary("X"), DepartmentSummary("Y")
a.members.append("E000")
independent = b.members == []
for s in summaries.values():
    print(f"{s.name:<12} {s.headcount:>3} avg {s.avg_salary:>10,.2f}")
{"summaries": {k: asdict(v) for k, v in summaries.items()}, "independent_defaults": independent,
 "avg": {k: v.avg_salary for k, v in summaries.items()}}
