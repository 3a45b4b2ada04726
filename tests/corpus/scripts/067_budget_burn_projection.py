import math

depts = ["Sales", "Engineering", "Marketing", "Operations", "Finance", "HR"]
projection = {}
for d in depts:
    b = get_budget(d)
    months_elapsed = int(b["as_of"][5:7])
    burn = b["spent_ytd"] / months_elapsed
    remaining = b["annual_budget"] - b["spent_ytd"]
    months_left = remaining / burn if burn else math.inf
    projected = b["spent_ytd"] + burn * (12 - months_elapsed)
    projection[d] = {
        "burn_per_month": round(burn, 2),
        "runs_out_in_months": round(months_left, 1),
        "projected_year_end": round(projected, 2),
        "overrun_pct": round(projected / b["annual_budget"] - 1, 4),
        "months_to_cut": max(0, math.ceil((projected - b["annual_budget"]) / burn)),
    }

for d, p in sorted(projection.items(), key=lambda kv: kv[1]["overrun_pct"], reverse=True):
    flag = "OVER" if p["overrun_pct"] > 0 else "ok"
    print(f"{d:<12} {p['overrun_pct']:>+8.1%} {flag}")
projection
