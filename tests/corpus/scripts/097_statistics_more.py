import statistics as st

tickets = []
for s in list_stores()[:12]:
    for d in ("2026-04-04", "2026-04-05", "2026-04-06"):
        r = get_daily_revenue(s["store_id"], d)
        if not r["closed"]:
            tickets.append(r["avg_ticket"])

rounded = [round(t) for t in tickets]
summary = {
    "n": len(tickets),
    "mean": round(st.mean(tickets), 3),
    "fmean": round(st.fmean(tickets), 3),
    "median": st.median(tickets),
    "median_low": st.median_low(tickets),
    "median_high": st.median_high(tickets),
    "mode": st.mode(rounded),
    "multimode": sorted(st.multimode(rounded))[:3],
    "pvariance": round(st.pvariance(tickets), 3),
    "variance": round(st.variance(tickets), 3),
    "harmonic": round(st.harmonic_mean(tickets), 3),
    "geometric": round(st.geometric_mean(tickets), 3),
}
for k, v in summary.items():
    print(f"{k:>12}: {v}")
summary
