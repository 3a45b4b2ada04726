from fractions import Fraction

# Split a bonus pool between regions by exact revenue share
day = "2026-08-15"
region_rev = {}
for s in list_stores():
    if s["opened"] > day:
        continue
    cents = round(get_daily_revenue(s["store_id"], day)["revenue_yuan"] * 100)
    region_rev[s["region"]] = region_rev.get(s["region"], 0) + cents

total = sum(region_rev.values())
shares = {r: Fraction(v, total) for r, v in region_rev.items()}
assert sum(shares.values()) == 1
pool = 100000
payout = {r: float(round(f * pool, 2)) for r, f in shares.items()}
for r in sorted(shares, key=shares.get, reverse=True):
    print(f"{r:<8} {float(shares[r]):.2%}  {payout[r]:>10,.2f}")
{"payout": payout, "east_share": str(shares["East"].limit_denominator(1000)), "sum_is_one": sum(shares.values()) == 1}
