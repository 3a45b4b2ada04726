class BudgetError(Exception):
    pass

class OverBudget(BudgetError):
    def __init__(self, dept, spent, budget):
        super().__init__(f"{dept} spent {spent:,.0f} of {budget:,.0f}")
        self.dept = dept
        self.ratio = spent / budget

def check(dept):
    b = get_budget(dept)
    expected = b["annual_budget"] * 8 / 12   # as of end of August
    if b["spent_ytd"] > expected:
        raise OverBudget(dept, b["spent_ytd"], expected)
    return b["spent_ytd"] / expected

flags = []
ok = {}
for dept in ["Sales", "Engineering", "Marketing", "Operations", "Finance", "HR", "Legal"]:
    try:
        ok[dept] = round(check(dept), 3)
    except OverBudget as e:
        flags.append({"dept": e.dept, "ratio": round(e.ratio, 3), "msg": str(e)})
        print("OVER:", e)
    except ToolError as e:
        print("lookup failed:", e.message)
        flags.append({"dept": dept, "error": e.message})

{"within": ok, "flags": flags}
