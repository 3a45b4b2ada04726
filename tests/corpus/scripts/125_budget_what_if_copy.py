# What-if planning: deep-copy the department budgets, apply scenarios, compare with the baseline.
import copy

class Plan:
    def __init__(self, name, lines):
        self.name = name
        self.lines = lines

    def total(self):
        return round(sum(v for v in self.lines.values()), 2)

baseline = Plan("baseline", {d: get_budget(d)["monthly_budget"] for d in ["Sales", "Marketing", "Engineering"]})
cuts = copy.deepcopy(baseline)
cuts.name = "cuts"
for dept in cuts.lines:
    cuts.lines[dept] = round(cuts.lines[dept] * 0.9, 2)

growth = copy.copy(baseline)
growth.name = "growth"
growth.lines = dict(baseline.lines)
growth.lines["Engineering"] = round(growth.lines["Engineering"] * 1.25, 2)

for plan in (baseline, cuts, growth):
    print(f"{plan.name:<9} {plan.total():>12.2f}")
print("baseline untouched:", baseline.lines == {d: get_budget(d)["monthly_budget"] for d in baseline.lines})
nested = {"q1": [1, {"x": 2}], "q2": []}
clone = copy.deepcopy(nested)
clone["q1"][1]["x"] = 99
{"baseline": baseline.total(), "cuts": cuts.total(), "growth": growth.total(), "nested": nested}
